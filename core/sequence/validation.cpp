#include "sequence/validation.h"
#include "sequence/continuity_modes.h"

#include <cmath>
#include <set>

#include "util/byte_size.h"
#include "util/image_file_check.h"
#include "util/number_text.h"

namespace shotchain {
namespace {

class Collector {
 public:
  explicit Collector(Diagnostics& out) : out_(out) {}
  void error(std::string path, std::string message) {
    out_.push_back({Diagnostic::Severity::Error, std::move(path), std::move(message)});
  }
  void warning(std::string path, std::string message) {
    out_.push_back({Diagnostic::Severity::Warning, std::move(path), std::move(message)});
  }

 private:
  Diagnostics& out_;
};

bool validIdCharacter(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

void checkSide(Collector& report, const std::string& path, int value) {
  if (value < limits::kMinSide || value > limits::kMaxSide)
    report.error(path, std::to_string(value) + " is outside " + std::to_string(limits::kMinSide) + ".." +
                           std::to_string(limits::kMaxSide) + " pixels");
}

void checkSteps(Collector& report, const std::string& path, int steps) {
  if (steps < 1 || steps > limits::kMaxSteps)
    report.error(path, std::to_string(steps) + " is outside 1.." + std::to_string(limits::kMaxSteps));
}

void checkGuidance(Collector& report, const std::string& path, double guidance) {
  if (!std::isfinite(guidance) || guidance < 0.0 || guidance > limits::kMaxGuidance)
    report.error(path, util::numberText(guidance) + " is outside 0.." + util::numberText(limits::kMaxGuidance));
}

// "1e-310", not "0.000000": a value refused for being tiny must not print as 0.
void checkShift(Collector& report, const std::string& path, double shift) {
  if (!std::isfinite(shift) || shift <= 0.0 || shift > limits::kMaxShift)
    report.error(
        path, util::numberText(shift) + " must be greater than 0 and at most " + util::numberText(limits::kMaxShift));
  else if (shift < limits::kMinShift)
    report.error(path, util::numberText(shift) + " is below the smallest shift of " +
                           util::numberText(limits::kMinShift) + " (the noise schedule collapses to zero)");
}

void checkFallbackImage(Collector& report, const std::string& path, const std::string& file,
                        const ValidationContext& context) {
  if (context.baseFolder.empty()) return;
  const std::filesystem::path image(file);
  const std::string problem = util::imageFileProblem(image.is_absolute() ? image : context.baseFolder / image);
  if (problem.empty()) return;
  const std::string message = "\"" + file + "\" " + problem;
  if (problem != "does not exist")
    report.error(path, message + " (a render reads it as an image)");
  else if (context.missingFilesAreErrors)
    report.error(path, message);
  else
    report.warning(path, message + " (a render will refuse this shot)");
}

void checkLoras(Collector& report, const std::string& path, const std::vector<LoraRef>& loras) {
  for (std::size_t i = 0; i < loras.size(); ++i) {
    const std::string at = path + "[" + std::to_string(i) + "]";
    if (loras[i].file.empty()) report.error(at + ".file", "must name a LoRA file");
    if (!loras[i].expert.empty() && loras[i].expert != "high" && loras[i].expert != "low")
      report.error(at + ".expert", "\"" + loras[i].expert + "\" is not an expert: high or low (leave it out for both)");
    if (!std::isfinite(loras[i].strength) || std::abs(loras[i].strength) > limits::kMaxLoraStrength)
      report.error(at + ".strength", util::numberText(loras[i].strength) + " is outside -" +
                                         util::numberText(limits::kMaxLoraStrength) + ".." +
                                         util::numberText(limits::kMaxLoraStrength));
  }
}

void checkCache(Collector& report, const std::string& path, const StepCacheSettings& cache) {
  if (cache.threshold &&
      (!std::isfinite(*cache.threshold) || *cache.threshold <= 0.0 || *cache.threshold > limits::kMaxCacheThreshold))
    report.error(path + ".threshold", util::numberText(*cache.threshold) + " must be greater than 0 and at most " +
                                          util::numberText(limits::kMaxCacheThreshold));
}

void checkFewStep(Collector& report, const std::string& path, const FewStepSettings& fewStep) {
  for (std::size_t i = 0; i < fewStep.steps.size(); ++i) {
    const int step = fewStep.steps[i];
    const std::string at = path + ".steps[" + std::to_string(i) + "]";
    if (step < 1 || step > 1000)
      report.error(at, std::to_string(step) + " is outside 1..1000");
    else if (i > 0 && step >= fewStep.steps[i - 1])
      report.error(at, std::to_string(step) + " does not come below the step before it (" +
                           std::to_string(fewStep.steps[i - 1]) +
                           "): the steps go from noise to clean, e.g. [1000, 750, 500, 250]");
  }
}

// Two experts (Wan 2.2 A14B): the high-noise expert's file, the switch and its guidance.
void checkExperts(Collector& report, const SequenceSettings& settings) {
  const SamplerDefaults& sampler = settings.sampler;
  if (sampler.boundary && (!std::isfinite(*sampler.boundary) || *sampler.boundary <= 0.0 || *sampler.boundary > 1.0))
    report.error("sampler.boundary", util::numberText(*sampler.boundary) +
                                         " is outside 0..1 (a fraction of the 1000 training timesteps; "
                                         "leave it out for the family's)");
  if (sampler.guidanceHighNoise) checkGuidance(report, "sampler.guidance_high_noise", *sampler.guidanceHighNoise);
  if (settings.model.ditHighNoise.empty()) {
    for (std::size_t i = 0; i < settings.loras.size(); ++i)
      if (!settings.loras[i].expert.empty())
        report.warning("loras[" + std::to_string(i) + "].expert",
                       "is not used: the model set has one DiT (no model.dit_high_noise)");
    if (sampler.boundary)
      report.warning("sampler.boundary", "is not used: the model set has one DiT (no model.dit_high_noise)");
    if (sampler.guidanceHighNoise)
      report.warning("sampler.guidance_high_noise", "is not used: the model set has one DiT (no model.dit_high_noise)");
  } else if (settings.model.isBuiltin()) {
    report.error("model.dit_high_noise", "is for a model set of files or a folder, not a built-in model");
  }
}

}  // namespace

std::string shotPath(std::size_t index, const std::string& field) {
  std::string path = "shots[" + std::to_string(index) + "]";
  return field.empty() ? path : path + "." + field;
}

Diagnostics validateSettings(const SequenceSettings& settings) {
  Diagnostics out;
  Collector report(out);
  if (!std::isfinite(settings.fps) || settings.fps <= 0.0 || settings.fps > limits::kMaxFps)
    report.error("fps", util::numberText(settings.fps) + " must be greater than 0 and at most " +
                            util::numberText(limits::kMaxFps));
  else if (settings.fps < limits::kMinFps)
    report.error("fps", util::numberText(settings.fps) + " is below the lowest frame rate of " +
                            util::numberText(limits::kMinFps) + " (the MP4 cannot store it)");

  const ModelSet& model = settings.model;
  if (model.isBuiltin()) {
    if (!isBuiltinModel(model.builtin)) report.error("model", notABuiltinModel(model.builtin));
  } else if (model.folder.empty()) {
    const std::pair<const char*, const std::string*> required[] = {
        {"dit", &model.dit}, {"vae", &model.vae}, {"text_encoder", &model.textEncoder}};
    for (const auto& [key, value] : required)
      if (value->empty())
        report.error(std::string("model.") + key, "missing: give a \"folder\" or all of dit, vae and text_encoder");
  }
  checkSteps(report, "sampler.steps", settings.sampler.steps);
  checkGuidance(report, "sampler.guidance", settings.sampler.guidance);
  checkShift(report, "sampler.shift", settings.sampler.shift);
  if (settings.sampler.arStep && (*settings.sampler.arStep < 0 || *settings.sampler.arStep > limits::kMaxSteps))
    report.error("sampler.ar_step",
                 std::to_string(*settings.sampler.arStep) + " is outside 0.." + std::to_string(limits::kMaxSteps));
  if (settings.sampler.streamWindow &&
      (*settings.sampler.streamWindow < 1 || *settings.sampler.streamWindow > limits::kMaxStreamWindow))
    report.error("sampler.stream_window", std::to_string(*settings.sampler.streamWindow) + " is outside 1.." +
                                              std::to_string(limits::kMaxStreamWindow) + " (latent frames)");
  checkCache(report, "sampler.cache", settings.sampler.cache);
  checkFewStep(report, "sampler.few_step", settings.sampler.fewStep);
  checkExperts(report, settings);
  checkLoras(report, "loras", settings.loras);
  if (settings.memoryBudgetBytes && *settings.memoryBudgetBytes < limits::kMinMemoryBudget)
    report.error("memory.budget", util::formatByteSize(*settings.memoryBudgetBytes) +
                                      " is below the smallest budget of " +
                                      util::formatByteSize(limits::kMinMemoryBudget));
  return out;
}

Diagnostics validateShot(const Shot& shot, std::size_t index, const ValidationContext& context) {
  Diagnostics out;
  Collector report(out);
  if (shot.id.empty()) {
    report.error(shotPath(index, "id"), "must not be empty");
  } else if (shot.id.size() > limits::kMaxIdLength) {
    report.error(shotPath(index, "id"), "is " + std::to_string(shot.id.size()) + " characters; at most " +
                                            std::to_string(limits::kMaxIdLength) +
                                            " (it names the shot's folder, shots/<NN>-<id>)");
  } else {
    for (char c : shot.id) {
      if (!validIdCharacter(c)) {
        report.error(shotPath(index, "id"), "\"" + shot.id + "\" may contain only letters, digits, '-' and '_'");
        break;
      }
    }
  }
  if (shot.frames < 1 || shot.frames > limits::kMaxFrames)
    report.error(shotPath(index, "frames"),
                 std::to_string(shot.frames) + " is outside 1.." + std::to_string(limits::kMaxFrames));
  checkSide(report, shotPath(index, "width"), shot.width);
  checkSide(report, shotPath(index, "height"), shot.height);
  if (shot.steps) checkSteps(report, shotPath(index, "steps"), *shot.steps);
  if (shot.guidance) checkGuidance(report, shotPath(index, "guidance"), *shot.guidance);
  if (shot.guidanceHighNoise) checkGuidance(report, shotPath(index, "guidance_high_noise"), *shot.guidanceHighNoise);
  if (shot.switchStep && (*shot.switchStep < 0 || *shot.switchStep > limits::kMaxSteps))
    report.error(shotPath(index, "switch_step"),
                 std::to_string(*shot.switchStep) + " is outside 0.." + std::to_string(limits::kMaxSteps));
  if (shot.shift) checkShift(report, shotPath(index, "shift"), *shot.shift);
  if (shot.prompt.empty()) report.warning(shotPath(index, "prompt"), "is empty");
  if (!shot.startImage.empty()) checkFallbackImage(report, shotPath(index, "start_image"), shot.startImage, context);
  if (!shot.endImage.empty()) checkFallbackImage(report, shotPath(index, "end_image"), shot.endImage, context);
  if (shot.cache) checkCache(report, shotPath(index, "cache"), *shot.cache);
  if (shot.fewStep) checkFewStep(report, shotPath(index, "few_step"), *shot.fewStep);
  if (shot.loras) checkLoras(report, shotPath(index, "loras"), *shot.loras);

  const Continuity& c = shot.continuity;
  const ContinuityModeTraits& mode = traitsOf(c.mode);
  if (mode.handoff && c.tag.empty())
    report.error(shotPath(index, "continuity.tag"),
                 std::string("must not be empty when the mode is ") + toString(c.mode));
  if (mode.readsOverlap && c.overlapLatents < 1)
    report.error(shotPath(index, "continuity.overlap_latents"),
                 std::to_string(c.overlapLatents) + " must be at least 1");
  if (c.prefixFrames && *c.prefixFrames < 1)
    report.error(shotPath(index, "continuity.prefix_frames"), std::to_string(*c.prefixFrames) + " must be at least 1");
  else if (c.prefixFrames && *c.prefixFrames != 1 && !mode.readsPrefix)
    report.warning(shotPath(index, "continuity.prefix_frames"),
                   std::string("is read by the latent mode only (this shot is ") + toString(c.mode) + ")");
  if (c.conditionNoise && (*c.conditionNoise < 0 || *c.conditionNoise > 999))
    report.error(shotPath(index, "continuity.condition_noise"),
                 std::to_string(*c.conditionNoise) + " is outside 0..999 (a timestep)");
  if (c.conditionNoise && *c.conditionNoise != 0 && mode.sampling == ShotSampling::KvStream)
    report.warning(shotPath(index, "continuity.condition_noise"),
                   "is not applied to stream shots (the KV cache holds the earlier frames as they were generated); "
                   "it re-noises the handed frames of whole-clip shots on a per-frame-timestep model");
  if (c.anchorColour && mode.sampling == ShotSampling::KvStream)
    report.warning(shotPath(index, "continuity.anchor_colour"),
                   "is not applied to stream shots (the KV cache holds the frames as they were generated)");
  if (c.recache && !mode.readsRecache)
    report.warning(shotPath(index, "continuity.recache"),
                   std::string("is read by the stream mode only (this shot is ") + toString(c.mode) + ")");
  if (c.motionLatents && *c.motionLatents < 1)
    report.error(shotPath(index, "continuity.motion_latents"),
                 std::to_string(*c.motionLatents) + " must be at least 1");
  else if (c.motionLatents && !mode.readsMotion)
    report.warning(shotPath(index, "continuity.motion_latents"),
                   std::string("is read by the svi mode only (this shot is ") + toString(c.mode) + ")");
  if (!c.anchorImage.empty() && !mode.readsMotion)
    report.warning(shotPath(index, "continuity.anchor_image"),
                   std::string("is read by the svi mode only (this shot is ") + toString(c.mode) + ")");
  else if (!c.anchorImage.empty())
    checkFallbackImage(report, shotPath(index, "continuity.anchor_image"), c.anchorImage, context);
  if (!std::isfinite(c.blendRatio) || c.blendRatio < 0.0 || c.blendRatio > 1.0)
    report.error(shotPath(index, "continuity.blend_ratio"), util::numberText(c.blendRatio) + " is outside [0, 1]");
  if (mode.readsBlend) {
    if (c.fallbackImage.empty())
      report.warning(shotPath(index, "continuity.fallback_image"),
                     "blend without a fallback image uses the handoff alone");
    else
      checkFallbackImage(report, shotPath(index, "continuity.fallback_image"), c.fallbackImage, context);
  }
  return out;
}

Diagnostics validateSequence(const Sequence& sequence, const ValidationContext& context) {
  Diagnostics out = validateSettings(sequence.settings);
  Collector report(out);
  if (sequence.shots.empty()) report.warning("shots", "the sequence has no shots");

  std::set<std::string> ids;
  std::set<std::string> tagsWritten;
  std::vector<std::size_t> streamShots;
  for (std::size_t i = 0; i < sequence.shots.size(); ++i) {
    const Shot& shot = sequence.shots[i];
    Diagnostics own = validateShot(shot, i, context);
    out.insert(out.end(), own.begin(), own.end());
    if (!shot.id.empty() && !ids.insert(shot.id).second)
      report.error(shotPath(i, "id"), "\"" + shot.id + "\" is used by an earlier shot");
    if (!shot.enabled) continue;

    const Continuity& c = shot.continuity;
    const ContinuityModeTraits& mode = traitsOf(c.mode);
    if (mode.handoff && mode.sampling == ShotSampling::WholeClip && !c.tag.empty() && !tagsWritten.count(c.tag))
      report.warning(shotPath(i, "continuity.mode"), std::string(toString(c.mode)) +
                                                         " but no earlier shot writes tag \"" + c.tag +
                                                         "\": this shot starts from noise");
    if (mode.sampling == ShotSampling::KvStream) streamShots.push_back(i);
    if (!c.tag.empty()) tagsWritten.insert(c.tag);
  }
  if (sequence.settings.sampler.arStep.value_or(0) != 0 && !streamShots.empty()) {
    std::string which;
    for (std::size_t i = 0; i < streamShots.size() && i < 8; ++i)
      which += (i ? ", " : "") + std::to_string(streamShots[i] + 1);
    if (streamShots.size() > 8) which += ", …";
    report.warning("sampler.ar_step",
                   "is not applied to stream shots (shot" + std::string(streamShots.size() > 1 ? "s " : " ") + which +
                       "); it staggers the timesteps of whole-clip shots on a per-frame-timestep model");
  }
  return out;
}

}  // namespace shotchain
