#include <QTest>

#include <cmath>
#include <cstdio>
#include <deque>
#include <limits>

#include <ATen/ATen.h>

#include "sampling/flow_schedule.h"
#include "sampling/flow_solvers.h"
#include "test_registry.h"
#include "test_support.h"

using namespace shotchain::sampling;
using shotchain::testing::errorOf;

namespace {

// Analytic flow of Gaussian data: x₀ ~ N(μ, s²) per element, x_σ = (1 − σ)x₀ + σε. The exact
// velocity field and the exact trajectory through ε are known in closed form:
//   S(σ)² = (1 − σ)²s² + σ²,  x(σ) = (1 − σ)μ + S(σ)·ε,
//   v(x, σ) = −μ + (σ − (1 − σ)s²)/S² · (x − (1 − σ)μ).
struct GaussianFlow {
  at::Tensor mu, s, eps;

  at::Tensor velocity(const at::Tensor& x, double sigma) const {
    const at::Tensor s2 = (1 - sigma) * (1 - sigma) * s * s + sigma * sigma;
    return -mu + (sigma - (1 - sigma) * s * s) / s2 * (x - (1 - sigma) * mu);
  }
  at::Tensor exact(double sigma) const {
    return (1 - sigma) * mu + ((1 - sigma) * (1 - sigma) * s * s + sigma * sigma).sqrt() * eps;
  }
};

GaussianFlow makeFlow(at::ScalarType dtype) {
  at::Generator g = at::make_generator<at::CPUGeneratorImpl>(11);
  const auto o = at::TensorOptions().dtype(at::kDouble);
  GaussianFlow f;
  f.mu = at::randn({4, 3, 5, 5}, g, o) * 0.8;
  f.s = at::rand({4, 3, 5, 5}, g, o) * 0.8 + 0.2;
  f.eps = at::randn({4, 3, 5, 5}, g, o);
  f.mu = f.mu.to(dtype);
  f.s = f.s.to(dtype);
  f.eps = f.eps.to(dtype);
  return f;
}

// Integrates the flow over `sigmas` with the solver; returns max |x_N − exact(σ_N)|.
double integrate(SolverKind kind, const std::vector<double>& sigmas, const GaussianFlow& flow) {
  auto solver = makeSolver(kind, sigmas);
  at::Tensor x = flow.exact(sigmas.front());
  for (int i = 0; i < solver->steps(); ++i)
    x = solver->step(i, x, flow.velocity(x, sigmas[static_cast<std::size_t>(i)]));
  return (x.to(at::kDouble) - flow.exact(sigmas.back()).to(at::kDouble)).abs().max().item<double>();
}

std::vector<double> scheduleSigmas(int steps, double shift) {
  const FlowSchedule s = flowMatchingSchedule(steps, shift);
  std::vector<double> out = s.sigmasF64;
  out.push_back(0.0);
  return out;
}

// A transliteration of FlowUniPCMultistepScheduler.step (bh2, order 2, predict_x0,
// lower_order_final) with 0-d float64 tensors and IEEE infinities at σ = 0 — no special case.
struct ReferenceUniPC {
  std::vector<double> sigmas;
  std::deque<at::Tensor> outputs{at::Tensor(), at::Tensor()};
  at::Tensor lastSample;
  int lowerOrderNums = 0, thisOrder = 0;

  at::Tensor sig(int i) const { return at::scalar_tensor(sigmas[static_cast<std::size_t>(i)], at::kDouble); }
  at::Tensor lam(int i) const { return at::log(1 - sig(i)) - at::log(sig(i)); }

  at::Tensor coeffB(const at::Tensor& hh, const at::Tensor& bh, int order) const {
    std::vector<double> b;
    at::Tensor hPhiK = at::expm1(hh) / hh - 1;
    double factorial = 1;
    for (int i = 1; i <= order; ++i) {
      b.push_back((hPhiK * factorial / bh).item<double>());
      factorial *= i + 1;
      hPhiK = hPhiK / hh - 1 / factorial;
    }
    return at::tensor(b, at::kDouble);
  }

