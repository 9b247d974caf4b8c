#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <cstdio>
#include <optional>

#include <ATen/ATen.h>

#include "continuity/cut_measures.h"
#include "continuity/frame_measures.h"
#include "continuity/handoff.h"
#include "continuity/latent_ops.h"
#include "continuity/latent_ring_buffer.h"
#include "memory/memory_probe.h"
#include "models/wan/wan_model.h"
#include "models/wan/wan_vae.h"
#include "runtime/torch_runtime.h"
#include "sampling/sampler.h"
#include "test_registry.h"
#include "test_support.h"

using namespace shotchain;
using namespace shotchain::continuity;

Q_DECLARE_METATYPE(shotchain::ContinuityMode)

namespace {

constexpr int kFrames = 9;          // 3 latent frames
constexpr std::int64_t kSide = 16;  // pixels; 2×2 latent pixels, one token per latent frame

// One rendered shot, as the renderer produces it.
struct Rendered {
  Conditioning conditioning;
  at::Tensor latent;   // final latent (held slots restored)
  at::Tensor decoded;  // every decoded frame
  at::Tensor kept;     // decoded without the dropped frames
  ShotStats stats;
};

}  // namespace

class TestHandoffChain : public QObject {
  Q_OBJECT

  std::optional<models::WanModel> model_;
  std::optional<models::WanVae> vae_;
  sampling::Denoiser denoiser_;
  at::Tensor cond_, uncond_, image_;

  std::vector<std::int64_t> shape(std::int64_t width = kSide, std::int64_t height = kSide) const {
    return {16, (kFrames - 1) / 4 + 1, height / 8, width / 8};
  }

  sampling::SamplerOptions options(std::uint64_t seed) const {
    sampling::SamplerOptions o;
    o.steps = 2;
    o.guidance = 3.0;
    o.seed = seed;
    return o;
  }

  // prepare → sampleFlow with the hook → restore → (anchor) → store tail → decode → drop frames → stats.
  Rendered render(const std::string& id, const Continuity& settings, LatentRingBuffer& ring, std::uint64_t seed,
                  const std::vector<std::int64_t>& latentShape, const ShotStats* first = nullptr,
                  const sampling::Denoiser* denoiser = nullptr) {
    Rendered r;
    std::optional<PreviousShot> previous;
    if (usesHandoff(settings.mode))
      if (std::optional<at::Tensor> stored = ring.handoff(settings.tag)) previous = PreviousShot{*stored, lastFrame_};
    r.conditioning =
        prepareConditioning(settings, previous ? &*previous : nullptr, *vae_, image_, latentShape, seed, at::kCPU);
    sampling::SampleResult sampled =
        sampling::sampleFlow(denoiser ? *denoiser : denoiser_, r.conditioning.sampleShape, cond_, uncond_,
                             options(seed), {}, holdSlotsHook(r.conditioning));
    restoreHeldSlots(sampled.latent, r.conditioning);
    r.latent = sampled.latent;
    if (settings.anchorColour && first != nullptr)
      r.latent = anchorChannelStats(r.latent, first->latent, r.conditioning.heldFrames());
    ring.put(settings.tag, r.latent, {{"shot", id}});
    r.decoded = vae_->decode(decodeInput(r.latent, r.conditioning));
    r.kept = keptFrames(r.decoded, r.conditioning);
    r.stats = computeShotStats(id, r.latent, r.conditioning.heldFrames(), r.kept);
    lastFrame_ = r.kept.select(1, r.kept.size(1) - 1);
    return r;
  }

  at::Tensor lastFrame_;

 private Q_SLOTS:
  void initTestCase() {
    runtime::initTorchRuntime();
    const models::WanConfig config = models::WanConfig::preset("tiny");
    model_.emplace(models::WanModel::random(config, 11));
    vae_.emplace(models::WanVae::random(models::WanVaeConfig::preset("tiny"), 12));
    denoiser_ = sampling::ditDenoiser(*model_);
    at::Generator g = at::make_generator<at::CPUGeneratorImpl>(13);
    cond_ = at::randn({5, config.textDim}, g);
    uncond_ = at::randn({config.textLen, config.textDim}, g);
    image_ = at::rand({3, kSide, kSide}, g) * 2 - 1;
  }

