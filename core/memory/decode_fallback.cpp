#include "memory/decode_fallback.h"

#include <algorithm>

#include <c10/util/Exception.h>

#include "memory/device_memory.h"

namespace shotchain::memory {
namespace {

constexpr std::int64_t kSmallestTile = 4;

std::string describe(const models::VaeTiling& t) {
  if (!t.enabled()) return "untiled decode";
  return "tiled decode (tile " + std::to_string(t.tile) + ", overlap " + std::to_string(t.overlap) + ")";
}

models::VaeTiling tilingOf(std::int64_t tile) {
  return {tile, std::min(tile / 2, std::max<std::int64_t>(2, tile / 4))};
}

}  // namespace

DecodeOutcome decodeWithFallback(const models::VideoVae& vae, const at::Tensor& latent,
                                 models::VaeDecodeOptions options, const MemoryPlan& plan, const std::string& device,
                                 int shotIndex, const models::VaeFrameSink& sink) {
  if (!options.tiling.enabled() && plan.tiledDecode && plan.tile > 0) options.tiling = {plan.tile, plan.tileOverlap};
  const std::int64_t side = std::max(latent.size(-1), latent.size(-2));
  DecodeOutcome outcome;
  for (;;) {
    std::string error;
    try {
      if (sink)
        vae.decode(latent, sink, options);
      else
        outcome.video = vae.decode(latent, options);
      outcome.tiling = options.tiling;
      return outcome;
    } catch (const std::exception& e) {
      if (!isOutOfMemory(e)) throw;
      error = firstLineOf(e.what());
    }
    // Outside the handler: the failed attempt's tensors went with its frames; return the cache.
    emptyDeviceCache(device);
    const models::VaeTiling failed = options.tiling;
    std::int64_t next = 0;
    if (!failed.enabled())
      next = plan.tile > 0 && plan.tile < side ? plan.tile : side / 2;
    else
      next = failed.tile / 2;
    if (failed.enabled() && failed.tile <= kSmallestTile)
      throw std::runtime_error("out of memory at the decode even with the smallest tile (" +
                               std::to_string(kSmallestTile) + " latent pixels): " + error);
    next = std::max(next, kSmallestTile);
    options.tiling = tilingOf(next);
    MemoryFallback fallback;
    fallback.shotIndex = shotIndex;
    fallback.stage = "decode";
    fallback.failed = describe(failed);
    fallback.chosen = describe(options.tiling);
    fallback.error = error;
    fallback.message = "out of memory in the " + fallback.failed +
                       (shotIndex >= 0 ? " of shot " + std::to_string(shotIndex + 1) : "") + "; retried as a " +
                       fallback.chosen;
    outcome.fallbacks.push_back(std::move(fallback));
  }
}

}  // namespace shotchain::memory
