#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "io/dtype.h"

namespace shotchain::io {

// One object built by the restricted unpickler. Objects live in PickleObjects::nodes and refer to
// each other by index, so a pickle that puts a list inside itself makes a cycle, not a leak.
struct PickleNode {
  enum class Kind : std::uint8_t { None, Bool, Int, Float, String, Tuple, List, Dict, Global, Storage, Tensor };
  Kind kind = Kind::None;
  std::int64_t integer = 0;                  // Bool, Int; Storage: element count
  double real = 0;                           // Float
  std::string text;                          // String; Global: "module.name"; Storage: its key
  std::vector<std::size_t> items;            // Tuple, List; Dict: key, value, key, value …; Tensor: its storage
  DType dtype = DType::F32;                  // Storage, Tensor
  std::int64_t offset = 0;                   // Tensor: storage offset in elements
  std::vector<std::int64_t> sizes, strides;  // Tensor
};

struct PickleObjects {
  std::vector<PickleNode> nodes;
  std::size_t root = 0;
};

// Caps on what a pickle may make the reader allocate.
inline constexpr std::size_t kMaxPickleStack = 100'000;
inline constexpr std::size_t kMaxPickleMemo = 1'000'000;
inline constexpr std::size_t kMaxPickleObjects = 5'000'000;  // about 15 per tensor
inline constexpr std::size_t kMaxTensorDims = 64;

// Unpickles the protocol-2 subset torch.save writes (what torch.load(weights_only=True) accepts):
// containers, numbers, strings, collections.OrderedDict, torch.<Dtype>Storage persistent ids and
// torch._utils._rebuild_tensor_v2 / _rebuild_parameter. Any other global is refused by name when
// its GLOBAL opcode is read, before anything is called. Runs nothing; throws SafetensorsError
// "<label>: <what>".
PickleObjects unpickleRestricted(std::string_view label, std::span<const std::byte> pickle);

// The dtype of a torch.<Name>Storage class ("FloatStorage" → F32), false when not a storage.
bool storageDType(std::string_view className, DType& dtype);

}  // namespace shotchain::io
