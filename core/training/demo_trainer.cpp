#include "training/demo_trainer.h"

#include <chrono>
#include <cstdio>
#include <map>
#include <optional>
#include <stdexcept>

#include <ATen/ATen.h>

#include "continuity/image_condition.h"
#include "demo/demo_configs.h"
#include "demo/demo_prompts.h"
#include "demo/demo_weights_io.h"
#include "demo/procedural_clip.h"
#include "io/weight_set.h"
#include "models/umt5/umt5.h"
#include "models/umt5/umt5_text_encoder.h"
#include "models/wan/wan_knowledge.h"
#include "models/wan/wan_model.h"
#include "models/wan/wan_vae.h"
#include "sampling/latent_preview.h"
#include "sampling/sampler.h"

namespace shotchain::training {
namespace {

std::string format(const char* pattern, double a, double b = 0, double c = 0) {
  char line[200];
  std::snprintf(line, sizeof line, pattern, a, b, c);
  return line;
}

// Before any phase runs: a DiT that cannot take this VAE's latents would only fail after the VAE's hour.
void checkSizesFit(const models::WanVaeConfig& vae, const models::WanConfig& dit) {
  auto fail = [](const std::string& what) { throw std::invalid_argument("train-demo: " + what); };
  // An image-to-video DiT takes its condition (a mask channel per pixel frame of a latent frame, and a latent) too.
  const std::int64_t condition = dit.imageConditionChannels() > 0 ? vae.temporalFactor() + vae.zDim : 0;
  if (dit.inDim != vae.zDim + condition || dit.outDim != vae.zDim)
    fail("dit in_dim/out_dim " + std::to_string(dit.inDim) + "/" + std::to_string(dit.outDim) + " must be " +
         std::to_string(vae.zDim + condition) + "/" + std::to_string(vae.zDim) + " for the VAE's z_dim " +
         std::to_string(vae.zDim));
  const demo::ClipParams clip;
  const std::int64_t grid[3] = {vae.latentFrames(clip.frames), clip.height / vae.spatialFactor(),
                                clip.width / vae.spatialFactor()};
  for (int axis = 0; axis < 3; ++axis)
    if (dit.patch[static_cast<std::size_t>(axis)] < 1 || grid[axis] % dit.patch[static_cast<std::size_t>(axis)] != 0)
      fail("dit patch_size[" + std::to_string(axis) + "] " + std::to_string(dit.patch[static_cast<std::size_t>(axis)]) +
           " does not divide the latent grid's " + std::to_string(grid[axis]));
}

}  // namespace

DemoTrainReport trainDemoModel(const DemoTrainOptions& o) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  auto log = [&](const std::string& line) {
    if (o.log) o.log(line);
  };
  const double cap = o.minutes > 0 ? o.minutes * 60 : 0;
  if (o.resumeDit && o.newDit) throw std::invalid_argument("train-demo: --resume-dit and --new-dit exclude each other");
  if (!(o.shapeWeight >= 0)) throw std::invalid_argument("train-demo: --shape-weight must be 0 or more");
  if (o.resumeDit && o.keyframes)
    throw std::invalid_argument("train-demo: --keyframes trains a new DiT; it excludes --resume-dit");
  const bool newDit = o.newDit || o.keyframes;
  const bool keepVae = o.resumeDit || newDit;
  if (!keepVae) checkSizesFit(o.vaeConfig, o.ditConfig);
  const auto vaePath = o.outDir / demo::kVaeFile;
  std::optional<models::WanVae> keptVae;
  if (keepVae) keptVae.emplace(models::WanVae::load(io::WeightSet::open(vaePath)));
  const models::WanConfig ditConfig =
      o.keyframes ? demo::keyframeDitConfig(o.ditConfig, keptVae->config()) : o.ditConfig;
  if (newDit) checkSizesFit(keptVae->config(), ditConfig);
  std::filesystem::create_directories(o.outDir);
  DemoTrainReport report;

  // 1. Tokenizer and the frozen random text encoder (written again for a new DiT: the prompt language
  // may have changed since the VAE was trained; the encoder's weights come from the seed alone).
  const auto tokenizerPath = o.outDir / demo::kTokenizerFile;
  const auto textPath = o.outDir / demo::kTextEncoderFile;
  if (!o.resumeDit) {
    demo::trainDemoTokenizer(tokenizerPath);
    demo::saveUmt5(textPath, models::Umt5Encoder::random(demo::demoUmt5Config(), o.seed + 1));
  }
  models::Umt5TextEncoderOptions textOptions;
  textOptions.tokenizer = tokenizerPath;
  textOptions.textLen = static_cast<std::size_t>(ditConfig.textLen);
  const models::Umt5TextEncoder text = models::Umt5TextEncoder::load(textPath, textOptions);
  const std::vector<std::string> prompts = demo::allDemoPrompts();
  std::map<std::string, int> promptRow;
  std::vector<at::Tensor> contexts;
  for (const std::string& prompt : prompts) {
    promptRow[prompt] = static_cast<int>(contexts.size());
    contexts.push_back(sampling::padContext(text.encode(prompt), ditConfig.textLen));
  }
  DitTrainingData data;
  for (const std::string& uncond : {std::string(), std::string(models::wanNegativePrompt())}) {
    data.unconditional.push_back(static_cast<int>(contexts.size()));
    contexts.push_back(sampling::padContext(text.encode(uncond), ditConfig.textLen));
  }
  data.contexts = at::stack(contexts);
  log(std::string(o.resumeDit ? "tokenizer and text encoder kept" : "tokenizer and text encoder written") + " (" +
      std::to_string(prompts.size()) + " prompts)");

