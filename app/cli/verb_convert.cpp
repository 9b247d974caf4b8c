#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>

#include "cli/command_specs.h"
#include "cli/output_rule.h"
#include "cli/verbs.h"
#include "io/dtype.h"
#include "io/pt_checkpoint.h"
#include "io/safetensors_writer.h"
#include "util/byte_size.h"

namespace shotchain::cli {

int runConvert(const Args& args) {
  const ParsedOptions options = kConvertCommand.parse(args);
  const std::filesystem::path in = options.operands()[0];
  const std::filesystem::path out = options.operands()[1];
  if (out.extension() != ".safetensors") throw kConvertCommand.error("OUT must end in .safetensors: " + out.string());
  const std::optional<std::int64_t> chunk = options.int64("--chunk");
  if (chunk && (*chunk < 1 || *chunk > 257))
    throw kConvertCommand.error("--chunk: " + std::to_string(*chunk) +
                                " must be from 1 to 257 latent frames (the longest clip's)");
  if (const std::string refusal = outputRefusal(out, {in}, options.flag("--force")); !refusal.empty()) {
    std::fprintf(stderr, "shotchain convert: %s\n", refusal.c_str());
    return 1;
  }
  try {
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
