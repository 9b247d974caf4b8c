// `shotchain bench cache`: held-out demo shots rendered without a step cache, then with each policy at
// three thresholds, side by side in one run (docs/step-cache.md).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <nlohmann/json.hpp>

#include "cli/command_specs.h"
#include "cli/option_values.h"
#include "cli/verbs.h"
#include "continuity/frame_measures.h"
#include "demo/procedural_clip.h"
#include "render/frame_conversion.h"
#include "render/renderer.h"
#include "sampling/cache_calibration.h"
#include "sequence/step_cache_policies.h"
#include "util/atomic_file.h"
#include "util/median.h"

namespace shotchain::cli {
namespace {

constexpr std::uint64_t kBenchSeed = demo::kHeldOutSeedStart + 41'000;
constexpr std::uint64_t kCalibrationSeed = demo::kHeldOutSeedStart + 42'000;
constexpr int kCalibrationShots = 4;

// What one render left: every frame of every shot, the cuts, the step cache's figures.
class CacheBenchObserver : public render::RenderObserver {
 public:
  void framesDecoded(const render::FramesDecoded& event) override {
    auto& frames = frames_[event.shotIndex];
    frames.insert(frames.end(), event.frames.begin(), event.frames.end());
  }
  void cutMeasured(const continuity::CutMetrics& cut) override { cuts_.push_back(cut); }
  void failed(const render::RenderFailure& event) override { error_ = event.message; }

