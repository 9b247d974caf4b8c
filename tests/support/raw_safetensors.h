#pragma once

#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

namespace shotchain::testing {

// A safetensors file written byte by byte, so payloads can carry dtypes libtorch 1.13 lacks
// (F8_E4M3) or anything a test wants to relabel: (name, dtype, shape, raw bytes).
using RawTensor = std::tuple<std::string, std::string, std::vector<std::int64_t>, std::string>;

inline std::string rawSafetensors(const std::vector<RawTensor>& tensors, const std::string& metadataJson = "") {
  std::string header = "{";
  if (!metadataJson.empty()) header += "\"__metadata__\":" + metadataJson + ",";
  std::uint64_t offset = 0;
  std::string data;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const auto& [name, dtype, shape, bytes] = tensors[i];
    std::string shapeText = "[";
    // Appended piece by piece: GCC 12 turns `"," + std::to_string(…)` into a -Warray-bounds false positive.
    for (std::size_t k = 0; k < shape.size(); ++k) shapeText.append(k ? "," : "").append(std::to_string(shape[k]));
    shapeText += "]";
    header.append(i ? "," : "")
        .append("\"")
        .append(name)
        .append("\":{\"dtype\":\"")
        .append(dtype)
        .append("\",\"shape\":");
    header.append(shapeText).append(",\"data_offsets\":[").append(std::to_string(offset)).append(",");
    header.append(std::to_string(offset + bytes.size())).append("]}");
    offset += bytes.size();
    data += bytes;
  }
  header += "}";
  while (header.size() % 8 != 0) header += ' ';
  std::string out;
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((header.size() >> (8 * i)) & 0xFF));
  return out + header + data;
}

}  // namespace shotchain::testing
