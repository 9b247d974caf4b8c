// `shotchain bench residency`: the same sequence rendered under each residency policy side by side
// in one run, with the figures of the seed's table.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/bench/bench_dit_weights.h"
#include "cli/bench/bench_experts.h"
#include "cli/bench/bench_lora_switch.h"
#include "cli/bench/bench_model_folder.h"
#include "cli/bench/bench_options.h"
#include "cli/command_specs.h"
#include "cli/option_values.h"
#include "cli/verbs.h"
#include "memory/memory_probe.h"
#include "render/renderer.h"
#include "sequence/sequence_io.h"
#include "util/byte_size.h"
#include "util/cache_directory.h"
#include "util/median.h"

namespace shotchain::cli {
namespace {

using Clock = std::chrono::steady_clock;

// The seed's measurement, with the 14B DiT on a GPU: what another size or device is compared with, not held to.
struct SeedFigure {
  double reloadSeconds = 14.2;
  double pinnedSeconds = 0.4;
  double ratio = 35.5;
  double pinnedShareGoal = 0.01;
};
constexpr SeedFigure kSeed;

struct Gap {
  double seconds = 0;
  render::GapParts parts;
};

// Collects the timing of every step and the figures of every cut of one render.
class BenchObserver : public render::RenderObserver {
 public:
  explicit BenchObserver(Clock::time_point start) : start_(start) {}

  void shotStarted(const render::ShotStarted& event) override { shots_.push_back({event.index, -1, -1, event.gap}); }
  void stepDone(const render::StepDone& event) override {
    const double now = std::chrono::duration<double>(Clock::now() - start_).count();
    ShotTimes& shot = shots_.back();
    if (shot.firstStepStart < 0) shot.firstStepStart = now - event.seconds;
    shot.lastStepEnd = now;
  }
  void cutMeasured(const continuity::CutMetrics& cut) override { cuts_.push_back(cut); }

  // End of shot N's last step → start of shot N+1's first step, for every cut; with what it went to.
  std::vector<Gap> interShotGaps() const {
    std::vector<Gap> gaps;
    for (std::size_t i = 1; i < shots_.size(); ++i)
      if (shots_[i - 1].lastStepEnd >= 0 && shots_[i].firstStepStart >= 0)
        gaps.push_back({shots_[i].firstStepStart - shots_[i - 1].lastStepEnd, shots_[i].gap});
    return gaps;
  }
  const std::vector<continuity::CutMetrics>& cuts() const { return cuts_; }

