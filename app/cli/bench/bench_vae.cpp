// shotchain bench vae: Wan 2.1 / 2.2 VAE decode time and peak memory, full vs tiled, with the estimate.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>

#include "cli/bench/bench_options.h"
#include "cli/command_specs.h"
#include "cli/verbs.h"
#include "memory/counting_cpu_allocator.h"
#include "models/wan/wan_vae.h"
#include "models/wan/wan_vae_memory.h"

namespace shotchain::cli {
namespace {

double timeOf(const std::function<void()>& body) {
  const auto start = std::chrono::steady_clock::now();
  body();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

struct VaeRun {
  std::string mode;
  models::VaeTiling tiling;
  double median = 0, best = 0;
  std::uint64_t peak = 0;
  models::WanVaeDecodeMemory estimate;
};

double mib(std::uint64_t bytes) { return static_cast<double>(bytes) / 1048576.0; }

}  // namespace

int runBenchVae(const Args& args) {
  memory::installCountingCpuAllocator();  // before any tensor of the run exists
  const ParsedOptions parsed = kBenchVaeCommand.parse(args, 1);
  std::string preset = parsed.text("--config").value();
  models::WanVaeConfig config = models::WanVaeConfig::preset(preset == "custom" ? "wan21" : preset);
  if (const std::optional<std::int64_t> dim = parsed.int64("--dim")) {
    config.dim = *dim;
    preset = "custom";
  }
  const std::int64_t frames = parsed.int64("--frames").value();
  const Dimensions size = parsed.dimensions("--size").value();
  const std::int64_t width = size.width, height = size.height;
  const std::int64_t tile = parsed.int64("--tile").value_or(0), overlap = parsed.int64("--overlap").value_or(-1);
  const int repeats = std::max(1, parsed.integer("--repeats").value());
  const bool json = parsed.flag("--json"), withTiled = parsed.flag("--tiled") || parsed.int64("--tile");
  const at::ScalarType dtype = parseBenchDtype(parsed.text("--dtype").value());
  config.check();
  const std::int64_t s = config.spatialFactor();
  if (width <= 0 || height <= 0 || width % s != 0 || height % s != 0)
    throw std::invalid_argument("--size: width and height must be positive multiples of " + std::to_string(s));
  const std::int64_t latentFrames = config.latentFrames(frames);  // throws for T ≠ 4k+1
  const std::int64_t lh = height / s, lw = width / s;

  const models::WanVae vae = models::WanVae::random(config, 42, {dtype});
  const at::Tensor latent = at::randn({config.zDim, latentFrames, lh, lw}, at::detail::createCPUGenerator(7));

  std::vector<VaeRun> runs;
  runs.push_back({"full", {}, 0, 0, 0, {}});
  if (withTiled) {
    models::VaeTiling tiling;
    if (tile > 0) {
      tiling = {tile, overlap >= 0 ? overlap : std::max<std::int64_t>(2, tile / 4)};
    } else {
      const auto full = models::estimateWanVaeDecode(config, latentFrames, lh, lw, dtype);
      tiling = models::chooseWanVaeTiling(config, latentFrames, lh, lw, dtype, full.totalBytes() / 2);
      if (!tiling.enabled() || tiling.tile >= std::max(lh, lw)) {  // the full decode fits: tile anyway, half size
        const std::int64_t half = std::max<std::int64_t>(2, std::max(lh, lw) / 2);
        tiling = {half, std::min<std::int64_t>(2, half - 1)};
      }
      if (overlap >= 0) tiling.overlap = overlap;
    }
    runs.push_back({"tiled", tiling, 0, 0, 0, {}});
  }

  for (VaeRun& run : runs) {
    models::VaeDecodeOptions options;
    options.tiling = run.tiling;
    run.estimate = models::estimateWanVaeDecode(config, latentFrames, lh, lw, dtype, run.tiling);
    (void)vae.decode(latent, options);  // warm-up
    std::vector<double> times;
    for (int r = 0; r < repeats; ++r) {
      const std::uint64_t base = memory::cpuAllocationStats().allocated;
      memory::resetCpuPeak();
      times.push_back(timeOf([&] { (void)vae.decode(latent, options); }));
      run.peak = std::max(run.peak, memory::cpuAllocationStats().peak - base);
    }
    std::sort(times.begin(), times.end());
    run.median = times[times.size() / 2];
    run.best = times.front();
  }

  const char* dtypeName = dtype == at::kFloat ? "float32" : "bfloat16";
  if (json) {
    std::printf(
        "{\"config\": %s, \"preset\": \"%s\", \"variant\": \"%s\", \"frames\": %lld, \"latent_frames\": %lld, "
        "\"width\": %lld, \"height\": %lld, \"dtype\": \"%s\", \"device\": \"cpu\", \"threads\": %d, "
        "\"repeats\": %d, \"weight_bytes\": %llu, \"peak_method\": \"counting CPU allocator\", \"runs\": [",
        config.toJson().c_str(), preset.c_str(), config.variant().c_str(), static_cast<long long>(frames),
        static_cast<long long>(latentFrames), static_cast<long long>(width), static_cast<long long>(height), dtypeName,
        at::get_num_threads(), repeats, static_cast<unsigned long long>(vae.weightBytes()));
    for (std::size_t i = 0; i < runs.size(); ++i) {
      const VaeRun& r = runs[i];
      std::printf(
          "%s{\"mode\": \"%s\", \"tile\": %lld, \"overlap\": %lld, \"decode_s\": %.6f, \"best_s\": %.6f, "
          "\"decode_s_per_frame\": %.6f, \"peak_bytes\": %llu, \"estimate_bytes\": %llu, \"estimate_cache_bytes\": "
          "%llu, "
          "\"estimate_activation_bytes\": %llu, \"estimate_clip_bytes\": %llu, \"estimate_ratio\": %.4f}",
          i ? ", " : "", r.mode.c_str(), static_cast<long long>(r.tiling.tile),
          static_cast<long long>(r.tiling.overlap), r.median, r.best, r.median / static_cast<double>(frames),
          static_cast<unsigned long long>(r.peak), static_cast<unsigned long long>(r.estimate.totalBytes()),
          static_cast<unsigned long long>(r.estimate.cacheBytes),
          static_cast<unsigned long long>(r.estimate.activationBytes),
          static_cast<unsigned long long>(r.estimate.clipBytes),
          r.peak ? static_cast<double>(r.estimate.totalBytes()) / static_cast<double>(r.peak) : 0.0);
    }
    std::printf("]}\n");
    return 0;
  }
  std::printf("vae: Wan %s %s (dim %lld, z %lld), %lld frames %lldx%lld (latent %lldx%lldx%lld), %s, cpu, %d threads\n",
              config.generation == 22 ? "2.2" : "2.1", config.variant().c_str(), static_cast<long long>(config.dim),
              static_cast<long long>(config.zDim), static_cast<long long>(frames), static_cast<long long>(width),
              static_cast<long long>(height), static_cast<long long>(latentFrames), static_cast<long long>(lh),
              static_cast<long long>(lw), dtypeName, at::get_num_threads());
  std::printf("weights: %.1f MiB; peak = live libtorch CPU bytes above the weights (counting allocator)\n",
              mib(vae.weightBytes()));
  for (const VaeRun& r : runs) {
    std::string label = r.mode;
    if (r.tiling.enabled())
      label += " (tile " + std::to_string(r.tiling.tile) + ", overlap " + std::to_string(r.tiling.overlap) + ")";
    std::printf(
        "%-28s decode %.3f s median of %d (%.1f ms/frame) | peak %.1f MiB | estimate %.1f MiB (%+.1f%%; caches %.1f, "
        "activations %.1f, clip %.1f)\n",
        label.c_str(), r.median, repeats, 1000.0 * r.median / static_cast<double>(frames), mib(r.peak),
        mib(r.estimate.totalBytes()),
        r.peak ? 100.0 * (static_cast<double>(r.estimate.totalBytes()) / static_cast<double>(r.peak) - 1) : 0.0,
        mib(r.estimate.cacheBytes), mib(r.estimate.activationBytes), mib(r.estimate.clipBytes));
  }
  return 0;
}

}  // namespace shotchain::cli
