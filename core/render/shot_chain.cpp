#include "render/shot_chain.h"

#include <ATen/ATen.h>

namespace shotchain::render {

std::shared_ptr<PriorShot> ShotChain::previousOf(const resolve::ResolvedShot& shot) const {
  if (!traitsOf(shot.settings.mode).handoff) return nullptr;
  const auto found = tags_.find(shot.settings.tag);
  return found == tags_.end() ? nullptr : found->second;
}

at::Tensor ShotChain::handoff(const std::string& tag) { return *ring_.handoff(tag); }

std::shared_ptr<PriorShot> ShotChain::neighbourOf(int index) const {
  const int before = resolved_.shots[static_cast<std::size_t>(index)].neighbour;
  return latest_ && before >= 0 && latest_->index == before ? latest_ : nullptr;
}

std::shared_ptr<PriorShot> ShotChain::take(int index, const std::string& key, const at::Tensor& latent) {
  const resolve::ResolvedShot& shot = resolved_.shots[static_cast<std::size_t>(index)];
  ring_.put(shot.settings.tag, latent, {{"shot", shot.id}, {"key", key}});
  auto prior = std::make_shared<PriorShot>();
  prior->index = index;
  prior->id = shot.id;
  prior->key = key;
  tags_[shot.settings.tag] = prior;
  if (!first_) first_ = prior;
  return prior;
}

std::shared_ptr<PriorShot> ShotChain::rendered(int index, const std::string& key, const at::Tensor& latent) {
  std::shared_ptr<PriorShot> prior = take(index, key, latent);
  prior->rendered = true;
  latest_ = prior;
  return prior;
}

void ShotChain::adopt(int index, const std::string& key, const at::Tensor& latent, const at::Tensor& lastFrame,
                      const std::string& statsJson, const std::string& source) {
  std::shared_ptr<PriorShot> prior = take(index, key, latent);
  prior->lastFrame = lastFrame;
  if (!statsJson.empty()) prior->stats = continuity::shotStatsFromJson(statsJson, source);
  latest_ = prior;
}

}  // namespace shotchain::render