  // 2. VAE.
  models::WanVae vae = keepVae ? std::move(*keptVae) : models::WanVae::random(o.vaeConfig, o.seed + 2);
  keptVae.reset();
  VaeTrainingOptions vo;
  vo.steps = o.vaeSteps;
  vo.cropSize = 32;  // the VAE is convolutional: 32×32 crops cost a quarter of full frames
  vo.objectWeight = 4;
  vo.handoffWeight = 0;  // 1 fixed `latent` cuts but cost 1.5 dB and broke red circles apart (resources/README.md)
  vo.seed = o.seed + 3;
  vo.maxSeconds = cap > 0 ? 0.35 * cap : 0;
  vo.log = o.log;
  vo.checkpointEvery = 200;
  vo.checkpoint = [&](long) { demo::saveVae(vaePath, vae); };
  if (!keepVae) {
    report.vae = trainDemoVae(vae, vo);
    demo::saveVae(vaePath, vae);
    log(format("vae done: %.0f steps, loss %.5f, mse %.5f", static_cast<double>(report.vae.steps), report.vae.finalLoss,
               report.vae.finalMse) +
        format(", handoff %.5f", report.vae.finalHandoff));
  } else {
    log("vae kept: " + vaePath.string());
  }

  // 3. Latents of training clips (raw μ), the family's statistics, the normalised training set.
  const auto latentStart = Clock::now();
  std::vector<at::Tensor> latents;
  std::vector<at::Tensor> pooled;  // RGB on the latent grid, for the preview factors
  std::vector<at::Tensor> shapeCells;
  std::vector<at::Tensor> conditions;
  const int temporalFactor = static_cast<int>(vae.config().temporalFactor());
  const int spatialFactor = static_cast<int>(vae.config().spatialFactor());
  // A model with per-frame timesteps learns continuation from two-clip chains (diffusion forcing).
  const bool forcing =
      o.resumeDit
          ? models::WanModel::load(io::WeightSet::open(o.outDir / demo::kDitFile)).config().takesPerFrameTimesteps()
          : ditConfig.takesPerFrameTimesteps();
  const bool chains = forcing;
  if (forcing && o.shapeWeight > 0)
    throw std::invalid_argument("train-demo: --shape-weight is not available with diffusion forcing");
  {
    const at::NoGradGuard noGrad;
    for (int i = 0; i < o.latentClips; ++i) {
      if (cap > 0 && !keepVae && i >= 150 &&
          std::chrono::duration<double>(Clock::now() - latentStart).count() > 0.1 * cap) {
        log("latents: time cap reached after " + std::to_string(i) + " clips");
        break;
      }
      const demo::ClipParams params = demo::randomClipParams(o.seed * 7919 + static_cast<std::uint64_t>(i));
      const at::Tensor clip = demo::renderClip(params);
      data.prompt.push_back(promptRow.at(demo::clipPrompt(params)));
      at::Tensor latent = vae.encode(clip, false);
      if (chains) {
        // The second clip starts on the first one's last frame and is encoded on its own: this causal
        // VAE was trained on 17-frame clips and drifts in colour past them (a red circle decodes magenta
        // from frame ~20 of one 33-frame encode), so its latents after frame 0 (1-frame latent of that
        // shared frame) are what a shot after a `latent` cut must produce and decode (after a one-frame
        // encode of the previous shot's last frame, continuity::Conditioning::decodePrefix).
        const demo::ClipParams next =
            demo::continuationClipParams(params, o.seed * 104729 + static_cast<std::uint64_t>(i));
        data.continuationPrompt.push_back(promptRow.at(demo::clipPrompt(next)));
        const at::Tensor second = vae.encode(demo::renderClip(next), false);
        latent = at::cat({latent, second.narrow(1, 1, second.size(1) - 1)}, 1);
      }
      latents.push_back(latent);
      if (o.keyframes) {
        const int kind = i % 8;
        const bool first = kind < 7, last = kind < 4 || kind == 7;
        const std::int64_t frames = clip.size(1);
        conditions.push_back(continuity::imageToVideoCondition(
            vae, first ? clip.select(1, 0) : at::Tensor(), last ? clip.select(1, frames - 1) : at::Tensor(), frames));
      }
      if (o.shapeWeight > 0)
        shapeCells.push_back(
            sampling::poolVideoToLatentGrid(demo::shapeDisagreementMask(params), temporalFactor, spatialFactor));
      if (pooled.size() < 256) pooled.push_back(sampling::poolVideoToLatentGrid(clip, temporalFactor, spatialFactor));
      if (i % 250 == 0) log(format("latents %.0f/%.0f  %.0f s", i, o.latentClips, elapsed()));
    }
  }
  at::Tensor raw = at::stack(latents);  // [N, C, F, h, w]
  if (!shapeCells.empty()) data.shapeCells = at::stack(shapeCells);
  if (!conditions.empty()) data.imageConditions = at::stack(conditions).contiguous();
  conditions.clear();
  shapeCells.clear();
  latents.clear();
  const auto f64 = at::TensorOptions().dtype(at::kDouble);
  const at::Tensor mean = keepVae ? at::tensor(vae.latentMean(), f64) : raw.mean({0, 2, 3, 4}).to(at::kDouble);
  const at::Tensor deviation =
      keepVae ? at::tensor(vae.latentStd(), f64) : raw.std({0, 2, 3, 4}).to(at::kDouble).clamp_min(1e-3);
  report.latentMean.assign(mean.data_ptr<double>(), mean.data_ptr<double>() + mean.numel());
  report.latentStd.assign(deviation.data_ptr<double>(), deviation.data_ptr<double>() + deviation.numel());
  if (!keepVae) {
    vae.setLatentStatistics(report.latentMean, report.latentStd);
    demo::saveVae(vaePath, vae);
  }
  const std::vector<std::int64_t> channelShape{1, raw.size(1), 1, 1, 1};
  data.latents =
      ((raw - mean.to(at::kFloat).view(channelShape)) / deviation.to(at::kFloat).view(channelShape)).contiguous();
  raw = at::Tensor();
  report.latentSeconds = std::chrono::duration<double>(Clock::now() - latentStart).count();
  log(format("latents done: %.0f clips in %.0f s", static_cast<double>(data.latents.size(0)), report.latentSeconds));

