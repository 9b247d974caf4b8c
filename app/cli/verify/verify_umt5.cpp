#include <cstdio>
#include <vector>

#include "cli/verify/verify_report.h"
#include "io/safetensors_reader.h"
#include "io/weight_set.h"
#include "models/umt5/umt5.h"

namespace shotchain::cli {

bool matchesUmt5(const io::WeightSet& weights, const std::string& source) {
  if (source.find("t5.py") != std::string::npos) return true;
  const models::Umt5Detection detection = models::detectUmt5Config(weights);
  return detection.isUmt5 && detection.problems.empty();
}

// UMT5 io files: "<prefix>ids" (+ "<prefix>mask") → "<prefix>out" for each call ("" and
// "batch."), "inter.<module>" activations of the unprefixed call, the bucket table
// "rel_bucket.rel_pos" → "rel_bucket.bucket" (exact), and "seq_len" for the real-token shortcut.
void verifyUmt5(const io::WeightSet& weights, const io::SafetensorsFile& file, Report& report) {
  const models::Umt5Encoder model = models::Umt5Encoder::load(weights, models::Umt5LoadOptions{at::kFloat, at::kCPU});
  const auto& tensors = file.header().tensors;
  for (const io::TensorEntry& entry : tensors) {
    if (!endsWith(entry.name, "ids")) continue;
    const std::string prefix = entry.name.substr(0, entry.name.size() - 3);
    if (!prefix.empty() && prefix.back() != '.') continue;
    if (!file.find(prefix + "out")) continue;
    const at::Tensor mask = file.find(prefix + "mask") ? file.tensor(prefix + "mask") : at::Tensor();
    models::Umt5Trace trace;
    const at::Tensor out = model.forward(file.tensor(entry), mask, prefix.empty() ? &trace : nullptr);
    report.compare(prefix + "out", out, file.tensor(prefix + "out"));
    if (!prefix.empty()) continue;
    for (const io::TensorEntry& inter : tensors) {
      if (!inter.name.starts_with("inter.")) continue;
      const auto it = trace.find(inter.name.substr(6));
      if (it == trace.end()) {
        std::printf("%-36s (no matching activation; skipped)\n", inter.name.c_str());
        continue;
      }
      report.compare(inter.name, it->second, file.tensor(inter));
    }
    // What the pipeline uses: only the real tokens, no padding (see Umt5Encoder::encode).
    if (file.find("seq_len") && out.size(0) == 1) {
      const std::int64_t n = file.tensor("seq_len").reshape({-1})[0].item<std::int64_t>();
      const at::Tensor ids = file.tensor(entry)[0].narrow(0, 0, n).to(at::kLong).contiguous();
      const std::vector<std::int64_t> real(ids.data_ptr<std::int64_t>(), ids.data_ptr<std::int64_t>() + n);
      report.compare("out[:seq_len] (real tokens only)", model.encode(real),
                     file.tensor(prefix + "out")[0].narrow(0, 0, n));
    }
  }
  if (file.find("rel_bucket.rel_pos") && file.find("rel_bucket.bucket")) {
    const at::Tensor got = models::umt5RelativePositionBuckets(file.tensor("rel_bucket.rel_pos"),
                                                               model.config().numBuckets, model.config().maxDistance);
    const at::Tensor expected = file.tensor("rel_bucket.bucket").to(at::kLong);
    const bool exact = got.sizes() == expected.sizes() && at::equal(got, expected);
    ++report.compared;
    report.failed += exact ? 0 : 1;
    const long long wrong = got.sizes() == expected.sizes() ? got.ne(expected).sum().item<std::int64_t>() : got.numel();
    std::printf("%-36s exact: %lld of %lld differ  %s\n", "rel_bucket.bucket", wrong,
                static_cast<long long>(expected.numel()), exact ? "PASS" : "FAIL");
  }
}

}  // namespace shotchain::cli
