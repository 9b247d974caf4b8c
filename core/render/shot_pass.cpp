#include "render/shot_pass.h"

#include <ATen/ATen.h>

#include "continuity/kv_stream.h"
#include "continuity/latent_ops.h"
#include "memory/device_memory.h"
#include "memory/memory_probe.h"
#include "render/decode_job.h"
#include "render/frame_conversion.h"
#include "render/output_layout.h"
#include "render/reused_cut.h"
#include "render/shot_record.h"
#include "render/start_image.h"
#include "sampling/latent_preview.h"
#include "sequence/continuity_modes.h"
#include "sequence/sequence_io.h"

namespace shotchain::render {
namespace {

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

// A model trained with per-frame timesteps takes the handed latents as a clean prefix; others hold
// them re-noised to each step's level (the plan says that continuation is approximate there).
sampling::SamplerOptions samplerOptions(const Shot& shot, const SamplerDefaults& defaults, const models::DitCapabilities& capabilities,
                                        const continuity::Conditioning& conditioning, c10::Device device, bool twoExperts) {
  sampling::SamplerOptions sampler;
  sampler.steps = shot.steps.value_or(defaults.steps);
  sampler.shift = shot.shift.value_or(defaults.shift);
  sampler.guidance = shot.guidance.value_or(defaults.guidance);
  sampler.solver = solverOf(defaults.solver);
  sampler.seed = shot.seed;
  sampler.device = device;
  const FewStepSettings& fewStep = effectiveFewStep(shot, defaults);
  if (fewStep.on() || twoExperts) {
    if (fewStep.on()) {
      sampler.fewStep = sampling::FewStepSampling{
          fewStep.steps, fewStep.update == DistilledUpdate::Renoise ? sampling::FewStepUpdate::Renoise : sampling::FewStepUpdate::Euler};
      sampler.steps = static_cast<int>(fewStep.steps.size());
    }
    // One schedule for the clip (a few-step schedule, or two experts switching on it): a model that takes
    // per-frame timesteps is given the handed latents clean.
    if ((capabilities.cleanFirstFrames || capabilities.perFrameTimesteps) && conditioning.held.defined())
      sampler.cleanPrefix = conditioning.held;
    return sampler;
  }
  if (capabilities.cleanFirstFrames && conditioning.held.defined()) sampler.cleanPrefix = conditioning.held;
  if (capabilities.perFrameTimesteps) {
    sampling::PerFrameSampling diffusionForcing;
    diffusionForcing.prefix = conditioning.held;
    diffusionForcing.conditionNoise = shot.continuity.conditionNoise.value_or(0);
    diffusionForcing.arStep = defaults.arStep.value_or(0);
    diffusionForcing.causalBlockSize = static_cast<int>(std::max<std::int64_t>(1, capabilities.causalBlockSize));
    sampler.perFrame = diffusionForcing;
  }
  return sampler;
}

// The decode of a sampled shot, with its record so far (the decode adds its part and the cut).
std::unique_ptr<DecodeJob> decodeJobFor(const Shot& shot, PreparedShot& prepared, const SampledShot& sampled) {
  auto job = std::make_unique<DecodeJob>();
  job->index = prepared.index;
  job->shotId = shot.id;
  job->key = prepared.key;
  job->directory = prepared.directory;
  job->latent = sampled.latent;
  job->conditioning = std::move(prepared.conditioning);
  job->previous = prepared.previous;
  job->previousTail = prepared.previousTail;
  job->lastShot = prepared.lastShot;
  job->shotStart = prepared.start;
  if (sampled.streamed) {
    job->predecoded = sampled.streamed->video;
    job->predecodedFrames = sampled.streamed->framesWritten;
    job->record.firstFrameSeconds = sampled.streamed->firstFrameSeconds;
    job->record.stream = sampled.streamed->figures;
  }
  job->record.cache = prepared.stepCache.figures;
  job->record.loras = prepared.loras;
  addSamplingFigures(job->record, prepared, sampled);
  if (sampled.result.guidanceSplitAtStep >= 0) job->fallbacks.push_back(guidanceFallback(prepared.index, sampled.result));
  ShotRecord& record = job->record;
  record.index = prepared.index;
  record.id = shot.id;
  record.name = shot.name;
  record.key = prepared.key;
  record.settingsJson = serializeShot(shot);
  record.framesDropped = static_cast<int>(job->conditioning.dropPixelFrames);
  record.conditionedOn = job->conditioning.source;
  record.sampleSeconds = sampled.seconds;
  record.stepSeconds = sampled.result.stepSeconds;
  record.seconds = secondsSince(prepared.start);
  return job;
}

// Runs `work`, adding its wall time to `seconds`.
template <typename Work>
decltype(auto) timed(double& seconds, Work&& work) {
  const auto start = Stopwatch::now();
  struct Add {
    double& to;
    Stopwatch::time_point from;
    ~Add() { to += secondsSince(from); }
  } add{seconds, start};
  return work();
}

}  // namespace

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
  try {
    restoreLoras();  // the loaded DiT outlives the render: it must leave as the base model
  } catch (...) {
  }
}

