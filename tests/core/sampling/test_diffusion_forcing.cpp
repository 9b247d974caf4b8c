#include <QtTest/qtestassert.h>
#include <QTest>

#include <atomic>
#include <cstdio>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <c10/util/Exception.h>

#include "sampling/sampler.h"
#include "sampling/timestep_matrix.h"
#include "test_registry.h"

using namespace shotchain;
using namespace shotchain::sampling;

namespace {

// t [B] or [B, F] as a broadcastable [B, 1, F|1, 1, 1] float tensor.
at::Tensor framewise(const at::Tensor& t) {
  const at::Tensor f = t.to(at::kFloat);
  return f.dim() == 1 ? f.view({f.size(0), 1, 1, 1, 1}) : f.view({f.size(0), 1, f.size(1), 1, 1});
}

// A velocity field that depends on x, t and the context, element by element.
at::Tensor analyticVelocity(const at::Tensor& x, const at::Tensor& t, const at::Tensor& context) {
  const at::Tensor scale = framewise(t) / 1000.0;
  return x * (0.5 + scale) - 0.25 + context.sum({1, 2}).view({x.size(0), 1, 1, 1, 1}) * 0.01;
}

// The exact flow-matching velocity towards one target: x_σ = (1 − σ)·x0 + σ·ε ⇒ v = (x − x0)/σ.
Denoiser towards(const at::Tensor& x0) {
  return [x0](const at::Tensor& x, const at::Tensor& t, const at::Tensor&) {
    const at::Tensor sigma = at::clamp_min(framewise(t) / 1000.0, 1e-3);
    return (x - x0.unsqueeze(0)) / sigma;
  };
}

SamplerOptions options(int steps, SolverKind solver = SolverKind::UniPC) {
  SamplerOptions o;
  o.steps = steps;
  o.guidance = 4.0;
  o.seed = 5;
  o.solver = solver;
  return o;
}

}  // namespace

class TestDiffusionForcing : public QObject {
  Q_OBJECT

  const std::vector<std::int64_t> shape_{4, 6, 3, 5};
  at::Tensor cond_ = at::randn({3, 8}, at::make_generator<at::CPUGeneratorImpl>(1));
  at::Tensor uncond_ = at::randn({5, 8}, at::make_generator<at::CPUGeneratorImpl>(2));

 private Q_SLOTS:
  // One solver per frame over frames that share the schedule is the one-timestep sampler.
  void synchronousWithoutPrefixIsTheScalarSampler() {
    for (const SolverKind solver : {SolverKind::UniPC, SolverKind::Euler}) {
      const SampleResult scalar = sampleFlow(analyticVelocity, shape_, cond_, uncond_, options(7, solver));
      SamplerOptions perFrame = options(7, solver);
      perFrame.perFrame = PerFrameSampling{};
      const SampleResult frames = sampleFlow(analyticVelocity, shape_, cond_, uncond_, perFrame);
      QCOMPARE(frames.stepsDone, 7);
      const double diff = (scalar.latent - frames.latent).abs().max().item<double>();
      std::printf("  %s: max |per-frame − scalar| = %.3g\n", solverName(solver).c_str(), diff);
      QVERIFY(diff <= 1e-6);
    }
  }

  void cleanPrefixIsFedAtTimestepZeroAndNeverUpdated() {
    const at::Tensor prefix = at::randn({4, 2, 3, 5}, at::make_generator<at::CPUGeneratorImpl>(9));
    int calls = 0;
    const Denoiser recording = [&](const at::Tensor& x, const at::Tensor& t, const at::Tensor& context) {
      ++calls;
      QTEST_ASSERT(t.dim() == 2 && t.size(1) == 6);
      QTEST_ASSERT(t.select(1, 0).eq(0).all().item<bool>() && t.select(1, 1).eq(0).all().item<bool>());
      QTEST_ASSERT(t.select(1, 2).gt(0).all().item<bool>());
      QTEST_ASSERT(at::equal(x.select(0, 0).narrow(1, 0, 2), prefix));
      return analyticVelocity(x, t, context);
    };
    SamplerOptions o = options(5);
    o.perFrame = PerFrameSampling{};
    o.perFrame->prefix = prefix;
    int events = 0;
    const SampleResult r = sampleFlow(recording, shape_, cond_, uncond_, o, [&](const StepEvent& e) {
      ++events;
      QTEST_ASSERT(e.steps == 5 && e.denoised.sizes() == e.latent.sizes());
      return true;
    });
    QCOMPARE(calls, 5);
    QCOMPARE(events, 5);
    QVERIFY(at::equal(r.latent.narrow(1, 0, 2), prefix));  // bit-identical, no restore
    const at::Tensor noise = seededNoise(shape_, 5);
    QVERIFY(!at::equal(r.latent.narrow(1, 2, 4), noise.narrow(1, 2, 4)));
  }

  void conditionNoiseFeedsANoisedPrefixButKeepsItClean() {
    const at::Tensor prefix = at::randn({4, 1, 3, 5}, at::make_generator<at::CPUGeneratorImpl>(10));
    const Denoiser recording = [&](const at::Tensor& x, const at::Tensor& t, const at::Tensor& context) {
      QTEST_ASSERT(t.select(1, 0).eq(20).all().item<bool>());
      const at::Tensor seen = x.select(0, 0).narrow(1, 0, 1);
      QTEST_ASSERT(!at::equal(seen, prefix) && (seen - prefix * 0.98).abs().max().item<double>() < 0.15);
      return analyticVelocity(x, t, context);
    };
    SamplerOptions o = options(4);
    o.perFrame = PerFrameSampling{};
    o.perFrame->prefix = prefix;
    o.perFrame->conditionNoise = 20;
    const SampleResult r = sampleFlow(recording, shape_, cond_, uncond_, o);
    QVERIFY(at::equal(r.latent.narrow(1, 0, 1), prefix));
  }