  void init() { lastFrame_ = at::Tensor(); }

  void twoShotChain_data() {
    QTest::addColumn<ContinuityMode>("mode");
    QTest::newRow("none") << ContinuityMode::None;
    QTest::newRow("latent") << ContinuityMode::Latent;
    QTest::newRow("latent_overlap") << ContinuityMode::LatentOverlap;
    QTest::newRow("blend") << ContinuityMode::Blend;
    QTest::newRow("vae_roundtrip") << ContinuityMode::VaeRoundtrip;
  }

  void twoShotChain() {
    QFETCH(ContinuityMode, mode);
    LatentRingBuffer ring;
    const Rendered one = render("one", Continuity{}, ring, 101, shape());
    QCOMPARE(one.conditioning.source, std::string("noise"));
    QCOMPARE(one.kept.sizes(), at::IntArrayRef({3, kFrames, kSide, kSide}));
    const at::Tensor stored = *ring.handoff("main");
    const at::Tensor previousLast = lastFrame_;

    Continuity settings;
    settings.mode = mode;
    settings.overlapLatents = 2;
    settings.blendRatio = 0.25;
    const Rendered two = render("two", settings, ring, 202, shape());

    // Shapes and frame counts.
    const std::int64_t held = mode == ContinuityMode::None ? 0 : mode == ContinuityMode::LatentOverlap ? 3 : 1;
    QCOMPARE(two.conditioning.heldFrames(), held);
    const std::int64_t latentFrames = mode == ContinuityMode::LatentOverlap ? 3 + 2 : 3;
    QCOMPARE(two.latent.sizes(), at::IntArrayRef({16, latentFrames, 2, 2}));
    const std::int64_t prefix = mode == ContinuityMode::Latent ? 1 : 0;
    QCOMPARE(two.decoded.size(1), 1 + 4 * (prefix + latentFrames - 1));
    QCOMPARE(two.kept.size(1), two.conditioning.outputPixelFrames);
    if (mode == ContinuityMode::LatentOverlap) {
      // 1 + 4k repeated frames dropped: the shot adds frames − 1 new frames.
      QCOMPARE(two.conditioning.dropPixelFrames, std::int64_t{1 + 4 * 2});
      QCOMPARE(two.kept.size(1), std::int64_t{kFrames - 1});
      QVERIFY(at::equal(two.kept, two.decoded.narrow(1, 9, kFrames - 1)));
      // No kept frame repeats a dropped one or the previous shot's last frame.
      for (std::int64_t i = 0; i < two.kept.size(1); ++i) {
        QVERIFY(!at::equal(two.kept.select(1, i), previousLast));
        for (std::int64_t j = 0; j < 9; ++j) QVERIFY(!at::equal(two.kept.select(1, i), two.decoded.select(1, j)));
      }
      QCOMPARE(two.conditioning.source, std::string("last_frame_encode+handoff"));
      // Slot 0: the last frame's 1-frame encode; slots 1..k: the stored tail, bit for bit.
      QVERIFY(at::equal(two.latent.narrow(1, 0, 1), vae_->encode(previousLast.unsqueeze(1))));
      QVERIFY(at::equal(two.latent.narrow(1, 1, 2), stored.narrow(1, 1, 2)));
      QCOMPARE(*handoffMse(two.conditioning), 0.0);
    } else if (mode == ContinuityMode::Latent) {
      // The tail's predecessor primes the decoder; its frame and 3 of the held slot's 4 are dropped.
      QVERIFY(at::equal(two.conditioning.decodePrefix, stored.narrow(1, 1, 1)));
      QCOMPARE(two.conditioning.dropPixelFrames, std::int64_t{4});
      QCOMPARE(two.kept.size(1), std::int64_t{kFrames});
      QVERIFY(at::equal(two.kept, two.decoded.narrow(1, 4, kFrames)));
      // Slot 0 decoded after its predecessor is not the lone first-frame decode.
      QVERIFY(!at::allclose(two.kept.select(1, 0), vae_->decode(two.latent.narrow(1, 0, 1)).select(1, 0)));
    } else {
      QCOMPARE(two.kept.size(1), std::int64_t{kFrames});
      QCOMPARE(two.conditioning.dropPixelFrames, std::int64_t{0});
      QVERIFY(!two.conditioning.decodePrefix.defined());
    }

    // Held slots restored exactly.
    if (held > 0) QVERIFY(at::equal(two.latent.narrow(1, 0, held), two.conditioning.held));
    switch (mode) {
      case ContinuityMode::None:
        QCOMPARE(two.conditioning.source, std::string("noise"));
        QVERIFY(!handoffMse(two.conditioning));
        break;
      case ContinuityMode::Latent:
        QCOMPARE(two.conditioning.source, std::string("handoff"));
        QVERIFY(at::equal(two.latent.narrow(1, 0, 1), stored.narrow(1, 2, 1)));
        QCOMPARE(*handoffMse(two.conditioning), 0.0);
        break;
      case ContinuityMode::Blend: {
        QCOMPARE(two.conditioning.source, std::string("handoff+fallback_image"));
        const at::Tensor expected = 0.25 * stored.narrow(1, 2, 1) + 0.75 * vae_->encode(image_.unsqueeze(1));
        QVERIFY(at::allclose(two.conditioning.held, expected, 1e-6, 1e-6));
        QVERIFY(*handoffMse(two.conditioning) > 0.0);
        break;
      }
      case ContinuityMode::VaeRoundtrip:
        QCOMPARE(two.conditioning.source, std::string("last_frame_encode"));
        QVERIFY(at::equal(two.conditioning.held, vae_->encode(previousLast.unsqueeze(1))));
        QVERIFY(*handoffMse(two.conditioning) > 0.0);
        break;
      case ContinuityMode::LatentOverlap:
      case ContinuityMode::Stream:  // not among this test's rows (tests/core/render/test_stream_render)
      case ContinuityMode::Svi:     // nor this (tests/core/render/test_keyframes_render)
        break;
    }

    // Metrics present.
    CutInputs in;
    in.fromIndex = 0;
    in.toIndex = 1;
    in.fromShotId = "one";
    in.toShotId = "two";
    in.mode = mode;
    in.previous = &one.stats;
    in.next = &two.stats;
    in.first = &one.stats;
    in.previousTail = stored.narrow(1, 2, 1);
    in.previousLastFrame = previousLast;
    in.nextLatent = two.latent;
    in.nextFrames = two.kept;
    in.conditioning = &two.conditioning;
    in.vae = &*vae_;
    const CutMetrics m = measureCut(in);
    QCOMPARE(m.mode, std::string(toString(mode)));
    QCOMPARE(m.channelMeanDeltaPrev.size(), std::size_t(16));
    QCOMPARE(m.channelLogStdDeltaFirst.size(), std::size_t(16));
    QVERIFY(m.latentStepRatio && std::isfinite(*m.latentStepRatio) && *m.latentStepRatio > 0);
    QVERIFY(m.psnrCut && m.ssimCut && m.psnrWithinMedian && m.ssimWithinMedian && m.madRatio);
    QVERIFY(m.deltaEPrev && m.deltaEFirst && m.roundtripMse && *m.roundtripMse > 0);
    QCOMPARE(m.handoffMse.has_value(), mode != ContinuityMode::None);
    if (mode == ContinuityMode::Latent) QCOMPARE(*m.handoffMse, 0.0);
    std::printf(
        "  %-14s held %lld, frames %lld, copied %llu B, handoff MSE %s, step ratio %.3f, PSNR cut %.2f dB "
        "(within %.2f), SSIM cut %.3f, MAD ratio %.2f, dE prev %.2f, round-trip MSE %.4f, prepare %.2f ms\n",
        toString(mode), static_cast<long long>(held), static_cast<long long>(two.kept.size(1)),
        static_cast<unsigned long long>(m.handoffBytesCopied),
        m.handoffMse ? QByteArray::number(*m.handoffMse).constData() : "-", *m.latentStepRatio, *m.psnrCut,
        *m.psnrWithinMedian, *m.ssimCut, *m.madRatio, *m.deltaEPrev, *m.roundtripMse, m.handoffSeconds * 1e3);
  }

