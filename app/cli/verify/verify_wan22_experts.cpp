// The Wan 2.2 A14B two-expert loop files (golden README §9.4, §9.5): WanT2V / WanI2V.generate run through
// sampleFlow with an ExpertSwitch; WEIGHTS is the low-noise expert, --high-noise the other.
#include <cstdio>
#include <optional>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "cli/verify/verify_report.h"
#include "continuity/image_condition.h"
#include "io/safetensors_reader.h"
#include "io/weight_set.h"
#include "models/wan/wan_model.h"
#include "models/wan/wan_vae.h"
#include "sampling/sampler.h"

namespace shotchain::cli {
namespace {

struct ExpertCalls {
  std::vector<at::Tensor> t, velocity;
};

}  // namespace

bool matchesExpertLoop(const io::WeightSet&, const std::string& source) {
  return source.find("WanT2V.generate") != std::string::npos || source.find("WanI2V.generate") != std::string::npos;
}

void verifyExpertLoop(const io::WeightSet& weights, const io::SafetensorsFile& file, Report& report) {
  if (report.highNoise.empty())
    throw std::runtime_error(file.label() + ": a two-expert loop needs its high-noise expert: --high-noise FILE");
  const auto& meta = file.header().metadata;
  const nlohmann::json config = nlohmann::json::parse(meta.at("config"));
  const bool imageToVideo = meta.at("source").find("WanI2V") != std::string::npos;
  const models::WanModel low = models::WanModel::load(weights, models::WanLoadOptions{at::kFloat});
  const models::WanModel high =
      models::WanModel::load(io::WeightSet::open(report.highNoise), models::WanLoadOptions{at::kFloat});
  at::Tensor y;
  if (imageToVideo) {
    const at::Tensor mask = file.tensor("msk");
    const std::int64_t frames = (mask.size(1) - 1) * 4 + 1;
    report.compare("msk", continuity::imageToVideoMask(frames, mask.size(2), mask.size(3)), mask);
    y = file.tensor("y");
    if (!report.vae.empty()) {
      const models::WanVae vae = models::WanVae::load(io::WeightSet::open(report.vae));
      report.compare("y", continuity::imageToVideoCondition(vae, file.tensor("image").squeeze(1), {}, frames), y);
    } else {
      std::printf("(no --vae: the loop runs on the stored y; y is not checked)\n");
    }
  }
  const at::Tensor noise = file.tensor("noise");
  const at::Tensor timesteps = file.tensor("timesteps");
  sampling::SamplerOptions options;
  options.steps = static_cast<int>(timesteps.numel());
  options.shift = imageToVideo ? 5.0 : 12.0;
  options.seed = imageToVideo ? 2701 : 2601;
  const at::Tensor scales = file.tensor("guide_scale"), expert = file.tensor("expert");
  options.guidance = scales[scales.numel() - 1].item<double>();
  sampling::ExpertSwitch experts;
  experts.boundary = config.at("boundary").get<double>() * 1000.0;
  experts.highGuidance = scales[0].item<double>();
  ExpertCalls highCalls, lowCalls;
  const auto recording = [&y](const models::WanModel& model, ExpertCalls& calls) -> sampling::Denoiser {
    return [&model, &calls, &y](const at::Tensor& x, const at::Tensor& t, const at::Tensor& context) {
      calls.t.push_back(t[0].clone());
      const at::Tensor input = y.defined() ? at::cat({x, y.unsqueeze(0).expand({x.size(0), -1, -1, -1, -1})}, 1) : x;
      calls.velocity.push_back(model.forwardBatch(input, t, context));
      return calls.velocity.back();
    };
  };
  experts.highNoise = recording(high, highCalls);
  options.experts = experts;
  std::vector<at::Tensor> latents;
  const sampling::SampleResult result =
      sampling::sampleFlow(recording(low, lowCalls), noise.sizes().vec(), file.tensor("context"),
                           file.tensor("context_null"), options, [&](const sampling::StepEvent& event) {
                             latents.push_back(event.latent.clone());
                             return true;
                           });
  report.compare("noise (seeded)", sampling::seededNoise(noise.sizes().vec(), options.seed), noise);
  report.compare("timesteps", at::tensor(result.schedule.timesteps, at::kLong).to(at::kDouble),
                 timesteps.to(at::kDouble));
  report.compare(
      "expert",
      at::tensor(std::vector<std::int64_t>(result.experts.begin(), result.experts.end()), at::kLong).to(at::kDouble),
      expert.to(at::kDouble));
  report.compare("guide_scale", at::tensor(result.guidances, at::kDouble), scales);
  std::size_t h = 0, l = 0;
  for (std::size_t k = 0; k < latents.size(); ++k) {
    const std::string step = "step" + std::to_string(k);
    const bool isHigh = k < result.experts.size() && result.experts[k] == 1;
    ExpertCalls& calls = isHigh ? highCalls : lowCalls;
    const std::size_t n = isHigh ? h++ : l++;
    report.compare(step + ".t", calls.t[n].reshape({1}).to(at::kDouble), file.tensor(step + ".t").to(at::kDouble));
    report.compare(step + ".noise_pred_cond", calls.velocity[n][0], file.tensor(step + ".noise_pred_cond"));
    report.compare(step + ".noise_pred_uncond", calls.velocity[n][1], file.tensor(step + ".noise_pred_uncond"));
    report.compare(step + ".latent", latents[k], file.tensor(step + ".latent"));
  }
  report.compare("x0", result.latent, file.tensor("x0"));
}

}  // namespace shotchain::cli
