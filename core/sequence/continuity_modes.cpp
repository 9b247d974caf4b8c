#include "sequence/continuity_modes.h"

#include <algorithm>
#include <array>
#include <stdexcept>

namespace shotchain {
namespace {

ContinuityGeometry none(const Continuity&) { return {}; }

// The previous shot's last prefix_frames latents are the first slots; the slot before them is
// decoded ahead (and dropped) so that the first kept frames decode as they did in that shot.
ContinuityGeometry latent(const Continuity& c) {
  ContinuityGeometry g;
  g.heldLatents = g.handedTailLatents = prefixFrames(c);
  g.extraLatents = g.heldLatents - 1;
  g.decodePrefixLatents = 1;
  return g;
}

// A one-frame encode of the last frame, then the previous shot's last k latents; the shot's first frame is
// the previous shot's last.
ContinuityGeometry latentOverlap(const Continuity& c) {
  ContinuityGeometry g;
  g.handedTailLatents = g.extraLatents = std::max(1, c.overlapLatents);
  g.heldLatents = g.handedTailLatents + 1;
  g.droppedFrames = 1;
  return g;
}

// Stable Video Infinity: the previous shot's last latents enter the image condition, not the sampled latent;
// the new clip's first latent frame's worth of frames repeats the previous shot and is left out.
ContinuityGeometry svi(const Continuity& c) {
  ContinuityGeometry g;
  g.handedTailLatents = motionLatents(c);
  g.droppedLatentFrames = 1;
  return g;
}

// The previous shot's frames are in the DiT's KV cache: nothing is held; the shot generates one latent
// frame fewer, as its first decoded frame repeats the previous shot's last (decoded behind its tail).
ContinuityGeometry stream(const Continuity&) {
  ContinuityGeometry g;
  g.extraLatents = -1;
  g.handedTailLatents = 1;
  g.decodePrefixLatents = 2;
  return g;
}

ContinuityGeometry oneSlot(const Continuity&) {
  ContinuityGeometry g;
  g.heldLatents = g.handedTailLatents = 1;
  return g;
}

//                      mode                           name              description
//                      handoff lastFrame afterPred overlap prefix blend recache motion sampling geometry
constexpr auto kClip = ShotSampling::WholeClip;
constexpr std::array<ContinuityModeTraits, 7> kModes{{
    {ContinuityMode::None, "none", "none — a fresh start", false, false, false, false, false, false, false, false,
     kClip, none},
    {ContinuityMode::Latent, "latent", "latent — continue from the last latent frame", true, false, true, false, true,
     false, false, false, kClip, latent},
    {ContinuityMode::LatentOverlap, "latent_overlap", "latent overlap — re-use the last k latents", true, true, false,
     true, false, false, false, false, kClip, latentOverlap},
    {ContinuityMode::Blend, "blend", "blend — handoff mixed with the fallback image", true, false, false, false, false,
     true, false, false, kClip, oneSlot},
    {ContinuityMode::VaeRoundtrip, "vae_roundtrip", "VAE round trip — through pixels (drifts)", true, true, false,
     false, false, false, false, false, kClip, oneSlot},
    {ContinuityMode::Stream, "stream", "stream — the model's KV cache carries on (block-causal models)", true, false,
     true, false, false, false, true, false, ShotSampling::KvStream, stream},
    {ContinuityMode::Svi, "svi", "SVI — anchor picture and the last latents in the image condition (SVI LoRAs)", true,
     false, false, false, false, false, false, true, kClip, svi},
}};

}  // namespace

std::span<const ContinuityModeTraits> continuityModes() { return kModes; }

const ContinuityModeTraits& traitsOf(ContinuityMode mode) {
  for (const ContinuityModeTraits& traits : kModes)
    if (traits.mode == mode) return traits;
  throw std::logic_error("continuity mode without a row in the traits table");
}

std::string continuityModeNames() {
  std::string names;
  for (const ContinuityModeTraits& traits : kModes) names += (names.empty() ? "" : ", ") + std::string(traits.name);
  return names;
}

int prefixFrames(const Continuity& continuity) { return std::max(1, continuity.prefixFrames.value_or(1)); }

bool streams(ContinuityMode mode) { return traitsOf(mode).sampling == ShotSampling::KvStream; }

bool recaches(const Continuity& continuity) { return continuity.recache.value_or(true); }

int motionLatents(const Continuity& continuity) { return std::max(1, continuity.motionLatents.value_or(1)); }

ContinuityGeometry continuityGeometry(const Continuity& continuity) {
  return traitsOf(continuity.mode).geometry(continuity);
}

}  // namespace shotchain
