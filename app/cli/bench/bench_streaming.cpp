// shotchain bench streaming: chunked generation over a KV cache against re-running the whole clip at every
// step, the time to a shot's first decoded frame, the cache's size, its memory over a long chain, and on
// the demo model the cut figures of keep vs recache vs the clean-prefix handoff.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include "cli/command_specs.h"
#include "cli/verbs.h"
#include "continuity/kv_stream.h"
#include "demo/chain_cut_eval.h"
#include "demo/demo_configs.h"
#include "demo/demo_generation.h"
#include "demo/stream_chain_eval.h"
#include "memory/counting_cpu_allocator.h"
#include "models/kv_cache.h"
#include "models/model_files.h"
#include "models/umt5/umt5_text_encoder.h"
#include "models/wan/wan_model.h"
#include "models/wan/wan_vae.h"
#include "sampling/stream_sampler.h"
#include "util/median.h"

namespace shotchain::cli {
namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

double medianOf(int repeats, const std::function<double()>& run) {
  std::vector<double> times;
  for (int i = 0; i < repeats; ++i) times.push_back(run());
  return util::medianOr(std::move(times), 0);
}

struct Bench {
  std::unique_ptr<models::WanModel> dit;
  std::unique_ptr<models::WanVae> vae;
  at::Tensor cond, uncond;
  std::int64_t channels = 0, height = 0, width = 0;  // latent
};

Bench loadBench(const std::string& config, std::int64_t width, std::int64_t height) {
  Bench b;
  if (config == "demo") {
    demo::DemoModels demo = demo::DemoModels::load(models::builtinModelDirectory("demo"));
    b.cond = demo.text->encode("a red circle moving right on a black background");
    b.uncond = demo.text->encode("");
    b.dit = std::move(demo.dit);
    b.vae = std::move(demo.vae);
  } else if (config == "tiny") {
    models::WanConfig c = models::WanConfig::preset("tiny");
    c.causalBlockSize = 1;
    c.diffusionForcing = true;
    b.dit = std::make_unique<models::WanModel>(models::WanModel::random(c, 7));
    b.vae = std::make_unique<models::WanVae>(models::WanVae::random(models::WanVaeConfig::preset("tiny"), 8));
    b.cond = at::randn({12, c.textDim});
    b.uncond = at::randn({8, c.textDim});
  }
  const std::int64_t spatial = b.vae->config().spatialFactor();
  b.channels = b.dit->latentChannels();
  b.height = height / spatial;
  b.width = width / spatial;
  return b;
}

sampling::SamplerOptions samplerOptions(int steps, double guidance, std::uint64_t seed) {
  sampling::SamplerOptions o;
  o.steps = steps;
  o.guidance = guidance;
  o.shift = demo::kDemoShift;
  o.seed = seed;
  return o;
}

}  // namespace

