#include "render/shot_key.h"

#include <nlohmann/json.hpp>

#include "io/content_digest.h"
#include "sampling/cache_calibration.h"
#include "util/bounded_file.h"
#include "util/digest.h"
#include "util/image_file_check.h"

namespace shotchain::render {
namespace {

using Json = nlohmann::ordered_json;

// A file a shot reads (a picture, a calibration, a LoRA): its bytes' digest, or why there is none.
std::string fileDigest(const FileDigests& ofFile, const std::filesystem::path& path, const std::string& name,
                       std::uint64_t maxBytes) {
  std::error_code error;
  if (!std::filesystem::exists(path, error)) return "missing:" + name;
  if (!util::regularFileProblem(path, maxBytes).empty()) return "unreadable:" + name;
  return ofFile(path);
}

Json keyJson(const resolve::ResolvedShot& shot, const resolve::ResolvedSequence& resolved, const std::string& model,
             const FileDigests& ofFile) {
  const Continuity& c = shot.settings;
  const ContinuityModeTraits& mode = traitsOf(c.mode);
  Json j;
  j["model"] = model;
  j["prompt"] = shot.prompt;
  j["negative"] = shot.negativePrompt;
  j["size"] = {shot.width, shot.height, shot.frames};
  j["seed"] = shot.seed;
  if (shot.fewStep)
    j["few_step"] = {shot.fewStep->steps, toString(shot.fewStep->update)};
  else
    j["steps"] = shot.steps;
  j["guidance"] = shot.guidance;
  if (shot.experts)
    j["experts"] = {shot.experts->familyBoundary ? Json("default") : Json(shot.experts->fraction),
                    shot.experts->highGuidance,
                    shot.experts->switchStep >= 0 ? Json(shot.experts->switchStep) : Json(nullptr)};
  j["shift"] = shot.shift;
  if (!shot.fewStep) j["solver"] = toString(shot.solver);
  j["mode"] = toString(c.mode);
  j["enabled"] = shot.enabled;
  if (mode.readsOverlap) j["overlap"] = c.overlapLatents;
  if (mode.decodesAfterPredecessor) j["decode"] = "after_predecessor";  // frames decoded before it differ
  if (mode.readsPrefix && c.prefixFrames.value_or(1) != 1) j["prefix"] = *c.prefixFrames;
  if (mode.handoff && shot.conditionNoise != 0) j["condition_noise"] = shot.conditionNoise;
  if (shot.arStep != 0) j["ar_step"] = shot.arStep;
  if (shot.sampling == resolve::SamplingKind::KvStream) {
    j["stream_window"] = resolved.streamWindow;
    j["recache"] = shot.recache;
  }
  if (mode.readsBlend) {
    j["blend"] = c.blendRatio;
    if (!shot.fallbackImage.empty())
      j["fallback"] = fileDigest(ofFile, shot.fallbackImage, c.fallbackImage, util::kMaxImageFileBytes);
  }
  if (!shot.startImage.empty())
    j["start_image"] = fileDigest(ofFile, shot.startImage, shot.startImage.string(), util::kMaxImageFileBytes);
  if (!shot.endImage.empty())
    j["end_image"] = fileDigest(ofFile, shot.endImage, shot.endImage.string(), util::kMaxImageFileBytes);
  if (shot.imageCondition == "svi") {
    j["svi"] = {shot.motionLatents};
    if (!shot.anchorImage.empty())
      j["svi"].push_back(fileDigest(ofFile, shot.anchorImage, shot.anchorImage.string(), util::kMaxImageFileBytes));
  }
  if (!shot.loras.empty()) {
    Json& list = j["loras"] = Json::array();
    for (const resolve::ResolvedLora& lora : shot.loras)
      list.push_back({fileDigest(ofFile, lora.path, lora.file, UINT64_MAX), lora.strength});
  }
  if (shot.cache.applies) {
    j["cache"] = {toString(shot.cache.policy), shot.cache.threshold};
    if (!shot.cache.calibration.empty())
      j["cache"].push_back(fileDigest(ofFile, shot.cache.calibration, shot.cache.calibration.string(),
                                      sampling::kMaxCalibrationFileBytes));
  }
  return j;
}

}  // namespace

std::string modelFingerprint(const models::ModelFiles& files,
                             const std::function<std::string(const std::filesystem::path&)>& ofFile) {
  std::string all;
  for (const auto* path : {&files.dit, &files.vae, &files.textEncoder, &files.tokenizer, &files.latentRgb})
    all += path->empty() ? std::string("-") : ofFile(*path);
  if (!files.ditHighNoise.empty()) all += "high-noise expert " + ofFile(files.ditHighNoise);
  if (!files.imageEncoder.empty()) all += "image encoder " + ofFile(files.imageEncoder);
  return util::digestHex(all);
}

std::string modelFingerprint(const models::ModelFiles& files) { return modelFingerprint(files, io::contentDigest); }

std::vector<std::string> shotKeys(const resolve::ResolvedSequence& resolved, const std::string& modelFingerprint,
                                  const FileDigests& ofFile) {
  std::vector<std::string> keys;
  keys.reserve(resolved.shots.size());
  for (const resolve::ResolvedShot& shot : resolved.shots) {
    Json j = keyJson(shot, resolved, modelFingerprint, ofFile);
    if (shot.predecessor >= 0) j["after"] = keys[static_cast<std::size_t>(shot.predecessor)];
    if (shot.anchor >= 0) j["anchor"] = keys[static_cast<std::size_t>(shot.anchor)];
    keys.push_back(util::digestHex(j.dump()));
  }
  return keys;
}

std::vector<std::string> shotKeys(const resolve::ResolvedSequence& resolved, const std::string& modelFingerprint) {
  return shotKeys(resolved, modelFingerprint, io::contentDigest);
}

}  // namespace shotchain::render