  // Asynchronous diffusion forcing: frames start ar_step iterations apart, each with its own history,
  // and every generated frame still lands on the data.
  void asynchronousFramesEachReachTheData() {
    const at::Tensor x0 = at::randn({4, 6, 3, 5}, at::make_generator<at::CPUGeneratorImpl>(3)) * 0.5;
    SamplerOptions o = options(8, SolverKind::Euler);
    o.guidance = 1.0;
    o.perFrame = PerFrameSampling{};
    o.perFrame->prefix = x0.narrow(1, 0, 1).clone();
    o.perFrame->arStep = 2;
    int calls = 0;
    const Denoiser target = towards(x0);
    const Denoiser counting = [&](const at::Tensor& x, const at::Tensor& t, const at::Tensor& c) {
      ++calls;
      return target(x, t, c);
    };
    const SampleResult r = sampleFlow(counting, shape_, cond_, {}, o);
    TimestepMatrixRequest request;
    request.frames = 6;
    request.baseFrames = 6;
    request.arStep = 2;
    request.readyFrames = 1;
    QCOMPARE(static_cast<std::int64_t>(calls),
             diffusionForcingMatrix(flowMatchingSchedule(8, 5.0).timesteps, request).rows());
    QVERIFY(calls > 8);
    const double error = (r.latent - x0).abs().max().item<double>();
    std::printf("  %d iterations for 5 frames at ar_step 2; max |x − x0| = %.3g\n", calls, error);
    QVERIFY(error < 2e-2);
  }

  // A shot longer than the model's window slides through it: the model never sees more than
  // baseFrames frames at once, and every frame still reaches the data.
  void longShotSlidesThroughTheWindow() {
    // One target frame for every frame, so the field does not need to know where the window is.
    const at::Tensor frame = at::randn({4, 1, 3, 5}, at::make_generator<at::CPUGeneratorImpl>(4)) * 0.5;
    const at::Tensor x0 = frame.expand({4, 6, 3, 5});
    SamplerOptions o = options(6, SolverKind::Euler);
    o.guidance = 1.0;
    o.perFrame = PerFrameSampling{};
    o.perFrame->baseFrames = 3;
    o.perFrame->arStep = 2;
    std::int64_t widest = 0;
    const Denoiser target = towards(frame);
    const Denoiser watching = [&](const at::Tensor& x, const at::Tensor& t, const at::Tensor& c) {
      widest = std::max(widest, x.size(2));
      QTEST_ASSERT(t.size(1) == x.size(2));
      return target(x, t, c);
    };
    const SampleResult r = sampleFlow(watching, shape_, cond_, {}, o);
    QCOMPARE(widest, std::int64_t{3});
    QVERIFY((r.latent - x0).abs().max().item<double>() < 2e-2);
    o.perFrame->arStep = 1;  // 6 steps through a 3-frame window need ar_step ≥ 2
    QVERIFY_EXCEPTION_THROWN(sampleFlow(watching, shape_, cond_, {}, o), std::invalid_argument);
  }

  void cancelStopsBetweenIterations() {
    std::atomic<bool> cancel{false};
    SamplerOptions o = options(6);
    o.perFrame = PerFrameSampling{};
    o.perFrame->arStep = 1;
    int seen = 0;
    const SampleResult r = sampleFlow(
        analyticVelocity, shape_, cond_, uncond_, o,
        [&](const StepEvent&) {
          if (++seen == 3) cancel = true;
          return true;
        },
        {}, &cancel);
    QVERIFY(r.cancelled);
    QCOMPARE(r.stepsDone, 3);
  }

  // Out of memory in a batch-2 iteration: the cache is returned, that iteration is retried as two
  // batch-1 calls and the rest of the shot keeps them, with the same result as split guidance throughout.
  void outOfMemoryFallsBackToSplitGuidance() {
    int released = 0, batchTwoCalls = 0;
    const Denoiser failsOnce = [&](const at::Tensor& x, const at::Tensor& t, const at::Tensor& context) {
      if (x.size(0) == 2 && batchTwoCalls++ == 1)
        throw c10::Error(std::string("CUDA out of memory. Tried to allocate 2 GiB"));
      return analyticVelocity(x, t, context);
    };
    SamplerOptions o = options(5);
    o.perFrame = PerFrameSampling{};
    o.perFrame->prefix = at::zeros({4, 1, 3, 5});
    o.onOutOfMemory = [&] { ++released; };
    const SampleResult r = sampleFlow(failsOnce, shape_, cond_, uncond_, o);
    QCOMPARE(released, 1);
    QCOMPARE(r.guidanceSplitAtStep, 1);
    QCOMPARE(batchTwoCalls, 2);
    SamplerOptions split = o;
    split.splitGuidance = true;
    const SampleResult reference = sampleFlow(analyticVelocity, shape_, cond_, uncond_, split);
    QVERIFY((r.latent - reference.latent).abs().max().item<double>() < 1e-5);
  }

  void badRequestsNameTheProblem() {
    SamplerOptions o = options(3);
    o.perFrame = PerFrameSampling{};
    o.perFrame->prefix = at::zeros({4, 6, 3, 5});
    QVERIFY_EXCEPTION_THROWN(sampleFlow(analyticVelocity, shape_, cond_, uncond_, o), std::invalid_argument);
    o.perFrame->prefix = at::zeros({4, 1, 2, 5});
    QVERIFY_EXCEPTION_THROWN(sampleFlow(analyticVelocity, shape_, cond_, uncond_, o), std::invalid_argument);
  }
};

SHOTCHAIN_TEST(TestDiffusionForcing, Core)
#include "test_diffusion_forcing.moc"