at::Tensor ShotPass::fallbackImage(const Shot& shot) const {
  const Continuity& c = shot.continuity;
  if (!traitsOf(c.mode).readsBlend || c.fallbackImage.empty()) return {};
  const std::filesystem::path path = options_.sequenceDirectory / c.fallbackImage;
  if (!options_.loadImage)
    throw std::runtime_error(path.string() + ": fallback images need an image reader (continuity.fallback_image)");
  return frameToTensor(options_.loadImage(path));
}

at::Tensor ShotPass::startImage(const Shot& shot, bool handedOff) const {
  if (shot.startImage.empty() || handedOff) return {};
  const std::filesystem::path path = options_.sequenceDirectory / shot.startImage;
  if (!options_.loadImage) throw std::runtime_error(path.string() + ": start images need an image reader (start_image)");
  return startImageTensor(options_.loadImage(path), shot.width, shot.height);
}

void ShotPass::pump(bool wait) {
  if (!pending_) return;
  if (wait) timed(gap_.waitingForDecode, [&] { pending_->wait(); });
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
      throw EarlierShotFailed(job.index, "shot " + std::to_string(job.index + 1) + " (" + job.shotId + "): decoding: " + e.what());
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
  if (options_.writesFiles)
    timed(gap_.writingFiles, [&] {
      try {
        writeShotTail(job.directory, {job.latent, lastFrame, job.key});
        writeShotRecord(job.directory, record);
      } catch (const std::exception& e) {
        throw EarlierShotFailed(job.index, "shot " + std::to_string(job.index + 1) + " (" + job.shotId +
                                               "): writing its tail and record: " + e.what());
      }
    });
  timed(gap_.movingWeights, [&] { residency_.afterShot(job.index, !job.lastShot); });

  ShotFinished finished;
  finished.index = job.index;
  finished.id = job.shotId;
  finished.key = job.key;
  finished.framesWritten = job.framesWritten;
  finished.sampleSeconds = record.sampleSeconds;
  finished.decodeSeconds = job.decodeSeconds;
  finished.seconds = record.seconds;
  finished.firstFrameSeconds = record.firstFrameSeconds;
  finished.conditionedOn = record.conditionedOn;
  finished.stream = record.stream;
  finished.cache = record.cache;
  finished.loras = record.loras;
  finished.fewStep = record.fewStep;
  finished.experts = record.experts;
  finished.directory = job.directory.string();
  summary_.shots.push_back(finished);
  observer_.shotFinished(finished);
}

ShotOutcome ShotPass::render(int index, const std::string& key, int count, bool lastShot) {
  PreparedShot shot = prepare(index, key, count, lastShot);
  SampledShot sampled = sample(shot);
  if (sampled.result.cancelled) {
    if (sampled.streamed) stream_.reset();  // it holds part of a shot
    pump(true);
    return {true};
  }
  decode(shot, std::move(sampled));
  return {};
}

