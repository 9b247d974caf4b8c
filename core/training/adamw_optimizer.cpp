#include "training/adamw_optimizer.h"

#include <algorithm>
#include <cmath>

#include <torch/nn/utils/clip_grad.h>
#include <torch/optim/adamw.h>
#include <torch/types.h>  // clip_grad.h names torch::Tensor without including it

namespace shotchain::training {

struct AdamWOptimizer::Impl {
  std::vector<at::Tensor> parameters;
  torch::optim::AdamW optimizer;
  Impl(std::vector<at::Tensor> p, const torch::optim::AdamWOptions& options)
      : parameters(std::move(p)), optimizer(parameters, options) {}
};

AdamWOptimizer::AdamWOptimizer(std::vector<at::Tensor> parameters, double learningRate, double weightDecay,
                               double beta1, double beta2) {
  torch::optim::AdamWOptions options(learningRate);
  options.betas(std::make_tuple(beta1, beta2)).weight_decay(weightDecay);
  impl_ = std::make_unique<Impl>(std::move(parameters), options);
}

AdamWOptimizer::~AdamWOptimizer() = default;
AdamWOptimizer::AdamWOptimizer(AdamWOptimizer&&) noexcept = default;
AdamWOptimizer& AdamWOptimizer::operator=(AdamWOptimizer&&) noexcept = default;

void AdamWOptimizer::zeroGrad() { impl_->optimizer.zero_grad(); }

double AdamWOptimizer::clipGradNorm(double maxNorm) {
  return torch::nn::utils::clip_grad_norm_(impl_->parameters, maxNorm);
}

void AdamWOptimizer::step(double learningRate) {
  for (auto& group : impl_->optimizer.param_groups())
    static_cast<torch::optim::AdamWOptions&>(group.options()).lr(learningRate);
  impl_->optimizer.step();
}

double warmupCosine(long step, long warmup, long total, double peak, double floor) {
  if (step < warmup) return peak * static_cast<double>(step + 1) / static_cast<double>(warmup);
  const double progress =
      std::clamp(static_cast<double>(step - warmup) / static_cast<double>(std::max(1L, total - warmup)), 0.0, 1.0);
  return peak * (floor + (1 - floor) * 0.5 * (1 + std::cos(M_PI * progress)));
}

}  // namespace shotchain::training
