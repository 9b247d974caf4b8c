#include <cstdio>
#include <cstdlib>
#include <map>

#include "cli/command_specs.h"
#include "cli/verbs.h"
#include "io/pt_checkpoint.h"
#include "io/safetensors_header.h"
#include "io/weight_set.h"
#include "models/model_registry.h"
#include "util/byte_size.h"

namespace shotchain::cli {

namespace {

// A checkpoint's state dicts (the one described marked) and its other top-level values.
void printCheckpoint(const io::PtCheckpoint& checkpoint, const std::string& chosen) {
  std::printf("state dicts:");
  for (const io::PtStateDict& dict : checkpoint.archive().stateDicts)
    std::printf(" %s (%zu tensors)%s", dict.key.empty() ? "(top level)" : dict.key.c_str(), dict.tensors.size(),
                dict.key == chosen ? " [described]" : "");
  std::printf("\n");
  if (checkpoint.archive().values.empty()) return;
  std::printf("values:");
  for (const auto& [key, value] : checkpoint.archive().values) std::printf(" %s=%s", key.c_str(), value.c_str());
  std::printf("\n");
}

}  // namespace

// Headers only: the mapping is never read beyond the JSON header (or a checkpoint's pickle), so a
// 28 GB file is instant.
int runInspect(const Args& args) {
  const ParsedOptions options = kInspectCommand.parse(args);
  const std::string path = options.operands().front();
  io::WeightSet weights = [&] {
    try {
      return io::WeightSet::open(path, options.text("--key").value_or(""));
    } catch (const std::exception& error) {
      std::printf("file: %s\nproblems:\n  %s\n", path.c_str(), error.what());
      std::exit(1);
    }
  }();
  std::map<std::string, std::pair<std::size_t, std::uint64_t>> dtypes;
  std::uint64_t elements = 0;
  for (const io::WeightInfo& info : weights.weights()) {
    auto& [count, bytes] = dtypes[io::storedTypeName(info)];
    ++count;
    bytes += info.bytes;
    std::uint64_t n = 1;
    for (const std::uint64_t d : info.shape) n *= d;
    elements += n;
  }
  std::printf("file: %s (%zu file%s, %s)\n", path.c_str(), weights.fileCount(), weights.fileCount() == 1 ? "" : "s",
              util::formatByteSize(weights.totalBytes()).c_str());
  std::printf("tensors: %zu", weights.weights().size());
  if (!weights.strippedPrefix().empty()) std::printf(" (prefix \"%s\" stripped", weights.strippedPrefix().c_str());
  if (weights.droppedKeys() > 0) std::printf(", %zu keys of other components ignored", weights.droppedKeys());
  std::printf("%s\n", weights.strippedPrefix().empty() ? "" : ")");
  std::printf("dtypes:");
  for (const auto& [name, stats] : dtypes)
    std::printf(" %s ×%zu (%s)", name.c_str(), stats.first, util::formatByteSize(stats.second).c_str());
  std::printf("\nquantisation: %s\n", weights.quantisation().c_str());
  if (weights.checkpoint() != nullptr) printCheckpoint(*weights.checkpoint(), weights.stateDictKey());
  const double count = static_cast<double>(elements);
  if (count >= 1e9)
    std::printf("parameters: %llu (%.2f B)\n", static_cast<unsigned long long>(elements), count / 1e9);
  else if (count >= 1e6)
    std::printf("parameters: %llu (%.2f M)\n", static_cast<unsigned long long>(elements), count / 1e6);
  else
    std::printf("parameters: %llu (%.1f K)\n", static_cast<unsigned long long>(elements), count / 1e3);

  const models::ModelFamilyRow* row = models::identifyFamily(weights).first;
  models::FamilyInspection inspection;
  if (row != nullptr && row->inspect != nullptr) {
    inspection = row->inspect(weights);
    for (const auto& [name, value] : inspection.lines) std::printf("%s: %s\n", name.c_str(), value.c_str());
  } else {
    std::printf("family: unknown\nvariant: unknown\n");
  }
  const auto& meta = weights.metadata();
  if (!meta.empty()) {
    std::printf("metadata:");
    for (const auto& [key, value] : meta)
      std::printf(" %s=%s", key.c_str(), value.size() > 60 ? (value.substr(0, 57) + "...").c_str() : value.c_str());
    std::printf("\n");
  }
  if (options.flag("--tensors")) {
    std::printf("tensors:\n");
    for (const io::WeightInfo& info : weights.weights())
      std::printf("  %s %s %s %s\n", info.name.c_str(), io::storedTypeName(info).c_str(),
                  io::formatShape(info.shape).c_str(), util::formatByteSize(info.bytes).c_str());
  }
  if (inspection.problems.empty() && !inspection.lines.empty()) {
    std::printf("problems: none\n");
    return 0;
  }
  std::printf("problems:\n");
  for (const std::string& problem : inspection.problems) std::printf("  %s\n", problem.c_str());
  return 1;
}

}  // namespace shotchain::cli
