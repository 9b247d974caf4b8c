#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "io/ggml_types.h"

namespace shotchain::io {

struct GgufTensorPlan {
  std::string name;
  GgmlType type = GgmlType::F32;
  std::vector<std::uint64_t> shape;  // torch order
};

// Builds a GGUF version 3 file in memory: the header from the plans (every size is known from type and shape),
// then each tensor's bytes in plan order, each at a multiple of the 32-byte alignment. Metadata values are
// written as strings, except general.quantization_version and general.file_type (u32) when given as numbers.
class GgufWriter {
 public:
  // Throws std::invalid_argument for duplicate names, empty shapes and rows that are not whole blocks.
  GgufWriter(const std::map<std::string, std::string>& metadata, std::vector<GgufTensorPlan> plans);

  // The next tensor's bytes (plan order); throws std::invalid_argument when their size is not the plan's.
  void append(std::span<const std::uint8_t> bytes);
  // The whole file; throws std::logic_error when a tensor is still missing.
  std::string finish();
  // What is built so far (the header alone before the first append) and the size of the finished file.
  const std::string& bytesSoFar() const { return bytes_; }
  std::uint64_t finishedSize() const { return finishedSize_; }

 private:
  std::vector<GgufTensorPlan> plans_;
  std::size_t next_ = 0;
  std::string bytes_;
  std::uint64_t finishedSize_ = 0;
};

std::uint64_t ggmlBytesOf(GgmlType type, const std::vector<std::uint64_t>& shape);

}  // namespace shotchain::io