  void latentHandoffIsZeroCopyAndHeldThroughSampling() {
    LatentRingBuffer ring;
    render("one", Continuity{}, ring, 101, shape());
    const at::Tensor stored = *ring.handoff("main");
    Continuity settings;
    settings.mode = ContinuityMode::Latent;

    // Zero copy: the held latent is the ring entry's own storage, at its last frame.
    const std::unique_ptr<memory::MemoryProbe> probe = memory::makeCpuMemoryProbe();
    probe->markTransfers();
    const PreviousShot previous{*ring.handoff("main"), lastFrame_};
    const Conditioning c = prepareConditioning(settings, &previous, *vae_, {}, shape(), 202, at::kCPU);
    QCOMPARE(probe->sample().transferredBytes, std::uint64_t{0});
    QCOMPARE(ring.stats().handoffBytesCopied, std::uint64_t{0});
    QCOMPARE(c.bytesCopied, std::uint64_t{0});
    QVERIFY(!c.resampled);
    QVERIFY(c.held.storage().is_alias_of(stored.storage()));
    QCOMPARE(c.held.data_ptr<float>(), stored.data_ptr<float>() + 2 * 2 * 2);
    QVERIFY(c.storedTail.storage().is_alias_of(stored.storage()));
    QCOMPARE(*handoffMse(c), 0.0);
    QCOMPARE(c.noise.sizes(), c.held.sizes());
    QVERIFY(at::equal(c.noise, sampling::seededNoise({16, 1, 2, 2}, handoffNoiseSeed(202))));

    // Through sampling: every model call sees slot 0 at (1 − σ)·held + σ·noise.
    std::vector<at::Tensor> seen;
    const sampling::Denoiser recording = [&](const at::Tensor& x, const at::Tensor& t, const at::Tensor& ctx) {
      seen.push_back(x.select(0, 0).narrow(1, 0, 1).clone());
      return denoiser_(x, t, ctx);
    };
    const sampling::SampleResult r =
        sampling::sampleFlow(recording, c.sampleShape, cond_, uncond_, options(202), {}, holdSlotsHook(c));
    QCOMPARE(seen.size(), std::size_t(2));
    for (std::size_t i = 0; i < seen.size(); ++i) {
      const double sigma = r.schedule.sigmas[i];
      QVERIFY(at::allclose(seen[i], c.held * (1 - sigma) + c.noise * sigma, 1e-6, 1e-6));
    }
    at::Tensor latent = r.latent;
    QVERIFY(!at::equal(latent.narrow(1, 0, 1), c.held));  // the solver moved it at the last step
    restoreHeldSlots(latent, c);
    QVERIFY(at::equal(latent.narrow(1, 0, 1), stored.narrow(1, 2, 1)));
    QVERIFY(c.held.storage().is_alias_of(stored.storage()));  // nothing wrote into the ring entry
  }

