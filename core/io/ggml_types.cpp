#include "io/ggml_types.h"

#include <array>
#include <stdexcept>

namespace shotchain::io {
namespace {

struct SupportedGgmlType {
  GgmlType type;
  GgmlTypeTraits traits;
};

// Block sizes from ggml-common.h: 32-value blocks for the first quantisations, 256-value super-blocks for the K ones.
constexpr std::array<SupportedGgmlType, 13> kSupportedGgmlTypes{{
    {GgmlType::F32, {"F32", 1, 4}},
    {GgmlType::F16, {"F16", 1, 2}},
    {GgmlType::Q4_0, {"Q4_0", 32, 18}},
    {GgmlType::Q4_1, {"Q4_1", 32, 20}},
    {GgmlType::Q5_0, {"Q5_0", 32, 22}},
    {GgmlType::Q5_1, {"Q5_1", 32, 24}},
    {GgmlType::Q8_0, {"Q8_0", 32, 34}},
    {GgmlType::Q2_K, {"Q2_K", 256, 84}},
    {GgmlType::Q3_K, {"Q3_K", 256, 110}},
    {GgmlType::Q4_K, {"Q4_K", 256, 144}},
    {GgmlType::Q5_K, {"Q5_K", 256, 176}},
    {GgmlType::Q6_K, {"Q6_K", 256, 210}},
    {GgmlType::BF16, {"BF16", 1, 2}},
}};

// Every id of ggml.h, the retired ones (Q4_2, Q4_0_4_4, …) included, indexed by id.
constexpr std::array<std::string_view, 43> kGgmlTypeNames{
    "F32",        "F16",        "Q4_0",       "Q4_1",  "Q4_2",     "Q4_3",     "Q5_0",     "Q5_1",    "Q8_0",
    "Q8_1",       "Q2_K",       "Q3_K",       "Q4_K",  "Q5_K",     "Q6_K",     "Q8_K",     "IQ2_XXS", "IQ2_XS",
    "IQ3_XXS",    "IQ1_S",      "IQ4_NL",     "IQ3_S", "IQ2_S",    "IQ4_XS",   "I8",       "I16",     "I32",
    "I64",        "F64",        "IQ1_M",      "BF16",  "Q4_0_4_4", "Q4_0_4_8", "Q4_0_8_8", "TQ1_0",   "TQ2_0",
    "IQ4_NL_4_4", "IQ4_NL_4_8", "IQ4_NL_8_8", "MXFP4", "NVFP4",    "Q1_0",     "Q2_0"};

// ASCII letters compared without case (ggml names are ASCII).
bool sameGgmlTypeName(std::string_view a, std::string_view b) {
  const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (lower(a[i]) != lower(b[i])) return false;
  return true;
}

}  // namespace

std::optional<GgmlType> ggmlTypeFromId(std::uint32_t id) {
  for (const SupportedGgmlType& known : kSupportedGgmlTypes)
    if (static_cast<std::uint32_t>(known.type) == id) return known.type;
  return std::nullopt;
}

const GgmlTypeTraits& ggmlTraits(GgmlType type) {
  for (const SupportedGgmlType& known : kSupportedGgmlTypes)
    if (known.type == type) return known.traits;
  throw std::invalid_argument("not a supported ggml type: " + ggmlTypeIdName(static_cast<std::uint32_t>(type)));
}

std::string ggmlTypeIdName(std::uint32_t id) {
  if (id < kGgmlTypeNames.size()) return std::string(kGgmlTypeNames[id]) + " (type " + std::to_string(id) + ")";
  return "type " + std::to_string(id);
}

std::optional<GgmlType> parseGgmlTypeName(std::string_view name) {
  for (const SupportedGgmlType& known : kSupportedGgmlTypes)
    if (sameGgmlTypeName(known.traits.name, name)) return known.type;
  return std::nullopt;
}

bool isBlockQuantised(GgmlType type) {
  return type != GgmlType::F32 && type != GgmlType::F16 && type != GgmlType::BF16;
}

}  // namespace shotchain::io
