#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace shotchain::io {

// The ggml tensor types ShotChain reads from GGUF files, with ggml's numbering (ggml.h `enum ggml_type`).
enum class GgmlType : std::uint32_t {
  F32 = 0,
  F16 = 1,
  Q4_0 = 2,
  Q4_1 = 3,
  Q5_0 = 6,
  Q5_1 = 7,
  Q8_0 = 8,
  Q2_K = 10,
  Q3_K = 11,
  Q4_K = 12,
  Q5_K = 13,
  Q6_K = 14,
  BF16 = 30
};

// A type's name as ggml spells it ("Q4_K", "F16", "BF16") and its storage: every run of blockElements values
// along a row is kept in blockBytes bytes (1 and 4 for F32, 1 and 2 for F16 and BF16).
struct GgmlTypeTraits {
  std::string_view name;
  std::uint32_t blockElements;
  std::uint32_t blockBytes;
};

// The type of a ggml type id, for the 13 types above only.
std::optional<GgmlType> ggmlTypeFromId(std::uint32_t id);
const GgmlTypeTraits& ggmlTraits(GgmlType type);
// Any id ggml has ever numbered, supported here or not, for messages: "IQ2_XXS (type 16)", "Q4_K (type 12)";
// "type 99" for an id ggml does not know.
std::string ggmlTypeIdName(std::uint32_t id);
// One of the 13 types by its ggml name, ignoring case: "q4_k", "Q8_0", "bf16".
std::optional<GgmlType> parseGgmlTypeName(std::string_view name);
// Whether values are stored in blocks with shared scales (false for F32, F16 and BF16).
bool isBlockQuantised(GgmlType type);

}  // namespace shotchain::io
