#include <QTest>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <QTemporaryDir>

#include "io/safetensors_writer.h"
#include "io/weight_set.h"
#include "models/kv_cache.h"
#include "models/wan/wan_model.h"
#include "sampling/stream_sampler.h"
#include "test_registry.h"
#include "test_support.h"

using namespace shotchain;
using namespace shotchain::models;

namespace {

double relativeL2(const at::Tensor& a, const at::Tensor& b) {
  return (a.to(at::kDouble) - b.to(at::kDouble)).norm().item<double>() / b.to(at::kDouble).norm().item<double>();
}

WanConfig causalTiny(std::int64_t block) {
  WanConfig c = WanConfig::preset("tiny");
  c.causalBlockSize = block;
  c.diffusionForcing = true;
  return c;
}

at::Tensor randn(std::vector<std::int64_t> shape, std::uint64_t seed) {
  at::Generator g = at::make_generator<at::CPUGeneratorImpl>(seed);
  return at::randn(shape, g, at::TensorOptions().dtype(at::kFloat));
}

}  // namespace

class KvCacheTest : public QObject {
  Q_OBJECT

 private:
  // Every chunk's velocity with the cache equals the full block-causal forward over all frames so far
  // (finished ones at timestep 0) — for chunks of one and of two frames, two branches with their own
  // contexts, a scalar and a per-frame timestep.
  void checkExact(std::int64_t block) {
    const WanConfig config = causalTiny(block);
    const WanModel model = WanModel::random(config, 7);
    const std::int64_t frames = 4 * block, h = 4, w = 6;
    std::unique_ptr<KvCache> cache = model.newKvCache(2, h, w, {});
    const at::Tensor context = randn({2, 9, config.textDim}, 3);
    at::Tensor finished;
    double largest = 0;
    for (std::int64_t first = 0; first < frames; first += block) {
      const at::Tensor chunk = randn({2, config.inDim, block, h, w}, 100 + first);
      const at::Tensor t =
          block == 1 ? at::tensor({700, 310}, at::kLong) : at::tensor({800, 600, 500, 900}, at::kLong).view({2, 2});
      const at::Tensor cached = model.forwardCached(chunk, t, context, *cache, 0, false);
      const at::Tensor clip = finished.defined() ? at::cat({finished, chunk}, 2) : chunk;
      const std::int64_t held = finished.defined() ? finished.size(2) : 0;
      const at::Tensor chunkSteps = t.dim() == 1 ? t.unsqueeze(1).expand({2, block}) : t;
      const at::Tensor steps = at::cat({at::zeros({2, held}, at::kLong), chunkSteps}, 1);
      const at::Tensor full = model.forwardBatch(clip, steps, context).narrow(2, held, block);
      const double error = relativeL2(cached, full);
      QVERIFY2(error <= 1e-5, qPrintable(QString("chunk at frame %1: relative L2 %2").arg(first).arg(error)));
      largest = std::max(largest, error);
      const at::Tensor final = randn({2, config.inDim, block, h, w}, 200 + first);
      model.forwardCached(final, at::zeros({2}, at::kLong), context, *cache, 0, true);
      finished = finished.defined() ? at::cat({finished, final}, 2) : final;
      QCOMPARE(cache->frames(0), finished.size(2));
      QCOMPARE(cache->frames(1), finished.size(2));
    }
    qInfo("chunks of %lld: largest relative L2 against the full forward %.3g", static_cast<long long>(block), largest);
  }

 private Q_SLOTS:
  void chunkOfOneFrameEqualsTheFullForward() { checkExact(1); }
  void chunkOfTwoFramesEqualsTheFullForward() { checkExact(2); }