  // A model trained to continue with a fresh clip's latents (DitCapabilities::freshClipContinuation):
  // the handoff stays the ring entry itself, but the decode starts with a one-frame encode of the
  // previous shot's last frame and leaves the held slot out; the shot still writes `frames` frames.
  void freshClipDecodeStartsFromTheLastFrame() {
    LatentRingBuffer ring;
    render("one", Continuity{}, ring, 101, shape());
    const at::Tensor stored = *ring.handoff("main");
    Continuity settings;
    settings.mode = ContinuityMode::Latent;
    const PreviousShot previous{stored, lastFrame_};
    const Conditioning c =
        prepareConditioning(settings, &previous, *vae_, {}, shape(), 202, at::kCPU, ConditioningOptions{true});
    QVERIFY(c.held.storage().is_alias_of(stored.storage()));  // the handoff is still zero copy
    QCOMPARE(*handoffMse(c), 0.0);
    QVERIFY(at::allclose(c.decodePrefix, vae_->encode(lastFrame_.unsqueeze(1)), 1e-5, 1e-6));
    QCOMPARE(c.decodeSkipLatents, std::int64_t{1});
    QCOMPARE(c.dropPixelFrames, std::int64_t{0});
    QCOMPARE(c.outputPixelFrames, std::int64_t{kFrames});
    const at::Tensor latent = at::randn({16, c.sampleShape[1], 2, 2});
    const at::Tensor input = decodeInput(latent, c);
    QCOMPARE(input.size(1), c.sampleShape[1]);  // the prefix in place of the held slot
    QVERIFY(at::equal(input.narrow(1, 0, 1), c.decodePrefix));
    QVERIFY(at::equal(input.narrow(1, 1, input.size(1) - 1), latent.narrow(1, 1, latent.size(1) - 1)));
    QCOMPARE(keptFrames(vae_->decode(input), c).size(1), std::int64_t{kFrames});

    // latent_overlap: the anchor it holds at slot 0 is the decode's prefix; the k handed latents are skipped.
    settings.mode = ContinuityMode::LatentOverlap;
    settings.overlapLatents = 1;
    const Conditioning o =
        prepareConditioning(settings, &previous, *vae_, {}, shape(), 202, at::kCPU, ConditioningOptions{true});
    QCOMPARE(o.decodeSkipLatents, std::int64_t{2});
    QVERIFY(at::equal(o.decodePrefix, o.held.narrow(1, 0, 1)));
    QCOMPARE(o.outputPixelFrames, std::int64_t{kFrames - 1});
    const at::Tensor overlap = at::randn({16, o.sampleShape[1], 2, 2});
    QCOMPARE(keptFrames(vae_->decode(decodeInput(overlap, o)), o).size(1), std::int64_t{kFrames - 1});
  }