  // 4. Latent → RGB preview factors of this VAE.
  if (!keepVae) {
    const auto n = static_cast<std::int64_t>(pooled.size());
    const at::Tensor rgb = at::stack(pooled);  // the first clip of each chain: its latent frames come first
    sampling::LatentRgbFactors factors =
        sampling::fitLatentRgbFactors(data.latents.narrow(0, 0, n).narrow(2, 0, rgb.size(2)), rgb);
    factors.source = "fitted on the builtin:demo VAE (shotchain train-demo)";
    sampling::saveLatentRgbFactors(o.outDir / demo::kLatentRgbFile, factors);
    log("latent_rgb factors written");
  }

  // 5. DiT.
  const auto ditPath = o.outDir / demo::kDitFile;
  models::WanModel dit = o.resumeDit ? models::WanModel::load(io::WeightSet::open(ditPath))
                                     : models::WanModel::random(ditConfig, o.seed + 4);
  dit.replaceParameters([&](const std::string& name, const at::Tensor& value) {
    if (o.resumeDit) return value.clone();  // own memory (the file's tensors may be mapped views)
    if (name.starts_with("head.head.")) return at::zeros_like(value);  // start from a zero velocity
    if (name.ends_with("modulation")) return value.mul(0.1);
    return value;
  });
  DitTrainingOptions dopt;
  dopt.steps = o.ditSteps;
  dopt.learningRate = o.resumeDit ? 2.5e-4 : 1e-3;
  dopt.seed = o.seed + 5;
  dopt.shift = demo::kDemoTrainShift;
  dopt.objectWeight = 4;
  dopt.shapeWeight = o.shapeWeight;
  dopt.diffusionForcing = forcing;
  dopt.forcing.window = vae.config().latentFrames(demo::ClipParams{}.frames);
  dopt.maxSeconds = cap > 0 ? std::max(60.0, cap - elapsed() - 30) : 0;
  dopt.log = o.log;
  dopt.checkpointEvery = 250;
  dopt.checkpoint = [&](long, const std::vector<std::pair<std::string, at::Tensor>>& ema) {
    demo::saveDit(ditPath, ema, ditConfig);
  };
  report.dit = trainDemoDit(dit, data, dopt);
  report.totalSeconds = elapsed();
  log(format("dit done: %.0f steps, loss %.4f; total %.0f s", static_cast<double>(report.dit.steps),
             report.dit.finalLoss, report.totalSeconds));
  return report;
}

}  // namespace shotchain::training
