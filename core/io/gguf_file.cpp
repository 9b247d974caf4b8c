#include "io/gguf_file.h"

#include <cstring>

#include <ATen/ATen.h>

#include "io/ggml_dequant.h"
#include "io/mapped_file.h"
#include "io/safetensors_header.h"

namespace shotchain::io {

bool isGgufPath(const std::filesystem::path& path) { return path.extension() == ".gguf"; }

std::shared_ptr<const GgufFile> GgufFile::open(const std::filesystem::path& path) {
  std::shared_ptr<GgufFile> file(new GgufFile());
  file->path_ = path;
  file->label_ = path.filename().string();
  file->mapping_ = MappedFile::map(path);
  file->header_ = parseGgufHeader(file->label_, file->mapping_->bytes());
  for (std::size_t i = 0; i < file->header_.tensors.size(); ++i) file->index_.emplace(file->header_.tensors[i].name, i);
  return file;
}

std::uint64_t GgufFile::fileSize() const { return mapping_->size(); }

const GgufTensorInfo* GgufFile::find(std::string_view name) const {
  const auto it = index_.find(std::string(name));
  return it == index_.end() ? nullptr : &header_.tensors[it->second];
}

at::Tensor GgufFile::view(const GgufTensorInfo& info) const {
  std::shared_ptr<const MappedFile> keepAlive = mapping_;
  return at::from_blob(
      mapping_->mutableData() + info.begin, {static_cast<std::int64_t>(info.bytes)},
      [keepAlive](void*) mutable { keepAlive.reset(); }, at::TensorOptions().dtype(at::kByte));
}

at::Tensor GgufFile::tensor(const GgufTensorInfo& info, at::ScalarType as) const {
  const std::vector<std::int64_t> shape(info.shape.begin(), info.shape.end());
  try {
    at::Tensor values = dequantiseGgml(view(info), info.type, shape, as);
    // A plain tensor converted to its own dtype is still the mapping's view: hand out memory of its own.
    if (values.data_ptr() == mapping_->mutableData() + info.begin) values = values.clone();
    mapping_->releasePages(info.begin, info.bytes);
    return values;
  } catch (const std::exception& error) {
    throw SafetensorsError(label_ + ": tensor \"" + info.name + "\": " + error.what());
  }
}

at::Tensor GgufFile::blocks(const GgufTensorInfo& info) const {
  const std::int64_t rows = static_cast<std::int64_t>(info.shape.size() == 1 ? 1 : info.elements / info.shape.back());
  at::Tensor out =
      at::empty({rows, static_cast<std::int64_t>(info.bytes) / rows}, at::TensorOptions().dtype(at::kByte));
  if (info.bytes > 0) std::memcpy(out.data_ptr(), mapping_->bytes().data() + info.begin, info.bytes);
  mapping_->releasePages(info.begin, info.bytes);
  return out;
}

}  // namespace shotchain::io
