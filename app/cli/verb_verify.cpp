#include <cstdio>
#include <optional>
#include <string>

#include "cli/option_values.h"
#include "cli/verbs.h"
#include "cli/verify_report.h"
#include "io/safetensors_reader.h"
#include "io/weight_set.h"

namespace shotchain::cli {
namespace {

const VerifiableComponent kComponents[] = {
    {"Wan DiT", &matchesWanDit, &verifyWanDit},
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
  Report report;
  std::vector<std::string> paths;
  std::optional<double> maxAbs, relL2;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--max-abs" && i + 1 < args.size()) maxAbs = doubleOption(a, args[++i]);
    else if (a == "--rel-l2" && i + 1 < args.size()) relL2 = doubleOption(a, args[++i]);
    else paths.push_back(a);
  }
  if (paths.size() == 1) return verifyWithoutWeights(paths[0], maxAbs, relL2);
  if (paths.size() != 2) {
    std::fprintf(stderr, "usage: shotchain verify WEIGHTS IO [--max-abs X] [--rel-l2 Y]\n"
                         "       shotchain verify IO            (an IO file that holds no weights)\n");
    return 2;
  }
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
