#include "training/demo_dit_training.h"

#include <chrono>
#include <cstdio>
#include <deque>
#include <numeric>
#include <stdexcept>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include "models/wan/wan_model.h"
#include "training/adamw_optimizer.h"
#include "training/flow_matching.h"
#include "training/step_plan.h"

namespace shotchain::training {

at::Tensor objectLossWeights(const at::Tensor& x0, double weight, double saturation) {
  const at::NoGradGuard noGrad;
  const at::Tensor flat = x0.flatten(3);                                 // [B, C, F, H·W]
  const at::Tensor background = std::get<0>(flat.median(3, true));       // [B, C, F, 1]
  const at::Tensor deviation = (flat - background).abs().amax(1, true);  // [B, 1, F, H·W]
  return ((deviation / saturation).clamp_max(1.0) * weight + 1)
      .view({x0.size(0), 1, x0.size(2), x0.size(3), x0.size(4)});
}

at::Tensor shapeLossWeights(const at::Tensor& shapeCells, double weight) {
  const at::NoGradGuard noGrad;
  return (shapeCells / 0.25).clamp_max(1.0) * weight;
}

DitTrainingResult trainDemoDit(models::WanModel& model, const DitTrainingData& data, const DitTrainingOptions& o) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  if (o.diffusionForcing && o.shapeWeight > 0)
    throw std::invalid_argument("trainDemoDit: shapeWeight is not available with diffusion forcing");
  if (o.diffusionForcing && data.imageConditions.defined())
    throw std::invalid_argument("trainDemoDit: image conditions are not available with diffusion forcing");
  if (o.shapeWeight > 0 && !(data.shapeCells.defined() && data.shapeCells.size(0) == data.latents.size(0)))
    throw std::invalid_argument("trainDemoDit: shapeWeight needs data.shapeCells, a row for each latent");
  at::Generator g = at::detail::createCPUGenerator(o.seed);
  model.setTrainable(true);
  const auto named = model.namedParameters();
  std::vector<at::Tensor> parameters;
  std::vector<std::pair<std::string, at::Tensor>> ema;
  for (const auto& [name, tensor] : named) {
    parameters.push_back(tensor);
    ema.emplace_back(name, tensor.detach().clone());
  }
  AdamWOptimizer optimizer(parameters, o.learningRate, o.weightDecay);
  const std::int64_t n = data.latents.size(0);
  const auto longs = at::TensorOptions().dtype(at::kLong);
  const at::Tensor prompt = at::tensor(std::vector<std::int64_t>(data.prompt.begin(), data.prompt.end()), longs);
  const at::Tensor continuation =
      data.continuationPrompt.empty()
          ? at::Tensor()
          : at::tensor(std::vector<std::int64_t>(data.continuationPrompt.begin(), data.continuationPrompt.end()),
                       longs);
  const at::Tensor unconditional =
      at::tensor(std::vector<std::int64_t>(data.unconditional.begin(), data.unconditional.end()), longs);
  std::deque<double> recent;
  DitTrainingResult result;
  auto emaUpdate = [&](long step) {
    const at::NoGradGuard noGrad;
    const double decay = std::min(o.emaDecay, (1.0 + static_cast<double>(step)) / (10.0 + static_cast<double>(step)));
    for (std::size_t i = 0; i < parameters.size(); ++i)
      ema[i].second.mul_(decay).add_(parameters[i].detach(), 1 - decay);
  };
  StepPlan plan(o.steps, o.maxSeconds, 20, 500, 50);
  for (long step = 0; step < plan.total(); ++step) {
    const bool replanned = plan.update(step, elapsed());
    const long total = plan.total();
    if (replanned && o.log)
      o.log("dit: planning " + std::to_string(total) + " of " + std::to_string(o.steps) + " steps in the time cap");
    if (o.maxSeconds > 0 && elapsed() > o.maxSeconds) {
      if (o.log) o.log("dit: time cap reached at step " + std::to_string(step));
      break;
    }
    const at::Tensor index = at::randint(n, {o.batch}, g, longs);
    at::Tensor x0, noisy, target, timestep, rows, frameMask;
    if (o.diffusionForcing) {
      DiffusionForcingBatch batch =
          makeDiffusionForcingBatch(data.latents, index, prompt, continuation, o.forcing, o.shift, g);
      x0 = batch.x0;
      noisy = batch.noisy;
      target = batch.target;
      timestep = batch.timestep;
      rows = batch.promptRow;
      frameMask = batch.lossMask;
    } else {
      x0 = data.latents.index_select(0, index);
      const FlowMatchingBatch batch = makeFlowMatchingBatch(x0, o.shift, g);
      noisy = batch.noisy;
      target = batch.target;
      timestep = batch.timestep;
      rows = prompt.index_select(0, index);
      if (data.imageConditions.defined()) noisy = at::cat({noisy, data.imageConditions.index_select(0, index)}, 1);
    }
    const at::Tensor drop = at::rand({o.batch}, g, at::TensorOptions().dtype(at::kDouble)).lt(o.dropout);
    if (unconditional.numel() > 0) {
      const at::Tensor pick = unconditional.index_select(0, at::randint(unconditional.numel(), {o.batch}, g, longs));
      rows = at::where(drop, pick, rows);
    }
    const at::Tensor context = data.contexts.index_select(0, rows);
    optimizer.zeroGrad();
    const at::Tensor velocity = model.forwardBatch(noisy, timestep, context);
    const at::Tensor error = (velocity - target).pow(2);
    at::Tensor loss = error.mean();
    const bool byShape = o.shapeWeight > 0;
    if (o.objectWeight > 0 || byShape || frameMask.defined()) {
      at::Tensor w = o.objectWeight > 0 ? objectLossWeights(x0, o.objectWeight, o.objectSaturation)
                                        : at::ones({x0.size(0), 1, x0.size(2), x0.size(3), x0.size(4)}, x0.options());
      if (byShape) w = w + shapeLossWeights(data.shapeCells.index_select(0, index), o.shapeWeight);
      if (frameMask.defined()) w = w * frameMask;
      loss = error.mul(w).mean() / w.mean();
    }
    loss.backward();
    optimizer.clipGradNorm(1.0);
    optimizer.step(warmupCosine(step, std::min(200L, total / 10), total, o.learningRate));
    emaUpdate(step);
    recent.push_back(loss.item<double>());
    if (recent.size() > 100) recent.pop_front();
    result.steps = step + 1;
    if (o.log && (step % 50 == 0 || step + 1 == total)) {
      char line[160];
      std::snprintf(line, sizeof line, "dit step %ld/%ld  loss %.4f  (mean of last %zu: %.4f)  %.0f s", step + 1, total,
                    loss.item<double>(), recent.size(),
                    std::accumulate(recent.begin(), recent.end(), 0.0) / static_cast<double>(recent.size()), elapsed());
      o.log(line);
    }
    if (o.checkpoint && o.checkpointEvery > 0 && (step + 1) % o.checkpointEvery == 0) o.checkpoint(step + 1, ema);
  }
  model.setTrainable(false);
  result.finalLoss =
      recent.empty() ? 0 : std::accumulate(recent.begin(), recent.end(), 0.0) / static_cast<double>(recent.size());
  result.seconds = elapsed();
  if (o.checkpoint) o.checkpoint(result.steps, ema);
  return result;
}

}  // namespace shotchain::training
