#include "training/demo_vae_training.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <deque>
#include <numeric>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include "demo/procedural_clip.h"
#include "models/wan/wan_vae.h"
#include "training/adamw_optimizer.h"
#include "training/step_plan.h"

namespace shotchain::training {
namespace {

std::int64_t randomInt(at::Generator& g, std::int64_t bound) {
  return bound <= 1 ? 0 : at::randint(bound, {1}, g, at::TensorOptions().dtype(at::kLong)).item<std::int64_t>();
}

struct CropBatch {
  at::Tensor video;   // [B, 3, cropFrames, cropSize, cropSize]
  at::Tensor object;  // [B, 1, cropFrames, cropSize, cropSize], 1 where the pixel differs from the background
};

// Random crops of training clips.
CropBatch clipCropBatch(const VaeTrainingOptions& o, at::Generator& g) {
  std::vector<at::Tensor> crops, objects;
  for (int b = 0; b < o.batch; ++b) {
    const auto seed = static_cast<std::uint64_t>(randomInt(g, static_cast<std::int64_t>(demo::kHeldOutSeedStart)));
    const demo::ClipParams params = demo::randomClipParams(seed);
    const at::Tensor clip = demo::renderClip(params);
    const std::int64_t t0 = randomInt(g, clip.size(1) - o.cropFrames + 1);
    const std::int64_t slotsY = (clip.size(2) - o.cropSize) / 8 + 1, slotsX = (clip.size(3) - o.cropSize) / 8 + 1;
    std::int64_t y0 = randomInt(g, slotsY) * 8;
    std::int64_t x0 = randomInt(g, slotsX) * 8;
    if (at::rand({1}, g, at::TensorOptions().dtype(at::kDouble)).item<double>() < o.objectCrops) {
      // The crop on the 8-pixel grid nearest to centring the object at the chunk's middle frame.
      const std::array<float, 2> centre = demo::clipCentre(params, static_cast<int>(t0 + o.cropFrames / 2));
      auto slot = [&](float c, std::int64_t slots) {
        return std::clamp(static_cast<std::int64_t>(std::lround((c - static_cast<float>(o.cropSize) / 2) / 8)),
                          std::int64_t{0}, slots - 1) *
               8;
      };
      x0 = slot(centre[0], slotsX);
      y0 = slot(centre[1], slotsY);
    }
    crops.push_back(clip.narrow(1, t0, o.cropFrames).narrow(2, y0, o.cropSize).narrow(3, x0, o.cropSize));
    objects.push_back(demo::objectMask(crops.back(), params));
  }
  return {at::stack(crops), at::stack(objects)};
}

}  // namespace

VaeTrainingResult trainDemoVae(models::WanVae& vae, const VaeTrainingOptions& o) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  at::Generator g = at::detail::createCPUGenerator(o.seed);
  vae.setTrainable(true);
  std::vector<at::Tensor> parameters;
  for (auto& [name, tensor] : vae.namedParameters()) parameters.push_back(tensor);
  AdamWOptimizer optimizer(parameters, o.learningRate, 0.0);
  std::deque<double> recentLoss, recentMse, recentHandoff;
  VaeTrainingResult result;
  StepPlan plan(o.steps, o.maxSeconds, 10, 200, 20);
  const std::int64_t temporal = vae.config().temporalFactor();
  for (long step = 0; step < plan.total(); ++step) {
    const bool replanned = plan.update(step, elapsed());
    const long total = plan.total();
    if (replanned && o.log)
      o.log("vae: planning " + std::to_string(total) + " of " + std::to_string(o.steps) + " steps in the time cap");
    if (o.maxSeconds > 0 && elapsed() > o.maxSeconds) {
      if (o.log) o.log("vae: time cap reached at step " + std::to_string(step));
      break;
    }
    const CropBatch crops = clipCropBatch(o, g);
    const at::Tensor& video = crops.video;
    optimizer.zeroGrad();
    const models::WanVaeMoments moments = vae.encodeMoments(video);
    const at::Tensor logVar = moments.logVar.clamp(-30.0, 20.0);
    const at::Tensor eps = at::randn(moments.mu.sizes(), g, moments.mu.options());
    const at::Tensor z = moments.mu + at::exp(0.5 * logVar) * eps;
    const at::Tensor recon = vae.decodeRaw(z);
    const at::Tensor diff = recon - video;
    const at::Tensor mse = diff.pow(2).mean();
    const at::Tensor kl = 0.5 * (moments.mu.pow(2) + logVar.exp() - 1 - logVar).mean();
    const at::Tensor weight = crops.object * o.objectWeight + 1;
    const at::Tensor weighted = (diff.pow(2) + o.l1Weight * diff.abs()).mul(weight).mean() / weight.mean();
    // The handoff path: one chunk's latent decoded alone as a first frame must give that chunk's last frame.
    at::Tensor handoff = at::zeros({}, diff.options());
    if (o.handoffWeight > 0 && z.size(2) > 1) {
      const std::int64_t k = 1 + randomInt(g, z.size(2) - 1);
      const std::int64_t frame = std::min(k * temporal, video.size(2) - 1);
      const at::Tensor first = vae.decodeRaw(z.narrow(2, k, 1).contiguous());
      const at::Tensor d = first - video.narrow(2, frame, 1);
      const at::Tensor w = crops.object.narrow(2, frame, 1) * o.objectWeight + 1;
      handoff = (d.pow(2) + o.l1Weight * d.abs()).mul(w).mean() / w.mean();
    }
    const at::Tensor loss = weighted + o.handoffWeight * handoff + o.klWeight * kl;
    loss.backward();
    optimizer.clipGradNorm(1.0);
    optimizer.step(warmupCosine(step, 50, total, o.learningRate));
    recentLoss.push_back(loss.item<double>());
    recentMse.push_back(mse.item<double>());
    recentHandoff.push_back(handoff.item<double>());
    if (recentLoss.size() > 50) {
      recentLoss.pop_front();
      recentMse.pop_front();
      recentHandoff.pop_front();
    }
    result.steps = step + 1;
    if (o.log && (step % 25 == 0 || step + 1 == total)) {
      char line[200];
      const double m = std::accumulate(recentMse.begin(), recentMse.end(), 0.0) / static_cast<double>(recentMse.size());
      const double h =
          std::accumulate(recentHandoff.begin(), recentHandoff.end(), 0.0) / static_cast<double>(recentHandoff.size());
      std::snprintf(line, sizeof line,
                    "vae step %ld/%ld  loss %.5f  mse %.5f (psnr~%.1f dB)  handoff %.5f  kl %.3f  %.0f s", step + 1,
                    total, loss.item<double>(), m, 10 * std::log10(4.0 / std::max(m, 1e-12)), h, kl.item<double>(),
                    elapsed());
      o.log(line);
    }
    if (o.checkpoint && o.checkpointEvery > 0 && (step + 1) % o.checkpointEvery == 0) {
      const at::NoGradGuard noGrad;
      o.checkpoint(step + 1);
    }
  }
  vae.setTrainable(false);
  result.finalLoss = recentLoss.empty() ? 0
                                        : std::accumulate(recentLoss.begin(), recentLoss.end(), 0.0) /
                                              static_cast<double>(recentLoss.size());
  result.finalMse = recentMse.empty() ? 0
                                      : std::accumulate(recentMse.begin(), recentMse.end(), 0.0) /
                                            static_cast<double>(recentMse.size());
  result.finalHandoff = recentHandoff.empty() ? 0
                                              : std::accumulate(recentHandoff.begin(), recentHandoff.end(), 0.0) /
                                                    static_cast<double>(recentHandoff.size());
  result.seconds = elapsed();
  return result;
}

}  // namespace shotchain::training
