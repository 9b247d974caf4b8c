#include "io/gguf_header.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <set>
#include <sstream>

#include "io/safetensors_header.h"

namespace shotchain::io {
namespace {

constexpr std::array<std::byte, 4> kMagic{std::byte{'G'}, std::byte{'G'}, std::byte{'U'}, std::byte{'F'}};
constexpr std::uint32_t kMaxDims = 8;
constexpr int kMaxArrayDepth = 4;
constexpr std::size_t kArrayItemsShown = 16;

enum ValueType : std::uint32_t {
  U8 = 0,
  I8 = 1,
  U16 = 2,
  I16 = 3,
  U32 = 4,
  I32 = 5,
  F32 = 6,
  Bool = 7,
  String = 8,
  Array = 9,
  U64 = 10,
  I64 = 11,
  F64 = 12,
};

std::string_view valueTypeName(std::uint32_t type) {
  static constexpr std::array<std::string_view, 13> kNames{"u8",   "i8",     "u16",   "i16", "u32", "i32", "f32",
                                                           "bool", "string", "array", "u64", "i64", "f64"};
  return type < kNames.size() ? kNames[type] : "unknown";
}

// Reads the file front to back; every read is checked against what is left.
class Cursor {
 public:
  Cursor(std::string_view label, std::span<const std::byte> bytes) : label_(label), bytes_(bytes) {}

  [[noreturn]] void fail(const std::string& what) const {
    throw SafetensorsError(std::string(label_) + ": GGUF " + what);
  }
  std::uint64_t position() const { return position_; }
  std::uint64_t left() const { return bytes_.size() - position_; }

  template <typename T>
  T read(const char* what) {
    if (left() < sizeof(T))
      fail("ends inside " + std::string(what) + " at byte " + std::to_string(position_) + " (file is " +
           std::to_string(bytes_.size()) + " bytes)");
    T value;
    std::memcpy(&value, bytes_.data() + position_, sizeof(T));
    position_ += sizeof(T);
    return value;
  }

  std::string readString(const std::string& what) {
    const auto length = read<std::uint64_t>(what.c_str());
    if (length > left())
      fail(what + ": string of " + std::to_string(length) + " bytes at byte " + std::to_string(position_) +
           " runs past the end of the file");
    std::string text(reinterpret_cast<const char*>(bytes_.data() + position_), static_cast<std::size_t>(length));
    position_ += length;
    return text;
  }

  // The smallest number of bytes `count` items of `type` can take, for checking a count before reading.
  void requireRoom(std::uint64_t count, std::uint64_t minItemBytes, const std::string& what) const {
    if (minItemBytes != 0 && count > left() / minItemBytes)
      fail(what + ": " + std::to_string(count) + " items cannot fit in the " + std::to_string(left()) + " bytes left");
  }

