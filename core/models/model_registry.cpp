#include "models/model_registry.h"

#include <array>
#include <stdexcept>

#include "io/weight_set.h"

#include "models/clip_vit/clip_vision_family.h"
#include "models/taehv/taehv_family.h"
#include "models/umt5/umt5_family.h"
#include "models/wan/wan_family.h"
#include "models/wan22/wan22_family.h"

namespace shotchain::models {

std::span<const ModelFamilyRow> modelFamilies() {
  static const std::array rows{wan22Ti2vFamily(), wan22I2vFamily(),   wan22VaeFamily(),
                               wan21I2vFamily(),  wanDitFamily(),     wanVaeFamily(),
                               umt5Family(),      clipVisionFamily(), taehvFamily()};
  return rows;
}

std::pair<const ModelFamilyRow*, IdentifiedModel> identifyFamily(const io::WeightSet& weights) {
  for (const ModelFamilyRow& row : modelFamilies())
    if (std::optional<IdentifiedModel> id = row.identify(weights)) return {&row, std::move(*id)};
  return {nullptr, {}};
}

const ModelFamilyRow& familyFor(const io::WeightSet& weights, ModelRole role, bool usable) {
  const auto [row, id] = identifyFamily(weights);
  if (row == nullptr || id.role != role)
    throw std::runtime_error(
        weights.label() + ": not a " + roleName(role) + " of a model family ShotChain knows" +
        (id.role == ModelRole::None ? std::string() : std::string(" (it is a ") + roleName(id.role) + ")"));
  if (usable && !id.problem.empty()) throw std::runtime_error(weights.label() + ": " + id.problem);
  return *row;
}

}  // namespace shotchain::models
