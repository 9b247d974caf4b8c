#include "render/shot_pass.h"

#include <algorithm>

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include "continuity/image_condition.h"
#include "continuity/keyframe_measures.h"
#include "continuity/latent_ops.h"
#include "io/mapped_file.h"
#include "memory/device_memory.h"
#include "models/image_encoder.h"
#include "models/model_loading.h"
#include "render/decode_job.h"
#include "render/frame_conversion.h"
#include "render/output_layout.h"
#include "render/resolved_shot_json.h"
#include "render/reused_cut.h"
#include "render/shot_record.h"
#include "render/start_image.h"
#include "sampling/latent_preview.h"
#include "sampling/step_cache.h"
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

memory::MemoryFallback guidanceFallback(int shotIndex, const sampling::SampleResult& result) {
  memory::MemoryFallback fallback;
  fallback.shotIndex = shotIndex;
  fallback.stage = "sampling";
  fallback.failed = "guidance as one batch-2 call";
  fallback.chosen = "guidance as two batch-1 calls";
  fallback.error = result.outOfMemoryError;
  fallback.message = "shot " + std::to_string(shotIndex + 1) + ": out of memory at sampling step " +
                     std::to_string(result.guidanceSplitAtStep + 1) +
                     "; the cache was emptied and guidance now runs as two batch-1 calls (about half the "
                     "activation peak) from that step on (" +
                     result.outOfMemoryError + ")";
  return fallback;
}

// The sampler's options for the shot as resolved: on one schedule the held latents are held clean when the
// model was trained for it, else re-noised to each step's level; diffusion forcing takes them as a clean prefix.
sampling::SamplerOptions samplerOptions(const resolve::ResolvedShot& shot, const continuity::Conditioning& conditioning,
                                        c10::Device device) {
  sampling::SamplerOptions sampler;
  sampler.steps = shot.steps;
  sampler.shift = shot.shift;
  sampler.guidance = shot.guidance;
  sampler.solver = solverOf(shot.solver);
  sampler.seed = shot.seed;
  sampler.device = device;
  if (shot.fewStep)
    sampler.fewStep = sampling::FewStepSampling{shot.fewStep->steps, shot.fewStep->update == DistilledUpdate::Renoise
                                                                         ? sampling::FewStepUpdate::Renoise
                                                                         : sampling::FewStepUpdate::Euler};
  if (shot.cleanPrefix && conditioning.held.defined()) sampler.cleanPrefix = conditioning.held;
  if (shot.sampling == resolve::SamplingKind::PerFrame) {
    sampling::PerFrameSampling diffusionForcing;
    diffusionForcing.prefix = conditioning.held;
    diffusionForcing.conditionNoise = shot.conditionNoise;
    diffusionForcing.arStep = shot.arStep;
    diffusionForcing.causalBlockSize = shot.causalBlockSize;
    sampler.perFrame = diffusionForcing;
  }
  if (shot.experts) {
    sampling::ExpertSwitch experts;
    experts.boundary = shot.experts->boundary;
    experts.highGuidance = shot.experts->highGuidance;
    experts.switchStep = shot.experts->switchStep;
    sampler.experts = experts;
  }
  return sampler;
}

// The decode of a sampled shot, with its record so far (the decode adds its part and the cut).
std::unique_ptr<DecodeJob> decodeJobFor(const Shot& document, PreparedShot& prepared, const SampledShot& sampled) {
  const resolve::ResolvedShot& shot = *prepared.shot;
  auto job = std::make_unique<DecodeJob>();
  job->index = static_cast<int>(shot.index);
  job->shotId = shot.id;
  job->key = prepared.key;
  job->directory = prepared.directory;
  job->latent = sampled.latent;
  job->conditioning = std::move(prepared.conditioning);
  job->previous = prepared.previous;
  job->previousTail = prepared.previousTail;
  job->startKeyframe = prepared.startKeyframe;
  job->endKeyframe = prepared.endKeyframe;
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
  if (sampled.result.guidanceSplitAtStep >= 0) job->fallbacks.push_back(guidanceFallback(job->index, sampled.result));
  ShotRecord& record = job->record;
  record.index = job->index;
  record.id = shot.id;
  record.name = shot.name;
  record.key = prepared.key;
  record.settingsJson = serializeShot(document);
  record.resolvedJson = resolvedShotToJson(shot).dump();
  record.framesDropped = static_cast<int>(job->conditioning.dropPixelFrames);
  record.conditionedOn = job->conditioning.source;
  record.sampleSeconds = sampled.seconds;
  record.stepSeconds = sampled.result.stepSeconds;
  record.seconds = util::secondsSince(prepared.start);
  return job;
}

