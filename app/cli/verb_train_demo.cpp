#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "cli/option_values.h"
#include "cli/verbs_demo.h"
#include "training/demo_trainer.h"

namespace shotchain::cli {

int runTrainDemo(const Args& args) {
  training::DemoTrainOptions options;
  options.outDir = "resources/demo";
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&]() -> const std::string& {
      if (i + 1 >= args.size()) throw std::invalid_argument(a + " needs a value");
      return args[++i];
    };
    if (a == "--out") options.outDir = value();
    else if (a == "--minutes") options.minutes = doubleOption(a, value());
    else if (a == "--seed") {
      const std::int64_t seed = int64Option(a, value());
      if (seed < 0) throw std::invalid_argument("--seed: \"" + args[i] + "\" is negative");
      options.seed = static_cast<std::uint64_t>(seed);
    }
    else if (a == "--vae-steps") options.vaeSteps = int64Option(a, value());
    else if (a == "--dit-steps") options.ditSteps = int64Option(a, value());
    else if (a == "--latent-clips") options.latentClips = intOption(a, value());
    else if (a == "--resume-dit") options.resumeDit = true;
    else if (a == "--new-dit") options.newDit = true;
    else if (a == "--shape-weight") options.shapeWeight = doubleOption(a, value());
    else throw std::invalid_argument("unknown option \"" + a +
                                     "\" (train-demo [--out DIR] [--minutes N] [--seed S] [--vae-steps N] "
                                     "[--dit-steps N] [--latent-clips N] [--shape-weight W] [--resume-dit | --new-dit])");
  }
  options.log = [](const std::string& line) {
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
  };
  const training::DemoTrainReport report = training::trainDemoModel(options);
  std::printf("train-demo: %s written in %.0f s (vae %ld steps, final loss %.5f, mse %.5f, handoff %.5f; dit %ld steps, final loss %.4f)\n",
              options.outDir.string().c_str(), report.totalSeconds, report.vae.steps, report.vae.finalLoss,
              report.vae.finalMse, report.vae.finalHandoff, report.dit.steps, report.dit.finalLoss);
  return 0;
}

}  // namespace shotchain::cli
