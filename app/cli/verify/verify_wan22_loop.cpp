#include <cstdint>
#include <cstdio>
#include <optional>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "cli/verify/verify_report.h"
#include "io/safetensors_reader.h"
#include "io/weight_set.h"
#include "models/wan/wan_model.h"
#include "models/wan/wan_vae.h"
#include "sampling/sampler.h"

namespace shotchain::cli {

namespace {

// The run a loop file was made with, from its metadata "config" (sampling_steps, shift, guide_scale, seed): every
// value the loop needs is read from the file, none assumed, so that a file of another run is checked as it was made.
struct LoopRun {
  int steps = 0;
  double shift = 0, guidance = 0;
  std::uint64_t seed = 0;
};

LoopRun loopRun(const io::SafetensorsFile& file) {
  const auto& meta = file.header().metadata;
  const auto found = meta.find("config");
  if (found == meta.end()) throw std::runtime_error("the loop file's metadata has no \"config\" (its run)");
  const nlohmann::json config = nlohmann::json::parse(found->second);
  const auto need = [&](const char* key) -> const nlohmann::json& {
    if (!config.contains(key) || !config.at(key).is_number())
      throw std::runtime_error(std::string("the loop file's metadata \"config\" has no number \"") + key + "\"");
    return config.at(key);
  };
  return {need("sampling_steps").get<int>(), need("shift").get<double>(), need("guide_scale").get<double>(),
          need("seed").get<std::uint64_t>()};
}

}  // namespace

bool matchesTi2vLoop(const io::WeightSet&, const std::string& source) {
  return source.find("WanTI2V.generate") != std::string::npos;  // the loop file's source names the driver
}

// The TI2V image-to-video loop file (golden README §9.3): the official i2v() run through sampleFlow with
// the image latent as a clean prefix. Without --vae the stored `z` starts it and `video` is not checked.
void verifyTi2vLoop(const io::WeightSet& weights, const io::SafetensorsFile& file, Report& report) {
  const models::WanModel model = models::WanModel::load(weights, models::WanLoadOptions{at::kFloat});
  std::optional<models::WanVae> vae;
  if (!report.vae.empty()) vae.emplace(models::WanVae::load(io::WeightSet::open(report.vae)));
  at::Tensor z = file.tensor("z");
  if (vae) {
    report.compare("z", vae->encode(file.tensor("image")), z);
  } else {
    std::printf("(no --vae: the loop starts from the stored z; z and video are not checked)\n");
  }
  const at::Tensor noise = file.tensor("noise");
  const LoopRun run = loopRun(file);
  std::printf("run: %d steps, shift %g, guidance %g, seed %llu (the file's)\n", run.steps, run.shift, run.guidance,
              static_cast<unsigned long long>(run.seed));
  report.compare("noise", sampling::seededNoise(noise.sizes().vec(), run.seed), noise);
  sampling::SamplerOptions options;
  options.steps = run.steps;
  options.shift = run.shift;
  options.guidance = run.guidance;
  options.seed = run.seed;
  options.cleanPrefix = z;
  std::vector<at::Tensor> ts, velocities, latents;
  const sampling::Denoiser denoiser = [&](const at::Tensor& x, const at::Tensor& t, const at::Tensor& context) {
    ts.push_back(t[0].clone());
    velocities.push_back(model.forwardBatch(x, t, context));
    return velocities.back();
  };
  const sampling::SampleResult result =
      sampling::sampleFlow(denoiser, noise.sizes().vec(), file.tensor("context"), file.tensor("context_null"), options,
                           [&](const sampling::StepEvent& event) {
                             latents.push_back(event.latent.clone());
                             return true;
                           });
  const std::int64_t tokensPerFrame = noise.size(2) * noise.size(3) / 4;
  for (std::size_t k = 0; k < latents.size(); ++k) {
    const std::string step = "step" + std::to_string(k);
    const at::Tensor t = ts[k].to(at::kFloat).repeat_interleave(tokensPerFrame).unsqueeze(0);
    report.compare(step + ".t", t, file.tensor(step + ".t"));
    report.compare(step + ".noise_pred_cond", velocities[k][0], file.tensor(step + ".noise_pred_cond"));
    report.compare(step + ".noise_pred_uncond", velocities[k][1], file.tensor(step + ".noise_pred_uncond"));
    report.compare(step + ".latent", latents[k], file.tensor(step + ".latent"));
  }
  report.compare("x0", result.latent, file.tensor("x0"));
  if (vae) report.compare("video", vae->decode(result.latent), file.tensor("video"));
}

}  // namespace shotchain::cli