// Runs `work`, adding its wall time to `seconds`.
template <typename Work>
decltype(auto) timed(double& seconds, Work&& work) {
  const auto start = util::Stopwatch::now();
  struct Add {
    double& to;
    util::Stopwatch::time_point from;
    ~Add() { to += util::secondsSince(from); }
  } add{seconds, start};
  return work();
}

}  // namespace

ShotPass::ShotPass(const Sequence& sequence, const resolve::ResolvedSequence& resolved, const RenderOptions& options,
                   ModelContext& models, RenderObserver& observer, std::atomic<bool>& cancel, RenderSummary& summary,
                   memory::ResidencyManager& residency, bool overlapDecode)
    : sequence_(sequence),
      resolved_(resolved),
      options_(options),
      models_(models),
      observer_(observer),
      cancel_(cancel),
      summary_(summary),
      residency_(residency),
      overlapDecode_(overlapDecode),
      decodeThreads_(std::max(1, options.decodeThreads)),
      cutShortMark_(io::cutShortMark()),
      chain_(resolved),
      stream_(resolved, options.outputDirectory, observer, cancel) {}

ShotPass::~ShotPass() {
  if (pending_) pending_->wait();
  try {
    restoreLoras();  // the loaded DiT outlives the render: it must leave as the base model
  } catch (...) {
  }
}

void ShotPass::restoreLoras() { ShotLoras::restore(*models_.dit, models_.ditHighNoise.get()); }

at::Tensor ShotPass::fallbackImage(const resolve::ResolvedShot& shot) const {
  if (shot.fallbackImage.empty()) return {};
  if (!options_.loadImage)
    throw std::runtime_error(shot.fallbackImage.string() +
                             ": fallback images need an image reader (continuity.fallback_image)");
  return frameToTensor(options_.loadImage(shot.fallbackImage));
}