PreparedShot ShotPass::prepare(int index, const std::string& key, int count, bool lastShot) {
  PreparedShot out;
  out.index = index;
  out.key = key;
  out.lastShot = lastShot;
  out.start = Stopwatch::now();
  const Shot& shot = sequence_.shots[static_cast<std::size_t>(index)];
  const SamplerDefaults& defaults = sequence_.settings.sampler;
  const ContinuityModeTraits& mode = traitsOf(shot.continuity.mode);
  out.directory = shotDirectory(options_.outputDirectory, index, shot.id);
  const models::VideoVae& vae = *models_.vae;
  const std::int64_t spatial = vae.geometry().spatialFactor;

  if (mode.handoff)
    if (const auto found = tags_.find(shot.continuity.tag); found != tags_.end()) out.previous = found->second;
  // Sampling that holds an encode of the previous shot's last frame waits for its decode; a stream delivers
  // frames while it samples, so every earlier frame goes out first. Nothing else waits here: a decode that
  // needs the frame takes it after sampling (encodeLastFrameLater).
  if ((out.previous && mode.needsLastFrame) || mode.sampling == ShotSampling::KvStream) pump(true);

  timed(gap_.movingWeights, [&] { residency_.beforeShot(index); });
  const models::VideoDiffusionModel& dit = residency_.dit();
  const models::DitCapabilities capabilities = dit.capabilities();
  // Image-to-video: the image enters through y, never as a held latent; a continuing shot starts on the
  // previous shot's last decoded frame (what the model was trained on: one decode, one encode).
  const bool imageToVideo = capabilities.imageConditionChannels > 0;
  if (experts_ && mode.sampling == ShotSampling::KvStream)
    throw std::runtime_error("shot " + std::to_string(index + 1) + " (" + shot.id + "): a stream shot samples chunk by chunk over "
                             "one DiT's KV cache, and this model set has two experts (model.dit_high_noise): give it latent "
                             "or vae_roundtrip continuity");
  if (imageToVideo && out.previous) pump(true);
  const std::vector<std::int64_t> shape{dit.latentChannels(), shot.latentFrames(), shot.height / spatial, shot.width / spatial};
  continuity::PreviousShot handed;
  if (out.previous) {
    handed.latent = *ring_.handoff(shot.continuity.tag);
    handed.lastFrame = out.previous->lastFrame;
    out.previousTail = handed.latent.narrow(1, handed.latent.size(1) - 1, 1);
  }
  continuity::ConditioningOptions conditioningOptions;
  conditioningOptions.freshClipDecode = capabilities.freshClipContinuation;
  conditioningOptions.encodeLastFrameLater = true;
  if (!imageToVideo) conditioningOptions.startImage = startImage(shot, out.previous != nullptr);
  out.conditioning = continuity::prepareConditioning(shot.continuity, out.previous && !imageToVideo ? &handed : nullptr, vae,
                                                     fallbackImage(shot), shape, shot.seed, models_.device, conditioningOptions);
  if (imageToVideo) timed(gap_.encodingFrames, [&] { prepareImageCondition(out, shot, vae); });
  if (out.conditioning.framesEncoded > 0) gap_.encodingFrames += out.conditioning.seconds;

  ShotStarted started;
  started.index = index;
  started.count = count;
  started.id = shot.id;
  started.name = shot.name;
  started.key = key;
  started.steps = effectiveFewStep(shot, defaults).on() ? static_cast<int>(effectiveFewStep(shot, defaults).steps.size())
                                                        : shot.steps.value_or(defaults.steps);
  started.frames = out.frames = static_cast<int>(out.conditioning.outputPixelFrames);
  started.gap = gap_;
  if (options_.writesFiles) std::filesystem::remove_all(out.directory);  // rank 0 alone owns the folder
  observer_.shotStarted(started);

  out.sampler = samplerOptions(shot, defaults, capabilities, out.conditioning, models_.device, experts_ != nullptr);
  out.sampler.splitGuidance = summary_.plan.splitGuidance;
  out.sampler.onOutOfMemory = [this] { emptyDeviceCache(models_.device.str()); };
  const ShotCacheContext cacheContext{&dit, out.sampler.steps, mode.sampling == ShotSampling::KvStream,
                                      out.sampler.perFrame && out.sampler.perFrame->arStep != 0,
                                      options_.calibrateCache, options_.sequenceDirectory, out.sampler.fewStep.has_value(),
                                      experts_ != nullptr};
  out.stepCache = shotStepCache(shot, defaults, cacheContext);
  for (const std::string& message : out.stepCache.warnings) {
    const RenderWarning warning{index, "cache", message};
    summary_.warnings.push_back(warning);
    observer_.warning(warning);
  }
  out.sampler.stepCache = out.stepCache.cache.get();
  if (experts_) {
    sampling::ExpertSwitch experts;
    experts.boundary = 1000.0 * defaults.boundary.value_or(sampling::defaultExpertBoundary(imageToVideo));
    experts.highGuidance = shot.guidanceHighNoise.value_or(defaults.guidanceHighNoise.value_or(out.sampler.guidance));
    experts.switchStep = shot.switchStep.value_or(-1);
    out.sampler.experts = experts;
  }
  const LoraFigures loras = timed(gap_.movingWeights, [&] { return applyLoras(shot, index); });
  if (!loras.files.empty()) out.loras = loras;

  return out;
}