  // A split call (one branch at a time) gives the batch-2 call's result and fills the same cache.
  void branchesCanBeCalledOneAtATime() {
    const WanModel model = WanModel::random(causalTiny(1), 11);
    const WanConfig& config = model.config();
    std::unique_ptr<KvCache> together = model.newKvCache(2, 4, 4, {});
    std::unique_ptr<KvCache> apart = model.newKvCache(2, 4, 4, {});
    const at::Tensor context = randn({2, 5, config.textDim}, 5);
    for (int i = 0; i < 3; ++i) {
      const at::Tensor x = randn({2, config.inDim, 1, 4, 4}, 50 + i);
      const at::Tensor t = at::tensor({0, 0}, at::kLong);
      const at::Tensor both = model.forwardCached(x, t, context, *together, 0, true);
      const at::Tensor first =
          model.forwardCached(x.narrow(0, 0, 1), t.narrow(0, 0, 1), context.narrow(0, 0, 1), *apart, 0, true);
      const at::Tensor second =
          model.forwardCached(x.narrow(0, 1, 1), t.narrow(0, 1, 1), context.narrow(0, 1, 1), *apart, 1, true);
      QVERIFY(relativeL2(at::cat({first, second}), both) <= 1e-5);
    }
    QCOMPARE(apart->bytes(), together->bytes());
  }

  // A bounded window keeps the sink and the last W frames: the cache stops growing; a window wider than
  // the stream changes nothing.
  void windowBoundsTheCache() {
    const WanModel model = WanModel::random(causalTiny(1), 13);
    const WanConfig& config = model.config();
    std::unique_ptr<KvCache> bounded = model.newKvCache(1, 4, 4, {1, 3});
    std::unique_ptr<KvCache> wide = model.newKvCache(1, 4, 4, {1, 50});
    std::unique_ptr<KvCache> unbounded = model.newKvCache(1, 4, 4, {});
    const at::Tensor context = randn({1, 5, config.textDim}, 5);
    std::uint64_t peak = 0;
    for (int i = 0; i < 8; ++i) {
      const at::Tensor x = randn({1, config.inDim, 1, 4, 4}, 80 + i);
      const at::Tensor t = at::zeros({1}, at::kLong);
      model.forwardCached(x, t, context, *bounded, 0, true);
      const at::Tensor a = model.forwardCached(x, t, context, *wide, 0, true);
      const at::Tensor b = model.forwardCached(x, t, context, *unbounded, 0, true);
      QCOMPARE(a.sizes(), b.sizes());
      QVERIFY(at::equal(a, b));
      QCOMPARE(bounded->frames(), std::min<std::int64_t>(i + 1, 4));
      QCOMPARE(bounded->framesCommitted(), std::int64_t{i + 1});
      peak = std::max(peak, bounded->bytes());
    }
    QCOMPARE(peak, kvCacheBytes(config.numLayers, 1, 4, 4, config.dim, 4));
    QCOMPARE(bounded->bytes(), peak);
    QCOMPARE(unbounded->bytes(), 2 * peak);
  }

  // When the window slides, the frames after the sink move down the stream: at layer 0 (where a frame's
  // keys depend on that frame alone) the cache that evicted frame 1 of 0…3 holds what committing 0, 2, 3
  // directly gives.
  void slidingWindowRepositionsTheKeys() {
    const WanModel model = WanModel::random(causalTiny(1), 19);
    const WanConfig& config = model.config();
    std::unique_ptr<KvCache> sliding = model.newKvCache(1, 4, 4, {1, 2});
    std::unique_ptr<KvCache> direct = model.newKvCache(1, 4, 4, {});
    const at::Tensor context = randn({1, 5, config.textDim}, 5);
    std::vector<at::Tensor> frames;
    for (int i = 0; i < 4; ++i) frames.push_back(randn({1, config.inDim, 1, 4, 4}, 300 + i));
    for (int i = 0; i < 4; ++i)
      model.forwardCached(frames[static_cast<std::size_t>(i)], at::zeros({1}, at::kLong), context, *sliding, 0, true);
    for (int i : {0, 2, 3})
      model.forwardCached(frames[static_cast<std::size_t>(i)], at::zeros({1}, at::kLong), context, *direct, 0, true);
    QCOMPARE(sliding->frames(), std::int64_t{3});
    const double keys = relativeL2(sliding->keys(0, 0), direct->keys(0, 0));
    QVERIFY2(keys <= 1e-5, qPrintable(QString::number(keys)));
    QVERIFY(at::equal(sliding->values(0, 0), direct->values(0, 0)));
    QVERIFY(relativeL2(sliding->keys(0, 1), direct->keys(0, 1)) > 1e-3);  // deeper layers saw frame 1
  }