at::Tensor ShotPass::startImage(const resolve::ResolvedShot& shot) const {
  return picture(shot.startImage, shot, "start_image");
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

void ShotPass::requireWholeFiles() const {
  if (std::string problem = io::cutShortProblem(cutShortMark_); !problem.empty()) throw std::runtime_error(problem);
}

void ShotPass::finalize(DecodeJob& job) {
  if (job.error) {
    try {
      std::rethrow_exception(job.error);
    } catch (const std::exception& e) {
      throw EarlierShotFailed(job.index,
                              "shot " + std::to_string(job.index + 1) + " (" + job.shotId + "): decoding: " + e.what());
    }
  }
  for (const memory::MemoryFallback& fallback : job.fallbacks) {
    const RenderWarning warning{job.index, "fallback", fallback.message};
    summary_.warnings.push_back(warning);
    observer_.warning(warning);
    job.record.fallbacks.push_back(fallback.message);
  }
  requireWholeFiles();  // the decode read the VAE's weights
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
  measureKeyframes(job, lastFrame);
  job.self->stats = job.stats;
  record.seconds += job.decodeSeconds;
  if (options_.writesFiles)
    timed(gap_.writingFiles, [&] {
      try {
        writeShotTail(job.directory, {job.latent, lastFrame, job.key});
        sealShotRecord(job.directory, record, options_.framesOnDisk);
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
  finished.keyframes = record.keyframes;
  finished.directory = job.directory.string();
  summary_.shots.push_back(finished);
  observer_.shotFinished(finished);
}

ShotOutcome ShotPass::render(int index, const std::string& key, int count, bool lastShot) {
  PreparedShot shot = prepare(index, key, count, lastShot);
  SampledShot sampled = sample(shot);
  if (sampled.result.cancelled) {
    if (sampled.streamed) stream_.drop();  // it holds part of a shot
    pump(true);
    return {true};
  }
  decode(shot, std::move(sampled));
  return {};
}

PreparedShot ShotPass::prepare(int index, const std::string& key, int count, bool lastShot) {
  const resolve::ResolvedShot& shot = resolved_.shots[static_cast<std::size_t>(index)];
  PreparedShot out;
  out.shot = &shot;
  out.key = key;
  out.lastShot = lastShot;
  out.start = util::Stopwatch::now();
  const ContinuityModeTraits& mode = traitsOf(shot.settings.mode);
  const bool stream = shot.sampling == resolve::SamplingKind::KvStream;
  out.directory = shotDirectory(options_.outputDirectory, index, shot.id);
  const models::VideoVae& vae = *models_.vae;

  out.previous = chain_.previousOf(shot);
  // Sampling that holds an encode of the previous shot's last frame waits for its decode; a stream delivers
  // frames while it samples, so every earlier frame goes out first. Nothing else waits here: a decode that
  // needs the frame takes it after sampling (encodeLastFrameLater).
  if ((out.previous && mode.needsLastFrame) || stream) pump(true);

  timed(gap_.movingWeights, [&] { residency_.beforeShot(index); });
  // Image-to-video: the image enters through y, never as a held latent.
  const bool imageToVideo = !shot.imageCondition.empty();
  if (imageToVideo && out.previous) pump(true);
  const std::vector<std::int64_t> shape{shot.latentChannels, shot.latentFrames, shot.latentHeight, shot.latentWidth};
  continuity::PreviousShot handed;
  if (out.previous) {
    handed.latent = chain_.handoff(shot.settings.tag);
    handed.lastFrame = out.previous->lastFrame;
    out.previousTail = handed.latent.narrow(1, handed.latent.size(1) - std::max(1, shot.motionLatents),
                                            std::max(1, shot.motionLatents));
  }
  continuity::ConditioningOptions conditioningOptions;
  conditioningOptions.freshClipDecode = residency_.dit().capabilities().freshClipContinuation;
  conditioningOptions.encodeLastFrameLater = true;
  if (!imageToVideo) conditioningOptions.startImage = startImage(shot);
  out.conditioning =
      continuity::prepareConditioning(shot.settings, out.previous && !imageToVideo ? &handed : nullptr, vae,
                                      fallbackImage(shot), shape, shot.seed, models_.device, conditioningOptions);
  if (out.conditioning.source == "start_image") out.startKeyframe = conditioningOptions.startImage;
  if (imageToVideo) timed(gap_.encodingFrames, [&] { prepareImageCondition(out, vae); });
  if (out.conditioning.framesEncoded > 0) gap_.encodingFrames += out.conditioning.seconds;

  ShotStarted started;
  started.index = index;
  started.count = count;
  started.id = shot.id;
  started.name = shot.name;
  started.key = key;
  started.steps = shot.steps;
  started.frames = out.frames = static_cast<int>(out.conditioning.outputPixelFrames);
  started.gap = gap_;
  if (options_.writesFiles) std::filesystem::remove_all(out.directory);  // rank 0 alone owns the folder
  observer_.shotStarted(started);

  out.sampler = samplerOptions(shot, out.conditioning, models_.device);
  out.sampler.splitGuidance = summary_.plan.splitGuidance;
  out.sampler.onOutOfMemory = [this] { memory::emptyDeviceCache(models_.device.str()); };
  out.stepCache = shotStepCache(shot, options_.calibrateCache);
  if (!shot.cache.off.empty() && !stream && !options_.calibrateCache) {
    const RenderWarning warning{
        index, "cache", "step cache " + std::string(toString(shot.cache.policy)) + " is off: " + shot.cache.off};
    summary_.warnings.push_back(warning);
    observer_.warning(warning);
  }
  out.sampler.stepCache = out.stepCache.cache.get();
  const models::FamilyKnowledge* family = resolved_.models.dit.knowledge;
  const LoraFigures loras = timed(gap_.movingWeights, [&] {
    return loras_.apply(shot, *models_.dit, models_.ditHighNoise.get(),
                        family ? family->loraLayerAliases : std::span<const models::LoraLayerAlias>{});
  });
  if (!loras.files.empty()) out.loras = loras;
  return out;
}

void ShotPass::prepareImageCondition(PreparedShot& out, const models::VideoVae& vae) const {
  const resolve::ResolvedShot& shot = *out.shot;
  const std::int64_t latentFrames = out.conditioning.sampleShape[1];
  const std::int64_t frames = vae.geometry().pixelFrames(latentFrames);
  out.imageConditionSource = shot.imageCondition;
  out.conditioning.source = shot.imageCondition;
  const at::Tensor end = picture(shot.endImage, shot, "end_image");
  out.endKeyframe = end;
  if (shot.imageCondition == "svi") {
    const at::Tensor anchor = vae.encode(picture(shot.anchorImage, shot, "continuity.anchor_image").unsqueeze(1));
    out.conditioning.framesEncoded += 1;
    const at::Tensor motion = out.previous ? out.previousTail : at::Tensor();
    out.imageCondition =
        continuity::sviCondition(anchor, motion, latentFrames, vae.geometry().temporalFactor).to(models_.device);
    if (motion.defined()) {
      // The new clip's first frames repeat the end of the previous one (the mode's geometry, as resolved).
      const std::int64_t drop = shot.continuity.droppedLatentFrames * vae.geometry().temporalFactor;
      out.conditioning.dropPixelFrames += drop;
      out.conditioning.outputPixelFrames -= drop;
      out.conditioning.storedTail = out.conditioning.conditionedOn = motion;
    } else {
      out.startKeyframe = picture(shot.anchorImage, shot, "continuity.anchor_image");
    }
    return;
  }
  if (shot.imageCondition == "handed_latent" && out.previousTail.defined()) {
    // The previous shot's last latent frame stands for the first frame's encoding (zero copy, no round trip).
    out.imageCondition =
        continuity::imageToVideoConditionFromLatent(vae, out.previousTail, end, frames).to(models_.device);
    out.conditioning.framesEncoded += end.defined() ? 1 : 0;
    return;
  }
  at::Tensor first;
  if (shot.imageCondition == "start_image") {
    first = out.startKeyframe = startImage(shot);
  } else if (shot.imageCondition != "none" && out.previous && out.previous->lastFrame.defined()) {
    first = out.previous->lastFrame;
    if (first.size(1) != shot.height || first.size(2) != shot.width)
      first = at::upsample_bicubic2d(first.unsqueeze(0), {shot.height, shot.width}, false)[0].clamp(-1, 1);
    out.imageConditionSource = out.conditioning.source = "previous_last_frame";
  }
  if (!first.defined() && shot.imageCondition != "none")
    throw std::runtime_error("shot " + std::to_string(shot.index + 1) + " (" + shot.id +
                             "): the shot before it left no frame to start from");
  out.imageCondition = continuity::imageToVideoCondition(vae, first, end, frames).to(models_.device);
  out.conditioning.framesEncoded += (first.defined() ? 1 : 0) + (end.defined() ? 1 : 0);
  if (residency_.dit().capabilities().imageEmbeddingTokens > 0) out.imageEmbedding = clipFeatures(first, end);
}

at::Tensor ShotPass::clipFeatures(const at::Tensor& first, const at::Tensor& last) const {
  // Loaded for the shot's pictures alone: it holds no memory while the DiT samples.
  const std::unique_ptr<models::ImageEncoder> encoder = models::loadImageEncoder(models_.files, models_.device);
  const bool both = residency_.dit().capabilities().imageEmbeddingTokens > encoder->tokens();
  std::vector<at::Tensor> pictures;
  if (first.defined()) pictures.push_back(first);
  if (last.defined() && (both || pictures.empty())) pictures.push_back(last);
  return encoder->encode(at::stack(pictures).to(models_.device, at::kFloat));
}

at::Tensor ShotPass::picture(const std::filesystem::path& file, const resolve::ResolvedShot& shot,
                             const char* field) const {
  if (file.empty()) return {};
  if (!options_.loadImage)
    throw std::runtime_error(file.string() + ": pictures need an image reader (" + std::string(field) + ")");
  return startImageTensor(options_.loadImage(file), shot.width, shot.height);
}

void ShotPass::measureKeyframes(DecodeJob& job, const at::Tensor& lastFrame) {
  ShotRecord& record = job.record;
  if (job.startKeyframe.defined())
    record.keyframes.push_back(continuity::measureLanding("start", job.video.select(1, 0), job.startKeyframe));
  if (job.endKeyframe.defined())
    record.keyframes.push_back(continuity::measureLanding("end", lastFrame, job.endKeyframe));
  for (const continuity::KeyframeLanding& landing : record.keyframes) {
    if (!landing.missed) continue;
    const RenderWarning warning{job.index, "keyframe", continuity::landingWarning(job.index, job.shotId, landing)};
    summary_.warnings.push_back(warning);
    observer_.warning(warning);
  }
}

bool ShotPass::previewDue() const { return previewCost_ == 0 || util::secondsSince(lastPreview_) >= 4 * previewCost_; }

SampledShot ShotPass::sample(PreparedShot& prepared) {
  const resolve::ResolvedShot& shot = *prepared.shot;
  const int index = static_cast<int>(shot.index);
  const bool perFrame = prepared.sampler.perFrame.has_value();
  const bool heldClean = perFrame || prepared.sampler.cleanPrefix.defined();  // never re-noised, never changed
  const auto start = util::Stopwatch::now();
  auto onStep = [&](const sampling::StepEvent& event) {
    StepDone done;
    done.shotIndex = index;
    done.step = event.step + 1;
    done.steps = event.steps;
    done.sigma = event.sigma;
    done.seconds = event.seconds;
    if (options_.previews) done.preview = previewOf(event.denoised, models_.preview);
    if (options_.previews && models_.previewDecoder && previewDue()) {
      const auto decodeStart = util::Stopwatch::now();
      const at::Tensor frames = models_.previewDecoder->decodeFrames(event.denoised);  // [T, 3, H, W] in [0, 1]
      done.previewFrames = videoToFrames(frames.permute({1, 0, 2, 3}) * 2 - 1);
      summary_.previewDecoder = models_.files.previewDecoder.filename().string();
      done.previewSeconds = util::secondsSince(decodeStart);
      previewCost_ = done.previewSeconds;
      lastPreview_ = util::Stopwatch::now();
      ++summary_.previewDecodes;
      summary_.previewSeconds += done.previewSeconds;
    }
    observer_.stepDone(done);
    requireWholeFiles();
    pump(false);
    return !cancel_.load();
  };
  SampledShot out;
  const models::VideoDiffusionModel& dit = residency_.dit();
  if (shot.sampling == resolve::SamplingKind::KvStream) {
    const at::Tensor previousLatent = prepared.previous ? chain_.handoff(shot.settings.tag) : at::Tensor();
    out.streamed = stream_.sample(shot, prepared.previous, previousLatent, prepared.conditioning, prepared.sampler,
                                  onStep, prepared.frames, summary_.plan.tiledDecode,
                                  {dit, *models_.vae, models_.device, promptContexts_});
    out.result = std::move(out.streamed->result);
    out.ditPasses = out.streamed->ditPasses;
  } else {
    const std::int64_t fps = dit.fpsConditioning(resolved_.fps);
    // Each call counted; an image-to-video model gets y after the latent it denoises. The model is looked up in
    // its slot at every call: an expert read again from its file at the boundary is a new object.
    const auto counted = [&](const memory::ModelSlot& slot) -> sampling::Denoiser {
      return [&, fpsIndex = fps, y = prepared.imageCondition](const at::Tensor& x, const at::Tensor& t,
                                                              const at::Tensor& context) {
        out.ditPasses += static_cast<int>(x.size(0));
        const at::Tensor input = y.defined() ? at::cat({x, y.unsqueeze(0).expand({x.size(0), -1, -1, -1, -1})}, 1) : x;
        return slot.onDevice().forwardBatch(input, t, context, fpsIndex);
      };
    };
    const sampling::Denoiser denoiser = counted(*models_.dit);
    if (prepared.sampler.experts) {
      prepared.sampler.experts->highNoise = counted(*models_.ditHighNoise);
      prepared.sampler.experts->beforeExpert = [this](int expert, int) { experts_->use(expert); };
      experts_->beginShot();
    }
    const at::Tensor& cond = promptContexts_.at(shot.prompt);
    const at::Tensor& uncond = promptContexts_.at(shot.uncondPrompt);
    std::optional<models::BlockCacheScope> blockCache;
    if (prepared.stepCache.cache) blockCache.emplace(dit, prepared.stepCache.cache.get());
    std::optional<models::ImageEmbeddingScope> imageEmbedding;
    if (prepared.imageEmbedding.defined()) imageEmbedding.emplace(dit, prepared.imageEmbedding);
    out.result = sampling::sampleFlow(
        denoiser, prepared.conditioning.sampleShape, cond, uncond, prepared.sampler, onStep,
        heldClean ? sampling::BeforeStepHook{} : continuity::holdSlotsHook(prepared.conditioning), &cancel_);
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
    summary_.calibrationRuns.push_back({prepared.shot->index, prepared.stepCache.cache});
    summary_.calibratedFamily = residency_.dit().family();
  }
  out.latent = out.result.latent;
  if (!heldClean) continuity::restoreHeldSlots(out.latent, prepared.conditioning);  // a clean prefix was never touched
  const std::shared_ptr<PriorShot>& first = chain_.first();
  if (shot.settings.anchorColour && first && first->stats && !out.streamed)
    out.latent = continuity::anchorChannelStats(out.latent, first->stats->latent, prepared.conditioning.heldFrames());
  out.seconds = util::secondsSince(start);
  return out;
}

void ShotPass::decode(PreparedShot& prepared, SampledShot sampled) {
  const resolve::ResolvedShot& shot = *prepared.shot;
  const int index = static_cast<int>(shot.index);
  pump(true);  // the previous shot's decode must be done before this one starts
  if (prepared.conditioning.decodePrefixPending)
    timed(gap_.encodingFrames, [&] {
      continuity::encodeDecodePrefix(prepared.conditioning, *models_.vae, prepared.previous->lastFrame, models_.device);
    });

  const std::shared_ptr<PriorShot> neighbour = chain_.neighbourOf(index);
  const std::shared_ptr<PriorShot> self = chain_.rendered(index, prepared.key, sampled.latent);
  if (sampled.streamed) stream_.ended(index, prepared.key);
  // Pinned keeps the LoRAs on for the next shot (it may take the same ones); the others move the base weights.
  if (prepared.lastShot) restoreLoras();  // a DiT that moves next takes its LoRAs off itself
  timed(gap_.movingWeights, [&] { residency_.beforeDecode(index, !prepared.lastShot); });

  std::unique_ptr<DecodeJob> job = decodeJobFor(sequence_.shots[shot.index], prepared, sampled);
  job->self = self;
  job->neighbour = neighbour;
  job->first = chain_.first();
  const bool overlap = overlapDecode_ && !prepared.lastShot && residency_.policy() == ResidencyPolicy::Pinned;
  pending_ = std::move(job);
  if (overlap) {
    pending_->start(*models_.vae, summary_.plan, models_.device.str(), prepared.frames, decodeThreads_);
  } else {
    timed(gap_.waitingForDecode,
          [&] { pending_->start(*models_.vae, summary_.plan, models_.device.str(), prepared.frames, 0); });
    pump(true);
  }
}

void ShotPass::reuse(int index, const std::string& key, int count) {
  pump(true);
  const resolve::ResolvedShot& shot = resolved_.shots[static_cast<std::size_t>(index)];
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

  const std::shared_ptr<PriorShot> neighbour = chain_.neighbourOf(index);
  chain_.adopt(index, key, tail->latent, tail->lastFrame, record->statsJson, shotRecordPath(dir).string());
  std::optional<continuity::CutMetrics> cut = record->cutIn;
  // A stored cut describes the pair of shots it was measured between; after a reorder, or once the shot
  // before was rendered again (in this render or an earlier, stopped one), it is measured anew.
  const bool otherPair = cut && neighbour && cut->fromKey != neighbour->key;
  if (shot.neighbour < 0 && cut) {
    cut.reset();
    ShotRecord updated = *record;
    updated.cutIn.reset();
    if (options_.writesFiles) writeShotRecord(dir, updated);
  }
  if (neighbour && neighbour->stats && (neighbour->rendered || !cut || otherPair)) {
    cut = remeasureReusedCut(cut, *neighbour, chain_.first().get(), *chain_.latest(), tail->latent, shot.settings.mode,
                             record->framesWritten, dir, options_.loadImage);
    if (cut) {
      ShotRecord updated = *record;
      updated.cutIn = cut;
      if (options_.writesFiles) writeShotRecord(dir, updated);
    } else if (record->cutIn) {
      const RenderWarning warning{index, "cut",
                                  "cut " + std::to_string(neighbour->index + 1) + "→" + std::to_string(index + 1) +
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
  finished.keyframes = record->keyframes;
  finished.directory = dir.string();
  summary_.shots.push_back(finished);
  observer_.shotFinished(finished);
}

void ShotPass::loadPredecessorsBefore(int first, const std::vector<std::string>& keys) {
  for (int i = 0; i < first; ++i) {
    const resolve::ResolvedShot& shot = resolved_.shots[static_cast<std::size_t>(i)];
    if (!shot.enabled) continue;
    const std::filesystem::path dir = shotDirectory(options_.outputDirectory, i, shot.id);
    const std::optional<ShotRecord> record = readShotRecord(dir);
    if (!record || record->key != keys[static_cast<std::size_t>(i)] || !shotFolderProblem(dir, *record, false).empty())
      continue;
    const std::optional<ShotTail> tail = readShotTail(dir, models_.device);
    if (!tail) continue;
    chain_.adopt(i, record->key, tail->latent, tail->lastFrame, record->statsJson, shotRecordPath(dir).string());
  }
}

}  // namespace shotchain::render
