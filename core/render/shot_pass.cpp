#include "render/shot_pass.h"

#include <chrono>
#include <deque>
#include <future>
#include <mutex>

#include <ATen/ATen.h>

#include "continuity/cut_measures.h"
#include "continuity/handoff.h"
#include "continuity/kv_stream.h"
#include "continuity/latent_ops.h"
#include "memory/decode_fallback.h"
#include "memory/device_memory.h"
#include "memory/memory_probe.h"
#include "render/frame_conversion.h"
#include "render/output_layout.h"
#include "render/reused_cut.h"
#include "render/shot_record.h"
#include "runtime/thread_intra_op.h"
#include "sampling/latent_preview.h"
#include "sampling/sampler.h"
#include "sequence/continuity_modes.h"
#include "sequence/sequence_io.h"

namespace shotchain::render {
namespace {

using Clock = std::chrono::steady_clock;
double secondsSince(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

sampling::SolverKind solverOf(Solver solver) {
  return solver == Solver::Euler ? sampling::SolverKind::Euler : sampling::SolverKind::UniPC;
}

RgbFrame previewOf(const at::Tensor& denoised, const sampling::LatentRgbFactors& factors) {
  if (factors.channels() != denoised.size(0)) return {};
  const std::int64_t middle = denoised.size(1) / 2;
  const at::Tensor rgb = sampling::latentToRgb8(denoised.narrow(1, middle, 1), factors);  // [1, h, w, 3]
  return rgb8ToFrame(rgb[0]);
}

MemoryFallback guidanceFallback(int shotIndex, const sampling::SampleResult& result) {
  MemoryFallback fallback;
  fallback.shotIndex = shotIndex;
  fallback.stage = "sampling";
  fallback.failed = "guidance as one batch-2 call";
  fallback.chosen = "guidance as two batch-1 calls";
  fallback.error = result.outOfMemoryError;
  fallback.message = "shot " + std::to_string(shotIndex + 1) + ": out of memory at sampling step " +
                     std::to_string(result.guidanceSplitAtStep + 1) +
                     "; the cache was emptied and guidance now runs as two batch-1 calls (about half the "
                     "activation peak) from that step on (" + result.outOfMemoryError + ")";
  return fallback;
}

}  // namespace

// One shot's decode and measurements, run on a worker thread (or inline). Its frame events queue up
// until the render thread delivers them.
class DecodeJob {
 public:
  int index = 0;
  std::string shotId;
  std::string key;
  std::filesystem::path directory;
  at::Tensor latent;
  continuity::Conditioning conditioning;
  std::shared_ptr<ShotLegacy> self, previous, first;
  std::shared_ptr<ShotLegacy> neighbour;  // the enabled shot just before in sequence order (null: not known)
  at::Tensor previousTail;
  ShotRecord record;
  bool lastShot = false;
  Clock::time_point shotStart = Clock::now();
  at::Tensor predecoded;  // frames already decoded (and delivered) while the shot streamed
  int predecodedFrames = 0;

  // Results.
  at::Tensor video;  // kept frames [3, T, H, W] on the CPU
  std::optional<continuity::ShotStats> stats;
  std::optional<continuity::CutMetrics> cut;
  std::vector<MemoryFallback> fallbacks;
  double decodeSeconds = 0;
  double firstFrameSeconds = 0;
  int framesWritten = 0;
  std::exception_ptr error;

