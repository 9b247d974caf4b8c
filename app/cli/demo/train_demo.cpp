#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "cli/command_specs.h"
#include "cli/verbs.h"
#include "training/demo_trainer.h"

namespace shotchain::cli {

int runTrainDemo(const Args& args) {
  const ParsedOptions parsed = kTrainDemoCommand.parse(args);
  training::DemoTrainOptions options;
  options.outDir = parsed.text("--out").value();
  options.minutes = parsed.number("--minutes").value_or(options.minutes);
  if (const std::optional<std::int64_t> seed = parsed.int64("--seed")) {
    if (*seed < 0) throw kTrainDemoCommand.error("--seed: \"" + std::to_string(*seed) + "\" is negative");
    options.seed = static_cast<std::uint64_t>(*seed);
  }
  options.vaeSteps = parsed.int64("--vae-steps").value_or(options.vaeSteps);
  options.ditSteps = parsed.int64("--dit-steps").value_or(options.ditSteps);
  options.latentClips = parsed.integer("--latent-clips").value_or(options.latentClips);
  options.resumeDit = parsed.flag("--resume-dit");
  options.newDit = parsed.flag("--new-dit");
  options.keyframes = parsed.flag("--keyframes");
  options.shapeWeight = parsed.number("--shape-weight").value_or(options.shapeWeight);
  options.log = [](const std::string& line) {
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
  };
  const training::DemoTrainReport report = training::trainDemoModel(options);
  std::printf(
      "train-demo: %s written in %.0f s (vae %ld steps, final loss %.5f, mse %.5f, handoff %.5f; dit %ld steps, final "
      "loss %.4f)\n",
      options.outDir.string().c_str(), report.totalSeconds, report.vae.steps, report.vae.finalLoss, report.vae.finalMse,
      report.vae.finalHandoff, report.dit.steps, report.dit.finalLoss);
  return 0;
}

}  // namespace shotchain::cli
