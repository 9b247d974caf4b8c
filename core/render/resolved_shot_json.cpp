#include "render/resolved_shot_json.h"

#include <nlohmann/json.hpp>

namespace shotchain::render {
namespace {

using Json = nlohmann::ordered_json;

const char* samplingName(resolve::SamplingKind kind) {
  switch (kind) {
    case resolve::SamplingKind::OneSchedule:
      return "one_schedule";
    case resolve::SamplingKind::PerFrame:
      return "per_frame";
    case resolve::SamplingKind::KvStream:
      return "kv_stream";
  }
  return "";
}

const char* expertName(resolve::LoraExpert expert) {
  switch (expert) {
    case resolve::LoraExpert::Both:
      return "both";
    case resolve::LoraExpert::High:
      return "high_noise";
    case resolve::LoraExpert::Low:
      return "low_noise";
  }
  return "";
}

Json indexOrNull(int index) { return index < 0 ? Json(nullptr) : Json(index); }
Json pathOrNull(const std::filesystem::path& path) { return path.empty() ? Json(nullptr) : Json(path.string()); }

Json cacheJson(const resolve::ResolvedStepCache& cache) {
  Json json = {{"policy", toString(cache.policy)}, {"applies", cache.applies}};
  if (cache.policy == StepCachePolicy::Off) return json;
  json["field"] = cache.field;
  json["threshold"] = cache.threshold;
  json["warmup_steps"] = cache.warmupSteps;
  json["calibration"] = pathOrNull(cache.calibration);
  json["source"] = cache.source.empty() ? Json(nullptr) : Json(cache.source);
  if (!cache.applies) json["off"] = cache.off;
  return json;
}

Json expertsJson(const resolve::ResolvedExperts& experts) {
  return {{"boundary_fraction", experts.fraction},
          {"boundary_timestep", experts.boundary},
          {"boundary_from", experts.familyBoundary ? "family" : "document"},
          {"high_noise_guidance", experts.highGuidance},
          {"switch_step", experts.switchStep < 0 ? Json(nullptr) : Json(experts.switchStep)},
          {"high_noise_steps", experts.highSteps}};
}

Json lorasJson(const resolve::ResolvedShot& shot) {
  Json list = Json::array();
  for (const resolve::ResolvedLora& lora : shot.loras)
    list.push_back({{"field", lora.field},
                    {"file", lora.file},
                    {"path", lora.path.string()},
                    {"strength", lora.strength},
                    {"expert", expertName(lora.expert)}});
  return list;
}

Json continuityJson(const resolve::ResolvedShot& shot) {
  return {{"mode", toString(shot.settings.mode)},
          {"from_index", indexOrNull(shot.predecessor)},
          {"colour_anchor_index", indexOrNull(shot.anchor)},
          {"held_latents", shot.continuity.heldLatents},
          {"extra_latents", shot.continuity.extraLatents},
          {"handed_tail_latents", shot.continuity.handedTailLatents},
          {"decoded_prefix_latents", shot.continuity.decodePrefixLatents}};
}

}  // namespace

Json resolvedShotToJson(const resolve::ResolvedShot& shot) {
  Json json;
  json["frames"] = shot.frames;
  json["width"] = shot.width;
  json["height"] = shot.height;
  json["output_frames"] = shot.outputFrames;
  json["latent"] = {{"channels", shot.latentChannels},
                    {"frames", shot.latentFrames},
                    {"sampled_frames", shot.sampledLatentFrames},
                    {"height", shot.latentHeight},
                    {"width", shot.latentWidth}};
  json["sampling"] = samplingName(shot.sampling);
  json["steps"] = shot.steps;
  json["guidance"] = shot.guidance;
  json["shift"] = shot.shift;
  json["solver"] = toString(shot.solver);
  json["guidance_branches"] = shot.branches;
  json["few_step"] = shot.fewStep ? Json{{"timesteps", shot.fewStep->steps}, {"update", toString(shot.fewStep->update)}}
                                  : Json(nullptr);
  json["experts"] = shot.experts ? expertsJson(*shot.experts) : Json(nullptr);
  json["cache"] = cacheJson(shot.cache);
  json["loras"] = lorasJson(shot);
  json["loras_from"] = shot.ownLoras ? "shot" : "sequence";
  json["negative_prompt_used"] = shot.uncondPrompt;
  json["continuity"] = continuityJson(shot);
  json["start_image"] = pathOrNull(shot.startImage);
  json["end_image"] = pathOrNull(shot.endImage);
  if (shot.sharedStartKeyframe) json["start_keyframe_shared"] = true;
  json["image_condition"] = shot.imageCondition.empty() ? Json(nullptr) : Json(shot.imageCondition);
  if (shot.imageCondition == "svi")
    json["svi"] = {{"anchor_image", pathOrNull(shot.anchorImage)}, {"motion_latents", shot.motionLatents}};
  return json;
}

}  // namespace shotchain::render