  at::Tensor step(int i, at::Tensor x, const at::Tensor& v) {
    const at::Tensor m = x - sig(i) * v;
    if (i > 0 && lastSample.defined()) {
      const at::Tensor m0 = outputs[1];
      const at::Tensor h = lam(i) - lam(i - 1), hh = -h, phi = at::expm1(hh), bh = at::expm1(hh);
      at::Tensor rhos, corr = at::zeros_like(x);
      if (thisOrder == 1) {
        rhos = at::tensor(std::vector<double>{0.5}, at::kDouble);
      } else {
        const at::Tensor rk = (lam(i - 2) - lam(i - 1)) / h;
        const at::Tensor r =
            at::stack({at::stack({at::ones_like(rk), at::ones_like(rk)}), at::stack({rk, at::ones_like(rk)})});
        rhos = at::linalg_solve(r, coeffB(hh, bh, 2));
        corr = rhos[0] * ((outputs[0] - m0) / rk);
      }
      const at::Tensor xt = sig(i) / sig(i - 1) * lastSample - (1 - sig(i)) * phi * m0;
      x = xt - (1 - sig(i)) * bh * (corr + rhos[rhos.numel() - 1] * (m - m0));
    }
    outputs.pop_front();
    outputs.push_back(m);
    const int n = static_cast<int>(sigmas.size()) - 1;
    thisOrder = std::min(std::min(2, n - i), lowerOrderNums + 1);
    lastSample = x;
    // Predictor, with σ_{i+1} possibly 0 (λ = +∞).
    const at::Tensor h = lam(i + 1) - lam(i), hh = -h, phi = at::expm1(hh), bh = at::expm1(hh);
    at::Tensor next = sig(i + 1) / sig(i) * x - (1 - sig(i + 1)) * phi * m;
    if (thisOrder == 2) {
      const at::Tensor rk = (lam(i - 1) - lam(i)) / h;
      next = next - (1 - sig(i + 1)) * bh * (0.5 * ((outputs[0] - m) / rk));
    }
    lowerOrderNums = std::min(lowerOrderNums + 1, 2);
    return next;
  }
};

}  // namespace

class TestFlowSolvers : public QObject {
  Q_OBJECT

  // Errors at each N of `ns` on grids from makeGrid(N), and the observed orders log2(e_N / e_2N).
  template <typename Grid>
  static std::vector<double> errorsOn(SolverKind kind, const std::vector<int>& ns, Grid makeGrid, at::ScalarType dtype,
                                      const char* label) {
    const GaussianFlow flow = makeFlow(dtype);
    std::vector<double> e, p;
    for (std::size_t i = 0; i < ns.size(); ++i) {
      e.push_back(integrate(kind, makeGrid(ns[i]), flow));
      if (i > 0) p.push_back(std::log2(e[i - 1] / e[i]));
      std::printf("  %-5s %-28s N=%4d  max error %.3e", solverName(kind).c_str(), label, ns[i], e[i]);
      if (i > 0) std::printf("  order %.3f", p.back());
      std::printf("\n");
    }
    return p;
  }

  static std::vector<double> uniformGrid(int n, double from, double to) { return linspace(from, to, n + 1); }

 private Q_SLOTS:
  void convergenceOrders() {
    // Grids refined uniformly in σ over [0.9, 0.1] and [0.9, 0] (the latter through the
    // special-cased final step into σ = 0), float64 samples and coefficients.
    const std::vector<int> ns{10, 20, 40, 80, 160};
    for (const double end : {0.1, 0.0}) {
      const auto grid = [end](int n) { return uniformGrid(n, 0.9, end); };
      const QByteArray label = QString("sigma 0.9→%1 f64").arg(end).toUtf8();
      const auto euler = errorsOn(SolverKind::Euler, ns, grid, at::kDouble, label.constData());
      const auto unipc = errorsOn(SolverKind::UniPC, ns, grid, at::kDouble, label.constData());
      QVERIFY2(std::abs(euler.back() - 1.0) < 0.1, qPrintable(QString("Euler order %1").arg(euler.back())));
      QVERIFY2(unipc.back() > 1.85, qPrintable(QString("UniPC order %1").arg(unipc.back())));
    }
  }

  void referenceSchedules() {
    // The reference grids (σ₀ = shift(0.999) → 0). Their first step stays large in λ until
    // N ≫ 1000 (1 − σ₀ is fixed), so the observed order is pre-asymptotic except at shift 1;
    // UniPC is still far more accurate than Euler at every step count.
    const std::vector<int> ns{10, 20, 40, 80, 160, 320};
    for (const double shift : {1.0, 3.0, 5.0}) {
      const auto grid = [shift](int n) {
        std::vector<double> g = flowMatchingSchedule(n, shift).sigmasF64;
        g.push_back(0.0);
        return g;
      };
      const QByteArray label = QString("reference shift %1 f64").arg(shift).toUtf8();
      errorsOn(SolverKind::Euler, ns, grid, at::kDouble, label.constData());
      const auto unipc = errorsOn(SolverKind::UniPC, ns, grid, at::kDouble, label.constData());
      if (shift == 1.0) QVERIFY2(unipc.back() > 1.8, qPrintable(QString("UniPC order %1").arg(unipc.back())));
      const GaussianFlow flow = makeFlow(at::kDouble);
      for (const int n : {50, 160}) {
        QVERIFY(integrate(SolverKind::UniPC, grid(n), flow) * 3 < integrate(SolverKind::Euler, grid(n), flow));
      }
    }
  }

