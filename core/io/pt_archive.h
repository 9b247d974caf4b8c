#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "io/dtype.h"
#include "io/pt_zip.h"

namespace shotchain::io {

// A tensor of a PyTorch checkpoint, checked against its storage: every element it reaches lies in
// the storage and the storage's bytes lie in the archive.
struct PtTensorRecord {
  std::string name;  // with the state dict's common prefix stripped
  DType dtype = DType::F32;
  std::string storage;      // key in PtArchive::storages
  std::int64_t offset = 0;  // in elements
  std::vector<std::int64_t> sizes, strides;

  std::uint64_t elements() const;
  std::vector<std::uint64_t> shape() const { return {sizes.begin(), sizes.end()}; }
};

// A dict of tensors somewhere in the checkpoint: key "" for the top level, else the path of dict
// keys from the top ("generator", "ema/model").
struct PtStateDict {
  std::string key;
  std::string strippedPrefix;           // "model." when every name carried it
  std::vector<PtTensorRecord> tensors;  // in the file's order
};

struct PtStorage {
  ZipEntry bytes;
  DType dtype = DType::F32;
  std::int64_t elements = 0;
};

struct PtArchive {
  std::string prefix;  // the archive's top folder ("archive", or the file's stem)
  std::map<std::string, PtStorage, std::less<>> storages;
  std::vector<PtStateDict> stateDicts;
  std::vector<std::pair<std::string, std::string>> values;  // other top-level entries: key → "int 1234"
};

// Reads a torch.save zip checkpoint without executing anything (io/pt_pickle.h) and checks every
// tensor against the archive. Refuses legacy (non-zip) pickles with advice. Torch-free; throws
// SafetensorsError naming `label`.
PtArchive parsePtArchive(std::string_view label, std::span<const std::byte> file);

// The state dict to load: `key` when given; else the only one; else the first present of
// kPreferredStateDicts. Throws SafetensorsError listing the candidates otherwise.
const PtStateDict& choosePtStateDict(std::string_view label, const PtArchive& archive, std::string_view key);

// Training checkpoints (Self-Forcing, LongLive) hold both; their inference scripts read "generator"
// unless asked for the EMA weights.
inline constexpr std::string_view kPreferredStateDicts[] = {"generator",     "model",     "state_dict", "module",
                                                            "generator_ema", "model_ema", "ema"};

}  // namespace shotchain::io
