#include <cstdio>
#include <optional>
#include <string>

#include "cli/command_specs.h"
#include "cli/verbs.h"
#include "cli/verify/verify_report.h"
#include "io/safetensors_reader.h"
#include "io/weight_set.h"

namespace shotchain::cli {
namespace {

const VerifiableComponent kComponents[] = {
    {"Wan 2.2 TI2V image-to-video loop", &matchesTi2vLoop, &verifyTi2vLoop, {5e-4, 5e-5}},
    {"Wan 2.2 A14B two-expert loop", &matchesExpertLoop, &verifyExpertLoop, {5e-4, 5e-5}},
    {"Wan 2.1 I2V / FLF2V DiT", &matchesWan21I2v, &verifyWan21I2v},
    {"Wan DiT", &matchesWanDit, &verifyWanDit},
    {"CLIP vision encoder", &matchesClipVision, &verifyClipVision, {2e-5, 1e-5}},
    {"Wan VAE", &matchesWanVae, &verifyWanVae, {1e-4, 2e-5}},
    {"UMT5 text encoder", &matchesUmt5, &verifyUmt5, {2e-5, 1e-5}},
};

int finish(const Report& report, const std::string& label) {
  if (report.compared == 0) {
    std::printf("nothing to compare in %s\n", label.c_str());
    return 1;
  }
  std::printf("%d compared, %d failed: %s\n", report.compared, report.failed, report.failed == 0 ? "PASS" : "FAIL");
  return report.failed == 0 ? 0 : 1;
}

// Reference data computed without a model (the diffusion-forcing timestep matrices): exact.
int verifyWithoutWeights(const std::string& path, std::optional<double> maxAbs, std::optional<double> relL2) {
  const auto file = io::SafetensorsFile::open(path);
  if (!matchesTimestepMatrix(*file)) {
    std::fprintf(stderr, "shotchain verify: %s: this IO file needs its weights (shotchain verify WEIGHTS IO)\n",
                 file->label().c_str());
    return 1;
  }
  Report report;
  report.tolerance = {maxAbs.value_or(0.0), relL2.value_or(0.0)};
  std::printf("component: diffusion-forcing timestep matrix\ntolerance: exact (max-abs %.1e, rel-L2 %.1e)\n",
              report.tolerance.maxAbs, report.tolerance.relL2);
  verifyTimestepMatrix(*file, report);
  return finish(report, file->label());
}

}  // namespace

int runVerify(const Args& args) {
  const ParsedOptions parsed = kVerifyCommand.parse(args);
  const std::vector<std::string>& paths = parsed.operands();
  const std::optional<double> maxAbs = parsed.number("--max-abs"), relL2 = parsed.number("--rel-l2");
  if (paths.size() == 1) return verifyWithoutWeights(paths[0], maxAbs, relL2);
  Report report;
  if (const auto vae = parsed.text("--vae")) report.vae = *vae;
  if (const auto high = parsed.text("--high-noise")) report.highNoise = *high;
  const io::WeightSet weights = io::WeightSet::open(paths[0]);
  const auto file = io::SafetensorsFile::open(paths[1]);
  const auto& meta = file->header().metadata;
  const std::string source = meta.contains("source") ? meta.at("source") : std::string();
  const VerifiableComponent* component = nullptr;
  for (const VerifiableComponent& candidate : kComponents)
    if (!component && candidate.matches(weights, source)) component = &candidate;
  if (!component) {
    std::fprintf(stderr, "shotchain verify: %s: component \"%s\" is not supported yet\n", file->label().c_str(),
                 source.c_str());
    return 1;
  }
  report.tolerance = component->tolerance;
  if (maxAbs) report.tolerance.maxAbs = *maxAbs;
  if (relL2) report.tolerance.relL2 = *relL2;
  std::printf("component: %s (%s)\ntolerance: max-abs %.1e, rel-L2 %.1e\n", component->name, source.c_str(),
              report.tolerance.maxAbs, report.tolerance.relL2);
  component->verify(weights, *file, report);
  return finish(report, file->label());
}

}  // namespace shotchain::cli
