#pragma once

#include <span>
#include <string>

#include "sequence/sequence.h"

namespace shotchain {

// The latent frame geometry of a shot's continuity mode when the shot has a predecessor: what the
// handoff builds, what the memory plan reserves and how many frames the shot key must cover.
struct ContinuityGeometry {
  int heldLatents = 0;          // conditioning slots at the start of the sampled latent
  int extraLatents = 0;         // latent frames sampled beyond the shot's own latentFrames()
  int handedTailLatents = 0;    // tail latents of the previous shot read from the ring buffer
  int decodePrefixLatents = 0;  // previous-shot latents decoded ahead of the shot's own and dropped
  // Decoded frames of the shot's own clip left out because they repeat the previous shot: this many frames,
  // plus this many latent frames' worth (the family's pixel frames per latent frame).
  int droppedFrames = 0;
  int droppedLatentFrames = 0;
};

// How a shot of a mode is sampled: the whole clip at once (holding any handed latents in its first
// slots), or chunk by chunk over the DiT's KV cache that the previous shot of the stream left.
enum class ShotSampling { WholeClip, KvStream };

// Everything the product knows about one continuity mode, in one row: the document I/O, the
// validation, the shot key, the handoff, the memory plan, the shot pass and the inspector read it
// here. A new mode is a new row (and its case in continuity/handoff.cpp, which builds it).
struct ContinuityModeTraits {
  ContinuityMode mode;
  const char* name;              // the document's spelling
  const char* description;       // the inspector's line for it
  bool handoff;                  // takes the previous shot's tail through the ring buffer (continuity.tag)
  bool needsLastFrame;           // its conditioning encodes the previous shot's decoded last frame
  bool decodesAfterPredecessor;  // its first frames are decoded behind the predecessor's tail latent
  bool readsOverlap;             // continuity.overlap_latents (k)
  bool readsPrefix;              // continuity.prefix_frames
  bool readsBlend;               // continuity.blend_ratio and continuity.fallback_image
  bool readsRecache;             // continuity.recache (and the sequence's sampler.stream_window)
  bool readsMotion;              // continuity.motion_latents and continuity.anchor_image (svi)
  ShotSampling sampling;
  ContinuityGeometry (*geometry)(const Continuity& continuity);
};

// Every mode, in the order the inspector lists them.
std::span<const ContinuityModeTraits> continuityModes();
const ContinuityModeTraits& traitsOf(ContinuityMode mode);
// "none, latent, …": every mode's spelling, in the table's order (for messages).
std::string continuityModeNames();

ContinuityGeometry continuityGeometry(const Continuity& continuity);
// continuity.prefix_frames with its default (1).
int prefixFrames(const Continuity& continuity);
// The shot is sampled chunk by chunk over a KV stream (ShotSampling::KvStream).
bool streams(ContinuityMode mode);
// continuity.recache with its default (true).
bool recaches(const Continuity& continuity);
// continuity.motion_latents with its default (1).
int motionLatents(const Continuity& continuity);

}  // namespace shotchain
