#include <cstdio>
#include <regex>
#include <set>

#include <ATen/ATen.h>
#include <algorithm>
#include <map>

#include "cli/verbs.h"
#include "io/safetensors_reader.h"
#include "io/weight_set.h"
#include "models/wan_model.h"

namespace shotchain::cli {
namespace {

struct Tolerance {
  double maxAbs = 1e-4;
  double relL2 = 1e-5;
};

struct Report {
  Tolerance tolerance;
  int compared = 0;
  int failed = 0;

  void compare(const std::string& name, const at::Tensor& got, const at::Tensor& expected) {
    ++compared;
    if (got.sizes() != expected.sizes()) {
      ++failed;
      std::printf("%-36s shape %s vs expected %s  FAIL\n", name.c_str(), c10::str(got.sizes()).c_str(),
                  c10::str(expected.sizes()).c_str());
      return;
    }
    const at::Tensor g = got.to(at::kDouble), e = expected.to(at::kDouble);
    const double maxAbs = (g - e).abs().max().item<double>();
    const double norm = e.norm().item<double>();
    const double relL2 = norm > 0 ? (g - e).norm().item<double>() / norm : (g - e).norm().item<double>();
    const bool pass = maxAbs <= tolerance.maxAbs && relL2 <= tolerance.relL2;
    failed += pass ? 0 : 1;
    std::printf("%-36s max-abs %.3e  rel-L2 %.3e  %s\n", name.c_str(), maxAbs, relL2, pass ? "PASS" : "FAIL");
  }
};

bool endsWith(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// DiT io files: "<case>.x/.t/.context/.out", batched "<name>.out<N>" whose inputs the `calls`
// metadata names (x=[caseA.x, caseB.x]), and "<case>.inter.<module>" intermediates.
void verifyDit(const io::WeightSet& weights, const io::SafetensorsFile& file, Report& report) {
  const auto& meta = file.header().metadata;
  const auto config = meta.find("config");
  const models::WanModel model =
      config != meta.end() && !weights.metadata().contains("config")
          ? models::WanModel::load(weights, models::WanConfig::fromJson(config->second), {at::kFloat})
          : models::WanModel::load(weights, models::WanLoadOptions{at::kFloat});
  std::vector<std::string> cases;
  for (const io::TensorEntry& entry : file.header().tensors) {
    if (!endsWith(entry.name, ".x")) continue;
    const std::string c = entry.name.substr(0, entry.name.size() - 2);
    if (file.find(c + ".t") && file.find(c + ".context")) cases.push_back(c);
  }
  std::sort(cases.begin(), cases.end());
  for (const std::string& c : cases) {
    const bool wantsTrace = std::any_of(file.header().tensors.begin(), file.header().tensors.end(),
                                        [&](const io::TensorEntry& e) { return e.name.starts_with(c + ".inter."); });
    models::WanTrace trace;
    const auto out = model.forward({file.tensor(c + ".x")}, file.tensor(c + ".t"), {file.tensor(c + ".context")},
                                   wantsTrace ? &trace : nullptr);
    if (file.find(c + ".out")) report.compare(c + ".out", out.at(0), file.tensor(c + ".out"));
    for (const io::TensorEntry& entry : file.header().tensors) {
      if (!entry.name.starts_with(c + ".inter.")) continue;
      const std::string module = entry.name.substr(c.size() + 7);
      const auto it = trace.find(module);
      if (it == trace.end()) {
        std::printf("%-36s (no matching activation; skipped)\n", entry.name.c_str());
        continue;
      }
      report.compare(entry.name, it->second, file.tensor(entry));
    }
  }
  // Batched calls.
  std::map<std::string, std::vector<std::string>> batches;  // prefix → output names in order
  const std::regex outN(R"((.+)\.out(\d+))");
  for (const io::TensorEntry& entry : file.header().tensors) {
    std::smatch match;
    if (std::regex_match(entry.name, match, outN)) batches[match[1]].push_back(entry.name);
  }
  for (auto& [prefix, outputs] : batches) {
    std::sort(outputs.begin(), outputs.end());
    std::vector<std::string> members;
    const auto calls = meta.find("calls");
    if (calls != meta.end()) {
      const std::string text = calls->second;
      const std::regex list(R"(x=\[([^\]]*)\])");
      const std::size_t at = text.find(prefix + ".out");
      std::smatch match;
      const std::string tail = at == std::string::npos ? text : text.substr(at);
      if (std::regex_search(tail, match, list)) {
        const std::string items = match[1];
        const std::regex name(R"(([A-Za-z0-9_]+)\.x)");
        for (auto it = std::sregex_iterator(items.begin(), items.end(), name); it != std::sregex_iterator(); ++it)
          members.push_back((*it)[1]);
      }
    }
    if (members.size() != outputs.size()) members = cases;
    if (members.size() != outputs.size()) {
      std::printf("%s.out*: cannot tell which inputs produced it; skipped\n", prefix.c_str());
      continue;
    }
    std::vector<at::Tensor> xs, ts, contexts;
    for (const std::string& m : members) {
      xs.push_back(file.tensor(m + ".x"));
      ts.push_back(file.tensor(m + ".t").reshape({-1}));
      contexts.push_back(file.tensor(m + ".context"));
    }
    const auto out = model.forward(xs, at::cat(ts), contexts);
    for (std::size_t i = 0; i < outputs.size(); ++i) report.compare(outputs[i], out[i], file.tensor(outputs[i]));
  }
}

}  // namespace

int runVerify(const Args& args) {
  Report report;
  std::vector<std::string> paths;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--max-abs" && i + 1 < args.size()) report.tolerance.maxAbs = std::stod(args[++i]);
    else if (args[i] == "--rel-l2" && i + 1 < args.size()) report.tolerance.relL2 = std::stod(args[++i]);
    else paths.push_back(args[i]);
  }
  if (paths.size() != 2) {
    std::fprintf(stderr, "usage: shotchain verify WEIGHTS IO [--max-abs X] [--rel-l2 Y]\n");
    return 2;
  }
  const io::WeightSet weights = io::WeightSet::open(paths[0]);
  const auto file = io::SafetensorsFile::open(paths[1]);
  const auto& meta = file->header().metadata;
  const std::string source = meta.contains("source") ? meta.at("source") : std::string();
  const bool dit = source.find("model.py") != std::string::npos || models::detectWanConfig(weights).isWanDit;
  if (!dit) {
    std::fprintf(stderr, "shotchain verify: %s: component \"%s\" is not supported yet (the Wan DiT is)\n",
                 file->label().c_str(), source.c_str());
    return 1;
  }
  std::printf("component: Wan DiT (%s)\ntolerance: max-abs %.1e, rel-L2 %.1e\n", source.c_str(), report.tolerance.maxAbs,
              report.tolerance.relL2);
  verifyDit(weights, *file, report);
  if (report.compared == 0) {
    std::printf("nothing to compare in %s\n", file->label().c_str());
    return 1;
  }
  std::printf("%d compared, %d failed: %s\n", report.compared, report.failed, report.failed == 0 ? "PASS" : "FAIL");
  return report.failed == 0 ? 0 : 1;
}

}  // namespace shotchain::cli