 private:
  std::string_view label_;
  std::span<const std::byte> bytes_;
  std::uint64_t position_ = 0;
};

std::uint64_t fixedSize(std::uint32_t type) {
  switch (type) {
    case U8:
    case I8:
    case Bool:
      return 1;
    case U16:
    case I16:
      return 2;
    case U32:
    case I32:
    case F32:
      return 4;
    case U64:
    case I64:
    case F64:
      return 8;
    default:
      return 0;
  }
}

std::string shortest(double value) {
  std::ostringstream out;
  out.precision(9);
  out << value;
  return out.str();
}

struct Value {
  std::string text;
  std::optional<std::uint64_t> unsignedValue;  // for the keys read as numbers (alignment)
};

Value readValue(Cursor& in, std::uint32_t type, const std::string& what, int depth) {
  switch (type) {
    case U8:
      return {std::to_string(in.read<std::uint8_t>(what.c_str())), std::nullopt};
    case I8:
      return {std::to_string(in.read<std::int8_t>(what.c_str())), std::nullopt};
    case U16: {
      const auto v = in.read<std::uint16_t>(what.c_str());
      return {std::to_string(v), v};
    }
    case I16:
      return {std::to_string(in.read<std::int16_t>(what.c_str())), std::nullopt};
    case U32: {
      const auto v = in.read<std::uint32_t>(what.c_str());
      return {std::to_string(v), v};
    }
    case I32:
      return {std::to_string(in.read<std::int32_t>(what.c_str())), std::nullopt};
    case U64: {
      const auto v = in.read<std::uint64_t>(what.c_str());
      return {std::to_string(v), v};
    }
    case I64:
      return {std::to_string(in.read<std::int64_t>(what.c_str())), std::nullopt};
    case F32:
      return {shortest(in.read<float>(what.c_str())), std::nullopt};
    case F64:
      return {shortest(in.read<double>(what.c_str())), std::nullopt};
    case Bool: {
      const auto v = in.read<std::uint8_t>(what.c_str());
      if (v > 1) in.fail(what + ": boolean byte is " + std::to_string(v) + " (expected 0 or 1)");
      return {v != 0 ? "true" : "false", std::nullopt};
    }
    case String:
      return {in.readString(what), std::nullopt};
    case Array: {
      if (depth >= kMaxArrayDepth)
        in.fail(what + ": arrays nested more than " + std::to_string(kMaxArrayDepth) + " deep");
      const auto itemType = in.read<std::uint32_t>(what.c_str());
      const auto count = in.read<std::uint64_t>(what.c_str());
      if (itemType > F64) in.fail(what + ": array of unknown value type " + std::to_string(itemType));
      // A string or an array takes at least its 8-byte length.
      in.requireRoom(count, fixedSize(itemType) != 0 ? fixedSize(itemType) : 8, what);
      std::string text = "[";
      for (std::uint64_t i = 0; i < count; ++i) {
        const Value item = readValue(in, itemType, what + "[" + std::to_string(i) + "]", depth + 1);
        if (i < kArrayItemsShown) text += (i == 0 ? "" : ", ") + item.text;
      }
      if (count > kArrayItemsShown)
        text = "[" + std::to_string(count) + " × " + std::string(valueTypeName(itemType)) + "]";
      else
        text += "]";
      return {text, std::nullopt};
    }
    default:
      in.fail(what + ": unknown value type " + std::to_string(type));
  }
}

bool multiplyChecked(std::uint64_t a, std::uint64_t b, std::uint64_t& out) {
  return !__builtin_mul_overflow(a, b, &out);
}

std::string supportedTypes() {
  std::string names;
  for (const GgmlType type :
       {GgmlType::F32, GgmlType::F16, GgmlType::BF16, GgmlType::Q8_0, GgmlType::Q6_K, GgmlType::Q5_K, GgmlType::Q5_1,
        GgmlType::Q5_0, GgmlType::Q4_K, GgmlType::Q4_1, GgmlType::Q4_0, GgmlType::Q3_K, GgmlType::Q2_K})
    names += (names.empty() ? "" : ", ") + std::string(ggmlTraits(type).name);
  return names;
}

}  // namespace

bool hasGgufMagic(std::span<const std::byte> first4) {
  return first4.size() >= 4 && std::equal(kMagic.begin(), kMagic.end(), first4.begin());
}

GgufHeader parseGgufHeader(std::string_view label, std::span<const std::byte> file) {
  Cursor in(label, file);
  if (!hasGgufMagic(file)) in.fail("magic missing: the file does not start with \"GGUF\"");
  in.read<std::uint32_t>("the magic");
  GgufHeader header;
  header.version = in.read<std::uint32_t>("the version");
  if (header.version == 0x03000000u || header.version == 0x02000000u)
    in.fail("file is big-endian (version " + std::to_string(header.version >> 24) +
            "): only little-endian files are read");
  if (header.version != 2 && header.version != 3)
    in.fail("version " + std::to_string(header.version) + " is not supported (versions 2 and 3 are)");
  const auto tensorCount = in.read<std::uint64_t>("the tensor count");
  const auto kvCount = in.read<std::uint64_t>("the key/value count");
  in.requireRoom(kvCount, 8 + 4 + 1, "key/value count");
  in.requireRoom(tensorCount, 8 + 4 + 8 + 4 + 8, "tensor count");

  for (std::uint64_t i = 0; i < kvCount; ++i) {
    const std::string key = in.readString("key " + std::to_string(i));
    const auto type = in.read<std::uint32_t>(("the type of key \"" + key + "\"").c_str());
    const Value value = readValue(in, type, "key \"" + key + "\"", 0);
    if (!header.metadata.emplace(key, value.text).second) in.fail("key \"" + key + "\" appears twice");
    if (key == "general.alignment") {
      if (!value.unsignedValue)
        in.fail("general.alignment must be an unsigned integer, found " + std::string(valueTypeName(type)));
      const std::uint64_t alignment = *value.unsignedValue;
      if (alignment == 0 || !std::has_single_bit(alignment) || alignment > (1u << 24))
        in.fail("general.alignment " + std::to_string(alignment) + " is not a power of two up to 16 MiB");
      header.alignment = alignment;
    }
  }

  struct Pending {
    GgufTensorInfo info;
    std::uint64_t offset = 0;
  };
  std::vector<Pending> pending;
  std::set<std::string, std::less<>> names;
  for (std::uint64_t i = 0; i < tensorCount; ++i) {
    Pending p;
    GgufTensorInfo& t = p.info;
    t.name = in.readString("tensor " + std::to_string(i) + " name");
    const std::string what = "tensor \"" + t.name + "\"";
    if (t.name.empty()) in.fail("tensor " + std::to_string(i) + " has an empty name");
    if (!names.insert(t.name).second) in.fail(what + " appears twice");
    const auto dims = in.read<std::uint32_t>(what.c_str());
    if (dims == 0 || dims > kMaxDims)
      in.fail(what + ": " + std::to_string(dims) + " dimensions (1 to " + std::to_string(kMaxDims) + " are read)");
    std::vector<std::uint64_t> innermostFirst(dims);
    t.elements = 1;
    for (std::uint32_t d = 0; d < dims; ++d) {
      innermostFirst[d] = in.read<std::uint64_t>(what.c_str());
      if (innermostFirst[d] == 0 || innermostFirst[d] > static_cast<std::uint64_t>(INT64_MAX) ||
          !multiplyChecked(t.elements, innermostFirst[d], t.elements) ||
          t.elements > static_cast<std::uint64_t>(INT64_MAX))
        in.fail(what + ": dimension " + std::to_string(d) + " of " + std::to_string(innermostFirst[d]) +
                " is zero or makes the element count overflow");
    }
    t.shape.assign(innermostFirst.rbegin(), innermostFirst.rend());
    const auto typeId = in.read<std::uint32_t>(what.c_str());
    const std::optional<GgmlType> type = ggmlTypeFromId(typeId);
    if (!type)
      in.fail(what + ": type " + ggmlTypeIdName(typeId) + " is not supported (supported: " + supportedTypes() + ")");
    t.type = *type;
    const GgmlTypeTraits& traits = ggmlTraits(t.type);
    if (innermostFirst[0] % traits.blockElements != 0)
      in.fail(what + ": its rows of " + std::to_string(innermostFirst[0]) + " values are not whole " +
              std::string(traits.name) + " blocks of " + std::to_string(traits.blockElements));
    if (!multiplyChecked(t.elements / traits.blockElements, traits.blockBytes, t.bytes))
      in.fail(what + ": its size overflows");
    p.offset = in.read<std::uint64_t>(what.c_str());
    if (p.offset % header.alignment != 0)
      in.fail(what + ": offset " + std::to_string(p.offset) + " is not a multiple of the alignment " +
              std::to_string(header.alignment));
    pending.push_back(std::move(p));
  }

  const std::uint64_t end = in.position();
  header.dataOffset = (end + header.alignment - 1) / header.alignment * header.alignment;
  if (header.dataOffset > file.size() && !pending.empty())
    in.fail("tensor data would start at byte " + std::to_string(header.dataOffset) + ", past the end of the file (" +
            std::to_string(file.size()) + " bytes)");
  const std::uint64_t dataBytes = file.size() >= header.dataOffset ? file.size() - header.dataOffset : 0;
  for (Pending& p : pending) {
    if (p.offset > dataBytes || p.info.bytes > dataBytes - p.offset)
      in.fail("tensor \"" + p.info.name + "\": its " + std::to_string(p.info.bytes) + " bytes at data offset " +
              std::to_string(p.offset) + " run past the end of the file (" + std::to_string(dataBytes) +
              " bytes of data)");
    p.info.begin = header.dataOffset + p.offset;
  }
  std::vector<const GgufTensorInfo*> byOffset;
  for (const Pending& p : pending) byOffset.push_back(&p.info);
  std::sort(byOffset.begin(), byOffset.end(),
            [](const GgufTensorInfo* a, const GgufTensorInfo* b) { return a->begin < b->begin; });
  for (std::size_t i = 1; i < byOffset.size(); ++i)
    if (byOffset[i - 1]->begin + byOffset[i - 1]->bytes > byOffset[i]->begin)
      in.fail("tensors \"" + byOffset[i - 1]->name + "\" and \"" + byOffset[i]->name + "\" overlap");
  for (Pending& p : pending) header.tensors.push_back(std::move(p.info));
  return header;
}

}  // namespace shotchain::io
