#pragma once

#include <memory>
#include <vector>

#include <ATen/core/Tensor.h>

namespace shotchain::training {

// AdamW (torch::optim) over leaf tensors that require grad, with the learning rate set per step
// and global gradient-norm clipping. Keeps the torch/optim headers out of callers.
class AdamWOptimizer {
 public:
  AdamWOptimizer(std::vector<at::Tensor> parameters, double learningRate, double weightDecay, double beta1 = 0.9,
                 double beta2 = 0.99);
  void zeroGrad();
  // Scales the gradients so their global L2 norm is at most maxNorm; returns the norm before.
  double clipGradNorm(double maxNorm);
  void step(double learningRate);

  ~AdamWOptimizer();
  AdamWOptimizer(AdamWOptimizer&&) noexcept;
  AdamWOptimizer& operator=(AdamWOptimizer&&) noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Learning rate with linear warm-up then cosine decay to `floor`·peak at `total` steps.
double warmupCosine(long step, long warmup, long total, double peak, double floor = 0.05);

}  // namespace shotchain::training