  void resolutionChangeResamplesInLatentSpace() {
    LatentRingBuffer ring;
    render("one", Continuity{}, ring, 101, shape());
    const at::Tensor stored = *ring.handoff("main");
    Continuity settings;
    settings.mode = ContinuityMode::Latent;
    const Rendered two = render("two", settings, ring, 202, shape(32, 16));
    QVERIFY(two.conditioning.resampled);
    QCOMPARE(two.conditioning.held.sizes(), at::IntArrayRef({16, 1, 2, 4}));
    QVERIFY(at::equal(two.conditioning.held, resampleLatent(stored.narrow(1, 2, 1), 2, 4)));
    QCOMPARE(two.conditioning.bytesCopied, std::uint64_t{16 * 2 * 4 * 4});
    QCOMPARE(two.kept.sizes(), at::IntArrayRef({3, kFrames, kSide, 32}));
    const double mse = *handoffMse(two.conditioning);
    QVERIFY(std::isfinite(mse) && mse >= 0);

    settings.mode = ContinuityMode::LatentOverlap;  // 32×16 → 16×16, with a 1-frame encode at the new size
    const Rendered three = render("three", settings, ring, 303, shape());
    QCOMPARE(three.conditioning.held.sizes(), at::IntArrayRef({16, 2, 2, 2}));
    QCOMPARE(three.kept.sizes(), at::IntArrayRef({3, kFrames - 1, kSide, kSide}));

    // The cut across the size change is measured at the next shot's size.
    CutInputs in;
    in.previous = &two.stats;
    in.next = &three.stats;
    in.previousTail = two.latent.narrow(1, 2, 1);
    in.previousLastFrame = two.kept.select(1, kFrames - 1);
    in.nextLatent = three.latent;
    in.nextFrames = three.kept;
    in.conditioning = &three.conditioning;
    const CutMetrics m = measureCut(in);
    QVERIFY(m.psnrCut && m.latentStepRatio && m.handoffMse);
  }

  void withoutPredecessor() {
    Continuity settings;
    for (const ContinuityMode mode :
         {ContinuityMode::Latent, ContinuityMode::LatentOverlap, ContinuityMode::VaeRoundtrip}) {
      settings.mode = mode;
      const Conditioning c = prepareConditioning(settings, nullptr, *vae_, image_, shape(), 1, at::kCPU);
      QCOMPARE(c.source, std::string("noise"));
      QCOMPARE(c.heldFrames(), std::int64_t{0});
      QVERIFY(!holdSlotsHook(c));
      QCOMPARE(c.outputPixelFrames, std::int64_t{kFrames});
    }
    settings.mode = ContinuityMode::Blend;
    const Conditioning c = prepareConditioning(settings, nullptr, *vae_, image_, shape(), 1, at::kCPU);
    QCOMPARE(c.source, std::string("fallback_image"));
    QVERIFY(at::equal(c.held, vae_->encode(image_.unsqueeze(1))));
    QVERIFY(!handoffMse(c));
    // A fallback image of another size is resized to the shot's.
    const Conditioning small =
        prepareConditioning(settings, nullptr, *vae_, image_.narrow(1, 0, 8), shape(), 1, at::kCPU);
    QCOMPARE(small.held.sizes(), at::IntArrayRef({16, 1, 2, 2}));
    QVERIFY(shotchain::testing::errorOf([&] {
              prepareConditioning(settings, nullptr, *vae_, at::zeros({4, kSide, kSide}), shape(), 1, at::kCPU);
            }).contains("fallback image"));
  }

