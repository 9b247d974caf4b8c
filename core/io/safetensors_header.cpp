#include "io/safetensors_header.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "io/strict_json.h"

namespace shotchain::io {
namespace {

using Json = nlohmann::json;

[[noreturn]] void fail(std::string_view label, const std::string& what) {
  std::string message(label);
  message += ": ";
  message += what;
  throw SafetensorsError(message);
}

[[noreturn]] void failTensor(std::string_view label, const std::string& name, const std::string& what) {
  fail(label, "header: tensor \"" + name + "\": " + what);
}

// The deepest nesting a valid header needs is 3 (object → tensor object → array).
constexpr int kMaxDepth = 4;

std::uint64_t readLittleEndian64(std::span<const std::byte> bytes) {
  std::uint64_t value = 0;
  for (int i = 7; i >= 0; --i) value = (value << 8) | static_cast<std::uint64_t>(bytes[static_cast<std::size_t>(i)]);
  return value;
}

std::uint64_t unsignedField(std::string_view label, const std::string& name, const char* field, const Json& value) {
  if (!value.is_number_unsigned())
    failTensor(label, name, std::string(field) + " entries must be non-negative integers, got " + value.dump());
  return value.get<std::uint64_t>();
}

TensorEntry parseTensor(std::string_view label, const std::string& name, const Json& info) {
  if (!info.is_object()) failTensor(label, name, "expected an object, got " + std::string(info.type_name()));
  for (const auto& [field, value] : info.items()) {
    (void)value;
    if (field != "dtype" && field != "shape" && field != "data_offsets")
      failTensor(label, name, "unknown field \"" + field + "\"");
  }
  TensorEntry entry;
  entry.name = name;

  const auto dtypeIt = info.find("dtype");
  if (dtypeIt == info.end()) failTensor(label, name, "missing \"dtype\"");
  if (!dtypeIt->is_string()) failTensor(label, name, "\"dtype\" must be a string");
  const std::string& dtypeText = dtypeIt->get_ref<const std::string&>();
  const std::optional<DType> dtype = parseDType(dtypeText);
  if (!dtype) failTensor(label, name, "unknown dtype \"" + dtypeText + "\"");
  entry.dtype = *dtype;

  const auto shapeIt = info.find("shape");
  if (shapeIt == info.end()) failTensor(label, name, "missing \"shape\"");
  if (!shapeIt->is_array()) failTensor(label, name, "\"shape\" must be an array");
  std::uint64_t elements = 1;
  bool overflow = false;
  for (const Json& dim : *shapeIt) {
    const std::uint64_t size = unsignedField(label, name, "shape", dim);
    entry.shape.push_back(size);
    if (__builtin_mul_overflow(elements, size, &elements)) overflow = true;
  }
  // A zero dimension makes the product 0 whatever overflowed before it.
  if (std::find(entry.shape.begin(), entry.shape.end(), 0u) != entry.shape.end()) {
    elements = 0;
    overflow = false;
  }
  if (overflow) failTensor(label, name, "shape " + formatShape(entry.shape) + " has more elements than 2^64");
  entry.elements = elements;

  const auto offsetsIt = info.find("data_offsets");
  if (offsetsIt == info.end()) failTensor(label, name, "missing \"data_offsets\"");
  if (!offsetsIt->is_array() || offsetsIt->size() != 2)
    failTensor(label, name, "\"data_offsets\" must be an array of two integers");
  entry.begin = unsignedField(label, name, "data_offsets", (*offsetsIt)[0]);
  entry.end = unsignedField(label, name, "data_offsets", (*offsetsIt)[1]);
  const std::string offsetsText = "[" + std::to_string(entry.begin) + ", " + std::to_string(entry.end) + "]";
  if (entry.end < entry.begin) failTensor(label, name, "data_offsets " + offsetsText + " end before they begin");

  std::uint64_t bits = 0;
  if (__builtin_mul_overflow(elements, static_cast<std::uint64_t>(dtypeBits(entry.dtype)), &bits))
    failTensor(label, name, std::string(dtypeName(entry.dtype)) + " " + formatShape(entry.shape) + " is too large");
  if (bits % 8 != 0)
    failTensor(
        label, name,
        std::string(dtypeName(entry.dtype)) + " " + formatShape(entry.shape) + " is not a whole number of bytes");
  const std::uint64_t needed = bits / 8;
  if (entry.end - entry.begin != needed)
    failTensor(label, name,
               "data_offsets " + offsetsText + " span " + std::to_string(entry.end - entry.begin) + " bytes but " +
                   std::string(dtypeName(entry.dtype)) + " " + formatShape(entry.shape) + " needs " +
                   std::to_string(needed));
  return entry;
}

}  // namespace

const TensorEntry* SafetensorsHeader::find(std::string_view name) const {
  for (const TensorEntry& entry : tensors)
    if (entry.name == name) return &entry;
  return nullptr;
}

std::string formatShape(const std::vector<std::uint64_t>& shape) {
  std::string text = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) text += ", ";
    text += std::to_string(shape[i]);
  }
  return text + "]";
}

