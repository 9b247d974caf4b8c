#include "resolve/resolve_sequence.h"

#include <algorithm>
#include <map>

#include "resolve/frame_rules.h"
#include "resolve/model_lookup.h"
#include "resolve/shot_resolution.h"
#include "sequence/validation.h"
#include "util/number_text.h"

namespace shotchain::resolve {
namespace {

bool blank(const std::string& text) { return text.find_first_not_of(" \t\r\n\f\v") == std::string::npos; }

// The model set's own consistency: the VAE's latents are the DiT's, two experts are one family and size.
void checkModelSet(const models::ModelSetFacts& m, Problems& problems) {
  if (m.vae.latentChannels != m.dit.latentChannels)
    problems.error("model.vae", m.vae.file.string() + ": its latents have " + std::to_string(m.vae.latentChannels) +
                                    " channels; the DiT (" + m.dit.description + ") needs " +
                                    std::to_string(m.dit.latentChannels));
  if (m.ditHighNoise && (m.ditHighNoise->family != m.dit.family || m.ditHighNoise->parameters != m.dit.parameters ||
                         m.ditHighNoise->latentChannels != m.dit.latentChannels))
    problems.error("model.dit_high_noise", m.ditHighNoise->file.string() + " (" + m.ditHighNoise->description +
                                               ") is not the other expert of " + m.dit.file.string() + " (" +
                                               m.dit.description +
                                               "): the two experts of a pair have the same family and shapes");
  if (m.dit.imageEmbeddingTokens == 0 && !m.imageEncoder.empty())
    problems.warning("model.image_encoder", "is not used: " + m.dit.description + " takes no image features");
  if (m.dit.imageEmbeddingTokens > 0 && m.imageEncoder.empty())
    problems.error("model.image_encoder", m.dit.description +
                                              " attends to CLIP vision features of the shot's pictures: name the "
                                              "CLIP vision file (clip_vision_h.safetensors) or put it in the models "
                                              "folder's clip_vision/");
  if (!m.textEncoder.embeddedTokenizer && m.textEncoder.tokenizer.empty())
    problems.error("model.tokenizer", m.textEncoder.file.string() + " carries no tokenizer (" +
                                          m.textEncoder.description + "): give model.tokenizer a spiece.model file");
}

// What a shot of this model set and mode samples.
void resolveSampling(const Sequence& sequence, const Shot& shot, ResolvedShot& r, const ResolvedSequence& resolved) {
  const SamplerDefaults& sampler = sequence.settings.sampler;
  const models::DitFacts& dit = resolved.models.dit;
  const FewStepSettings& fewStep = shot.fewStep ? *shot.fewStep : sampler.fewStep;
  if (fewStep.on()) r.fewStep = fewStep;
  r.steps = r.fewStep ? static_cast<int>(r.fewStep->steps.size()) : shot.steps.value_or(sampler.steps);
  r.guidance = shot.guidance.value_or(sampler.guidance);
  r.shift = shot.shift.value_or(sampler.shift);
  r.solver = sampler.solver;
  r.branches = r.guidance == 1.0 ? 1 : 2;
  if (streams(shot.continuity.mode)) {
    r.sampling = SamplingKind::KvStream;
  } else if (dit.perFrameTimesteps && !r.fewStep && !resolved.twoExperts) {
    r.sampling = SamplingKind::PerFrame;
    r.conditionNoise = shot.continuity.conditionNoise.value_or(0);
    r.arStep = sampler.arStep.value_or(0);
    r.causalBlockSize = static_cast<int>(std::max<std::int64_t>(1, dit.causalBlockSize));
  } else {
    r.sampling = SamplingKind::OneSchedule;
    // One schedule for the clip: a model trained for clean first frames, or one that takes per-frame timesteps
    // sampled on a few-step schedule or by two experts, is given the held latents clean.
    r.cleanPrefix = dit.cleanFirstFrames || ((r.fewStep || resolved.twoExperts) && dit.perFrameTimesteps);
  }
  r.recache = recaches(shot.continuity);
}

// Frames, sizes and the continuity lengths against the family's geometry.
void checkGeometry(const Shot& shot, const ResolvedShot& r, const ResolvedSequence& resolved, Problems& problems) {
  const std::size_t i = r.index;
  for (Diagnostic& d : shotGeometryProblems(shot, i, resolved.geometry))
    problems.error(std::move(d.path), std::move(d.message));
  const Continuity& c = shot.continuity;
  const ContinuityModeTraits& mode = traitsOf(c.mode);
  if (mode.readsOverlap && c.overlapLatents >= 1 && c.overlapLatents >= r.latentFrames)
    problems.error(shotPath(i, "continuity.overlap_latents"), std::to_string(c.overlapLatents) +
                                                                  " must be less than the shot's " +
                                                                  std::to_string(r.latentFrames) + " latent frames");
  if (c.prefixFrames && *c.prefixFrames >= 1 && *c.prefixFrames >= r.latentFrames)
    problems.error(shotPath(i, "continuity.prefix_frames"), std::to_string(*c.prefixFrames) +
                                                                " must be less than the shot's " +
                                                                std::to_string(r.latentFrames) + " latent frames");
  if (r.neighbour < 0 || !shot.enabled) return;
  const ResolvedShot& before = resolved.shots[static_cast<std::size_t>(r.neighbour)];
  if (mode.readsOverlap && c.overlapLatents > before.latentFrames)
    problems.error(shotPath(i, "continuity.overlap_latents"),
                   std::to_string(c.overlapLatents) + " is more than the previous shot's " +
                       std::to_string(before.latentFrames) + " latent frames");
  else if (mode.readsPrefix && c.prefixFrames && *c.prefixFrames > before.latentFrames)
    problems.error(shotPath(i, "continuity.prefix_frames"), std::to_string(*c.prefixFrames) +
                                                                " is more than the previous shot's " +
                                                                std::to_string(before.latentFrames) + " latent frames");
}

// A stream shot needs a DiT that streams over a KV cache, one DiT, its predecessor's size and whole chunks.
void checkStream(const Shot& shot, const ResolvedShot& r, const ResolvedSequence& resolved, Problems& problems) {
  if (r.sampling != SamplingKind::KvStream || !shot.enabled) return;
  const models::DitFacts& dit = resolved.models.dit;
  const std::size_t i = r.index;
  if (resolved.twoExperts)
    return problems.error(shotPath(i, "continuity.mode"),
                          "a stream shot samples chunk by chunk over one DiT's KV cache, and this "
                          "model set has two experts (model.dit_high_noise): choose latent or vae_roundtrip");
  if (dit.causalBlockSize <= 0 || !dit.perFrameTimesteps)
    return problems.error(shotPath(i, "continuity.mode"), "stream needs a block-causal DiT that keeps a KV cache; " +
                                                              dit.description +
                                                              " attends to the whole clip: choose latent");
  if (r.predecessor >= 0) {
    const ResolvedShot& source = resolved.shots[static_cast<std::size_t>(r.predecessor)];
    if (source.width != r.width || source.height != r.height)
      problems.error(shotPath(i, "continuity.mode"), "stream continues the frames of shot \"" + source.id +
                                                         "\" and needs its size (" + std::to_string(source.width) +
                                                         "x" + std::to_string(source.height) +
                                                         "); choose latent to change the size at this cut");
  }
  const std::int64_t chunk = dit.causalBlockSize;
  const bool continues = r.predecessor >= 0;
  const int generated = r.latentFrames - (continues ? 1 : 0);
  if (generated >= 1 && generated % chunk == 0) return;
  const std::int64_t low = std::max<std::int64_t>(1, generated / chunk) * chunk + (continues ? 1 : 0);
  const FrameGeometry& g = resolved.geometry;
  problems.error(shotPath(i, "frames"), std::to_string(shot.frames) + " frames give " + std::to_string(generated) +
                                            " new latent frames" +
                                            (continues ? " (the first frame repeats the previous shot's last)" : "") +
                                            ", not whole chunks of " + std::to_string(chunk) + ": try " +
                                            std::to_string(g.pixelFrames(static_cast<int>(low))) + " or " +
                                            std::to_string(g.pixelFrames(static_cast<int>(low + chunk))) + " frames");
}

// Stable Video Infinity: the chain's anchor picture (the shot's own, else its predecessor's, else the start image
// of the chain's first shot) and the previous shot's last latents, both in the image condition.
void resolveSvi(const Shot& shot, ResolvedShot& r, const ResolvedSequence& resolved, const ResolveContext& context,
                Problems& problems) {
  const std::string path = shotPath(r.index, "continuity.mode");
  if (resolved.models.dit.imageConditionChannels == 0 || resolved.models.dit.imageEmbeddingTokens > 0)
    return problems.error(path, std::string("svi (2.0 Pro) conditions image-to-video experts that take no CLIP "
                                            "features (the SVI LoRAs' models); ") +
                                    resolved.models.dit.description + " is not one");
  r.imageCondition = "svi";
  if (!r.endImage.empty())
    problems.error(shotPath(r.index, "end_image"),
                   "svi shots continue from their anchor and the handed latents; an end keyframe is not part of "
                   "their condition (use continuity latent to end a continued shot on a picture)");
  if (r.predecessor >= 0) {
    const ResolvedShot& before = resolved.shots[static_cast<std::size_t>(r.predecessor)];
    r.motionLatents = motionLatents(shot.continuity);
    if (r.motionLatents > before.latentFrames)
      problems.error(shotPath(r.index, "continuity.motion_latents"),
                     std::to_string(r.motionLatents) + " is more than the previous shot's " +
                         std::to_string(before.latentFrames) + " latent frames");
    if (r.motionLatents + 1 > r.latentFrames)
      problems.error(shotPath(r.index, "continuity.motion_latents"),
                     std::to_string(r.motionLatents) + " motion latents and the anchor do not fit the shot's " +
                         std::to_string(r.latentFrames) + " latent frames");
    if (before.latentWidth != r.latentWidth || before.latentHeight != r.latentHeight)
      problems.error(shotPath(r.index, "continuity.mode"),
                     "svi continues the latents of shot \"" + before.id + "\" and needs its size (" +
                         std::to_string(before.width) + "x" + std::to_string(before.height) + ")");
  }
  if (!shot.continuity.anchorImage.empty())
    r.anchorImage = documentFile(context, shot.continuity.anchorImage);
  else if (r.predecessor >= 0)
    r.anchorImage = resolved.shots[static_cast<std::size_t>(r.predecessor)].anchorImage;
  if (r.anchorImage.empty() && !r.startImage.empty()) r.anchorImage = r.startImage;
  if (r.anchorImage.empty() && r.predecessor >= 0) {
    const ResolvedShot& before = resolved.shots[static_cast<std::size_t>(r.predecessor)];
    r.anchorImage = before.startImage;
  }
  if (r.anchorImage.empty() && shot.enabled)
    problems.error(shotPath(r.index, "continuity.anchor_image"),
                   "svi needs an anchor picture: give this shot (or the first shot of its chain) a start image or "
                   "an anchor image");
}

// The pictures a shot reads and, on an image-to-video model, where its image comes from.
void resolvePictures(const Shot& shot, ResolvedShot& r, const ResolvedSequence& resolved, const ResolveContext& context,
                     Problems& problems) {
  const ContinuityModeTraits& mode = traitsOf(shot.continuity.mode);
  const bool handedOff = mode.handoff && r.predecessor >= 0;
  const bool imageToVideo = resolved.models.dit.imageConditionChannels > 0;
  if (mode.readsBlend && !shot.continuity.fallbackImage.empty())
    r.fallbackImage = documentFile(context, shot.continuity.fallbackImage);
  if (!shot.startImage.empty() && (imageToVideo || !handedOff)) r.startImage = documentFile(context, shot.startImage);
  if (!shot.startImage.empty() && handedOff && !imageToVideo)
    problems.warning(shotPath(r.index, "start_image"), "is not used: the shot continues shot \"" +
                                                           resolved.shots[static_cast<std::size_t>(r.predecessor)].id +
                                                           "\" (continuity " + toString(shot.continuity.mode) +
                                                           "); set continuity to none to start from the picture");
  if (!shot.endImage.empty()) r.endImage = documentFile(context, shot.endImage);
  if (r.neighbour >= 0 && !shot.startImage.empty()) {
    const ResolvedShot& before = resolved.shots[static_cast<std::size_t>(r.neighbour)];
    r.sharedStartKeyframe = !before.endImage.empty() && before.endImage == documentFile(context, shot.startImage);
  }
  if (!r.endImage.empty() && !resolved.models.dit.firstLastFrame)
    problems.error(shotPath(r.index, "end_image"),
                   "ending a shot on a picture takes a first–last-frame model (an image-to-video model whose "
                   "condition holds a last frame); " +
                       resolved.models.dit.description + " is not one");
  if (shot.continuity.mode == ContinuityMode::Svi) return resolveSvi(shot, r, resolved, context, problems);
  if (!imageToVideo) return;
  if (!r.startImage.empty()) {
    r.imageCondition = "start_image";
  } else if (handedOff) {
    const ResolvedShot& source = resolved.shots[static_cast<std::size_t>(r.predecessor)];
    // A model that attends to CLIP features of the first frame needs it in pixels.
    r.imageCondition = shot.continuity.mode == ContinuityMode::Latent && source.latentWidth == r.latentWidth &&
                               source.latentHeight == r.latentHeight && resolved.models.dit.imageEmbeddingTokens == 0
                           ? "handed_latent"
                           : "previous_last_frame";
  } else if (!r.endImage.empty()) {
    r.imageCondition = "none";
  } else if (shot.enabled) {
    problems.error(shotPath(r.index, "start_image"),
                   resolved.models.dit.description +
                       " is an image-to-video model: give the shot a start image or continue it "
                       "from the shot before");
  }
}

// What a few-step schedule makes of the shot's other sampler fields.
void checkFewStepUse(const Shot& shot, const ResolvedShot& r, Problems& problems) {
  if (!r.fewStep || !shot.enabled) return;
  const std::string from = shot.fewStep ? shotPath(r.index, "few_step") : std::string("sampler.few_step");
  const std::string count = std::to_string(r.steps);
  if (shot.steps)
    problems.warning(shotPath(r.index, "steps"), "is not used: " + from + " gives the shot " + count + " steps");
  if (r.guidance != 1.0)
    problems.warning(shot.guidance ? shotPath(r.index, "guidance") : std::string("sampler.guidance"),
                     util::numberText(r.guidance) + " with " + from +
                         ": distilled models are sampled at guidance 1 (no unconditional pass); "
                         "this one runs both passes every step");
}

}  // namespace

std::filesystem::path documentFile(const ResolveContext& context, const std::string& file) {
  const std::filesystem::path path(file);
  return path.is_absolute() || context.sequenceDirectory.empty() ? path : context.sequenceDirectory / path;
}

ResolvedSequence resolveSequence(const Sequence& sequence, const models::ModelSetFacts& models,
                                 const ResolveContext& context) {
  ResolvedSequence resolved;
  resolved.models = models;
  resolved.geometry = geometryOf(models);
  resolved.twoExperts = models.ditHighNoise.has_value() || !sequence.settings.model.ditHighNoise.empty();
  resolved.fps = sequence.settings.fps;
  resolved.streamWindow = sequence.settings.sampler.streamWindow.value_or(kDefaultStreamWindow);
  resolved.problems = validateSequence(sequence, {context.sequenceDirectory, context.missingFilesAreErrors});
  Problems problems(resolved.problems);
  if (!models.assumed) checkModelSet(models, problems);

  const models::FamilyKnowledge* knowledge = models.dit.knowledge;
  std::map<std::string, int> lastByTag;
  int firstEnabled = -1, lastEnabled = -1;
  for (std::size_t i = 0; i < sequence.shots.size(); ++i) {
    const Shot& shot = sequence.shots[i];
    ResolvedShot& r = resolved.shots.emplace_back();
    r.index = i;
    r.id = shot.id;
    r.name = shot.name;
    r.enabled = shot.enabled;
    r.prompt = shot.prompt;
    r.negativePrompt = shot.negativePrompt;
    r.uncondPrompt = blank(shot.negativePrompt) && knowledge ? knowledge->defaultNegativePrompt : shot.negativePrompt;
    r.seed = shot.seed;
    r.frames = shot.frames;
    r.width = shot.width;
    r.height = shot.height;
    r.latentFrames = resolved.geometry.latentFrames(std::max(1, shot.frames));
    r.latentWidth = shot.width / resolved.geometry.spatialFactor;
    r.latentHeight = shot.height / resolved.geometry.spatialFactor;
    r.latentChannels = static_cast<int>(models.dit.latentChannels);
    r.settings = shot.continuity;
    const ContinuityModeTraits& mode = traitsOf(shot.continuity.mode);
    if (const auto source = lastByTag.find(shot.continuity.tag); mode.handoff && source != lastByTag.end())
      r.predecessor = source->second;
    r.neighbour = lastEnabled;
    if (shot.continuity.anchorColour) r.anchor = firstEnabled;
    if (r.predecessor >= 0) r.continuity = continuityGeometry(shot.continuity);
    r.sampledLatentFrames = r.latentFrames + r.continuity.extraLatents;
    r.outputFrames =
        shot.frames - r.continuity.droppedFrames - r.continuity.droppedLatentFrames * resolved.geometry.temporalFactor;
    resolveSampling(sequence, shot, r, resolved);
    if (r.sampling == SamplingKind::KvStream)
      for (int j = r.predecessor; j >= 0;
           j = resolved.shots[static_cast<std::size_t>(j)].sampling == SamplingKind::KvStream
                   ? resolved.shots[static_cast<std::size_t>(j)].predecessor
                   : -1)
        r.streamChain.insert(r.streamChain.begin(), j);
    if (resolved.twoExperts) r.experts = resolveExperts(sequence, r, resolved);
    if (shot.switchStep && *shot.switchStep > r.steps && shot.enabled)
      problems.error(shotPath(r.index, "switch_step"),
                     std::to_string(*shot.switchStep) + " is past the shot's " + std::to_string(r.steps) +
                         " steps: the low-noise expert takes over at a step from 0 to " + std::to_string(r.steps));
    r.cache = resolveStepCache(sequence, r, resolved, context, problems);
    resolveLoras(sequence, r, resolved, context, problems);
    checkGeometry(shot, r, resolved, problems);
    checkStream(shot, r, resolved, problems);
    resolvePictures(shot, r, resolved, context, problems);
    checkFewStepUse(shot, r, problems);
    if (!shot.enabled) continue;
    lastByTag[shot.continuity.tag] = static_cast<int>(i);
    if (firstEnabled < 0) firstEnabled = static_cast<int>(i);
    lastEnabled = static_cast<int>(i);
  }
  // A sequence-wide setting reads the same for every shot: each of its problems is said once.
  Diagnostics unique;
  for (Diagnostic& d : resolved.problems)
    if (std::none_of(unique.begin(), unique.end(), [&](const Diagnostic& u) {
          return u.severity == d.severity && u.path == d.path && u.message == d.message;
        }))
      unique.push_back(std::move(d));
  resolved.problems = std::move(unique);
  return resolved;
}

ResolvedSequence resolveSequence(const Sequence& sequence, const ResolveContext& context) {
  const ModelSetLookup lookup = lookUpModelSet(sequence.settings.model, context.sequenceDirectory);
  if (lookup.facts) return resolveSequence(sequence, *lookup.facts, context);
  ResolvedSequence resolved = resolveSequence(sequence, models::assumedModelSetFacts(), context);
  const bool named = std::any_of(resolved.problems.begin(), resolved.problems.end(),
                                 [](const Diagnostic& d) { return d.isError() && d.path.starts_with("model"); });
  if (!named) {
    const auto severity =
        lookup.missing && !context.missingFilesAreErrors ? Diagnostic::Severity::Warning : Diagnostic::Severity::Error;
    resolved.problems.insert(resolved.problems.begin(), {severity, lookup.field, lookup.problem});
  }
  return resolved;
}

Diagnostics validate(const Sequence& sequence, const ResolveContext& context) {
  return resolveSequence(sequence, context).problems;
}

}  // namespace shotchain::resolve