  void run(const models::VideoVae& vae, const MemoryPlan& plan, const std::string& device, int shotFrames) {
    const auto start = Clock::now();
    try {
      if (predecoded.defined()) {
        video = predecoded;
        framesWritten = predecodedFrames;
        stats = continuity::computeShotStats(shotId, latent, conditioning.heldFrames(), video);
        if (const std::optional<continuity::CutInputs> inputs = cutInputs(vae)) cut = continuity::measureCut(*inputs);
        decodeSeconds = secondsSince(start);
        return;
      }
      std::vector<at::Tensor> kept;
      const std::int64_t drop = conditioning.dropPixelFrames;
      auto sink = [&](const at::Tensor& frames, std::int64_t firstFrame) {
        const std::int64_t n = frames.size(1);
        const std::int64_t skip = std::clamp<std::int64_t>(drop - firstFrame, 0, n);
        if (skip == n) return;
        const at::Tensor keep = frames.narrow(1, skip, n - skip).to(at::kCPU);
        kept.push_back(keep);
        if (firstFrameSeconds == 0) firstFrameSeconds = secondsSince(shotStart);
        FramesDecoded event;
        event.shotIndex = index;
        event.firstFrame = framesWritten;
        event.shotFrames = shotFrames;
        event.frames = videoToFrames(keep);
        framesWritten += static_cast<int>(event.frames.size());
        std::lock_guard lock(mutex_);
        events_.push_back(std::move(event));
      };
      const at::Tensor input = continuity::decodeInput(latent, conditioning);
      const DecodeOutcome decoded = decodeWithFallback(vae, input, {}, plan, device, index, [&](const at::Tensor& f, std::int64_t offset) {
        if (offset == 0 && framesWritten > 0) {  // a retry after out-of-memory delivers the clip again
          kept.clear();
          framesWritten = 0;
        }
        sink(f, offset);
      });
      fallbacks.insert(fallbacks.end(), decoded.fallbacks.begin(), decoded.fallbacks.end());
      video = at::cat(kept, 1);
      stats = continuity::computeShotStats(shotId, latent, conditioning.heldFrames(), video);
      if (const std::optional<continuity::CutInputs> inputs = cutInputs(vae)) cut = continuity::measureCut(*inputs);
    } catch (...) {
      error = std::current_exception();
    }
    decodeSeconds = secondsSince(start);
  }

  void start(const models::VideoVae& vae, const MemoryPlan& plan, const std::string& device, int shotFrames, bool overlap) {
    if (!overlap) {
      run(vae, plan, device, shotFrames);
      std::promise<void> done;
      done.set_value();
      finished_ = done.get_future();
      return;
    }
    finished_ = std::async(std::launch::async, [this, &vae, &plan, device, shotFrames] {
      // One intra-op thread: the render thread keeps sampling beside this decode.
      const ThisThreadIntraOpThreads oneThread(1);
      run(vae, plan, device, shotFrames);
    });
  }

  // The cut is the one the viewer sees: from the neighbour (for `none` shots too), else, when the
  // neighbour is not known, from the shot handed off from. The handoff figures are kept for a handoff;
  // its latent figures only when the handoff came from the neighbour (they compare with its tail).
  std::optional<continuity::CutInputs> cutInputs(const models::VideoVae& vae) const {
    const ShotLegacy* from = neighbour && neighbour->stats ? neighbour.get() : previous && previous->stats ? previous.get() : nullptr;
    if (from == nullptr) return std::nullopt;
    continuity::CutInputs inputs;
    inputs.fromIndex = from->index;
    inputs.toIndex = index;
    inputs.fromShotId = from->id;
    inputs.toShotId = shotId;
    inputs.mode = conditioning.mode;
    inputs.previous = &*from->stats;
    inputs.next = &*stats;
    inputs.first = first && first != self && first->stats ? &*first->stats : nullptr;
    inputs.previousLastFrame = from->lastFrame;
    inputs.nextLatent = latent;
    inputs.nextFrames = video;
    if (previous) inputs.conditioning = &conditioning;
    if (previous.get() == from) {
      inputs.previousTail = previousTail;
      inputs.vae = &vae;
    }
    return inputs;
  }

  bool done() const { return finished_.wait_for(std::chrono::seconds(0)) == std::future_status::ready; }
  void wait() { finished_.wait(); }
  std::deque<FramesDecoded> takeEvents() {
    std::lock_guard lock(mutex_);
    return std::exchange(events_, {});
  }

