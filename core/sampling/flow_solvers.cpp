#include "sampling/flow_solvers.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <ATen/ATen.h>

namespace shotchain::sampling {

SolverKind solverKindFromName(std::string_view name) {
  if (name == "euler") return SolverKind::Euler;
  if (name == "unipc") return SolverKind::UniPC;
  throw std::invalid_argument("unknown sampler \"" + std::string(name) + "\" (expected \"euler\" or \"unipc\")");
}

std::string solverName(SolverKind kind) { return kind == SolverKind::Euler ? "euler" : "unipc"; }

std::vector<double> widenSigmas(const std::vector<float>& sigmas) {
  return std::vector<double>(sigmas.begin(), sigmas.end());
}

FlowSolver::FlowSolver(std::vector<double> sigmas) : sigmas_(std::move(sigmas)) {
  if (sigmas_.size() < 2) throw std::invalid_argument("a solver needs at least two sigmas (one step)");
  for (std::size_t i = 0; i + 1 < sigmas_.size(); ++i) {
    if (!(sigmas_[i] > sigmas_[i + 1]) || !std::isfinite(sigmas_[i]))
      throw std::invalid_argument("solver sigmas must be finite and strictly decreasing");
  }
  if (sigmas_.back() < 0.0) throw std::invalid_argument("solver sigmas must not be negative");
}

void FlowSolver::checkStep(int i) {
  if (i != nextStep_ || i < 0 || i >= steps())
    throw std::logic_error("solver step " + std::to_string(i) + " called out of order (expected " +
                           std::to_string(nextStep_) + " of " + std::to_string(steps()) + ")");
  ++nextStep_;
}

namespace {

bool wantsDouble(const at::Tensor& t) { return t.scalar_type() == at::kDouble; }

class EulerSolver final : public FlowSolver {
 public:
  explicit EulerSolver(std::vector<double> sigmas) : FlowSolver(std::move(sigmas)) {}

  at::Tensor step(int i, const at::Tensor& x, const at::Tensor& v) override {
    checkStep(i);
    const auto k = static_cast<std::size_t>(i);
    if (wantsDouble(x)) {
      const double s = sigmas_[k], dt = sigmas_[k + 1] - sigmas_[k];
      denoised_ = x - s * v;
      return x + dt * v;
    }
    const float s = static_cast<float>(sigmas_[k]);
    const float dt = static_cast<float>(sigmas_[k + 1]) - s;
    denoised_ = x - static_cast<double>(s) * v;
    return x + static_cast<double>(dt) * v;
  }
};

// UniPC-bh2 of FlowUniPCMultistepScheduler (predict_x0, solver_order 2, lower_order_final).
// T is the scalar type of the coefficient arithmetic (float reproduces the reference).
class UniPCSolver final : public FlowSolver {
 public:
  explicit UniPCSolver(std::vector<double> sigmas) : FlowSolver(std::move(sigmas)) {
    for (std::size_t i = 0; i + 1 < sigmas_.size(); ++i) {
      if (!(sigmas_[i] < 1.0) || !(sigmas_[i] > 0.0))
        throw std::invalid_argument("UniPC needs 0 < sigma < 1 before the last step (got " +
                                    std::to_string(sigmas_[i]) + "); use the UniPC schedule (sigma_max 0.999)");
    }
  }

  at::Tensor step(int i, const at::Tensor& x, const at::Tensor& v) override {
    checkStep(i);
    return wantsDouble(x) ? run<double>(i, x, v) : run<float>(i, x, v);
  }

 private:
  template <typename T>
  T sigma(int i) const {
    return static_cast<T>(sigmas_[static_cast<std::size_t>(i)]);
  }
  template <typename T>
  T lambda(int i) const {
    const T s = sigma<T>(i);
    const T a = T(1) - s;
    return std::log(a) - std::log(s);
  }
  static double d(float value) { return static_cast<double>(value); }
  static double d(double value) { return value; }

