#include <cstdio>

#include "cli/command_specs.h"
#include "cli/verbs.h"
#include "sequence/sequence_io.h"
#include "util/byte_size.h"

namespace shotchain::cli {
namespace {

std::string describeModel(const ModelSet& model) {
  if (model.isBuiltin()) return "builtin:" + model.builtin;
  if (!model.folder.empty()) return "models folder " + model.folder;
  return "dit " + model.dit + ", vae " + model.vae + ", text encoder " + model.textEncoder;
}

}  // namespace

int runInfo(const Args& args) {
  const std::string file = kInfoCommand.parse(args).operands().front();
  const LoadResult result = loadSequenceFile(file);
  for (const Diagnostic& d : result.diagnostics) std::printf("%s\n", d.format(file).c_str());
  if (!result.ok()) return 1;

  const Sequence& sequence = *result.sequence;
  const SequenceSettings& s = sequence.settings;
  std::printf("%s — %zu shots, %d frames, %.2f s at %g fps\n", s.name.c_str(), sequence.shots.size(),
              sequence.totalFrames(), sequence.totalFrames() / s.fps, s.fps);
  std::printf("model: %s\n", describeModel(s.model).c_str());
  std::printf("sampler: %s, %d steps, guidance %g, shift %g\n", toString(s.sampler.solver), s.sampler.steps,
              s.sampler.guidance, s.sampler.shift);
  std::printf("memory: policy %s, budget %s, allocator tuning %s\n", toString(s.policy),
              s.memoryBudgetBytes ? util::formatByteSize(*s.memoryBudgetBytes).c_str() : "none",
              s.allocatorTuning ? "on" : "off");
  std::printf("\n  #  %-12s %-6s %-7s %-9s %-20s %-15s %s\n", "id", "start", "frames", "size", "seed", "continuity",
              "prompt");
  for (std::size_t i = 0; i < sequence.shots.size(); ++i) {
    const Shot& shot = sequence.shots[i];
    const std::string size = std::to_string(shot.width) + "x" + std::to_string(shot.height);
    std::string prompt = shot.prompt.size() > 48 ? shot.prompt.substr(0, 45) + "..." : shot.prompt;
    std::printf("%3zu  %-12s %-6d %-7d %-9s %-20llu %-15s %s%s\n", i + 1, shot.id.c_str(), sequence.startFrame(i),
                shot.frames, size.c_str(), static_cast<unsigned long long>(shot.seed), toString(shot.continuity.mode),
                prompt.c_str(), shot.enabled ? "" : " (disabled)");
  }
  return 0;
}

}  // namespace shotchain::cli
