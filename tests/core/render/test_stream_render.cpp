// Streaming across shots (continuity mode stream) through the real renderer and loaders on a tiny random
// block-causal DiT written by the test: the KV cache is the handoff (kept or recached, zero bytes copied),
// frames arrive while a shot samples, a resumed render rebuilds the cache from the latents on disk and
// gives byte-identical results, and what cannot stream is refused before any work.
#include <QtTest/qtestassert.h>
#include <QTemporaryDir>
#include <QTest>

#include <filesystem>

#include <ATen/ATen.h>

#include "render/output_layout.h"
#include "render/renderer.h"
#include "render/shot_record.h"
#include "runtime/torch_runtime.h"
#include "test_registry.h"
#include "test_support.h"
#include "tiny_model_set.h"

using namespace shotchain;
using namespace shotchain::testing;

namespace {

struct Collecting : render::RenderObserver {
  std::vector<std::pair<int, int>> frames;  // (shot, first frame) of every delivery
  std::vector<int> stepsBeforeFrames;       // per delivery: step events of its shot seen so far
  std::map<int, int> steps;
  void stepDone(const render::StepDone& s) override { ++steps[s.shotIndex]; }
  void framesDecoded(const render::FramesDecoded& f) override {
    frames.emplace_back(f.shotIndex, f.firstFrame);
    stepsBeforeFrames.push_back(steps[f.shotIndex]);
  }
};

Shot makeShot(const std::string& id, const std::string& prompt, std::uint64_t seed) {
  Shot shot;
  shot.id = id;
  shot.prompt = prompt;
  shot.frames = 13;  // 4 latent frames: 4 streamed in the first shot, 3 after a cut
  shot.width = 32;
  shot.height = 32;
  shot.seed = seed;
  shot.continuity.mode = ContinuityMode::Stream;
  return shot;
}

}  // namespace

