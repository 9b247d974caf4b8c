#include <cstdio>
#include <exception>
#include <string>

#include "cli/verbs.h"
#include "cli/verbs_demo.h"
#include "runtime/torch_runtime.h"

namespace {

struct Verb {
  const char* name;
  const char* usage;
  const char* summary;
  int (*run)(const shotchain::cli::Args&);
};

const Verb kVerbs[] = {
    {"validate", "validate FILE...", "check sequence documents; prints ok or every problem, exit 1 on any error",
     &shotchain::cli::runValidate},
    {"info", "info FILE", "summarise a sequence: settings, shots, timing, warnings", &shotchain::cli::runInfo},
    {"inspect", "inspect WEIGHTS", "describe a weights file from its header: family, variant, config, dtypes, problems",
     &shotchain::cli::runInspect},
    {"verify", "verify [WEIGHTS] IO", "run the component an IO file names and compare with its outputs; exit 0 within tolerance",
     &shotchain::cli::runVerify},
    {"render", "render SEQUENCE [--out DIR] [--policy P] [--budget SIZE] [--device D] [--resume] [--shots A-B] [--json]",
     "render every shot in order with the DiT kept loaded; frames, MP4, report and timeline in DIR (exit codes: README)",
     &shotchain::cli::runRender},
    {"bench", "bench dit|vae|residency [OPTIONS]",
     "dit: DiT forward FLOP/s vs the measured GEMM rate; vae: decode time and peak memory, full vs tiled, vs the estimate;\n"
     "                     residency: the same sequence under pinned, offload and reload side by side",
     &shotchain::cli::runBench},
    {"train-demo", "train-demo [--out DIR] [--minutes N] [--seed S]",
     "train the builtin:demo model (tokenizer, VAE, DiT) on procedural clips", &shotchain::cli::runTrainDemo},
    {"eval-demo", "eval-demo [--json] [--dir DIR]",
     "measure the builtin:demo model: prompt following, continuity, VAE PSNR, render time", &shotchain::cli::runEvalDemo},
    {"plan", "plan SEQUENCE [--budget SIZE] [--policy P] [--json]",
     "the memory plan: bytes per component, peak per policy, the chosen policy and why; exit 1 when it does not fit",
     &shotchain::cli::runPlan},
    {"version", "version", "print the version, libtorch and the compute device", &shotchain::cli::runVersion},
};

void printUsage(std::FILE* to) {
  std::fprintf(to, "usage: shotchain VERB [ARGS...]\n\nverbs:\n");
  for (const Verb& verb : kVerbs) std::fprintf(to, "  %-18s %s\n", verb.usage, verb.summary);
}

}  // namespace

int main(int argc, char** argv) {
  shotchain::relaunchWithPassiveOpenMp(argv);
  if (argc < 2) {
    printUsage(stderr);
    return 2;
  }
  const std::string name = argv[1];
  if (name == "help" || name == "--help" || name == "-h") {
    printUsage(stdout);
    return 0;
  }
  shotchain::initTorchRuntime();
  const shotchain::cli::Args args(argv + 2, argv + argc);
  for (const Verb& verb : kVerbs) {
    if (name != verb.name) continue;
    try {
      return verb.run(args);
    } catch (const std::exception& error) {
      std::fprintf(stderr, "shotchain %s: %s\n", verb.name, error.what());
      return 1;
    }
  }
  std::fprintf(stderr, "shotchain: unknown verb \"%s\"\n\n", name.c_str());
  printUsage(stderr);
  return 2;
}
