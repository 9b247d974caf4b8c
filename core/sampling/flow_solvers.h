#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <ATen/core/Tensor.h>

namespace shotchain::sampling {

enum class SolverKind { Euler, UniPC };

// "euler" / "unipc" (case-sensitive); throws std::invalid_argument for other names.
SolverKind solverKindFromName(std::string_view name);
std::string solverName(SolverKind kind);

// A flow-matching ODE solver over a fixed decreasing sigma sequence σ_0 … σ_N (N steps; σ_N may
// be 0). Convention (wan21.md §4.1): x_σ = (1 − σ)·x₀ + σ·ε, the model predicts v = ε − x₀.
// Call step(i, x_i, v_i) for i = 0, 1, …, N−1 in order; it returns x_{i+1}.
// Scalar coefficients are computed in float32 for float32 samples (as the reference does) and in
// float64 for float64 samples (used by the convergence tests).
class FlowSolver {
 public:
  virtual ~FlowSolver() = default;
  virtual at::Tensor step(int i, const at::Tensor& sample, const at::Tensor& velocity) = 0;
  // x₀ prediction x_i − σ_i·v_i of the last step (undefined before the first).
  const at::Tensor& denoised() const { return denoised_; }
  int steps() const { return static_cast<int>(sigmas_.size()) - 1; }
  const std::vector<double>& sigmas() const { return sigmas_; }

 protected:
  explicit FlowSolver(std::vector<double> sigmas);
  void checkStep(int i);
  std::vector<double> sigmas_;
  at::Tensor denoised_;
  int nextStep_ = 0;
};

// Euler (wan21.md §4.6): x_{i+1} = x_i + (σ_{i+1} − σ_i)·v_i.
std::unique_ptr<FlowSolver> makeEulerSolver(std::vector<double> sigmas);

// UniPC as the reference configures FlowUniPCMultistepScheduler (wan21.md §4.5): bh2, solver
// order 2, data prediction, lower-order final, corrector on every step after the first. The step
// into σ = 0 is special-cased to x₀ = the current data prediction (λ = +∞ avoided). Requires
// 0 < σ_i < 1 for i < N (λ = log(1 − σ) − log σ must be finite).
std::unique_ptr<FlowSolver> makeUniPCSolver(std::vector<double> sigmas);

std::unique_ptr<FlowSolver> makeSolver(SolverKind kind, std::vector<double> sigmas);
// Convenience: the float32 sigma table of a schedule, widened exactly to double.
std::vector<double> widenSigmas(const std::vector<float>& sigmas);

}  // namespace shotchain::sampling
