#pragma once

#include <map>
#include <memory>
#include <string>

#include <ATen/core/Tensor.h>

#include "continuity/latent_ring_buffer.h"
#include "render/prior_shot.h"
#include "resolve/resolved_shot.h"

namespace shotchain::render {

// What the shots of one render continue from: the latents each left under its tag (a ring buffer of views:
// a handoff copies nothing) and the earlier shots a later one refers to — the one its tag hands off from, the
// sequence's first (colour anchoring, "vs shot 1"), the latest (its neighbour's cut). Shots rendered before
// the render's range come back from disk.
class ShotChain {
 public:
  explicit ShotChain(const resolve::ResolvedSequence& resolved) : resolved_(resolved) {}

  // The shot `shot` hands off from, when this chain holds it (null otherwise).
  std::shared_ptr<PriorShot> previousOf(const resolve::ResolvedShot& shot) const;
  // The latent the shot's tag holds (a view of the ring entry).
  at::Tensor handoff(const std::string& tag);
  // The shot just before `index` in sequence order (skipping disabled ones) when it is the latest one this
  // chain took; null otherwise.
  std::shared_ptr<PriorShot> neighbourOf(int index) const;
  const std::shared_ptr<PriorShot>& first() const { return first_; }
  const std::shared_ptr<PriorShot>& latest() const { return latest_; }

  // A shot sampled now: its latent joins the ring under its tag; its frame and statistics follow its decode.
  std::shared_ptr<PriorShot> rendered(int index, const std::string& key, const at::Tensor& latent);
  // A finished shot read back from disk (re-used, or before the range).
  void adopt(int index, const std::string& key, const at::Tensor& latent, const at::Tensor& lastFrame,
             const std::string& statsJson, const std::string& source);

 private:
  std::shared_ptr<PriorShot> take(int index, const std::string& key, const at::Tensor& latent);

  const resolve::ResolvedSequence& resolved_;
  continuity::LatentRingBuffer ring_{{64, std::uint64_t{8} << 30}};
  std::map<std::string, std::shared_ptr<PriorShot>> tags_;
  std::shared_ptr<PriorShot> first_;
  std::shared_ptr<PriorShot> latest_;
};

}  // namespace shotchain::render