  // A whole stream sampled with the cache equals the same stream re-running the clip at every step.
  void streamedSamplingEqualsRerunning() {
    const WanModel model = WanModel::random(causalTiny(1), 17);
    const WanConfig& config = model.config();
    sampling::SamplerOptions options;
    options.steps = 4;
    options.guidance = 3.0;
    options.shift = 3.0;
    options.seed = 42;
    const at::Tensor cond = randn({6, config.textDim}, 1), uncond = randn({4, config.textDim}, 2);
    const std::vector<std::int64_t> shape{config.inDim, 4, 4, 4};
    std::unique_ptr<KvCache> cache = model.newKvCache(2, 4, 4, {});
    const auto streamed =
        sampling::sampleStream(sampling::cachedChunkDenoiser(model, *cache), shape, 1, cond, uncond, options);
    const auto rerun = sampling::sampleStream(sampling::rerunChunkDenoiser(model), shape, 1, cond, uncond, options);
    QCOMPARE(streamed.stepsDone, 16);
    const double error = relativeL2(streamed.latent, rerun.latent);
    QVERIFY2(error <= 1e-4, qPrintable(QString::number(error)));
    QCOMPARE(cache->frames(1), std::int64_t{4});
  }

  // A Self-Forcing-style checkpoint: Wan key names, the chunk in the metadata. Loaded and streamed with it.
  void causalCheckpointIsDetectedFromItsMetadata() {
    QTemporaryDir dir;
    WanConfig plain = WanConfig::preset("tiny");
    plain.dim = 128;  // detected from shapes alone: head_dim 128 as every published Wan DiT
    plain.numHeads = 1;
    const WanModel source = WanModel::random(plain, 3);
    const std::filesystem::path file = std::filesystem::path(dir.path().toStdString()) / "self_forcing.safetensors";
    io::saveSafetensors(file, source.namedParameters(), {{"num_frame_per_block", "3"}});
    const WanModel loaded = WanModel::load(io::WeightSet::open(file));
    QCOMPARE(loaded.capabilities().causalBlockSize, std::int64_t{3});
    QVERIFY(loaded.capabilities().kvCache && loaded.capabilities().perFrameTimesteps);
    QVERIFY(loaded.family().find("causal, chunk 3") != std::string::npos);
    std::unique_ptr<KvCache> cache = loaded.newKvCache(1, 4, 4, {});
    const at::Tensor x = randn({1, loaded.config().inDim, 3, 4, 4}, 9);
    loaded.forwardCached(x, at::zeros({1}, at::kLong), randn({1, 3, loaded.config().textDim}, 1), *cache, 0, true);
    QCOMPARE(cache->frames(), std::int64_t{3});

    const std::filesystem::path bad = std::filesystem::path(dir.path().toStdString()) / "bad.safetensors";
    io::saveSafetensors(bad, source.namedParameters(), {{"num_frame_per_block", "three"}});
    QVERIFY(testing::errorOf([&] { WanModel::load(io::WeightSet::open(bad)); }).contains("num_frame_per_block"));
  }

  void refusesWhatCannotStream() {
    WanConfig full = WanConfig::preset("tiny");
    const WanModel model = WanModel::random(full, 1);
    QVERIFY(!model.capabilities().kvCache);
    QVERIFY(testing::errorOf([&] { model.newKvCache(1, 4, 4, {}); }).contains("block-causal"));
    const WanModel causal = WanModel::random(causalTiny(2), 1);
    std::unique_ptr<KvCache> cache = causal.newKvCache(1, 4, 4, {});
    const at::Tensor x = randn({1, causal.config().inDim, 1, 4, 4}, 1);
    QVERIFY(testing::errorOf([&] {
              causal.forwardCached(x, at::zeros({1}, at::kLong), randn({1, 3, causal.config().textDim}, 1), *cache, 0,
                                   false);
            }).contains("one causal block"));
  }
};

SHOTCHAIN_TEST(KvCacheTest, Core)
#include "test_kv_cache.moc"