class StreamRenderTest : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;
  TinyModelSet causal_;

  std::filesystem::path root() const { return dir_.path().toStdString(); }

  Sequence stream(int window) const {
    Sequence s;
    s.settings.model = causal_.modelSet();
    s.settings.sampler.steps = 3;
    s.settings.sampler.guidance = 3.0;
    s.settings.sampler.streamWindow = window;
    s.settings.policy = ResidencyPolicy::Pinned;
    s.shots = {makeShot("a", "a red circle moving right on a black background", 1),
               makeShot("b", "a red circle moving right on a black background", 2),
               makeShot("c", "a blue square moving up on a black background", 3),
               makeShot("d", "a green triangle moving left on a black background", 4)};
    s.shots[3].continuity.recache = false;
    return s;
  }

  render::RenderOptions options(const std::string& out) const {
    render::RenderOptions o;
    o.outputDirectory = root() / out;
    o.sequenceDirectory = root();
    o.framesOnDisk = false;
    return o;
  }

  render::ShotTail tail(const std::string& out, int index, const std::string& id) const {
    const auto t = render::readShotTail(render::shotDirectory(root() / out, index, id), at::kCPU);
    QTEST_ASSERT(t.has_value());
    return *t;
  }

 private Q_SLOTS:
  void initTestCase() {
    runtime::initTorchRuntime();
    causal_ = writeTinyModelSet(root() / "causal", 31, false, 1);
  }

  void theCacheIsTheHandoff() {
    render::Renderer renderer;
    Collecting observer;
    const render::RenderSummary summary = renderer.render(stream(8), options("full"), observer);
    QVERIFY(summary.finished.completed);
    QCOMPARE(static_cast<int>(summary.shots.size()), 4);
    const char* actions[] = {"started", "kept", "recached", "kept"};
    for (int i = 0; i < 4; ++i) {
      const render::ShotFinished& shot = summary.shots[static_cast<std::size_t>(i)];
      QVERIFY(shot.stream.has_value());
      QCOMPARE(shot.stream->cache, std::string(actions[i]));
      QCOMPARE(shot.stream->bytesCopied, std::uint64_t{0});
      QCOMPARE(shot.framesWritten, 13);
      QVERIFY(shot.firstFrameSeconds > 0 && shot.firstFrameSeconds < shot.seconds);
    }
    QCOMPARE(summary.shots[3].stream->framesCommitted, 4 + 3 + 3 + 3);
    QCOMPARE(summary.shots[3].stream->framesHeld, 1 + 8);                          // the sink and the window
    QCOMPARE(summary.plan.kvCacheBytes, summary.shots[3].stream->peakCacheBytes);  // sink + window + a chunk
    // A first shot streams all its latents; a continuing one generates one fewer (its first frame is the
    // previous shot's last).
    QCOMPARE(tail("full", 0, "a").latent.size(1), std::int64_t{4});
    QCOMPARE(tail("full", 1, "b").latent.size(1), std::int64_t{3});
    for (const continuity::CutMetrics& cut : summary.cuts) QCOMPARE(cut.handoffBytesCopied, std::uint64_t{0});
    // Frames arrive while the shot is sampled: shot 2's first delivery comes before its last step.
    bool early = false;
    for (std::size_t i = 0; i < observer.frames.size(); ++i)
      early = early || (observer.frames[i].first == 1 && observer.stepsBeforeFrames[i] < 3 * 3);
    QVERIFY(early);
    const std::string report = readFile(root() / "full" / "report.json");
    QVERIFY(report.find("\"first_frame_seconds\"") != std::string::npos);
    QVERIFY(report.find("\"cache\": \"recached\"") != std::string::npos);
    QVERIFY(report.find("\"kv cache\"") != std::string::npos);
  }

  // Keep and recache differ only where the prompt changes.
  void recacheChangesTheShotAfterAPromptChange() {
    Sequence keep = stream(8);
    keep.shots[2].continuity.recache = false;
    render::Renderer renderer;
    Collecting a, b;
    renderer.render(stream(8), options("recache"), a);
    renderer.render(keep, options("keep"), b);
    QVERIFY(at::equal(tail("recache", 1, "b").latent, tail("keep", 1, "b").latent));
    QVERIFY(!at::equal(tail("recache", 2, "c").latent, tail("keep", 2, "c").latent));
  }

  // Shots 1–2 rendered, then the rest resumed: the cache is rebuilt from the latents on disk (with frames
  // already evicted from a window of 2) and every result equals the uninterrupted render's, bit for bit.
  void aResumedRenderIsByteIdentical() {
    const Sequence sequence = stream(2);
    render::Renderer renderer;
    Collecting observer;
    renderer.render(sequence, options("whole"), observer);
    render::RenderOptions first = options("resumed");
    first.lastShot = 1;
    renderer.render(sequence, first, observer);
    render::Renderer fresh;
    render::RenderOptions rest = options("resumed");
    rest.reuse = true;
    const render::RenderSummary summary = fresh.render(sequence, rest, observer);
    QCOMPARE(summary.finished.shotsReused, 2);
    QCOMPARE(summary.shots[2].stream->cache, std::string("rebuilt from 2 shots, recached"));
    for (int i = 0; i < 4; ++i) {
      const std::string id(1, static_cast<char>('a' + i));
      const render::ShotTail whole = tail("whole", i, id), resumed = tail("resumed", i, id);
      QVERIFY2(at::equal(whole.latent, resumed.latent), id.c_str());
      QVERIFY2(at::equal(whole.lastFrame, resumed.lastFrame), id.c_str());
    }
  }

  // Under the reload policy the DiT is a new object every shot: the stream follows it, same results.
  void everyResidencyPolicyStreamsAlike() {
    render::Renderer renderer;
    Collecting observer;
    renderer.render(stream(2), options("pinned"), observer);
    for (const ResidencyPolicy policy : {ResidencyPolicy::Offload, ResidencyPolicy::Reload}) {
      render::RenderOptions o = options(toString(policy));
      o.policy = policy;
      const render::RenderSummary summary = renderer.render(stream(2), o, observer);
      QVERIFY(summary.finished.completed);
      for (int i = 0; i < 4; ++i) {
        const std::string id(1, static_cast<char>('a' + i));
        QVERIFY2(at::equal(tail("pinned", i, id).latent, tail(toString(policy), i, id).latent),
                 (toString(policy) + id).c_str());
      }
    }
  }

  void whatCannotStreamIsRefusedBeforeWork() {
    const TinyModelSet full = writeTinyModelSet(root() / "full_attention", 5, true);
    Sequence sequence = stream(8);
    sequence.settings.model = full.modelSet();
    render::Renderer renderer;
    Collecting observer;
    try {
      renderer.render(sequence, options("refused"), observer);
      QFAIL("a stream on a full-attention model rendered");
    } catch (const render::RenderError& e) {
      QCOMPARE(e.field(), std::string("shots[0].continuity.mode"));
      QVERIFY2(std::string(e.what()).find("block-causal") != std::string::npos, e.what());
    }
    QVERIFY(!std::filesystem::exists(root() / "refused" / "shots"));

    const TinyModelSet chunked = writeTinyModelSet(root() / "chunk2", 5, false, 2);
    sequence.settings.model = chunked.modelSet();  // shot 2 generates 3 latents: not whole chunks of 2
    try {
      renderer.render(sequence, options("refused2"), observer);
      QFAIL("a stream of broken chunks rendered");
    } catch (const render::RenderError& e) {
      QCOMPARE(e.field(), std::string("shots[1].frames"));
      QVERIFY2(std::string(e.what()).find("chunks of 2") != std::string::npos, e.what());
    }
  }

  // A budget too small for the cache at the requested window is refused before work, naming a window that fits.
  void theCacheIsPlanned() {
    Sequence big = stream(1000);  // the cache then outweighs the decode and everything else
    for (Shot& shot : big.shots) shot.width = shot.height = 128;
    render::Renderer renderer;
    const memory::MemoryPlan roomy = renderer.plan(big, options("plan"));
    QVERIFY(roomy.kvCacheBytes > 0);
    Sequence narrow = big;
    narrow.settings.sampler.streamWindow = 1;
    const memory::MemoryPlan small = renderer.plan(narrow, options("plan"));
    render::RenderOptions tight = options("plan");  // the margin is 5 % of a budget: peak ≤ 0.95 · budget fits
    tight.budget = static_cast<std::uint64_t>(
        static_cast<double>(small.chosenPeak() + (roomy.kvCacheBytes - small.kvCacheBytes) / 4) / 0.95);
    const memory::MemoryPlan refused = renderer.plan(big, tight);
    QVERIFY(!refused.fits);
    QVERIFY2(refused.reason.find("sampler.stream_window") != std::string::npos, refused.reason.c_str());
    const std::size_t at = refused.reason.find("sampler.stream_window ") + 22;
    narrow.settings.sampler.streamWindow = std::stoi(refused.reason.substr(at));
    QVERIFY(*narrow.settings.sampler.streamWindow > 1 && *narrow.settings.sampler.streamWindow < 1000);
    QVERIFY(renderer.plan(narrow, tight).fits);  // the window it names does fit
  }
};

SHOTCHAIN_TEST(StreamRenderTest, Core)
#include "test_stream_render.moc"
