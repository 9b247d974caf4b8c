#include <algorithm>
#include <map>
#include <optional>
#include <regex>

#include "cli/verify/verify_report.h"
#include "io/safetensors_reader.h"
#include "io/weight_set.h"
#include "models/wan/wan_model.h"

namespace shotchain::cli {

bool matchesWanDit(const io::WeightSet& weights, const std::string& source) {
  return source.find("model.py") != std::string::npos || models::detectWanConfig(weights).isWanDit;
}

namespace {

std::int64_t scalarOr(const io::SafetensorsFile& file, const std::string& name, std::int64_t fallback) {
  return file.find(name) ? file.tensor(name).reshape({-1})[0].item<std::int64_t>() : fallback;
}

// Wan 2.2 records the timestep embedding per token ([seq_len, freq] sinusoid, e [1, seq_len, dim], e0
// [1, seq_len, 6, dim]); WanModel computes it once per frame (or once) when the rows repeat. The trace's rows
// spread to the case's tokens, beside the expected rows of the real tokens (padding left out).
std::optional<std::pair<at::Tensor, at::Tensor>> timestepRowsFor(const std::string& module,
                                                                 const models::WanTrace& trace,
                                                                 const at::Tensor& expected, std::int64_t tokens) {
  const std::map<std::string, std::string> names{
      {"sinusoidal_t", "sinusoidal_t"}, {"e", "time_embedding"}, {"e0", "time_projection"}};
  const auto name = names.find(module);
  if (name == names.end() || !trace.contains(name->second)) return std::nullopt;
  const bool batched = module != "sinusoidal_t";
  const std::int64_t rowDim = batched ? 1 : 0;
  if (expected.dim() <= rowDim || expected.size(rowDim) < tokens) return std::nullopt;
  std::vector<std::int64_t> rowShape = expected.sizes().vec();
  if (batched) rowShape.erase(rowShape.begin());
  rowShape[0] = -1;
  at::Tensor got = trace.at(name->second).reshape(rowShape);
  if (got.size(0) < 1 || tokens % got.size(0) != 0) return std::nullopt;
  got = got.repeat_interleave(tokens / got.size(0), 0);
  if (batched) got = got.unsqueeze(0);
  return std::make_pair(got, expected.narrow(rowDim, 0, tokens));
}

}  // namespace

// DiT io files: "<case>.x/.t/.context/.out" (t [1] or per frame [1, F]; optional "<case>.fps" index and
// "<case>.causal_block_size"), "<case>.t_<v>" → "<case>.out_<v>_t" variants of one case, batched
// "<name>.out<N>" whose inputs the `calls` metadata names (x=[caseA.x, caseB.x]), and
// "<case>.inter.<module>" intermediates.
void verifyWanDit(const io::WeightSet& weights, const io::SafetensorsFile& file, Report& report) {
  const auto& meta = file.header().metadata;
  const auto config = meta.find("config");
  models::WanModel model =
      config != meta.end() && !weights.metadata().contains("config")
          ? models::WanModel::load(weights, models::WanConfig::fromJson(config->second), {at::kFloat})
          : models::WanModel::load(weights, models::WanLoadOptions{at::kFloat});
  std::vector<std::string> cases;
  for (const io::TensorEntry& entry : file.header().tensors) {
    if (!endsWith(entry.name, ".x")) continue;
    const std::string c = entry.name.substr(0, entry.name.size() - 2);
    if (file.find(c + ".context")) cases.push_back(c);
  }
  std::sort(cases.begin(), cases.end());
  const std::int64_t configuredCausal = model.config().causalBlockSize;
  for (const std::string& c : cases) {
    const bool wantsTrace = std::any_of(file.header().tensors.begin(), file.header().tensors.end(),
                                        [&](const io::TensorEntry& e) { return e.name.starts_with(c + ".inter."); });
    const std::int64_t fps = scalarOr(file, c + ".fps", 0);
    model.setCausalBlockSize(scalarOr(file, c + ".causal_block_size", configuredCausal));
    for (const io::TensorEntry& entry : file.header().tensors) {  // "<case>.t_<variant>" → "<case>.out_<variant>_t"
      if (!entry.name.starts_with(c + ".t_")) continue;
      const std::string variant = entry.name.substr(c.size() + 3);
      const std::string expected = c + ".out_" + variant + "_t";
      if (!file.find(expected)) continue;
      const auto out =
          model.forward({file.tensor(c + ".x")}, file.tensor(entry), {file.tensor(c + ".context")}, nullptr, fps);
      report.compare(expected, out.at(0), file.tensor(expected));
    }
    if (!file.find(c + ".t")) continue;
    models::WanTrace trace;
    const auto out = model.forward({file.tensor(c + ".x")}, file.tensor(c + ".t"), {file.tensor(c + ".context")},
                                   wantsTrace ? &trace : nullptr, fps);
    model.setCausalBlockSize(configuredCausal);
    if (file.find(c + ".out")) report.compare(c + ".out", out.at(0), file.tensor(c + ".out"));
    const at::Tensor& x = file.tensor(c + ".x");
    const std::int64_t tokens = x.size(1) / model.config().patch[0] * (x.size(2) / model.config().patch[1]) *
                                (x.size(3) / model.config().patch[2]);
    for (const io::TensorEntry& entry : file.header().tensors) {
      if (!entry.name.starts_with(c + ".inter.")) continue;
      const std::string module = entry.name.substr(c.size() + 7);
      if (const auto rows = timestepRowsFor(module, trace, file.tensor(entry), tokens)) {
        report.compare(entry.name, rows->first, rows->second);
        continue;
      }
      const auto it = trace.find(module);
      if (it == trace.end()) {
        std::printf("%-36s (no matching activation; skipped)\n", entry.name.c_str());
        continue;
      }
      // Wan 2.2 records the sequence padding of its per-token timesteps (seq_len > tokens); the real tokens are compared.
      at::Tensor expected = file.tensor(entry);
      if (expected.dim() == 3 && it->second.dim() == 3 && expected.size(1) > it->second.size(1))
        expected = expected.narrow(1, 0, it->second.size(1));
      report.compare(entry.name, it->second, expected);
    }
  }
  // "<case>.t" and "<case>.out" with another case's latent and context (Wan 2.2's caseB: the calls metadata
  // says "forward(x=[caseA.x], t=caseB.t, context=[caseA.context]").
  const auto calls = meta.find("calls");
  for (const io::TensorEntry& entry : file.header().tensors) {
    if (!endsWith(entry.name, ".t") || calls == meta.end()) continue;
    const std::string c = entry.name.substr(0, entry.name.size() - 2);
    if (file.find(c + ".x") || !file.find(c + ".out")) continue;
    std::smatch match;
    const std::string& text = calls->second;
    const std::size_t at = text.find("\"" + c + ".out\"");
    const std::string tail = at == std::string::npos ? std::string() : text.substr(at);
    if (!std::regex_search(tail, match, std::regex(R"(x=\[([A-Za-z0-9_]+)\.x\])")) ||
        !file.find(std::string(match[1]) + ".x")) {
      std::printf("%-36s (cannot tell which latent produced it; skipped)\n", (c + ".out").c_str());
      continue;
    }
    const std::string source = match[1];
    const auto out =
        model.forward({file.tensor(source + ".x")}, file.tensor(entry), {file.tensor(source + ".context")});
    report.compare(c + ".out", out.at(0), file.tensor(c + ".out"));
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
    const auto callList = meta.find("calls");
    if (callList != meta.end()) {
      const std::string text = callList->second;
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

}  // namespace shotchain::cli
