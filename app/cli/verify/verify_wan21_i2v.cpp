#include <cstdio>

#include "cli/verify/verify_report.h"
#include "io/safetensors_reader.h"
#include "io/weight_set.h"
#include "models/wan/wan_model.h"

namespace shotchain::cli {

bool matchesWan21I2v(const io::WeightSet& weights, const std::string&) {
  return models::detectWanConfig(weights).imageEmbedding;
}

// Wan 2.1 I2V / FLF2V io files (golden README §11.2, §11.3): x and y concatenated on the channels, clip_fea the
// image features, "out" / "out_null" for "context" / "context_null", "inter.<module>" of the "out" call, and
// "start_only.out" for the first image's features alone.
void verifyWan21I2v(const io::WeightSet& weights, const io::SafetensorsFile& file, Report& report) {
  if (!file.find("x") || !file.find("y") || !file.find("clip_fea")) {
    std::printf("no forward case (x, y, clip_fea) in %s: the FLF2V loop file is checked by the tests alone\n",
                file.label().c_str());
    return;
  }
  const models::WanModel model = models::WanModel::load(weights, models::WanLoadOptions{at::kFloat});
  const at::Tensor x = at::cat({file.tensor("x"), file.tensor("y")}, 0), t = file.tensor("t");
  const at::Tensor features = file.tensor("clip_fea");
  model.setImageEmbedding(features);
  models::WanTrace trace;
  report.compare("out", model.forward({x}, t, {file.tensor("context")}, &trace).at(0), file.tensor("out"));
  for (const io::TensorEntry& entry : file.header().tensors) {
    if (!entry.name.starts_with("inter.")) continue;
    const auto found = trace.find(entry.name.substr(6));
    if (found == trace.end()) {
      std::printf("%-36s (no matching activation; skipped)\n", entry.name.c_str());
      continue;
    }
    report.compare(entry.name, found->second, file.tensor(entry));
  }
  if (file.find("context_null") && file.find("out_null"))
    report.compare("out_null", model.forward({x}, t, {file.tensor("context_null")}).at(0), file.tensor("out_null"));
  if (file.find("start_only.out")) {
    model.setImageEmbedding(features[0]);
    report.compare("start_only.out", model.forward({x}, t, {file.tensor("context")}).at(0),
                   file.tensor("start_only.out"));
  }
  model.setImageEmbedding(at::Tensor());
}

}  // namespace shotchain::cli