  template <typename T>
  at::Tensor run(int i, at::Tensor x, const at::Tensor& v) {
    // convert_model_output: x0 = sample − σ_i·v.
    const at::Tensor m = x - d(sigma<T>(i)) * v;
    if (i > 0 && lastSample_.defined()) x = corrector<T>(i, m, thisOrder_);
    // Push m into the two-entry history.
    mPrev_ = mCur_;
    mCur_ = m;
    const int orderCap = std::min(2, steps() - i);  // lower_order_final
    thisOrder_ = std::min(orderCap, lowerOrderNums_ + 1);
    lastSample_ = x;
    at::Tensor next = predictor<T>(i, x, thisOrder_);
    lowerOrderNums_ = std::min(lowerOrderNums_ + 1, 2);
    denoised_ = m;
    return next;
  }

  // multistep_uni_c_bh_update: corrects the sample at σ_i using m_i (modelT), the previous
  // predictor's start point (lastSample_ at σ_{i−1}), m_{i−1} and, for order 2, m_{i−2}.
  template <typename T>
  at::Tensor corrector(int i, const at::Tensor& modelT, int order) const {
    const T sigmaT = sigma<T>(i), sigmaS0 = sigma<T>(i - 1);
    const T alphaT = T(1) - sigmaT;
    const T h = lambda<T>(i) - lambda<T>(i - 1);
    const T hh = -h;
    const T hPhi1 = std::expm1(hh);
    const T bH = std::expm1(hh);   // bh2
    const at::Tensor& m0 = mCur_;  // m_{i−1}

    at::Tensor corrRes;
    T rhoLast = T(0.5);
    if (order == 2) {
      const T rk = (lambda<T>(i - 2) - lambda<T>(i - 1)) / h;
      const at::Tensor d1 = (mPrev_ - m0) / d(rk);
      T hPhiK = hPhi1 / hh - T(1);
      const T b1 = hPhiK * T(1) / bH;
      hPhiK = hPhiK / hh - T(1) / T(2);
      const T b2 = hPhiK * T(2) / bH;
      // [[1, 1], [rk, 1]]·ρ = [b1, b2]
      const T rho0 = (b1 - b2) / (T(1) - rk);
      rhoLast = b1 - rho0;
      corrRes = d(rho0) * d1;
    }
    const at::Tensor xT = d(sigmaT / sigmaS0) * lastSample_ - d(alphaT * hPhi1) * m0;
    const at::Tensor d1T = modelT - m0;
    at::Tensor res = d(rhoLast) * d1T;
    if (corrRes.defined()) res = corrRes + res;
    return xT - d(alphaT * bH) * res;
  }

  // multistep_uni_p_bh_update from σ_i (m_i = mCur_) to σ_{i+1}.
  template <typename T>
  at::Tensor predictor(int i, const at::Tensor& x, int order) const {
    if (sigmas_[static_cast<std::size_t>(i) + 1] == 0.0) {
      // λ_{i+1} = +∞: h_φ = expm1(−∞) = −1 and σ_{i+1}/σ_i = 0, so x_{i+1} = m_i exactly.
      return mCur_;
    }
    const T sigmaT = sigma<T>(i + 1), sigmaS0 = sigma<T>(i);
    const T alphaT = T(1) - sigmaT;
    const T h = lambda<T>(i + 1) - lambda<T>(i);
    const T hh = -h;
    const T hPhi1 = std::expm1(hh);
    const T bH = std::expm1(hh);
    at::Tensor xT = d(sigmaT / sigmaS0) * x - d(alphaT * hPhi1) * mCur_;
    if (order == 2) {
      const T rk = (lambda<T>(i - 1) - lambda<T>(i)) / h;
      const at::Tensor d1 = (mPrev_ - mCur_) / d(rk);
      xT = xT - d(alphaT * bH) * (0.5 * d1);
    }
    return xT;
  }

  at::Tensor mCur_, mPrev_, lastSample_;
  int lowerOrderNums_ = 0;
  int thisOrder_ = 1;
};

}  // namespace

std::unique_ptr<FlowSolver> makeEulerSolver(std::vector<double> sigmas) {
  return std::make_unique<EulerSolver>(std::move(sigmas));
}

std::unique_ptr<FlowSolver> makeUniPCSolver(std::vector<double> sigmas) {
  return std::make_unique<UniPCSolver>(std::move(sigmas));
}

std::unique_ptr<FlowSolver> makeSolver(SolverKind kind, std::vector<double> sigmas) {
  return kind == SolverKind::Euler ? makeEulerSolver(std::move(sigmas)) : makeUniPCSolver(std::move(sigmas));
}

}  // namespace shotchain::sampling