  void float32MatchesFloat64() {
    // The reference's float32 arithmetic against float64 on the same 50-step schedule.
    const GaussianFlow f64 = makeFlow(at::kDouble), f32 = makeFlow(at::kFloat);
    const FlowSchedule s = flowMatchingSchedule(50, 5.0);
    const std::vector<double> sigmas = widenSigmas(s.sigmas);
    for (const SolverKind kind : {SolverKind::Euler, SolverKind::UniPC}) {
      auto a = makeSolver(kind, sigmas), b = makeSolver(kind, sigmas);
      at::Tensor x = f64.exact(sigmas.front()), y = x.to(at::kFloat);
      for (int i = 0; i < 50; ++i) {
        x = a->step(i, x, f64.velocity(x, sigmas[static_cast<std::size_t>(i)]));
        y = b->step(i, y, f32.velocity(y, sigmas[static_cast<std::size_t>(i)]));
      }
      const double diff = (y.to(at::kDouble) - x).abs().max().item<double>();
      std::printf("  %-5s 50 steps shift 5: max |float32 − float64| %.3g\n", solverName(kind).c_str(), diff);
      QVERIFY(diff < 1e-4);
    }
  }

  void matchesReferenceTransliteration() {
    // Our UniPC (special-cased final step, closed-form 2×2 solve) against the literal algorithm.
    const GaussianFlow flow = makeFlow(at::kDouble);
    for (const int n : {1, 2, 3, 10, 50}) {
      const auto sigmas = scheduleSigmas(n, 5.0);
      auto solver = makeUniPCSolver(sigmas);
      ReferenceUniPC ref;
      ref.sigmas = sigmas;
      at::Tensor x = flow.exact(sigmas.front()), y = x;
      double worst = 0;
      for (int i = 0; i < n; ++i) {
        const auto k = static_cast<std::size_t>(i);
        x = solver->step(i, x, flow.velocity(x, sigmas[k]));
        y = ref.step(i, y, flow.velocity(y, sigmas[k]));
        worst = std::max(worst, (x - y).abs().max().item<double>());
      }
      std::printf("  N=%2d: max |ours − transliteration| over all steps %.3g\n", n, worst);
      QVERIFY2(worst < 1e-12, qPrintable(QString("N=%1 differs by %2").arg(n).arg(worst)));
      QVERIFY(!at::isnan(x).any().item<bool>());
    }
  }

  void finalStepIsDataPrediction() {
    // Into σ = 0 both solvers return exactly the x₀ prediction x − σ·v.
    at::Generator g = at::make_generator<at::CPUGeneratorImpl>(3);
    const at::Tensor x = at::randn({2, 3}, g), v = at::randn({2, 3}, g);
    for (const SolverKind kind : {SolverKind::Euler, SolverKind::UniPC}) {
      auto solver = makeSolver(kind, {0.5, 0.0});
      const at::Tensor out = solver->step(0, x, v);
      QVERIFY(at::equal(out, solver->denoised()));
      QVERIFY((out - (x - 0.5 * v)).abs().max().item<double>() < 1e-7);
    }
  }

  void dataPredictionFieldIsExact() {
    // For data that is one point x₀, v = (x − x₀)/σ and every data prediction equals x₀:
    // UniPC lands on x₀ whatever the step count.
    at::Generator g = at::make_generator<at::CPUGeneratorImpl>(5);
    const at::Tensor x0 = at::randn({16, 2, 4, 4}, g, at::TensorOptions().dtype(at::kDouble));
    for (const int n : {1, 4, 7}) {
      const auto sigmas = scheduleSigmas(n, 5.0);
      auto solver = makeUniPCSolver(sigmas);
      at::Tensor x = x0 * (1 - sigmas[0]) + sigmas[0] * at::randn(x0.sizes(), g, x0.options());
      for (int i = 0; i < n; ++i) x = solver->step(i, x, (x - x0) / sigmas[static_cast<std::size_t>(i)]);
      QVERIFY((x - x0).abs().max().item<double>() < 1e-12);
    }
  }

  void namesAndErrors() {
    QCOMPARE(solverKindFromName("euler"), SolverKind::Euler);
    QCOMPARE(solverKindFromName("unipc"), SolverKind::UniPC);
    QCOMPARE(solverName(SolverKind::UniPC), std::string("unipc"));
    QVERIFY(errorOf([] { solverKindFromName("ddim"); }).contains("unknown sampler"));
    QVERIFY(errorOf([] { makeEulerSolver({1.0}); }).contains("at least two"));
    QVERIFY(errorOf([] { makeEulerSolver({0.5, 0.7}); }).contains("decreasing"));
    QVERIFY(errorOf([] { makeUniPCSolver({1.0, 0.5, 0.0}); }).contains("0 < sigma < 1"));
    auto solver = makeEulerSolver({0.9, 0.5, 0.0});
    const at::Tensor x = at::zeros({2});
    QVERIFY(errorOf([&] { solver->step(1, x, x); }).contains("out of order"));
    solver->step(0, x, x);
    solver->step(1, x, x);
    QVERIFY(errorOf([&] { solver->step(2, x, x); }).contains("out of order"));
  }
};

SHOTCHAIN_TEST(TestFlowSolvers, Core)
#include "test_flow_solvers.moc"