 private:
  std::mutex mutex_;
  std::deque<FramesDecoded> events_;
  std::future<void> finished_;
};

ShotPass::ShotPass(const Sequence& sequence, const RenderOptions& options, ModelContext& models, MemoryProbe& probe,
                   RenderObserver& observer, std::atomic<bool>& cancel, RenderSummary& summary, ResidencyManager& residency,
                   bool overlapDecode)
    : sequence_(sequence),
      options_(options),
      models_(models),
      probe_(probe),
      observer_(observer),
      cancel_(cancel),
      summary_(summary),
      residency_(residency),
      overlapDecode_(overlapDecode) {}

ShotPass::~ShotPass() {
  if (pending_) pending_->wait();
}

at::Tensor ShotPass::fallbackImage(const Shot& shot) const {
  const Continuity& c = shot.continuity;
  if (!traitsOf(c.mode).readsBlend || c.fallbackImage.empty()) return {};
  const std::filesystem::path path = options_.sequenceDirectory / c.fallbackImage;
  if (!options_.loadImage)
    throw std::runtime_error(path.string() + ": fallback images need an image reader (continuity.fallback_image)");
  return frameToTensor(options_.loadImage(path));
}

void ShotPass::pump(bool wait) {
  if (!pending_) return;
  if (wait) pending_->wait();
  for (FramesDecoded& event : pending_->takeEvents()) observer_.framesDecoded(event);
  if (!pending_->done()) return;
  std::unique_ptr<DecodeJob> job = std::move(pending_);
  for (FramesDecoded& event : job->takeEvents()) observer_.framesDecoded(event);
  finalize(*job);
}

void ShotPass::finishPending() { pump(true); }

void ShotPass::finalize(DecodeJob& job) {
  if (job.error) {
    try {
      std::rethrow_exception(job.error);
    } catch (const std::exception& e) {
      throw std::runtime_error("decoding shot " + std::to_string(job.index + 1) + " (" + job.shotId + "): " + e.what());
    }
  }
  for (const MemoryFallback& fallback : job.fallbacks) {
    const RenderWarning warning{job.index, "fallback", fallback.message};
    summary_.warnings.push_back(warning);
    observer_.warning(warning);
    job.record.fallbacks.push_back(fallback.message);
  }
  ShotRecord& record = job.record;
  record.framesWritten = job.framesWritten;
  record.decodeSeconds = job.decodeSeconds;
  if (record.firstFrameSeconds == 0) record.firstFrameSeconds = job.firstFrameSeconds;
  record.statsJson = continuity::shotStatsToJson(*job.stats);
  if (job.cut) {
    record.cutIn = *job.cut;
    summary_.cuts.push_back(*job.cut);
    observer_.cutMeasured(*job.cut);
  }
  const at::Tensor lastFrame = job.video.select(1, job.video.size(1) - 1).contiguous();
  job.self->lastFrame = lastFrame;
  job.self->stats = job.stats;
  record.seconds += job.decodeSeconds;
  if (options_.writesFiles) {
    writeShotTail(job.directory, {job.latent, lastFrame, job.key});
    writeShotRecord(job.directory, record);
  }
  residency_.afterShot(job.index, !job.lastShot);

  ShotFinished finished;
  finished.index = job.index;
  finished.id = job.shotId;
  finished.key = job.key;
  finished.framesWritten = job.framesWritten;
  finished.sampleSeconds = record.sampleSeconds;
  finished.decodeSeconds = job.decodeSeconds;
  finished.seconds = record.seconds;
  finished.firstFrameSeconds = record.firstFrameSeconds;
  finished.stream = record.stream;
  finished.directory = job.directory.string();
  summary_.shots.push_back(finished);
  observer_.shotFinished(finished);
}

ShotOutcome ShotPass::render(int index, const std::string& key, int count, bool lastShot) {
  const auto shotStart = Clock::now();
  const Shot& shot = sequence_.shots[static_cast<std::size_t>(index)];
  const SamplerDefaults& defaults = sequence_.settings.sampler;
  const std::filesystem::path dir = shotDirectory(options_.outputDirectory, index, shot.id);
  const models::VideoVae& vae = *models_.vae;
  const std::int64_t spatial = vae.geometry().spatialFactor;

  std::shared_ptr<ShotLegacy> previous;
  if (usesHandoff(shot.continuity.mode))
    if (const auto found = tags_.find(shot.continuity.tag); found != tags_.end()) previous = found->second;
  const bool streaming = shot.continuity.mode == ContinuityMode::Stream;
  // A stream shot delivers frames while it samples: every earlier frame goes out first.
  if ((previous && traitsOf(shot.continuity.mode).needsLastFrame) || streaming) pump(true);

  residency_.beforeShot(index);
  const models::VideoDiffusionModel& dit = residency_.dit();
  const models::DitCapabilities capabilities = dit.capabilities();
  // A model that continues with a fresh clip's latents decodes after the previous shot's last frame:
  // that shot's decode must be done (afterShot of it after beforeShot of this one, as with overlap).
  if (previous && shot.continuity.mode == ContinuityMode::Latent && capabilities.freshClipContinuation) pump(true);
  const std::vector<std::int64_t> shape{dit.latentChannels(), shot.latentFrames(), shot.height / spatial, shot.width / spatial};
  continuity::PreviousShot handed;
  at::Tensor previousTail;
  if (previous) {
    handed.latent = *ring_.handoff(shot.continuity.tag);
    handed.lastFrame = previous->lastFrame;
    previousTail = handed.latent.narrow(1, handed.latent.size(1) - 1, 1);
  }
  continuity::Conditioning conditioning = continuity::prepareConditioning(
      shot.continuity, previous ? &handed : nullptr, vae, fallbackImage(shot), shape, shot.seed, models_.device,
      continuity::ConditioningOptions{capabilities.freshClipContinuation});

  ShotStarted started;
  started.index = index;
  started.count = count;
  started.id = shot.id;
  started.name = shot.name;
  started.key = key;
  started.steps = shot.steps.value_or(defaults.steps);
  started.frames = static_cast<int>(conditioning.outputPixelFrames);
  if (options_.writesFiles) std::filesystem::remove_all(dir);  // rank 0 alone owns the folder
  observer_.shotStarted(started);

  sampling::SamplerOptions sampler;
  sampler.steps = started.steps;
  sampler.shift = shot.shift.value_or(defaults.shift);
  sampler.guidance = shot.guidance.value_or(defaults.guidance);
  sampler.solver = solverOf(defaults.solver);
  sampler.seed = shot.seed;
  sampler.device = models_.device;
  sampler.splitGuidance = summary_.plan.splitGuidance;
  sampler.onOutOfMemory = [this] { emptyDeviceCache(models_.device.str()); };
  // A model trained with per-frame timesteps takes the handed latents as a clean prefix; others hold
  // them re-noised to each step's level (the plan says that continuation is approximate there).
  const bool perFrame = capabilities.perFrameTimesteps;
  if (perFrame) {
    sampling::PerFrameSampling diffusionForcing;
    diffusionForcing.prefix = conditioning.held;
    diffusionForcing.conditionNoise = shot.continuity.conditionNoise.value_or(0);
    diffusionForcing.arStep = defaults.arStep.value_or(0);
    diffusionForcing.causalBlockSize = static_cast<int>(std::max<std::int64_t>(1, capabilities.causalBlockSize));
    sampler.perFrame = diffusionForcing;
  }

  const auto sampleStart = Clock::now();
  const at::Tensor& cond = contexts_.at(shot.prompt);
  const at::Tensor& uncond = contexts_.at(sampling::effectiveNegativePrompt(shot.negativePrompt));
  auto onStep = [&](const sampling::StepEvent& event) {
    StepDone done;
    done.shotIndex = index;
    done.step = event.step + 1;
    done.steps = event.steps;
    done.sigma = event.sigma;
    done.seconds = event.seconds;
    if (options_.previews) done.preview = previewOf(event.denoised, models_.preview);
    observer_.stepDone(done);
    pump(false);
    return !cancel_.load();
  };
  std::optional<StreamedShot> streamed;
  if (streaming) streamed = streamShot(index, previous, conditioning, sampler, onStep, started.frames);
  const sampling::Denoiser denoiser = sampling::ditDenoiser(dit, dit.fpsConditioning(sequence_.settings.fps));
  sampling::SampleResult result =
      streamed ? std::move(streamed->result)
               : sampling::sampleFlow(denoiser, conditioning.sampleShape, cond, uncond, sampler, onStep,
                                      perFrame ? sampling::BeforeStepHook{} : continuity::holdSlotsHook(conditioning), &cancel_);
  if (result.cancelled) {
    if (streamed) stream_.reset();  // it holds part of a shot
    pump(true);
    return {true};
  }
  at::Tensor latent = result.latent;
  if (!perFrame) continuity::restoreHeldSlots(latent, conditioning);  // a clean prefix was never touched
  if (shot.continuity.anchorColour && first_ && first_->stats && !streaming)
    latent = continuity::anchorChannelStats(latent, first_->stats->latent, conditioning.heldFrames());
  const double sampleSeconds = secondsSince(sampleStart);
  pump(true);  // the previous shot's decode must be done before this one starts

  ring_.put(shot.continuity.tag, latent, {{"shot", shot.id}, {"key", key}});
  if (streaming) {
    streamShot_ = index;
    streamKey_ = key;
  }
  auto self = std::make_shared<ShotLegacy>();
  self->index = index;
  self->id = shot.id;
  self->key = key;
  self->rendered = true;
  tags_[shot.continuity.tag] = self;
  if (!first_) first_ = self;
  const std::shared_ptr<ShotLegacy> neighbour = neighbourOf(index);
  latest_ = self;
  residency_.beforeDecode(index, !lastShot);

  auto job = std::make_unique<DecodeJob>();
  job->index = index;
  job->shotId = shot.id;
  job->key = key;
  job->directory = dir;
  job->latent = latent;
  job->conditioning = std::move(conditioning);
  job->self = self;
  job->previous = previous;
  job->neighbour = neighbour;
  job->first = first_;
  job->previousTail = previousTail;
  job->lastShot = lastShot;
  job->shotStart = shotStart;
  if (streamed) {
    job->predecoded = streamed->video;
    job->predecodedFrames = streamed->framesWritten;
    job->record.firstFrameSeconds = streamed->firstFrameSeconds;
    job->record.stream = streamed->figures;
  }
  if (result.guidanceSplitAtStep >= 0) job->fallbacks.push_back(guidanceFallback(index, result));
  ShotRecord& record = job->record;
  record.index = index;
  record.id = shot.id;
  record.name = shot.name;
  record.key = key;
  record.settingsJson = serializeShot(shot);
  record.framesDropped = static_cast<int>(job->conditioning.dropPixelFrames);
  record.sampleSeconds = sampleSeconds;
  record.stepSeconds = result.stepSeconds;
  record.seconds = secondsSince(shotStart);
  const bool overlap = overlapDecode_ && !lastShot && residency_.policy() == ResidencyPolicy::Pinned;
  pending_ = std::move(job);
  pending_->start(vae, summary_.plan, models_.device.str(), started.frames, overlap);
  if (!overlap) pump(true);
  return {};
}

void ShotPass::adopt(int index, const std::string& key, const at::Tensor& latent, const at::Tensor& lastFrame,
                     const std::string& statsJson, const std::string& source) {
  const Shot& shot = sequence_.shots[static_cast<std::size_t>(index)];
  ring_.put(shot.continuity.tag, latent, {{"shot", shot.id}, {"key", key}});
  auto legacy = std::make_shared<ShotLegacy>();
  legacy->index = index;
  legacy->id = shot.id;
  legacy->key = key;
  legacy->lastFrame = lastFrame;
  if (!statsJson.empty()) legacy->stats = continuity::shotStatsFromJson(statsJson, source);
  tags_[shot.continuity.tag] = legacy;
  if (!first_) first_ = legacy;
  latest_ = legacy;
}

std::shared_ptr<ShotLegacy> ShotPass::neighbourOf(int index) const {
  int before = index - 1;
  while (before >= 0 && !sequence_.shots[static_cast<std::size_t>(before)].enabled) --before;
  return latest_ && before >= 0 && latest_->index == before ? latest_ : nullptr;
}

void ShotPass::reuse(int index, const std::string& key, int count) {
  pump(true);
  const Shot& shot = sequence_.shots[static_cast<std::size_t>(index)];
  const std::filesystem::path dir = shotDirectory(options_.outputDirectory, index, shot.id);
  const std::optional<ShotRecord> record = readShotRecord(dir);
  const std::optional<ShotTail> tail = readShotTail(dir, models_.device);
  if (!record || !tail) throw std::runtime_error(dir.string() + ": the finished shot could not be read back");

  ShotStarted started;
  started.index = index;
  started.count = count;
  started.id = shot.id;
  started.name = shot.name;
  started.key = key;
  started.frames = record->framesWritten;
  started.reused = true;
  observer_.shotStarted(started);

  const std::shared_ptr<ShotLegacy> neighbour = neighbourOf(index);
  adopt(index, key, tail->latent, tail->lastFrame, record->statsJson, shotRecordPath(dir).string());
  std::optional<continuity::CutMetrics> cut = record->cutIn;
  if (neighbour && neighbour->stats && (neighbour->rendered || !cut)) {
    cut = remeasureReusedCut(cut, *neighbour, first_.get(), *latest_, tail->latent, shot.continuity.mode,
                             record->framesWritten, dir, options_.loadImage);
    if (cut) {
      ShotRecord updated = *record;
      updated.cutIn = cut;
      if (options_.writesFiles) writeShotRecord(dir, updated);
    } else if (record->cutIn) {
      const RenderWarning warning{index, "cut", "cut " + std::to_string(neighbour->index + 1) + "→" + std::to_string(index + 1) +
                                                    ": shot " + std::to_string(index + 1) + " was re-used after shot " +
                                                    std::to_string(neighbour->index + 1) +
                                                    " changed, and its frames could not be read back to measure the cut again"};
      summary_.warnings.push_back(warning);
      observer_.warning(warning);
    }
  }
  if (cut) {
    summary_.cuts.push_back(*cut);
    observer_.cutMeasured(*cut);
  }

  ShotFinished finished;
  finished.index = index;
  finished.id = shot.id;
  finished.key = key;
  finished.reused = true;
  finished.framesWritten = record->framesWritten;
  finished.sampleSeconds = record->sampleSeconds;
  finished.decodeSeconds = record->decodeSeconds;
  finished.seconds = record->seconds;
  finished.firstFrameSeconds = record->firstFrameSeconds;
  finished.stream = record->stream;
  finished.directory = dir.string();
  summary_.shots.push_back(finished);
  observer_.shotFinished(finished);
}

void ShotPass::loadPredecessorsBefore(int first, const std::vector<std::string>& keys) {
  for (int i = 0; i < first; ++i) {
    const Shot& shot = sequence_.shots[static_cast<std::size_t>(i)];
    if (!shot.enabled) continue;
    const std::filesystem::path dir = shotDirectory(options_.outputDirectory, i, shot.id);
    const std::optional<ShotRecord> record = readShotRecord(dir);
    const std::optional<ShotTail> tail = readShotTail(dir, models_.device);
    if (!record || !tail || record->key != keys[static_cast<std::size_t>(i)]) continue;
    adopt(i, record->key, tail->latent, tail->lastFrame, record->statsJson, shotRecordPath(dir).string());
  }
}

}  // namespace shotchain::render
