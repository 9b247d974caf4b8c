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
#include "memory/expert_residency.h"
#include "memory/residency_manager.h"
#include "render/model_context.h"
#include "render/prior_shot.h"
#include "render/render_options.h"
#include "render/shot_chain.h"
#include "render/shot_loras.h"
#include "render/shot_step_cache.h"
#include "render/stream_session.h"
#include "resolve/resolved_shot.h"
#include "sampling/sampler.h"
#include "util/stopwatch.h"

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
  const resolve::ResolvedShot* shot = nullptr;
  std::string key;
  bool lastShot = false;
  util::Stopwatch::time_point start;
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
  // CLIP vision features of its pictures (a DiT with imageEmbeddingTokens): [pictures, tokens, dim].
  at::Tensor imageEmbedding;
  // The pictures its first and last frames are to land on ([3, H, W] in [−1, 1]; undefined: none).
  at::Tensor startKeyframe, endKeyframe;
  int frames = 0;  // pixel frames the shot writes
};

// What the sample stage produced.
struct SampledShot {
  sampling::SampleResult result;
  at::Tensor latent;                     // held slots restored, colour anchored
  std::optional<StreamedShot> streamed;  // set for a shot sampled over a KV stream
  double seconds = 0;
  int ditPasses = 0;              // batch rows through the DiT (each guidance branch of a step counts)
  std::uint64_t expertBytes = 0;  // two experts: bytes moved or read for them during this shot
  std::string expertResidency;    // … and where they lived ("resident", "swap", "reload")
  double expertSeconds = 0;       // … and the time it took
};

// The few-step and two-expert figures of a sampled shot, into its record (render/sampling_figures.cpp).
void addSamplingFigures(ShotRecord& record, const PreparedShot& prepared, const SampledShot& sampled);

// The stages of one shot of Renderer::render, each reading the shot as resolved:
//   prepare  — the handoff, the DiT made resident, the conditioning, the sampler's options, the LoRAs;
//   sample   — the whole clip, or chunk by chunk over the stream (its SamplingKind);
//   decode   — the tail into the chain, then the decode and the cut's figures on a worker thread beside
//              the next shot's sampling when allowed; finalize writes the shot's files.
// What shots continue from is the chain's (ShotChain), what the DiT carries the LoRAs' (ShotLoras), the KV
// cache a stream carries the stream session's. Every event is delivered on the render thread.
class ShotPass {
 public:
  ShotPass(const Sequence& sequence, const resolve::ResolvedSequence& resolved, const RenderOptions& options,
           ModelContext& models, RenderObserver& observer, std::atomic<bool>& cancel, RenderSummary& summary,
           memory::ResidencyManager& residency, bool overlapDecode);
  ~ShotPass();

  std::map<std::string, at::Tensor>& promptContexts() { return promptContexts_; }  // prompt → [L, D]
  // Two experts: where they live (null: one DiT). Set before the first shot.
  void setExperts(memory::ExpertResidencyManager* experts) { experts_ = experts; }

  ShotOutcome render(int index, const std::string& key, int count, bool lastShot);
  void reuse(int index, const std::string& key, int count);
  // Fills the chain from the records on disk of enabled shots before `first`.
  void loadPredecessorsBefore(int first, const std::vector<std::string>& keys);
  // Waits for a decode still running and delivers its events (always call before the render ends).
  void finishPending();

 private:
  // Throws, naming the file, when a weights file this process reads from was cut short while in use (its
  // pages past the cut read as zeros: nothing computed from them may be kept).
  void requireWholeFiles() const;
  PreparedShot prepare(int index, const std::string& key, int count, bool lastShot);
  SampledShot sample(PreparedShot& shot);
  void decode(PreparedShot& shot, SampledShot sampled);

  void pump(bool wait);

  void finalize(DecodeJob& job);
  at::Tensor fallbackImage(const resolve::ResolvedShot& shot) const;
  // The shot's start image at its size (render/start_image.h), or undefined when it has none it uses.
  at::Tensor startImage(const resolve::ResolvedShot& shot) const;
  // A picture of the document at the shot's size; undefined for an empty path. `field` names it in errors.
  at::Tensor picture(const std::filesystem::path& file, const resolve::ResolvedShot& shot, const char* field) const;
  // The CLIP vision features of the shot's first picture (and its last, for a DiT that takes both).
  at::Tensor clipFeatures(const at::Tensor& first, const at::Tensor& last) const;
  // How close the decoded first and last frames came to the shot's keyframes, into its record; a warning
  // for each one it misses.
  void measureKeyframes(DecodeJob& job, const at::Tensor& lastFrame);
  // y of an image-to-video shot, from where the resolver said its image comes from.
  void prepareImageCondition(PreparedShot& out, const models::VideoVae& vae) const;
  void restoreLoras();

  const Sequence& sequence_;
  const resolve::ResolvedSequence& resolved_;
  const RenderOptions& options_;
  ModelContext& models_;
  RenderObserver& observer_;
  std::atomic<bool>& cancel_;
  RenderSummary& summary_;
  memory::ResidencyManager& residency_;
  memory::ExpertResidencyManager* experts_ = nullptr;
  bool overlapDecode_;
  int decodeThreads_ = 1;     // a decode's beside the sampling
  std::size_t cutShortMark_;  // files found cut short before this pass are not its problem

  std::map<std::string, at::Tensor> promptContexts_;
  ShotChain chain_;
  ShotLoras loras_;  // on the DiT from a shot's prepare until its decode (kept across pinned shots)
  StreamSession stream_;
  std::unique_ptr<DecodeJob> pending_;
  // What the time since the last sampling step went to (reported with the next shot's start).
  GapParts gap_;
  // The preview decoder's last decode: what it cost and when it ended (a step decodes only when the time since is
  // at least four times that cost, so previews take about a fifth of the wall at most).
  double previewCost_ = 0;
  util::Stopwatch::time_point lastPreview_{};
  bool previewDue() const;
};

}  // namespace shotchain::render
