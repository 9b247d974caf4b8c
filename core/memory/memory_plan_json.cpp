#include <nlohmann/json.hpp>

#include "memory/memory_planner.h"

namespace shotchain::memory {

std::string planToJson(const MemoryPlan& plan) {
  nlohmann::ordered_json items = nlohmann::ordered_json::array();
  for (const PlanItem& item : plan.items)
    items.push_back({{"name", item.name}, {"bytes", item.bytes}, {"detail", item.detail}});
  nlohmann::ordered_json j;
  j["device"] = plan.device;
  j["device_total"] = plan.deviceTotal;
  j["budget"] = plan.budget ? nlohmann::ordered_json(*plan.budget) : nlohmann::ordered_json(nullptr);
  j["limit"] = plan.limit;
  j["items"] = items;
  j["dit_weights"] = plan.ditWeights;
  if (plan.highNoiseExpertWeights > 0) j["high_noise_expert_weights"] = plan.highNoiseExpertWeights;
  j["vae_weights"] = plan.vaeWeights;
  j["text_encoder_weights"] = plan.textEncoderWeights;
  j["text_encoder_peak"] = plan.textEncoderPeak;
  j["image_encoder_weights"] = plan.imageEncoderWeights;
  j["image_encoder_peak"] = plan.imageEncoderPeak;
  j["dit_activation_peak"] = plan.ditActivationPeak;
  j["vae_decode_full"] = plan.vaeDecodeFull;
  j["vae_decode_tiled"] = plan.vaeDecodeTiled;
  j["tile"] = plan.tile;
  j["tile_overlap"] = plan.tileOverlap;
  j["ring_buffer"] = plan.ringBufferBytes;
  j["margin"] = plan.margin;
  j["peak"] = {{"pinned", plan.peakPinned},
               {"pinned_tiled", plan.peakPinnedTiled},
               {"offload", plan.peakOffload},
               {"reload", plan.peakReload}};
  j["requested"] = toString(plan.requested);
  j["chosen"] = toString(plan.chosen);
  j["tiled_decode"] = plan.tiledDecode;
  j["split_guidance"] = plan.splitGuidance;
  j["chosen_peak"] = plan.chosenPeak();
  j["fits"] = plan.fits;
  j["reason"] = plan.reason;
  if (!plan.notes.empty()) j["notes"] = plan.notes;
  return j.dump(2);
}

}  // namespace shotchain::memory