int runBenchStreaming(const Args& args) {
  const ParsedOptions parsed = kBenchStreamingCommand.parse(args, 1);
  const std::string config = parsed.text("--config").value_or("demo");
  const bool isDemo = config == "demo";
  const Dimensions size = parsed.dimensions("--size").value_or(Dimensions{64, 64});
  const std::int64_t frames = parsed.int64("--latent-frames").value();
  const int steps = parsed.integer("--steps").value_or(isDemo ? demo::kDemoSteps : 8);
  const int shots = parsed.integer("--shots").value();
  const int chainSteps = parsed.integer("--chain-steps").value();
  const std::int64_t window = parsed.int64("--window").value_or(isDemo ? 3 : 8);
  const int chains = parsed.integer("--chains").value_or(isDemo ? 16 : 0);
  const int repeats = std::max(1, parsed.integer("--repeats").value());
  const bool json = parsed.flag("--json");
  const double guidance = isDemo ? demo::kDemoGuidance : 4.0;
  if (config != "demo" && config != "tiny")
    throw kBenchStreamingCommand.error("--config: demo or tiny, not \"" + config + "\"");
  if (frames < 2)
    throw kBenchStreamingCommand.error(
        "--latent-frames: at least 2 (a later shot of the chain streams one chunk fewer)");
  const std::pair<const char*, std::int64_t> positive[] = {
      {"--steps", steps}, {"--shots", shots}, {"--chain-steps", chainSteps}, {"--window", window}};
  for (const auto& [name, value] : positive)
    if (value < 1) throw kBenchStreamingCommand.error(std::string(name) + ": at least 1");
  memory::installCountingCpuAllocator();
  at::NoGradGuard noGrad;
  const Bench b = loadBench(config, size.width, size.height);
  const int branches = sampling::streamBranches(guidance);
  const std::vector<std::int64_t> shape{b.channels, frames, b.height, b.width};
  const std::int64_t chunk = b.dit->capabilities().causalBlockSize;
  if (chunk <= 0) throw kBenchStreamingCommand.error("the " + config + " DiT is not block-causal");
  if (frames % chunk != 0 || frames == chunk)
    throw kBenchStreamingCommand.error("--latent-frames: at least two whole chunks of " + std::to_string(chunk));

  // 1. One shot: chunked with the cache vs re-running the clip so far at every step (same steps, same noise),
  // one after the other in every repeat so that both see the same machine.
  auto newStream = [&] { return continuity::KvStream(*b.dit, branches, b.height, b.width, 4096, 0); };
  std::vector<double> cachedTimes, rerunTimes, ratios;
  for (int i = 0; i < repeats; ++i) {
    continuity::KvStream stream = newStream();
    auto start = Clock::now();
    sampling::sampleStream(stream.denoiser(), shape, chunk, b.cond, b.uncond, samplerOptions(steps, guidance, 1));
    cachedTimes.push_back(since(start));
    start = Clock::now();
    sampling::sampleStream(sampling::rerunChunkDenoiser(*b.dit), shape, chunk, b.cond, b.uncond,
                           samplerOptions(steps, guidance, 1));
    rerunTimes.push_back(since(start));
    ratios.push_back(rerunTimes.back() / cachedTimes.back());
  }
  const double cached = util::medianOr(cachedTimes, 0), rerun = util::medianOr(rerunTimes, 0),
               ratio = util::medianOr(ratios, 0);

  // 2. A continuing shot: from its start to its first decoded frame (its first chunk, then a VAE stream push).
  std::uint64_t bytesPerFrame = 0;
  const double firstFrame = medianOf(repeats, [&] {
    continuity::KvStream stream = newStream();
    stream.commit(sampling::seededNoise(shape, 3), b.cond, b.uncond, false);
    bytesPerFrame = stream.cache().bytes() / static_cast<std::uint64_t>(stream.cache().frames());
    std::unique_ptr<models::VaeDecodeStream> decoder = b.vae->openDecodeStream();
    double first = 0;
    const auto start = Clock::now();
    sampling::sampleStream(stream.denoiser(), shape, chunk, b.cond, b.uncond, samplerOptions(steps, guidance, 2), {},
                           [&](const sampling::ChunkDone& done) {
                             stream.committed(done.latent);
                             for (std::int64_t f = 0; f < done.latent.size(1); ++f)
                               (void)decoder->push(done.latent.narrow(1, f, 1));
                             if (first == 0) first = since(start);
                             return false;  // the first frame is what is timed
                           });
    return first;
  });

  // 3. A long chain with window W: the cache and the allocator's live bytes after every shot.
  std::vector<std::uint64_t> cacheBytes, liveBytes;
  std::vector<std::int64_t> held;
  {
    continuity::KvStream stream(*b.dit, branches, b.height, b.width, window, 0);
    const std::vector<std::int64_t> next{b.channels, frames - chunk, b.height, b.width};
    for (int shot = 0; shot < shots; ++shot) {
      sampling::sampleStream(stream.denoiser(), shot == 0 ? shape : next, chunk, b.cond, b.uncond,
                             samplerOptions(chainSteps, guidance, 10 + static_cast<std::uint64_t>(shot)), {},
                             [&](const sampling::ChunkDone& done) {
                               stream.committed(done.latent);
                               return true;
                             });
      cacheBytes.push_back(stream.cache().bytes());
      held.push_back(stream.cache().frames());
      liveBytes.push_back(memory::cpuAllocationStats().allocated);
    }
  }

  // 4. The demo's cuts: keep vs recache at a prompt change, and the clean-prefix handoff of `latent`, on the
  // demo's own 17-frame shots (the eval of resources/README.md).
  std::vector<demo::ChainCutResult> cuts;
  if (isDemo && chains > 0) {
    const demo::DemoModels models = demo::DemoModels::load(models::builtinModelDirectory("demo"));
    demo::DemoShotSettings settings;
    settings.width = static_cast<int>(size.width);
    settings.height = static_cast<int>(size.height);
    cuts.push_back(demo::evaluateStreamChainCuts(models, settings, chains, static_cast<int>(window), false));
    cuts.push_back(demo::evaluateStreamChainCuts(models, settings, chains, static_cast<int>(window), true));
    Continuity latent;
    latent.mode = ContinuityMode::Latent;
    cuts.push_back(demo::evaluateChainCuts(models, settings, latent, chains, false));
  }

  if (json) {
    std::printf(
        "{\"config\": \"%s\", \"size\": [%lld, %lld], \"latent_frames\": %lld, \"chunk\": %lld, \"steps\": %d, "
        "\"threads\": %d, \"repeats\": %d, \"cached_s\": %.6f, \"rerun_s\": %.6f, \"speedup\": %.3f, "
        "\"first_frame_s\": %.6f, \"cache_bytes_per_frame\": %llu, \"window\": %lld, \"chain\": [",
        config.c_str(), static_cast<long long>(size.width), static_cast<long long>(size.height),
        static_cast<long long>(frames), static_cast<long long>(chunk), steps, at::get_num_threads(), repeats, cached,
        rerun, ratio, firstFrame, static_cast<unsigned long long>(bytesPerFrame), static_cast<long long>(window));
    for (std::size_t i = 0; i < cacheBytes.size(); ++i)
      std::printf("%s{\"frames_held\": %lld, \"cache_bytes\": %llu, \"live_bytes\": %llu}", i ? ", " : "",
                  static_cast<long long>(held[i]), static_cast<unsigned long long>(cacheBytes[i]),
                  static_cast<unsigned long long>(liveBytes[i]));
    std::printf("], \"cuts\": [");
    for (std::size_t i = 0; i < cuts.size(); ++i)
      std::printf(
          "%s{\"mode\": \"%s\", \"method\": \"%s\", \"chains\": %d, \"flash\": %.4f, \"colour_drift\": %.4f, "
          "\"hue_change\": %.4f, \"jump_ratio\": %.4f, \"wrong_object_frames\": %.4f}",
          i ? ", " : "", cuts[i].mode.c_str(), cuts[i].method.c_str(), cuts[i].chains, cuts[i].flash,
          cuts[i].colourDrift, cuts[i].hueChange, cuts[i].jumpRatio, cuts[i].wrongObjectFrames);
    std::printf("]}\n");
    return 0;
  }
  std::printf(
      "streaming: %s DiT, %lldx%lld px (%lldx%lld latents), chunks of %lld, %d steps, CFG %d branches, %d threads\n",
      config.c_str(), static_cast<long long>(size.width), static_cast<long long>(size.height),
      static_cast<long long>(b.width), static_cast<long long>(b.height), static_cast<long long>(chunk), steps, branches,
      at::get_num_threads());
  std::printf(
      "shot of %lld latent frames: with the KV cache %.3f s, re-running the clip at every step %.3f s: %.2fx "
      "(medians of %d, run in turn)\n",
      static_cast<long long>(frames), cached, rerun, ratio, repeats);
  std::printf("first decoded frame of a continuing shot: %.3f s after its start (median of %d)\n", firstFrame, repeats);
  std::printf("cache: %llu bytes per latent frame (%d branches)\n", static_cast<unsigned long long>(bytesPerFrame),
              branches);
  std::printf(
      "chain of %d shots, window %lld + sink %lld (%d steps per chunk):\n  shot  frames held  cache bytes  live CPU "
      "bytes\n",
      shots, static_cast<long long>(window), static_cast<long long>(chunk), chainSteps);
  for (std::size_t i = 0; i < cacheBytes.size(); ++i)
    std::printf("  %4zu  %11lld  %11llu  %14llu\n", i + 1, static_cast<long long>(held[i]),
                static_cast<unsigned long long>(cacheBytes[i]), static_cast<unsigned long long>(liveBytes[i]));
  if (!cuts.empty()) {
    std::printf("cuts to a new prompt, %d two-shot chains (medians):\n  %-22s %6s %8s %8s %6s %8s\n", chains, "handoff",
                "flash", "dE", "hue", "jump", "wrong");
    for (const demo::ChainCutResult& c : cuts)
      std::printf("  %-22s %6.2f %8.2f %8.1f %6.2f %7.0f%%\n",
                  (c.mode + (c.method.empty() ? "" : ", " + c.method)).c_str(), c.flash, c.colourDrift, c.hueChange,
                  c.jumpRatio, 100 * c.wrongObjectFrames);
  }
  return 0;
}

}  // namespace shotchain::cli
