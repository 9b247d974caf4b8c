#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include <ATen/ATen.h>

#include "cli/command_specs.h"
#include "cli/output_rule.h"
#include "cli/verbs.h"
#include "io/dtype.h"
#include "io/ggml_quantise.h"
#include "io/gguf_file.h"
#include "io/gguf_writer.h"
#include "io/pt_checkpoint.h"
#include "io/safetensors_writer.h"
#include "io/weight_set.h"
#include "models/gguf_tensor_types.h"
#include "models/model_registry.h"
#include "util/atomic_file.h"
#include "util/byte_size.h"

namespace shotchain::cli {

namespace {

// Every tensor of a GGUF file dequantised to float32, its metadata kept as strings.
void ggufToSafetensors(const std::filesystem::path& in, const std::filesystem::path& out) {
  const io::WeightSet weights = io::WeightSet::open(in);
  io::NamedTensors tensors;
  for (const io::WeightInfo& info : weights.weights())
    tensors.emplace_back(info.name, weights.load(info.name, at::kFloat));
  io::Metadata metadata = weights.metadata();
  metadata["converted_from"] = in.filename().string();
  io::saveSafetensors(out, tensors, metadata);
  std::printf("%s: %zu tensors (%s) dequantised to F32, written to %s\n", in.filename().string().c_str(),
              tensors.size(), weights.quantisation().c_str(), out.string().c_str());
}

// The weights quantised tensor by tensor (one float32 tensor in memory at a time besides the file being built).
void weightsToGguf(const std::filesystem::path& in, const std::filesystem::path& out, io::GgmlType wanted,
                   const std::string& stateDict) {
  const io::WeightSet weights = io::WeightSet::open(in, stateDict);
  const models::ModelFamilyRow* row = models::identifyFamily(weights).first;
  std::vector<io::GgufTensorPlan> plans;
  std::map<io::GgmlType, std::size_t> counts;
  for (const io::WeightInfo& info : weights.weights()) {
    const io::GgmlType type = models::ggufTensorType(row, info.name, info.shape, wanted);
    plans.push_back({info.name, type, info.shape});
    ++counts[type];
  }
  std::map<std::string, std::string> metadata{{"general.quantization_version", "2"},
                                              {"general.name", in.stem().string()},
                                              {"converted_from", in.filename().string()}};
  if (row != nullptr) metadata["shotchain.family"] = row->name;
  if (row != nullptr && row->ggufArchitecture != nullptr) metadata["general.architecture"] = row->ggufArchitecture;
  for (const auto& [key, value] : weights.metadata())
    if (!metadata.contains(key) && !key.starts_with("general.")) metadata[key] = value;
  io::GgufWriter writer(metadata, plans);
  for (const io::GgufTensorPlan& plan : plans) {
    const at::Tensor values = weights.load(plan.name, at::kFloat).contiguous();
    const std::vector<std::uint8_t> bytes =
        io::quantiseGgml({values.data_ptr<float>(), static_cast<std::size_t>(values.numel())}, plan.type);
    writer.append(bytes);
  }
  const std::string file = writer.finish();
  util::writeFileAtomically(out, file);
  std::string mix;
  for (const auto& [type, count] : counts)
    mix += (mix.empty() ? "" : ", ") + std::string(io::ggmlTraits(type).name) + " ×" + std::to_string(count);
  std::printf("%s: %zu tensors (%s) written to %s (%s, from %s)\n", in.filename().string().c_str(), plans.size(),
              mix.c_str(), out.string().c_str(), util::formatByteSize(file.size()).c_str(),
              util::formatByteSize(weights.totalBytes()).c_str());
}

}  // namespace

int runConvert(const Args& args) {
  const ParsedOptions options = kConvertCommand.parse(args);
  const std::filesystem::path in = options.operands()[0];
  const std::filesystem::path out = options.operands()[1];
  const std::optional<std::string> typeName = options.text("--type");
  const bool toGguf = io::isGgufPath(out);
  if (!toGguf && out.extension() != ".safetensors")
    throw kConvertCommand.error("OUT must end in .safetensors or .gguf: " + out.string());
  if (toGguf && !typeName) throw kConvertCommand.error("OUT.gguf needs --type (Q8_0, Q4_K, …)");
  if (!toGguf && typeName) throw kConvertCommand.error("--type is for OUT.gguf");
  std::optional<io::GgmlType> wanted;
  if (typeName) {
    wanted = io::parseGgmlTypeName(*typeName);
    if (!wanted) throw kConvertCommand.error("--type: \"" + *typeName + "\" is no GGUF type ShotChain writes");
  }
  const std::optional<std::int64_t> chunk = options.int64("--chunk");
  if (chunk && (toGguf || io::isGgufPath(in))) throw kConvertCommand.error("--chunk is for IN.pt → OUT.safetensors");
  if (chunk && (*chunk < 1 || *chunk > 257))
    throw kConvertCommand.error("--chunk: " + std::to_string(*chunk) +
                                " must be from 1 to 257 latent frames (the longest clip's)");
  if (const std::string refusal = outputRefusal(out, {in}, options.flag("--force")); !refusal.empty()) {
    std::fprintf(stderr, "shotchain convert: %s\n", refusal.c_str());
    return 1;
  }
  try {
    if (toGguf) {
      weightsToGguf(in, out, *wanted, options.text("--key").value_or(""));
      return 0;
    }
    if (io::isGgufPath(in)) {
      ggufToSafetensors(in, out);
      return 0;
    }
    const auto checkpoint = io::PtCheckpoint::open(in);
    const io::PtStateDict& dict = checkpoint->stateDict(options.text("--key").value_or(""));
    // Each tensor is written whole, also a view of a storage it shares: many views of one storage would multiply
    // the checkpoint (100,000 views of 4 KB: 390 MB). Past 4× its bytes (and 64 MiB) the output is refused.
    std::uint64_t bytes = 0;
    for (const io::PtTensorRecord& tensor : dict.tensors) bytes += tensor.elements() * io::dtypeBits(tensor.dtype) / 8;
    std::error_code sized;
    const std::uint64_t inBytes = std::filesystem::file_size(in, sized);
    if (!sized && bytes > 4 * inBytes + (64ull << 20)) {
      std::fprintf(stderr,
                   "shotchain convert: %s: its %zu tensors would write %s from a %s checkpoint (views of one storage "
                   "are each written whole); refused past 4 times the checkpoint's size\n",
                   in.string().c_str(), dict.tensors.size(), util::formatByteSize(bytes).c_str(),
                   util::formatByteSize(inBytes).c_str());
      return 1;
    }
    io::Metadata metadata{{"converted_from", in.filename().string()}};
    if (!dict.key.empty()) metadata["state_dict"] = dict.key;
    if (!dict.strippedPrefix.empty()) metadata["stripped_prefix"] = dict.strippedPrefix;
    if (chunk) metadata["num_frame_per_block"] = std::to_string(*chunk);
    io::saveSafetensors(out, checkpoint->tensors(dict), metadata);
    std::printf("%s: %zu tensors of %s%s%s written to %s\n", in.filename().string().c_str(), dict.tensors.size(),
                dict.key.empty() ? "the top-level state dict" : ("\"" + dict.key + "\"").c_str(),
                dict.strippedPrefix.empty() ? "" : ", prefix stripped: ", dict.strippedPrefix.c_str(),
                out.string().c_str());
  } catch (const std::exception& error) {
    std::fprintf(stderr, "shotchain convert: %s\n", error.what());
    return 1;
  }
  return 0;
}

}  // namespace shotchain::cli