  void lastFrameIsDecodedWhenMissing() {
    LatentRingBuffer ring;
    const Rendered one = render("one", Continuity{}, ring, 101, shape());
    QVERIFY(at::allclose(decodeLastFrame(*vae_, one.latent), one.kept.select(1, kFrames - 1), 1e-5, 1e-5));
    Continuity settings;
    settings.mode = ContinuityMode::VaeRoundtrip;
    const PreviousShot withFrame{one.latent, lastFrame_}, withoutFrame{one.latent, {}};
    const Conditioning a = prepareConditioning(settings, &withFrame, *vae_, {}, shape(), 5, at::kCPU);
    const Conditioning b = prepareConditioning(settings, &withoutFrame, *vae_, {}, shape(), 5, at::kCPU);
    QVERIFY(at::allclose(a.held, b.held, 1e-4, 1e-4));
  }

  void colourAnchoringHoldsDriftToShotOne() {
    LatentRingBuffer ring;
    const Rendered one = render("one", Continuity{}, ring, 101, shape());
    Continuity settings;
    settings.mode = ContinuityMode::Latent;
    settings.anchorColour = true;
    const Rendered two = render("two", settings, ring, 202, shape(), &one.stats);
    const Rendered three = render("three", settings, ring, 303, shape(), &one.stats);
    for (const Rendered* r : {&two, &three})
      for (std::size_t c = 0; c < 16; ++c) {
        QVERIFY(std::abs(r->stats.latent.mean[c] - one.stats.latent.mean[c]) < 1e-5);
        QVERIFY(std::abs(r->stats.latent.std[c] - one.stats.latent.std[c]) < 1e-5);
      }
    CutInputs in;
    in.previous = &two.stats;
    in.next = &three.stats;
    in.first = &one.stats;
    const CutMetrics m = measureCut(in);
    QVERIFY(m.meanAbsChannelMeanDeltaFirst < 1e-5 && m.meanAbsChannelLogStdDeltaFirst < 1e-5);
    // The held slot is still the previous tail, bit for bit.
    QVERIFY(at::equal(three.latent.narrow(1, 0, 1), two.latent.narrow(1, 2, 1)));
  }

  void cutFromStoredStatsMatchesLive() {
    // Resume: shot N's stats persisted as JSON and its tail saved with the ring give the same figures.
    LatentRingBuffer ring;
    const Rendered one = render("one", Continuity{}, ring, 101, shape());
    const at::Tensor last = lastFrame_;
    QTemporaryDir dir;
    const std::filesystem::path file = dir.filePath("ring.safetensors").toStdString();
    ring.save(file);
    const ShotStats reloaded = shotStatsFromJson(shotStatsToJson(one.stats), "one.json");
    QVERIFY(reloaded == one.stats);

    LatentRingBuffer later;
    later.load(file);
    Continuity settings;
    settings.mode = ContinuityMode::Latent;
    const Rendered two = render("two", settings, later, 202, shape());
    CutInputs in;
    in.previous = &reloaded;
    in.next = &two.stats;
    in.first = &reloaded;
    in.previousTail = one.latent.narrow(1, 2, 1);
    in.previousLastFrame = last;
    in.nextLatent = two.latent;
    in.nextFrames = two.kept;
    in.conditioning = &two.conditioning;
    const CutMetrics fromStored = measureCut(in);
    in.previous = &one.stats;
    in.first = &one.stats;
    const CutMetrics live = measureCut(in);
    QCOMPARE(*fromStored.psnrCut, *live.psnrCut);
    QCOMPARE(*fromStored.madRatio, *live.madRatio);
    QCOMPARE(fromStored.channelMeanDeltaPrev, live.channelMeanDeltaPrev);
    QCOMPARE(*fromStored.handoffMse, 0.0);
  }
};

SHOTCHAIN_TEST(TestHandoffChain, Appless)
#include "test_handoff_chain.moc"
