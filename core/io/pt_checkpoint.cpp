#include "io/pt_checkpoint.h"

#include <cstring>

#include <ATen/ATen.h>

#include "io/mapped_file.h"
#include "io/safetensors_reader.h"

namespace shotchain::io {

bool isPtCheckpointPath(const std::filesystem::path& path) {
  const std::string extension = path.extension().string();
  return extension == ".pt" || extension == ".pth";
}

std::shared_ptr<const PtCheckpoint> PtCheckpoint::open(const std::filesystem::path& path) {
  auto checkpoint = std::shared_ptr<PtCheckpoint>(new PtCheckpoint());
  checkpoint->label_ = path.filename().string();
  checkpoint->mapping_ = MappedFile::map(path);
  checkpoint->archive_ = parsePtArchive(checkpoint->label_, checkpoint->mapping_->bytes());
  return checkpoint;
}

at::Tensor PtCheckpoint::tensor(const PtTensorRecord& record) const {
  const PtStorage& storage = archive_.storages.find(record.storage)->second;
  const std::optional<at::ScalarType> type = torchDTypeOf(storage.dtype);
  if (!type) throw SafetensorsError(label_ + ": tensor \"" + record.name + "\": dtype cannot be loaded");
  const auto options = at::TensorOptions().dtype(*type);
  std::byte* data = mapping_->mutableData() + storage.bytes.offset;
  const std::size_t elementSize = dtypeBits(storage.dtype) / 8;
  at::Tensor whole;
  if (reinterpret_cast<std::uintptr_t>(data) % elementSize == 0) {
    std::shared_ptr<const MappedFile> keepAlive = mapping_;
    whole = at::from_blob(
        data, {storage.elements}, [keepAlive](void*) mutable { keepAlive.reset(); }, options);
  } else {
    whole = at::empty({storage.elements}, options);
    if (storage.elements > 0)
      std::memcpy(whole.data_ptr(), data, static_cast<std::size_t>(storage.elements) * elementSize);
  }
  return whole.as_strided(record.sizes, record.strides, record.offset);
}

NamedTensors PtCheckpoint::tensors(const PtStateDict& dict) const {
  NamedTensors out;
  out.reserve(dict.tensors.size());
  for (const PtTensorRecord& record : dict.tensors) out.emplace_back(record.name, tensor(record));
  return out;
}

}  // namespace shotchain::io
