#include "io/safetensors_reader.h"

#include <bit>
#include <cstring>

#include "io/fp8.h"
#include "io/mapped_file.h"

namespace shotchain::io {

static_assert(std::endian::native == std::endian::little, "safetensors data is little-endian");

namespace {

[[noreturn]] void failReadingTensor(const std::string& label, std::string_view name, const std::string& what) {
  throw SafetensorsError(label + ": tensor \"" + std::string(name) + "\": " + what);
}

std::vector<int64_t> torchShape(const TensorEntry& entry, const std::string& label) {
  std::vector<int64_t> shape;
  for (const std::uint64_t dim : entry.shape) {
    if (dim > static_cast<std::uint64_t>(INT64_MAX))
      failReadingTensor(label, entry.name, "dimension too large for libtorch");
    shape.push_back(static_cast<int64_t>(dim));
  }
  return shape;
}

at::Tensor decodeFloat8(const std::byte* data, const TensorEntry& entry, const std::vector<int64_t>& shape,
                        const std::array<float, 256>& table) {
  at::Tensor out = at::empty(shape, at::TensorOptions().dtype(at::kFloat));
  float* target = out.data_ptr<float>();
  const auto* source = reinterpret_cast<const unsigned char*>(data);
  for (std::uint64_t i = 0; i < entry.elements; ++i) target[i] = table[source[i]];
  return out;
}

template <typename From, typename To>
at::Tensor widen(const std::byte* data, const TensorEntry& entry, const std::vector<int64_t>& shape,
                 at::ScalarType type) {
  at::Tensor out = at::empty(shape, at::TensorOptions().dtype(type));
  To* target = out.data_ptr<To>();
  for (std::uint64_t i = 0; i < entry.elements; ++i) {
    From value;
    std::memcpy(&value, data + i * sizeof(From), sizeof(From));
    target[i] = static_cast<To>(value);
  }
  return out;
}

}  // namespace

void refusePickleFile(const std::filesystem::path& path) {
  const std::string extension = path.extension().string();
  if (extension == ".pth" || extension == ".pt" || extension == ".ckpt" || extension == ".bin" || extension == ".pkl")
    throw SafetensorsError(path.filename().string() +
                           ": PyTorch pickle checkpoints are never loaded (unpickling can run arbitrary code); "
                           "use the safetensors form of these weights instead (for example ComfyUI's repackaged "
                           "files, or convert it once with safetensors' save_file); .pt and .pth zip checkpoints "
                           "are read as model weights, and by shotchain convert, without running them");
}

std::optional<at::ScalarType> torchDTypeOf(DType dtype) {
  switch (dtype) {
    case DType::Bool:
      return at::kBool;
    case DType::U8:
      return at::kByte;
    case DType::I8:
      return at::kChar;
    case DType::I16:
      return at::kShort;
    case DType::I32:
      return at::kInt;
    case DType::I64:
      return at::kLong;
    case DType::F16:
      return at::kHalf;
    case DType::BF16:
      return at::kBFloat16;
    case DType::F32:
      return at::kFloat;
    case DType::F64:
      return at::kDouble;
    case DType::C64:
      return at::kComplexFloat;
    default:
      return std::nullopt;
  }
}

DType safetensorsDTypeOf(at::ScalarType type) {
  switch (type) {
    case at::kBool:
      return DType::Bool;
    case at::kByte:
      return DType::U8;
    case at::kChar:
      return DType::I8;
    case at::kShort:
      return DType::I16;
    case at::kInt:
      return DType::I32;
    case at::kLong:
      return DType::I64;
    case at::kHalf:
      return DType::F16;
    case at::kBFloat16:
      return DType::BF16;
    case at::kFloat:
      return DType::F32;
    case at::kDouble:
      return DType::F64;
    case at::kComplexFloat:
      return DType::C64;
    case at::kFloat8_e4m3fn:
      return DType::F8_E4M3;
    case at::kFloat8_e5m2:
      return DType::F8_E5M2;
    default:
      throw std::invalid_argument(std::string("no safetensors dtype for ") + c10::toString(type));
  }
}

std::shared_ptr<const SafetensorsFile> SafetensorsFile::open(const std::filesystem::path& path) {
  refusePickleFile(path);
  auto file = std::shared_ptr<SafetensorsFile>(new SafetensorsFile());
  file->path_ = path;
  file->label_ = path.filename().string();
  file->mapping_ = MappedFile::map(path);
  file->header_ = parseSafetensorsHeader(file->label_, file->mapping_->bytes(), file->mapping_->size());
  file->index_.reserve(file->header_.tensors.size());
  for (std::size_t i = 0; i < file->header_.tensors.size(); ++i) file->index_.emplace(file->header_.tensors[i].name, i);
  return file;
}

const TensorEntry* SafetensorsFile::find(std::string_view name) const {
  const auto it = index_.find(std::string(name));
  return it == index_.end() ? nullptr : &header_.tensors[it->second];
}

std::string_view SafetensorsFile::rawBytes(const TensorEntry& entry) const {
  const auto* base = reinterpret_cast<const char*>(mapping_->bytes().data());
  return {base + header_.dataOffset + entry.begin, static_cast<std::size_t>(entry.bytes())};
}

void SafetensorsFile::releasePages(const TensorEntry& entry) const {
  mapping_->releasePages(header_.dataOffset + entry.begin, entry.bytes());
}

at::Tensor SafetensorsFile::tensor(std::string_view name, std::optional<at::ScalarType> as) const {
  const TensorEntry* entry = find(name);
  if (entry == nullptr) failReadingTensor(label_, name, "not in this file");
  return tensor(*entry, as);
}

at::Tensor SafetensorsFile::tensor(const TensorEntry& entry, std::optional<at::ScalarType> as) const {
  const std::vector<int64_t> shape = torchShape(entry, label_);
  std::byte* data = mapping_->mutableData() + header_.dataOffset + entry.begin;
  at::Tensor result;
  if (entry.dtype == DType::F8_E4M3) {
    result = decodeFloat8(data, entry, shape, float8E4M3Table());
  } else if (entry.dtype == DType::F8_E5M2) {
    result = decodeFloat8(data, entry, shape, float8E5M2Table());
  } else if (entry.dtype == DType::U16) {
    result = widen<std::uint16_t, int32_t>(data, entry, shape, at::kInt);
  } else if (entry.dtype == DType::U32) {
    result = widen<std::uint32_t, int64_t>(data, entry, shape, at::kLong);
  } else if (const std::optional<at::ScalarType> type = torchDTypeOf(entry.dtype)) {
    const auto options = at::TensorOptions().dtype(*type);
    const std::size_t elementSize = dtypeBits(entry.dtype) / 8;
    const bool aligned = reinterpret_cast<std::uintptr_t>(data) % elementSize == 0;
    if (aligned) {
      // Zero-copy: the deleter owns a reference to the mapping.
      std::shared_ptr<const MappedFile> keepAlive = mapping_;
      result = at::from_blob(
          data, shape, [keepAlive](void*) mutable { keepAlive.reset(); }, options);
    } else {
      result = at::empty(shape, options);
      if (entry.bytes() > 0) std::memcpy(result.data_ptr(), data, static_cast<std::size_t>(entry.bytes()));
    }
  } else {
    failReadingTensor(label_, entry.name,
                      "dtype " + std::string(dtypeName(entry.dtype)) + " cannot be loaded (not supported)");
  }
  if (as && result.scalar_type() != *as) result = result.to(*as);
  if (result.data_ptr() != static_cast<void*>(data)) releasePages(entry);
  return result;
}

}  // namespace shotchain::io
