#pragma once

#include <atomic>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "continuity/handoff.h"
#include "continuity/latent_ring_buffer.h"
#include "memory/expert_residency.h"
#include "memory/residency_manager.h"
#include "render/model_context.h"
#include "render/prior_shot.h"
#include "render/renderer.h"
#include "render/shot_step_cache.h"
#include "models/lora/lora_patcher.h"
#include "sampling/sampler.h"
#include "util/stopwatch.h"

namespace shotchain::continuity {
class KvStream;
}  // namespace shotchain::continuity

namespace shotchain::render {

// A failure that belongs to an earlier shot than the one rendering when it surfaced: the decode of
// shot N, or the writing of its files, finishes while shot N+1 is prepared. The message starts with
// "shot N (id): ".
class EarlierShotFailed : public std::runtime_error {
 public:
  EarlierShotFailed(int index, const std::string& message) : std::runtime_error(message), index_(index) {}
  int index() const { return index_; }

 private:
  int index_;
};

struct ShotOutcome {
  bool cancelled = false;
};

class DecodeJob;
struct ShotRecord;

// What the prepare stage settles for a shot before it samples.
struct PreparedShot {
  int index = 0;
  std::string key;
  bool lastShot = false;
  Stopwatch::time_point start;
  std::filesystem::path directory;
  std::shared_ptr<PriorShot> previous;  // the shot handed off from (null: none)
  at::Tensor previousTail;              // its last latent frame
  continuity::Conditioning conditioning;
  sampling::SamplerOptions sampler;
  ShotStepCache stepCache;
  std::optional<LoraFigures> loras;
  // Image-to-video (DitCapabilities::imageConditionChannels): y on the device and where its image came from.
  at::Tensor imageCondition;
  std::string imageConditionSource;
  int frames = 0;  // pixel frames the shot writes
};

// A shot sampled chunk by chunk over its stream's KV cache (ShotSampling::KvStream).
struct StreamedShot {
  sampling::SampleResult result;
  at::Tensor video;  // its kept frames [3, T, H, W] on the CPU, decoded chunk by chunk (undefined: decode after)
  int framesWritten = 0;
  double firstFrameSeconds = 0;
  StreamFigures figures;
  int ditPasses = 0;  // batch rows through the DiT, a chunk's commit pass included
};

// What the sample stage produced.
struct SampledShot {
  sampling::SampleResult result;
  at::Tensor latent;                     // held slots restored, colour anchored
  std::optional<StreamedShot> streamed;  // set for a shot sampled over a KV stream
  double seconds = 0;
  int ditPasses = 0;  // batch rows through the DiT (each guidance branch of a step counts)
  std::uint64_t expertBytes = 0;  // two experts: bytes moved or read for them during this shot
  std::string expertResidency;    // … and where they lived ("resident", "swap", "reload")
  double expertSeconds = 0;       // … and the time it took
};

// The few-step and two-expert figures of a sampled shot, into its record (render/shot_pass_figures.cpp).
void addSamplingFigures(ShotRecord& record, const PreparedShot& prepared, const SampledShot& sampled);

// The per-render state of Renderer::render and the stages of one shot:
//   prepare  — the handoff, the DiT made resident, the conditioning, the sampler's options;
//   sample   — the whole clip, or chunk by chunk over a KV stream (the mode table's `sampling`);
//   decode   — the tail into the ring buffer, then the decode and the cut's figures on a worker
//              thread beside the next shot's sampling when allowed; finalize writes the shot's files.
// Every event is delivered on the render thread.
class ShotPass {
 public:
  ShotPass(const Sequence& sequence, const RenderOptions& options, ModelContext& models, MemoryProbe& probe,
           RenderObserver& observer, std::atomic<bool>& cancel, RenderSummary& summary, ResidencyManager& residency,
           bool overlapDecode);
  ~ShotPass();

  std::map<std::string, at::Tensor>& promptContexts() { return promptContexts_; }  // prompt → [L, D]
  // Two experts: where they live (null: one DiT). Set before the first shot.
  void setExperts(ExpertResidencyManager* experts) { experts_ = experts; }

  ShotOutcome render(int index, const std::string& key, int count, bool lastShot);
  void reuse(int index, const std::string& key, int count);
  // Fills the ring buffer and the tags from the records on disk of enabled shots before `first`.
  void loadPredecessorsBefore(int first, const std::vector<std::string>& keys);
  // Waits for a decode still running and delivers its events (always call before the render ends).
  void finishPending();

 private:
  PreparedShot prepare(int index, const std::string& key, int count, bool lastShot);
  SampledShot sample(PreparedShot& shot);
  void decode(PreparedShot& shot, SampledShot sampled);

  void pump(bool wait);
  void finalize(DecodeJob& job);
  void adopt(int index, const std::string& key, const at::Tensor& latent, const at::Tensor& lastFrame,
             const std::string& statsJson, const std::string& source);
  at::Tensor fallbackImage(const Shot& shot) const;
  // y of an image-to-video shot from its start image; else, continuing with `latent`, the handed latent frame;
  // else the previous shot's last decoded frame (throws naming the shot's start_image when it has none of them).
  void prepareImageCondition(PreparedShot& out, const Shot& shot, const models::VideoVae& vae) const;
  // The shot's start image at its size (render/start_image.h), or undefined when it has none or continues a handoff.
  at::Tensor startImage(const Shot& shot, bool handedOff) const;
  // The shot just before `index` in sequence order (skipping disabled ones) when it is the latest one
  // this pass rendered or read back; null otherwise.
  std::shared_ptr<PriorShot> neighbourOf(int index) const;
  // KV stream sampling (render/shot_pass_stream.cpp): the shot's cache made ready (continued, recached or
  // rebuilt from the latents on disk), then its chunks sampled, each decoded as soon as it is final.
  StreamedShot streamShot(int index, const std::shared_ptr<PriorShot>& previous, const continuity::Conditioning& conditioning,
                          const sampling::SamplerOptions& sampler, const sampling::StepCallback& onStep, int frames);
  std::string prepareStream(int index, const std::shared_ptr<PriorShot>& previous, int branches, bool split);
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
  ExpertResidencyManager* experts_ = nullptr;
  bool overlapDecode_;

  std::map<std::string, at::Tensor> promptContexts_;
  continuity::LatentRingBuffer ring_{{64, std::uint64_t{8} << 30}};
  std::map<std::string, std::shared_ptr<PriorShot>> tags_;
  std::shared_ptr<PriorShot> first_;   // shot 1 of this render (rendered or re-used)
  std::shared_ptr<PriorShot> latest_;  // the shot rendered or read back last
  std::unique_ptr<DecodeJob> pending_;
  std::unique_ptr<continuity::KvStream> stream_;  // the latest stream's cache, with the shot it ended
  int streamShot_ = -1;
  std::string streamKey_;
  // The DiT carries the shot's LoRAs from prepare until its decode (kept across pinned shots).
  LoraFigures applyLoras(const Shot& shot, int index);
  void restoreLoras();
  models::LoraPatcher loraPatcher_;
  models::LoraPatcher highLoraPatcher_;  // two experts: the high-noise one's (kept resident while patched)
  std::map<std::string, std::shared_ptr<const models::LoraFile>> loraFiles_;  // path → file, read once a render
  // What the time since the last sampling step went to (reported with the next shot's start).
  GapParts gap_;
};

}  // namespace shotchain::render