std::uint64_t checkSafetensorsPrefix(std::string_view label, std::span<const std::byte> first8,
                                     std::uint64_t fileSize) {
  if (fileSize < 8 || first8.size() < 8)
    fail(label, "file is " + std::to_string(fileSize) + " bytes, too short for a safetensors header (needs 8)");
  const std::uint64_t headerBytes = readLittleEndian64(first8);
  if (headerBytes > kMaxSafetensorsHeaderBytes)
    fail(label, "header length " + std::to_string(headerBytes) + " exceeds the " +
                    std::to_string(kMaxSafetensorsHeaderBytes) + "-byte limit (not a safetensors file?)");
  if (headerBytes > fileSize - 8)
    fail(label, "header length " + std::to_string(headerBytes) + " runs past the end of the " +
                    std::to_string(fileSize) + "-byte file (truncated?)");
  if (headerBytes < 2) fail(label, "header length " + std::to_string(headerBytes) + " is too small for a JSON object");
  return headerBytes;
}

SafetensorsHeader parseSafetensorsHeader(std::string_view label, std::span<const std::byte> bytes,
                                         std::uint64_t fileSize) {
  SafetensorsHeader header;
  header.fileSize = fileSize;
  header.headerBytes = checkSafetensorsPrefix(label, bytes, fileSize);
  header.dataOffset = 8 + header.headerBytes;
  if (bytes.size() < header.dataOffset) fail(label, "header: fewer bytes given than the header length");

  const char* first = reinterpret_cast<const char*>(bytes.data()) + 8;
  const char* last = first + header.headerBytes;
  const Json root =
      parseJsonStrict(label, "header", std::string_view(first, static_cast<std::size_t>(last - first)), kMaxDepth);
  if (!root.is_object()) fail(label, std::string("header: top level must be a JSON object, got ") + root.type_name());

  for (const auto& [key, value] : root.items()) {
    if (key == "__metadata__") {
      if (!value.is_object()) fail(label, "header: __metadata__ must be an object");
      for (const auto& [metaKey, metaValue] : value.items()) {
        if (!metaValue.is_string())
          fail(label, "header: __metadata__ value \"" + metaKey + "\" must be a string, got " + metaValue.type_name());
        header.metadata.emplace(metaKey, metaValue.get<std::string>());
      }
      continue;
    }
    header.tensors.push_back(parseTensor(label, key, value));
  }

  std::sort(header.tensors.begin(), header.tensors.end(), [](const TensorEntry& a, const TensorEntry& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  const std::uint64_t bufferBytes = fileSize - header.dataOffset;
  std::uint64_t expected = 0;
  const TensorEntry* previous = nullptr;
  for (const TensorEntry& entry : header.tensors) {
    if (entry.begin > expected)
      failTensor(label, entry.name,
                 "gap: data starts at byte " + std::to_string(entry.begin) + " but the previous tensor" +
                     (previous ? " \"" + previous->name + "\"" : std::string()) + " ends at " +
                     std::to_string(expected));
    if (entry.begin < expected)
      failTensor(label, entry.name,
                 "overlaps \"" + (previous ? previous->name : std::string()) + "\": data starts at byte " +
                     std::to_string(entry.begin) + " before its end at " + std::to_string(expected));
    if (entry.end > bufferBytes)
      failTensor(label, entry.name,
                 "data ends at byte " + std::to_string(entry.end) + " past the " + std::to_string(bufferBytes) +
                     "-byte data buffer (truncated file?)");
    expected = entry.end;
    previous = &entry;
  }
  if (expected != bufferBytes)
    fail(label, "data buffer is " + std::to_string(bufferBytes) + " bytes but the tensors cover " +
                    std::to_string(expected) + " (trailing bytes)");
  return header;
}

}  // namespace shotchain::io
