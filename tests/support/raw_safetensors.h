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
    for (std::size_t k = 0; k < shape.size(); ++k) shapeText += (k ? "," : "") + std::to_string(shape[k]);
    shapeText += "]";
    header += (i ? "," : "") + std::string("\"") + name + "\":{\"dtype\":\"" + dtype + "\",\"shape\":" + shapeText +
              ",\"data_offsets\":[" + std::to_string(offset) + "," + std::to_string(offset + bytes.size()) + "]}";
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