  std::map<int, std::vector<render::RgbFrame>> frames_;
  std::vector<continuity::CutMetrics> cuts_;
  std::string error_;
};

struct CacheRun {
  std::string policy = "off";
  double threshold = 0;
  std::string error;
  double samplingSeconds = 0;  // sum over the shots
  int computed = 0, skipped = 0;
  std::map<int, std::vector<render::RgbFrame>> frames;
  std::vector<continuity::CutMetrics> cuts;
  // Against the uncached run:
  double psnr = NAN;  // of the luma over every frame of every shot
  double worstShotPsnr = NAN;
  double ssim = NAN;                      // mean over the frames
  double flash = NAN, colourDrift = NAN;  // medians over the cuts
};

// A chain of `shots` held-out demo shots, each continuing the one before (latent handoff, a new direction).
Sequence benchChain(int shots, int steps, std::uint64_t seed, bool handoff) {
  Sequence sequence;
  sequence.settings.name = "bench cache";
  sequence.settings.sampler.steps = steps;
  sequence.settings.sampler.guidance = 4.0;
  sequence.settings.sampler.shift = 3.0;
  demo::ClipParams clip = demo::randomClipParams(seed);
  for (int i = 0; i < shots; ++i) {
    if (i > 0) clip = demo::continuationClipParams(clip, seed + 100 + static_cast<std::uint64_t>(i));
    Shot shot;
    shot.id = "shot-" + std::to_string(i + 1);
    shot.prompt = demo::clipPrompt(clip);
    shot.frames = 17;
    shot.width = shot.height = 64;
    shot.seed = seed + static_cast<std::uint64_t>(i);
    shot.continuity.mode = handoff && i > 0 ? ContinuityMode::Latent : ContinuityMode::None;
    sequence.shots.push_back(shot);
    if (!handoff) clip = demo::randomClipParams(seed + 1 + static_cast<std::uint64_t>(i));
  }
  return sequence;
}

render::RenderOptions benchOptions(const std::string& device) {
  render::RenderOptions options;
  options.outputDirectory =
      std::filesystem::temp_directory_path() / ("shotchain-bench-cache-" + std::to_string(::getpid()));
  options.device = device;
  options.previews = false;
  options.writesFiles = false;
  options.framesOnDisk = false;
  options.overlapDecode = false;  // sampling seconds without a decode beside them
  return options;
}

CacheRun runCache(Sequence sequence, const StepCacheSettings& cache, const std::string& device) {
  CacheRun run;
  run.policy = toString(cache.policy);
  run.threshold =
      cache.policy == StepCachePolicy::Off ? 0 : cache.threshold.value_or(traitsOf(cache.policy).defaultThreshold);
  sequence.settings.sampler.cache = cache;
  CacheBenchObserver observer;
  render::Renderer renderer;
  try {
    const render::RenderSummary summary = renderer.render(sequence, benchOptions(device), observer);
    if (!summary.finished.completed) run.error = observer.error_.empty() ? "did not complete" : observer.error_;
    for (const render::ShotFinished& shot : summary.shots) {
      run.samplingSeconds += shot.sampleSeconds;
      if (shot.cache && !shot.cache->off.empty() && run.error.empty()) run.error = "off: " + shot.cache->off;
      if (shot.cache) {
        run.computed += shot.cache->computedPasses;
        run.skipped += shot.cache->skippedPasses;
      }
    }
  } catch (const std::exception& error) {
    run.error = error.what();
  }
  run.frames = std::move(observer.frames_);
  run.cuts = std::move(observer.cuts_);
  return run;
}

at::Tensor videoOf(const std::vector<render::RgbFrame>& frames) {
  std::vector<at::Tensor> tensors;
  for (const render::RgbFrame& frame : frames) tensors.push_back(render::frameToTensor(frame));
  return at::stack(tensors, 1);  // [3, T, H, W]
}

void compare(CacheRun& run, const CacheRun& reference) {
  std::vector<double> flashes, drifts, ssims;
  for (const continuity::CutMetrics& cut : run.cuts) {
    if (cut.flash) flashes.push_back(*cut.flash);
    if (cut.colourDrift) drifts.push_back(*cut.colourDrift);
  }
  run.flash = util::medianOr(flashes, NAN);
  run.colourDrift = util::medianOr(drifts, NAN);
  if (!run.error.empty() || run.frames.size() != reference.frames.size()) return;
  double squared = 0, count = 0;
  run.worstShotPsnr = INFINITY;
  for (const auto& [shot, frames] : reference.frames) {
    const auto mine = run.frames.find(shot);
    if (mine == run.frames.end() || mine->second.size() != frames.size()) return;
    const at::Tensor a = videoOf(mine->second), b = videoOf(frames);
    const at::Tensor diff = continuity::lumaOf(a) - continuity::lumaOf(b);
    const double mse = diff.pow(2).mean().item<double>();
    squared += mse * static_cast<double>(frames.size());
    count += static_cast<double>(frames.size());
    run.worstShotPsnr = std::min(run.worstShotPsnr, mse > 0 ? -10 * std::log10(mse) : INFINITY);
    for (std::int64_t t = 0; t < a.size(1); ++t) ssims.push_back(continuity::ssimLuma(a.select(1, t), b.select(1, t)));
  }
  run.psnr = squared > 0 ? 10 * std::log10(count / squared) : INFINITY;
  double sum = 0;
  for (const double s : ssims) sum += s;
  run.ssim = ssims.empty() ? NAN : sum / static_cast<double>(ssims.size());
}

// "teacache=0.1,0.2,0.3;magcache=…" over the defaults.
std::map<StepCachePolicy, std::vector<double>> thresholdsOf(const std::optional<std::string>& text) {
  std::map<StepCachePolicy, std::vector<double>> out;
  for (const StepCachePolicyTraits& traits : stepCachePolicies())
    if (traits.policy != StepCachePolicy::Off)
      out[traits.policy].assign(traits.benchThresholds.begin(), traits.benchThresholds.end());
  if (!text) return out;
  for (const std::string& item : splitList(*text, ';')) {
    const std::size_t equals = item.find('=');
    const std::optional<StepCachePolicy> policy = stepCachePolicyFromString(item.substr(0, equals));
    if (equals == std::string::npos || !policy || *policy == StepCachePolicy::Off)
      throw kBenchCacheCommand.error("--thresholds: \"" + item + "\" is not POLICY=A,B,C");
    std::vector<double> values;
    for (const std::string& number : splitList(item.substr(equals + 1))) {
      double v = 0;
      try {
        v = doubleOption("--thresholds", number);
      } catch (const std::exception&) {
        v = 0;
      }
      if (!(v > 0) || !std::isfinite(v))
        throw kBenchCacheCommand.error("--thresholds: \"" + item + "\": thresholds are numbers above 0");
      values.push_back(v);
    }
    out[*policy] = values;
  }
  return out;
}

std::vector<StepCachePolicy> policiesOf(const std::string& list) {
  std::vector<StepCachePolicy> out;
  for (const std::string& name : splitList(list)) {
    const std::optional<StepCachePolicy> policy = stepCachePolicyFromString(name);
    if (!policy || *policy == StepCachePolicy::Off)
      throw kBenchCacheCommand.error("--policies: \"" + list + "\" is not a list of the step-cache policies (" +
                                     stepCachePolicyNames() + " but off)");
    out.push_back(*policy);
  }
  return out;
}

// Rows: the runs; columns: each shot's middle frame. Binary PPM (no image library in the CLI).
void writeContactSheet(const std::filesystem::path& path, const std::vector<CacheRun>& runs) {
  int width = 0, height = 0, columns = 0;
  for (const CacheRun& run : runs)
    for (const auto& [shot, frames] : run.frames)
      if (!frames.empty()) {
        width = frames.front().width;
        height = frames.front().height;
        columns = std::max(columns, shot + 1);
      }
  if (width == 0) return;
  const int sheetWidth = columns * width, sheetHeight = static_cast<int>(runs.size()) * height;
  std::string pixels(static_cast<std::size_t>(sheetWidth) * static_cast<std::size_t>(sheetHeight) * 3, '\0');
  for (std::size_t r = 0; r < runs.size(); ++r)
    for (const auto& [shot, frames] : runs[r].frames) {
      if (frames.empty()) continue;
      const render::RgbFrame& frame = frames[frames.size() / 2];
      for (int y = 0; y < frame.height && y < height; ++y)
        for (int x = 0; x < frame.width && x < width; ++x)
          for (int c = 0; c < 3; ++c)
            pixels[((static_cast<std::size_t>(r) * static_cast<std::size_t>(height) + static_cast<std::size_t>(y)) *
                        static_cast<std::size_t>(sheetWidth) +
                    static_cast<std::size_t>(shot * width + x)) *
                       3 +
                   static_cast<std::size_t>(c)] =
                static_cast<char>(frame.rgb[(static_cast<std::size_t>(y) * static_cast<std::size_t>(frame.width) +
                                             static_cast<std::size_t>(x)) *
                                                3 +
                                            static_cast<std::size_t>(c)]);
    }
  util::writeFileAtomically(
      path, "P6\n" + std::to_string(sheetWidth) + " " + std::to_string(sheetHeight) + "\n255\n" + pixels);
}

std::string cell(double v, const char* format) {
  if (std::isnan(v)) return "-";
  if (std::isinf(v)) return "inf";
  char text[32];
  std::snprintf(text, sizeof text, format, v);
  return text;
}

nlohmann::ordered_json jsonNumber(double v) {
  return std::isnan(v)   ? nlohmann::ordered_json()
         : std::isinf(v) ? nlohmann::ordered_json("inf")
                         : nlohmann::ordered_json(v);
}

}  // namespace

int runBenchCache(const Args& args) {
  const ParsedOptions parsed = kBenchCacheCommand.parse(args, 1);
  const int shots = std::max(2, parsed.integer("--shots").value());
  const int steps = std::max(2, parsed.integer("--steps").value());
  const std::vector<StepCachePolicy> policies = policiesOf(parsed.text("--policies").value());
  const std::map<StepCachePolicy, std::vector<double>> thresholds = thresholdsOf(parsed.text("--thresholds"));
  const std::string device = parsed.text("--device").value();
  const bool json = parsed.flag("--json");
  const Sequence sequence = benchChain(shots, steps, kBenchSeed, true);

  // MagCache's ratios (and a TeaCache polynomial) measured on other held-out shots than the ones compared.
  std::fprintf(stderr, "calibrating on %d other held-out shots (%d steps)...\n", kCalibrationShots, steps);
  const std::filesystem::path calibrationFile =
      std::filesystem::temp_directory_path() / ("shotchain-bench-cache-" + std::to_string(::getpid()) + ".cache.json");
  {
    render::RenderOptions options = benchOptions(device);
    options.calibrateCache = true;
    CacheBenchObserver observer;
    render::Renderer renderer;
    const render::RenderSummary summary =
        renderer.render(benchChain(kCalibrationShots, steps, kCalibrationSeed, false), options, observer);
    std::vector<const sampling::StepCache*> runs;
    for (const auto& run : summary.calibrationRuns) runs.push_back(run.cache.get());
    util::writeFileAtomically(calibrationFile, sampling::cacheCalibrationJson(
                                                   sampling::fitCacheCalibration(runs, summary.calibratedFamily, 3.0)));
  }

  std::vector<CacheRun> runs;
  std::fprintf(stderr, "rendering %d shots of %d steps without a step cache...\n", shots, steps);
  runs.push_back(runCache(sequence, {}, device));
  for (const StepCachePolicy policy : policies)
    for (const double threshold : thresholds.at(policy)) {
      StepCacheSettings cache;
      cache.policy = policy;
      cache.threshold = threshold;
      if (policy == StepCachePolicy::MagCache || policy == StepCachePolicy::TeaCache)
        cache.calibration = calibrationFile.string();
      std::fprintf(stderr, "rendering with %s %.3g...\n", toString(policy), threshold);
      runs.push_back(runCache(sequence, cache, device));
      if (!runs.back().error.empty()) std::fprintf(stderr, "  %s\n", runs.back().error.c_str());
    }
  std::error_code ignored;
  std::filesystem::remove(calibrationFile, ignored);
  const CacheRun& reference = runs.front();
  if (!reference.error.empty()) {
    std::fprintf(stderr, "shotchain bench cache: the uncached render failed: %s\n", reference.error.c_str());
    return 1;
  }
  const int uncachedPasses = shots * steps * 2;
  for (CacheRun& run : runs) compare(run, reference);
  if (const std::optional<std::string> sheet = parsed.text("--sheet")) writeContactSheet(*sheet, runs);

  if (json) {
    nlohmann::ordered_json out;
    out["shots"] = shots;
    out["steps"] = steps;
    out["uncached_passes"] = uncachedPasses;
    for (const Shot& shot : sequence.shots) out["prompts"].push_back(shot.prompt);
    out["threads"] = at::get_num_threads();
    for (const CacheRun& run : runs) {
      const int passes = run.policy == "off" ? uncachedPasses : run.computed;
      out["runs"].push_back(
          {{"policy", run.policy},
           {"threshold", run.threshold},
           {"error", run.error},
           {"dit_passes", passes},
           {"skipped_passes", run.skipped},
           {"pass_ratio", passes > 0 ? static_cast<double>(uncachedPasses) / passes : 0.0},
           {"sampling_seconds", run.samplingSeconds},
           {"speed_up", run.samplingSeconds > 0 ? reference.samplingSeconds / run.samplingSeconds : 0.0},
           {"psnr_db", jsonNumber(run.psnr)},
           {"worst_shot_psnr_db", jsonNumber(run.worstShotPsnr)},
           {"ssim", jsonNumber(run.ssim)},
           {"cut_flash", jsonNumber(run.flash)},
           {"cut_colour_drift", jsonNumber(run.colourDrift)}});
    }
    std::printf("%s\n", out.dump(1).c_str());
    return 0;
  }
  std::printf("step cache on the demo model: %d held-out shots (latent handoff), %d steps, guidance 4, %d threads\n",
              shots, steps, at::get_num_threads());
  std::printf(
      "MagCache and TeaCache numbers calibrated on %d other held-out shots; figures against the uncached render\n\n",
      kCalibrationShots);
  std::printf("%-12s %6s %7s %7s %8s %7s %8s %8s %6s %7s %7s\n", "policy", "thresh", "passes", "fewer", "sampling",
              "speed", "PSNR", "worst", "SSIM", "flash", "dE");
  std::printf("%-12s %6s %7s %7s %8s %7s %8s %8s %6s %7s %7s\n", "", "", "(DiT)", "", "s", "up", "dB", "shot dB", "",
              "cut", "cut");
  for (const CacheRun& run : runs) {
    const int passes = run.policy == "off" ? uncachedPasses : run.computed;
    if (!run.error.empty()) {
      std::printf("%-12s %6.3g  %s\n", run.policy.c_str(), run.threshold, run.error.c_str());
      continue;
    }
    std::printf("%-12s %6s %7d %6.2fx %8.2f %6.2fx %8s %8s %6s %7s %7s\n", run.policy.c_str(),
                run.policy == "off" ? "-" : cell(run.threshold, "%.3g").c_str(), passes,
                passes > 0 ? static_cast<double>(uncachedPasses) / passes : 0.0, run.samplingSeconds,
                run.samplingSeconds > 0 ? reference.samplingSeconds / run.samplingSeconds : 0.0,
                cell(run.psnr, "%.1f").c_str(), cell(run.worstShotPsnr, "%.1f").c_str(), cell(run.ssim, "%.3f").c_str(),
                cell(run.flash, "%.2f").c_str(), cell(run.colourDrift, "%.1f").c_str());
  }
  std::printf("\ngoal: at least 2x fewer DiT passes at PSNR >= 30 dB, cut flash and dE within 10%% of uncached\n");
  return 0;
}

}  // namespace shotchain::cli