SampledShot ShotPass::sample(PreparedShot& prepared) {
  const int index = prepared.index;
  const Shot& shot = sequence_.shots[static_cast<std::size_t>(index)];
  const bool perFrame = prepared.sampler.perFrame.has_value();
  const bool heldClean = perFrame || prepared.sampler.cleanPrefix.defined();  // never re-noised, never changed
  const auto start = Stopwatch::now();
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
  SampledShot out;
  switch (traitsOf(shot.continuity.mode).sampling) {
    case ShotSampling::KvStream:
      out.streamed = streamShot(index, prepared.previous, prepared.conditioning, prepared.sampler, onStep, prepared.frames);
      out.result = std::move(out.streamed->result);
      out.ditPasses = out.streamed->ditPasses;
      break;
    case ShotSampling::WholeClip: {
      const models::VideoDiffusionModel& dit = residency_.dit();
      const std::int64_t fps = dit.fpsConditioning(sequence_.settings.fps);
      // Each call counted; an image-to-video model gets y after the latent it denoises. The model is looked up in
      // its slot at every call: an expert read again from its file at the boundary is a new object.
      const auto counted = [&](const std::unique_ptr<models::VideoDiffusionModel>& slot) -> sampling::Denoiser {
        return [&, fpsIndex = fps, y = prepared.imageCondition](const at::Tensor& x, const at::Tensor& t, const at::Tensor& context) {
          out.ditPasses += static_cast<int>(x.size(0));
          const at::Tensor input = y.defined() ? at::cat({x, y.unsqueeze(0).expand({x.size(0), -1, -1, -1, -1})}, 1) : x;
          return slot->forwardBatch(input, t, context, fpsIndex);
        };
      };
      const sampling::Denoiser denoiser = counted(models_.dit);
      if (prepared.sampler.experts) {
        prepared.sampler.experts->highNoise = counted(models_.ditHighNoise);
        prepared.sampler.experts->beforeExpert = [this](int expert, int) { experts_->use(expert); };
        experts_->beginShot();
      }
      const at::Tensor& cond = promptContexts_.at(shot.prompt);
      const at::Tensor& uncond = promptContexts_.at(sampling::effectiveNegativePrompt(shot.negativePrompt));
      std::optional<models::BlockCacheScope> blockCache;
      if (prepared.stepCache.cache) blockCache.emplace(dit, prepared.stepCache.cache.get());
      out.result = sampling::sampleFlow(denoiser, prepared.conditioning.sampleShape, cond, uncond, prepared.sampler, onStep,
                                        heldClean ? sampling::BeforeStepHook{} : continuity::holdSlotsHook(prepared.conditioning),
                                        &cancel_);
      break;
    }
  }
  if (prepared.sampler.experts) {
    experts_->endShot();  // the low-noise expert back where the residency policy keeps the DiT
    out.expertBytes = experts_->shotBytes();
    out.expertResidency = toString(experts_->mode());
    out.expertSeconds = experts_->shotSeconds();
  }
  gap_ = {};  // the gap to the next shot starts at this shot's last step
  if (out.result.cancelled) return out;
  countPasses(prepared.stepCache);
  if (options_.calibrateCache && prepared.stepCache.cache) {
    summary_.calibrationRuns.push_back(prepared.stepCache.cache);
    summary_.calibratedFamily = residency_.dit().family();
  }
  out.latent = out.result.latent;
  if (!heldClean) continuity::restoreHeldSlots(out.latent, prepared.conditioning);  // a clean prefix was never touched
  if (shot.continuity.anchorColour && first_ && first_->stats && !out.streamed)
    out.latent = continuity::anchorChannelStats(out.latent, first_->stats->latent, prepared.conditioning.heldFrames());
  out.seconds = secondsSince(start);
  return out;
}

