#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "continuity/latent_ring_buffer.h"
#include "continuity/shot_stats.h"
#include "memory/residency_manager.h"
#include "render/model_context.h"
#include "render/renderer.h"
#include "sampling/sampler.h"

namespace shotchain::continuity {
class KvStream;
struct Conditioning;
}  // namespace shotchain::continuity

namespace shotchain::render {

struct ShotOutcome {
  bool cancelled = false;
};

// What a finished shot leaves for the shots after it (and for the "vs shot 1" figures). The frame
// and statistics arrive when its decode is done; a later shot keeps its own reference, so the tag
// can move on to a newer shot meanwhile.
struct ShotLegacy {
  int index = -1;
  std::string id;
  std::string key;
  at::Tensor lastFrame;  // [3, H, W] float32, −1…1
  std::optional<continuity::ShotStats> stats;
  bool rendered = false;  // rendered in this pass (not read back from disk)
};

class DecodeJob;

// A shot sampled chunk by chunk over its stream's KV cache (continuity mode stream).
struct StreamedShot {
  sampling::SampleResult result;
  at::Tensor video;  // its kept frames [3, T, H, W] on the CPU, decoded chunk by chunk (undefined: decode after)
  int framesWritten = 0;
  double firstFrameSeconds = 0;
  StreamFigures figures;
};

// The per-render state of Renderer::render and the steps of one shot: sample (holding the handoff)
// → restore → store the tail in the ring buffer → decode (on a worker thread, overlapped with the
// next shot's sampling when allowed) → measure the cut → write the tail and shot.json. Every event
// is delivered on the render thread.
class ShotPass {
 public:
  ShotPass(const Sequence& sequence, const RenderOptions& options, ModelContext& models, MemoryProbe& probe,
           RenderObserver& observer, std::atomic<bool>& cancel, RenderSummary& summary, ResidencyManager& residency,
           bool overlapDecode);
  ~ShotPass();

  std::map<std::string, at::Tensor>& contexts() { return contexts_; }  // prompt → [L, D]

  ShotOutcome render(int index, const std::string& key, int count, bool lastShot);
  void reuse(int index, const std::string& key, int count);
  // Fills the ring buffer and the tags from the records on disk of enabled shots before `first`.
  void loadPredecessorsBefore(int first, const std::vector<std::string>& keys);
  // Waits for a decode still running and delivers its events (always call before the render ends).
  void finishPending();

 private:
  void pump(bool wait);
  void finalize(DecodeJob& job);
  void adopt(int index, const std::string& key, const at::Tensor& latent, const at::Tensor& lastFrame,
             const std::string& statsJson, const std::string& source);
  at::Tensor fallbackImage(const Shot& shot) const;
  // The shot just before `index` in sequence order (skipping disabled ones) when it is the latest one
  // this pass rendered or read back; null otherwise.
  std::shared_ptr<ShotLegacy> neighbourOf(int index) const;
  // Stream mode (render/shot_pass_stream.cpp): the shot's cache made ready (continued, recached or rebuilt
  // from the latents on disk), then its chunks sampled, each decoded as soon as it is final.
  StreamedShot streamShot(int index, const std::shared_ptr<ShotLegacy>& previous, const continuity::Conditioning& conditioning,
                          const sampling::SamplerOptions& sampler, const sampling::StepCallback& onStep, int frames);
  std::string prepareStream(int index, const std::shared_ptr<ShotLegacy>& previous, int branches, bool split);
  // `previousLatent`: the last chain shot's latent from the ring buffer (the others are read from disk).
  void replayStream(const std::vector<int>& chain, int branches, bool split, const at::Tensor& previousLatent);

  const Sequence& sequence_;
  const RenderOptions& options_;
  ModelContext& models_;
  MemoryProbe& probe_;
  RenderObserver& observer_;
  std::atomic<bool>& cancel_;
  RenderSummary& summary_;
  ResidencyManager& residency_;
  bool overlapDecode_;

  std::map<std::string, at::Tensor> contexts_;
  continuity::LatentRingBuffer ring_{{64, std::uint64_t{8} << 30}};
  std::map<std::string, std::shared_ptr<ShotLegacy>> tags_;
  std::shared_ptr<ShotLegacy> first_;   // shot 1 of this render (rendered or re-used)
  std::shared_ptr<ShotLegacy> latest_;  // the shot rendered or read back last
  std::unique_ptr<DecodeJob> pending_;
  std::unique_ptr<continuity::KvStream> stream_;  // the latest stream's cache, with the shot it ended
  int streamShot_ = -1;
  std::string streamKey_;
};

}  // namespace shotchain::render