 private:
  struct ShotTimes {
    int index;
    double firstStepStart;
    double lastStepEnd;
    render::GapParts gap;
  };
  Clock::time_point start_;
  std::vector<ShotTimes> shots_;
  std::vector<continuity::CutMetrics> cuts_;
};

struct PolicyRun {
  std::string policy;
  bool ran = false;
  std::string error;
  double wallSeconds = 0;
  std::vector<double> overheads;
  double medianOverhead = 0;
  // Medians over the gaps of what each went to; `rest` is the gap less the named parts.
  render::GapParts medianParts;
  double medianRest = 0;
  double overheadShare = 0;  // sum of the gaps / wall time
  double medianHandoffMse = NAN;
  double medianRoundtripMse = NAN;
  std::uint64_t peakAllocated = 0;
  memory::MemorySample last;
  std::string chosen;
  std::uint64_t planPeak = 0;  // the memory plan's peak for the policy it chose
  int ditLoads = 0;            // reload: one per shot
  double ditLoadSeconds = 0;
  std::string previewDecoder;  // with --preview-decoder: the file the render found (empty: it did not fit)
  int previewDecodes = 0;
  double previewSeconds = 0;
};

PolicyRun runPolicy(const Sequence& sequence, const std::filesystem::path& baseDir, const std::filesystem::path& out,
                    ResidencyPolicy policy, const std::string& device, std::optional<std::uint64_t> budget,
                    bool previews) {
  PolicyRun run;
  run.policy = toString(policy);
  render::RenderOptions options;
  options.sequenceDirectory = baseDir;
  options.outputDirectory = out / run.policy;
  options.policy = policy;
  options.budget = budget;
  options.device = device;
  options.previews = previews;
  render::Renderer renderer;
  renderer.probe()->resetPeak();
  renderer.probe()->markTransfers();
  const auto start = Clock::now();
  BenchObserver observer(start);
  try {
    const render::RenderSummary summary = renderer.render(sequence, options, observer);
    run.ran = summary.finished.completed;
    if (!run.ran) run.error = summary.warnings.empty() ? "did not complete" : summary.warnings.back().message;
    run.chosen = toString(summary.plan.chosen);
    run.planPeak = summary.plan.chosenPeak();
    run.ditLoads = summary.ditLoads;
    run.ditLoadSeconds = summary.ditLoadSeconds;
    run.previewDecoder = summary.previewDecoder;
    run.previewDecodes = summary.previewDecodes;
    run.previewSeconds = summary.previewSeconds;
  } catch (const std::exception& error) {
    run.error = error.what();
    return run;
  }
  run.wallSeconds = std::chrono::duration<double>(Clock::now() - start).count();
  std::vector<double> waits, encodes, weights, writes, rests;
  for (const Gap& gap : observer.interShotGaps()) {
    run.overheads.push_back(gap.seconds);
    waits.push_back(gap.parts.waitingForDecode);
    encodes.push_back(gap.parts.encodingFrames);
    weights.push_back(gap.parts.movingWeights);
    writes.push_back(gap.parts.writingFiles);
    rests.push_back(std::max(0.0, gap.seconds - gap.parts.total()));
  }
  run.medianOverhead = util::medianOr(run.overheads, NAN);
  run.medianParts = {util::medianOr(waits, NAN), util::medianOr(encodes, NAN), util::medianOr(weights, NAN),
                     util::medianOr(writes, NAN)};
  run.medianRest = util::medianOr(rests, NAN);
  double total = 0;
  for (const double gap : run.overheads) total += gap;
  run.overheadShare = run.wallSeconds > 0 ? total / run.wallSeconds : 0;
  std::vector<double> handoff, roundtrip;
  for (const continuity::CutMetrics& cut : observer.cuts()) {
    handoff.push_back(cut.handoffMse.value_or(NAN));
    roundtrip.push_back(cut.roundtripMse.value_or(NAN));
  }
  run.medianHandoffMse = util::medianOr(handoff, NAN);
  run.medianRoundtripMse = util::medianOr(roundtrip, NAN);
  run.last = renderer.probe()->sample();
  run.peakAllocated = run.last.peakAllocated;
  return run;
}

nlohmann::ordered_json orNull(double v) { return std::isnan(v) ? nlohmann::ordered_json() : nlohmann::ordered_json(v); }

std::string seconds(double s) {
  char text[32];
  if (std::isnan(s)) return "-";
  std::snprintf(text, sizeof text, s < 0.1 ? "%.1f ms" : "%.3f s", s < 0.1 ? s * 1000 : s);
  return text;
}

std::string number(double v, const char* format = "%.3g") {
  if (std::isnan(v)) return "-";
  char text[32];
  std::snprintf(text, sizeof text, format, v);
  return text;
}

// "pinned,offload,reload": the policies in the order given.
std::vector<ResidencyPolicy> policyList(const std::string& list) {
  std::vector<ResidencyPolicy> policies;
  for (const std::string& name : splitList(list)) {
    const std::optional<ResidencyPolicy> policy = residencyPolicyFromString(name);
    if (!policy)
      throw kBenchResidencyCommand.error("--policies: \"" + list + "\" is not a list of pinned, offload, reload, auto");
    policies.push_back(*policy);
  }
  return policies;
}

}  // namespace

int runBenchResidency(const Args& args) {
  const ParsedOptions parsed = kBenchResidencyCommand.parse(args, 1);
  const std::string sequencePath = parsed.operands().empty() ? std::string() : parsed.operands().front();
  const std::string config = parsed.text("--config").value_or("");
  const std::optional<std::string> sizeName = parsed.text("--size");
  const int chains = static_cast<int>(!sequencePath.empty()) + static_cast<int>(!config.empty()) +
                     static_cast<int>(sizeName.has_value());
  if (chains != 1) throw kBenchResidencyCommand.error("give SEQUENCE, --config or --size, one of them");
  for (const char* sized : {"--weights-dir", "--dtype"})
    if (!sizeName && parsed.text(sized)) throw kBenchResidencyCommand.error(std::string(sized) + " goes with --size");
  std::optional<BenchDitSize> size;
  try {
    if (sizeName) size = parseBenchDitSize(*sizeName);
  } catch (const std::invalid_argument& error) {
    throw kBenchResidencyCommand.error(error.what());
  }
  const at::ScalarType dtype = parseBenchDtype(parsed.text("--dtype").value_or("bfloat16"));
  const std::filesystem::path weightsDir =
      parsed.text("--weights-dir")
          .value_or(util::userCacheDirectory().empty() ? std::filesystem::path()
                                                       : util::userCacheDirectory() / "bench-weights");
  if (size && weightsDir.empty())
    throw kBenchResidencyCommand.error(
        "--size: no user cache folder (SHOTCHAIN_CACHE_DIR, XDG_CACHE_HOME and HOME are unset); give --weights-dir");
  BenchSequenceShape shape;
  shape.shots = parsed.integer("--shots").value();
  shape.steps = parsed.integer("--steps").value_or(shape.steps);
  shape.width = parsed.integer("--width").value_or(shape.width);
  shape.height = parsed.integer("--height").value_or(shape.height);
  shape.frames = parsed.integer("--frames").value_or(shape.frames);
  const std::vector<ResidencyPolicy> policies = policyList(parsed.text("--policies").value());
  const std::string device = parsed.text("--device").value();
  const std::optional<std::uint64_t> budget = parsed.byteSize("--budget");
  const std::optional<std::filesystem::path> outArg = parsed.text("--out");
  const bool json = parsed.flag("--json");
  const std::optional<std::filesystem::path> previewDecoder = parsed.text("--preview-decoder");
  if (previewDecoder && !std::filesystem::is_regular_file(*previewDecoder))
    throw kBenchResidencyCommand.error("--preview-decoder: " + previewDecoder->string() + " is not a file");

  const std::filesystem::path out =
      outArg ? *outArg
             : std::filesystem::temp_directory_path() / ("shotchain-bench-residency-" + std::to_string(::getpid()));
  std::filesystem::create_directories(out);
  Sequence sequence;
  std::filesystem::path baseDir;
  std::optional<BenchDitWeights> weights;
  if (!sequencePath.empty()) {
    const LoadResult loaded = loadSequenceFile(sequencePath);
    if (!loaded.ok()) {
      for (const Diagnostic& d : loaded.diagnostics) std::fprintf(stderr, "%s\n", d.format(sequencePath).c_str());
      return 1;
    }
    sequence = repeatShots(*loaded.sequence, shape);
    baseDir = std::filesystem::absolute(sequencePath).parent_path();
  } else if (size) {
    std::fprintf(stderr, "the %s DiT's random weights in %s...\n", size->name.c_str(), weightsDir.c_str());
    weights = ensureBenchDitWeights(*size, dtype, weightsDir);
    std::fprintf(stderr, "  %s %s (%s)\n", weights->written ? "written:" : "reused:", weights->file.c_str(),
                 util::formatByteSize(weights->bytes).c_str());
    sequence = benchSequenceReading(size->name, size->config, weights->file, shape, out / "models");
    baseDir = out;
  } else {
    std::fprintf(stderr, "preparing the %s model...\n", config.c_str());
    sequence = benchSequence(config, shape, out / "models");
    baseDir = out;
  }

  if (previewDecoder) {
    if (sequence.settings.model.folder.empty())
      throw kBenchResidencyCommand.error("--preview-decoder goes with --config tiny, 1.3b or 14b, or --size");
    const std::filesystem::path approx = std::filesystem::path(sequence.settings.model.folder) / "vae_approx";
    std::filesystem::create_directories(approx);
    std::filesystem::copy_file(*previewDecoder, approx / previewDecoder->filename(),
                               std::filesystem::copy_options::overwrite_existing);
  }

  std::vector<PolicyRun> runs;
  for (const ResidencyPolicy policy : policies) {
    std::fprintf(stderr, "rendering %zu shots under %s...\n", sequence.shots.size(), toString(policy));
    runs.push_back(runPolicy(sequence, baseDir, out, policy, device, budget, previewDecoder.has_value()));
    if (!runs.back().error.empty()) std::fprintf(stderr, "  %s: %s\n", toString(policy), runs.back().error.c_str());
  }
  std::optional<LoraSwitchFigures> lora;
  if (parsed.flag("--lora-switch")) {
    std::fprintf(stderr, "switching LoRAs between shots, then reloading the base for every shot...\n");
    lora = benchLoraSwitch(sequence, baseDir, out / "lora-switch", device);
  }
  std::vector<ExpertRun> experts;
  if (parsed.flag("--experts")) {
    std::fprintf(stderr, "two experts: both resident, swapped at the boundary, read from disk...\n");
    experts = benchExperts(sequence, baseDir, out / "experts", device);
  }
  if (!outArg) std::filesystem::remove_all(out);

  const PolicyRun* pinned = nullptr;
  const PolicyRun* reload = nullptr;
  for (const PolicyRun& run : runs) {
    if (run.policy == "pinned" && run.ran) pinned = &run;
    if (run.policy == "reload" && run.ran) reload = &run;
  }
  const double reloadRatio =
      pinned && reload && pinned->medianOverhead > 0 ? reload->medianOverhead / pinned->medianOverhead : NAN;

  if (json) {
    nlohmann::ordered_json j;
    j["sequence"] = sequence.settings.name;
    if (size) {
      j["size"] = size->name;
      j["dtype"] = dtype == at::kBFloat16 ? "bfloat16" : "float32";
      j["dit_layers"] = size->config.numLayers;
      j["weights_file"] = weights->file.string();
      j["weights_bytes"] = weights->bytes;
      j["weights_written"] = weights->written;
      j["weights_write_seconds"] = weights->writeSeconds;
    }
    j["shots"] = sequence.shots.size();
    j["device"] = device;
    j["runs"] = nlohmann::ordered_json::array();
    for (const PolicyRun& run : runs) {
      j["runs"].push_back(
          {{"policy", run.policy},
           {"completed", run.ran},
           {"error", run.error},
           {"wall_seconds", run.wallSeconds},
           {"inter_shot_overhead_seconds", run.overheads},
           {"median_inter_shot_overhead_seconds", run.medianOverhead},
           {"overhead_share_of_wall", run.overheadShare},
           {"median_gap_parts_seconds",
            {{"waiting_for_decode", orNull(run.medianParts.waitingForDecode)},
             {"encoding_frames", orNull(run.medianParts.encodingFrames)},
             {"moving_weights", orNull(run.medianParts.movingWeights)},
             {"writing_files", orNull(run.medianParts.writingFiles)},
             {"rest", orNull(run.medianRest)}}},
           {"median_handoff_mse",
            std::isnan(run.medianHandoffMse) ? nlohmann::ordered_json() : nlohmann::ordered_json(run.medianHandoffMse)},
           {"median_roundtrip_mse", std::isnan(run.medianRoundtripMse)
                                        ? nlohmann::ordered_json()
                                        : nlohmann::ordered_json(run.medianRoundtripMse)},
           {"peak_allocated", run.peakAllocated},
           {"plan_policy", run.chosen},
           {"plan_peak", run.planPeak},
           {"dit_loads", run.ditLoads},
           {"dit_load_seconds", run.ditLoadSeconds},
           {"preview_decoder", run.previewDecoder},
           {"preview_decodes", run.previewDecodes},
           {"preview_seconds_each", run.previewDecodes > 0 ? run.previewSeconds / run.previewDecodes : 0.0},
           {"reserved_after", run.last.reserved},
           {"cached_unused_after", run.last.cachedUnused()},
           {"inactive_split_after", run.last.inactiveSplit},
           {"free_fragmentation_after", run.last.freeFragmentation},
           {"bytes_moved", run.last.transferredBytes}});
    }
    j["reload_over_pinned_overhead"] =
        std::isnan(reloadRatio) ? nlohmann::ordered_json() : nlohmann::ordered_json(reloadRatio);
    j["pinned_overhead_share"] = pinned ? nlohmann::ordered_json(pinned->overheadShare) : nlohmann::ordered_json();
    j["seed_comparison"] = {{"what", "the seed's figure: the 14B DiT on a GPU, for comparison only"},
                            {"reload_seconds", kSeed.reloadSeconds},
                            {"pinned_seconds", kSeed.pinnedSeconds},
                            {"reload_over_pinned_overhead", kSeed.ratio}};
    if (lora)
      j["lora_switch"] = {{"error", lora->error},
                          {"switches", lora->switches},
                          {"lora_weights", lora->loraWeights},
                          {"median_patch_seconds", lora->medianPatchSeconds},
                          {"median_bytes_written", lora->medianBytesWritten},
                          {"base_bytes_moved", lora->baseBytesMoved},
                          {"reload_seconds_per_shot", lora->reloadSecondsPerShot}};
    if (!experts.empty()) {
      j["experts"] = nlohmann::ordered_json::array();
      for (const ExpertRun& run : experts)
        j["experts"].push_back({{"residency", run.residency},
                                {"error", run.error},
                                {"wall_seconds", run.wallSeconds},
                                {"median_move_seconds_per_shot", run.medianMoveSeconds},
                                {"median_bytes_per_shot", run.medianBytesPerShot},
                                {"planned_bytes_per_shot", run.plannedBytesPerShot},
                                {"reserved_peak", run.reservedPeak},
                                {"expert_bytes", run.expertBytes}});
    }
    std::printf("%s\n", j.dump(2).c_str());
  } else {
    std::printf("\n%s: %zu shots on %s\n\n", sequence.settings.name.c_str(), sequence.shots.size(), device.c_str());
    std::printf("%-8s %10s %14s %8s %12s %12s %11s %11s %8s %12s\n", "policy", "wall", "inter-shot", "of wall",
                "handoff MSE", "round-trip", "peak", "cached", "frag", "moved");
    std::printf("%-8s %10s %14s %8s %12s %12s %11s %11s %8s %12s\n", "", "", "(median)", "", "(latent)", "MSE", "",
                "after", "after", "between");
    for (const PolicyRun& run : runs) {
      if (!run.ran) {
        std::printf("%-8s %s\n", run.policy.c_str(), run.error.c_str());
        continue;
      }
      std::printf("%-8s %10s %14s %7.2f%% %12s %12s %11s %11s %8.3f %12s\n", run.policy.c_str(),
                  seconds(run.wallSeconds).c_str(), seconds(run.medianOverhead).c_str(), 100 * run.overheadShare,
                  number(run.medianHandoffMse).c_str(), number(run.medianRoundtripMse).c_str(),
                  util::formatByteSize(run.peakAllocated).c_str(),
                  util::formatByteSize(run.last.cachedUnused()).c_str(), run.last.freeFragmentation,
                  util::formatByteSize(run.last.transferredBytes).c_str());
    }
    std::printf(
        "\nwhat the gap between shots went to (medians): waiting for a decode, encoding frames, moving weights, "
        "writing files, the rest\n");
    for (const PolicyRun& run : runs)
      if (run.ran)
        std::printf("%-8s %s  %s  %s  %s  %s\n", run.policy.c_str(), seconds(run.medianParts.waitingForDecode).c_str(),
                    seconds(run.medianParts.encodingFrames).c_str(), seconds(run.medianParts.movingWeights).c_str(),
                    seconds(run.medianParts.writingFiles).c_str(), seconds(run.medianRest).c_str());
    const std::string chain = size ? "the " + size->name + " DiT (" + std::to_string(size->config.numLayers) +
                                         (size->config.numLayers == 1 ? " block, " : " blocks, ") +
                                         (dtype == at::kBFloat16 ? "bfloat16" : "float32") + ")"
                                   : "the " + (config.empty() ? sequence.settings.name : config) + " DiT";
    std::printf("\ninter-shot overhead, reload / pinned: %s with %s on %s\n", number(reloadRatio, "%.1f×").c_str(),
                chain.c_str(), device.c_str());
    if (pinned) std::printf("pinned overhead share of wall time: %.2f%%\n", 100 * pinned->overheadShare);
    if (reload && device == "cpu")
      std::printf(
          "(on the CPU a reload maps the file again: its tensors are views of the page cache, read as the first "
          "step touches them rather than in the gap)\n");
    const bool seedsOwn = size && size->name == "14b" && device.rfind("cuda", 0) == 0;
    std::printf("%s: inter-shot %.1f s reloading → %.1f s pinned, %.1f×; pinned share of wall ≤ %.0f%%\n",
                seedsOwn ? "the seed's goal for this size (14B DiT on a GPU)"
                         : "for comparison only, the seed's figure with the 14B DiT on a GPU",
                kSeed.reloadSeconds, kSeed.pinnedSeconds, kSeed.ratio, 100 * kSeed.pinnedShareGoal);
    if (previewDecoder)
      for (const PolicyRun& run : runs)
        if (run.ran)
          std::printf("%-8s previews: %d decoded by %s, %s each\n", run.policy.c_str(), run.previewDecodes,
                      run.previewDecoder.empty() ? "no decoder (it does not fit the DiT)" : run.previewDecoder.c_str(),
                      seconds(run.previewDecodes > 0 ? run.previewSeconds / run.previewDecodes : NAN).c_str());
    if (lora && !lora->error.empty())
      std::printf("\nswitch LoRA between shots: %s\n", lora->error.c_str());
    else if (lora)
      std::printf(
          "\nswitch LoRA between shots (%d weights each, %d switches): patch %s median, %s written, %s of base weights "
          "moved; reloading the base instead: %s per shot (%s)\n",
          lora->loraWeights, lora->switches, seconds(lora->medianPatchSeconds).c_str(),
          util::formatByteSize(static_cast<std::uint64_t>(lora->medianBytesWritten)).c_str(),
          util::formatByteSize(lora->baseBytesMoved).c_str(), seconds(lora->reloadSecondsPerShot).c_str(),
          lora->medianPatchSeconds > 0
              ? number(lora->reloadSecondsPerShot / lora->medianPatchSeconds, "%.1f× the patch").c_str()
              : "-");
    if (!experts.empty()) {
      std::printf("\ntwo experts (pinned, one expert %s):\n%-9s %10s %16s %14s %14s %12s\n",
                  util::formatByteSize(experts.back().expertBytes).c_str(), "experts", "wall", "moving per shot",
                  "bytes per shot", "plan said", "peak held");
      for (const ExpertRun& run : experts) {
        if (!run.error.empty()) {
          std::printf("%-9s %s\n", run.residency.c_str(), run.error.c_str());
          continue;
        }
        std::printf("%-9s %10s %16s %14s %14s %12s\n", run.residency.c_str(), seconds(run.wallSeconds).c_str(),
                    seconds(run.medianMoveSeconds).c_str(), util::formatByteSize(run.medianBytesPerShot).c_str(),
                    util::formatByteSize(run.plannedBytesPerShot).c_str(),
                    util::formatByteSize(run.reservedPeak).c_str());
      }
    }
  }
  for (const PolicyRun& run : runs)
    if (!run.ran && run.policy != "offload") return 1;
  for (const ExpertRun& run : experts)
    if (!run.error.empty()) return 1;
  return 0;
}

}  // namespace shotchain::cli