void ShotPass::decode(PreparedShot& prepared, SampledShot sampled) {
  const int index = prepared.index;
  const Shot& shot = sequence_.shots[static_cast<std::size_t>(index)];
  pump(true);  // the previous shot's decode must be done before this one starts
  if (prepared.conditioning.decodePrefixPending)
    timed(gap_.encodingFrames, [&] {
      continuity::encodeDecodePrefix(prepared.conditioning, *models_.vae, prepared.previous->lastFrame, models_.device);
    });

  ring_.put(shot.continuity.tag, sampled.latent, {{"shot", shot.id}, {"key", prepared.key}});
  if (sampled.streamed) {
    streamShot_ = index;
    streamKey_ = prepared.key;
  }
  auto self = std::make_shared<PriorShot>();
  self->index = index;
  self->id = shot.id;
  self->key = prepared.key;
  self->rendered = true;
  tags_[shot.continuity.tag] = self;
  if (!first_) first_ = self;
  const std::shared_ptr<PriorShot> neighbour = neighbourOf(index);
  latest_ = self;
  // Pinned keeps the LoRAs on for the next shot (it may take the same ones); the others move the base weights.
  if (residency_.policy() != ResidencyPolicy::Pinned || prepared.lastShot) restoreLoras();
  timed(gap_.movingWeights, [&] { residency_.beforeDecode(index, !prepared.lastShot); });

  std::unique_ptr<DecodeJob> job = decodeJobFor(shot, prepared, sampled);
  job->self = self;
  job->neighbour = neighbour;
  job->first = first_;
  const bool overlap = overlapDecode_ && !prepared.lastShot && residency_.policy() == ResidencyPolicy::Pinned;
  pending_ = std::move(job);
  if (overlap) {
    pending_->start(*models_.vae, summary_.plan, models_.device.str(), prepared.frames, true);
  } else {
    timed(gap_.waitingForDecode, [&] { pending_->start(*models_.vae, summary_.plan, models_.device.str(), prepared.frames, false); });
    pump(true);
  }
}

void ShotPass::adopt(int index, const std::string& key, const at::Tensor& latent, const at::Tensor& lastFrame,
                     const std::string& statsJson, const std::string& source) {
  const Shot& shot = sequence_.shots[static_cast<std::size_t>(index)];
  ring_.put(shot.continuity.tag, latent, {{"shot", shot.id}, {"key", key}});
  auto legacy = std::make_shared<PriorShot>();
  legacy->index = index;
  legacy->id = shot.id;
  legacy->key = key;
  legacy->lastFrame = lastFrame;
  if (!statsJson.empty()) legacy->stats = continuity::shotStatsFromJson(statsJson, source);
  tags_[shot.continuity.tag] = legacy;
  if (!first_) first_ = legacy;
  latest_ = legacy;
}

std::shared_ptr<PriorShot> ShotPass::neighbourOf(int index) const {
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

  const std::shared_ptr<PriorShot> neighbour = neighbourOf(index);
  adopt(index, key, tail->latent, tail->lastFrame, record->statsJson, shotRecordPath(dir).string());
  std::optional<continuity::CutMetrics> cut = record->cutIn;
  // A stored cut describes the pair of shots it was measured between; after a reorder, or once the shot
  // before was rendered again (in this render or an earlier, stopped one), it is measured anew.
  const bool otherPair = cut && neighbour && cut->fromKey != neighbour->key;
  bool firstEnabled = true;
  for (int before = index - 1; before >= 0 && firstEnabled; --before)
    firstEnabled = !sequence_.shots[static_cast<std::size_t>(before)].enabled;
  if (firstEnabled && cut) {
    cut.reset();
    ShotRecord updated = *record;
    updated.cutIn.reset();
    if (options_.writesFiles) writeShotRecord(dir, updated);
  }
  if (neighbour && neighbour->stats && (neighbour->rendered || !cut || otherPair)) {
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
  } else if (otherPair) {
    cut.reset();  // measured against another shot, and it cannot be measured again here
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
  finished.conditionedOn = record->conditionedOn;
  finished.stream = record->stream;
  finished.cache = record->cache;
  finished.loras = record->loras;
  finished.fewStep = record->fewStep;
  finished.experts = record->experts;
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
