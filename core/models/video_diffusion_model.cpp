#include "models/video_diffusion_model.h"

#include <stdexcept>

#include "models/kv_cache.h"

namespace shotchain::models {

void VideoDiffusionModel::setLayerAdapters(std::map<std::string, std::vector<LayerAdapter>> adapters) {
  if (!adapters.empty()) throw std::invalid_argument(family() + " takes no layer adapters");
}

std::unique_ptr<KvCache> VideoDiffusionModel::newKvCache(std::int64_t, std::int64_t, std::int64_t,
                                                         const StreamWindow&) const {
  throw std::invalid_argument(family() + " does not stream with a KV cache (it needs a block-causal model)");
}

at::Tensor VideoDiffusionModel::forwardCached(const at::Tensor&, const at::Tensor&, const at::Tensor&, KvCache&,
                                              std::int64_t, bool, std::int64_t) const {
  throw std::invalid_argument(family() + " does not stream with a KV cache (it needs a block-causal model)");
}

std::string VideoDiffusionModel::blockCacheProblem() const {
  return family() + " has no block stack a step cache can skip";
}

void VideoDiffusionModel::setBlockCache(BlockCache* cache) const {
  if (cache) throw std::invalid_argument(blockCacheProblem());
}

void VideoDiffusionModel::setImageEmbedding(const at::Tensor& features) const {
  if (features.defined()) throw std::invalid_argument(family() + " takes no CLIP image features");
}

}  // namespace shotchain::models
