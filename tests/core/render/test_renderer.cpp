// The renderer in-process on a tiny random model set: events, cancel in both forms, re-use of
// unchanged shots, and the errors found before any work.
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <thread>

#include <ATen/Parallel.h>
#include <nlohmann/json.hpp>

#include "memory/memory_probe.h"
#include "render/output_layout.h"
#include "render/renderer.h"
#include "render/shot_record.h"
#include "runtime/thread_intra_op.h"
#include "runtime/torch_runtime.h"
#include "sequence/sequence_io.h"
#include "test_registry.h"
#include "test_support.h"
#include "tiny_model_set.h"

using namespace shotchain;
using namespace shotchain::testing;

namespace {

// Counts events; optionally asks the renderer to stop at a given step of a given shot.
struct CountingObserver : render::RenderObserver {
  render::Renderer* renderer = nullptr;
  int stopAtShot = -1;
  int stopAtStep = -1;
  render::StopRequest stopKind = render::StopRequest::None;

  int plans = 0, started = 0, steps = 0, finished = 0, failures = 0, previews = 0;
  int framesSeen = 0;
  std::vector<int> rendered, reused;
  std::vector<continuity::CutMetrics> cuts;
  std::vector<std::string> failuresText;

  void planReady(const memory::MemoryPlan&) override { ++plans; }
  void shotStarted(const render::ShotStarted& e) override {
    ++started;
    (e.reused ? reused : rendered).push_back(e.index);
  }
  void stepDone(const render::StepDone& e) override {
    ++steps;
    if (!e.preview.empty()) ++previews;
    if (e.shotIndex == stopAtShot && e.step == stopAtStep) renderer->requestStop(stopKind);
  }
  void framesDecoded(const render::FramesDecoded& e) override { framesSeen += static_cast<int>(e.frames.size()); }
  void cutMeasured(const continuity::CutMetrics& c) override { cuts.push_back(c); }
  void shotFinished(const render::ShotFinished&) override { ++finished; }
  void failed(const render::RenderFailure& f) override {
    ++failures;
    failuresText.push_back(f.message);
  }
};

Shot makeShot(const std::string& id, const std::string& prompt, ContinuityMode mode, std::uint64_t seed) {
  Shot shot;
  shot.id = id;
  shot.name = id;
  shot.prompt = prompt;
  shot.frames = 9;
  shot.width = 32;
  shot.height = 32;
  shot.seed = seed;
  shot.steps = 3;
  shot.continuity.mode = mode;
  shot.continuity.tag = "main";
  return shot;
}

}  // namespace

class RendererTest : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;
  TinyModelSet models_;
  Sequence sequence_;

  render::RenderOptions options(const std::string& out) const {
    render::RenderOptions o;
    o.outputDirectory = std::filesystem::path(dir_.path().toStdString()) / out;
    o.sequenceDirectory = dir_.path().toStdString();
    o.framesOnDisk = false;  // no frame writer here: that is export's (tests/e2e/test_render_cli)
    return o;
  }

 private Q_SLOTS:
  void initTestCase() {
    runtime::initTorchRuntime();
    models_ = writeTinyModelSet(std::filesystem::path(dir_.path().toStdString()) / "models");
    sequence_.settings.name = "three shots";
    sequence_.settings.model = models_.modelSet();
    sequence_.settings.sampler.steps = 3;
    sequence_.settings.policy = ResidencyPolicy::Pinned;
    sequence_.shots = {
        makeShot("a", "a red circle moving right on a black background", ContinuityMode::None, 1),
        makeShot("b", "a red circle moving down on a black background", ContinuityMode::Latent, 2),
        makeShot("c", "a blue square moving left on a black background", ContinuityMode::LatentOverlap, 3)};
  }

  void rendersEveryShotWithEvents() {
    render::Renderer renderer;
    CountingObserver observer;
    const render::RenderSummary summary = renderer.render(sequence_, options("full"), observer);
    QVERIFY(summary.finished.completed);
    QCOMPARE(observer.plans, 1);
    QCOMPARE(observer.started, 3);
    QCOMPARE(observer.finished, 3);
    QCOMPARE(observer.steps, 9);
    QCOMPARE(observer.failures, 0);
    QCOMPARE(static_cast<int>(observer.cuts.size()), 2);
    QCOMPARE(*observer.cuts[0].handoffMse, 0.0);  // latent: the held slot is the stored tail, exactly
    QCOMPARE(observer.cuts[0].handoffBytesCopied, std::uint64_t{0});
    QCOMPARE(summary.finished.shotsRendered, 3);
    // 9 frames per shot; latent_overlap (k = 1) leaves out the frames that repeat the previous shot.
    QCOMPARE(summary.shots[0].framesWritten, 9);
    QCOMPARE(summary.shots[1].framesWritten, 9);
    QVERIFY(summary.shots[2].framesWritten < 9 + 5);
    QCOMPARE(observer.framesSeen,
             summary.shots[0].framesWritten + summary.shots[1].framesWritten + summary.shots[2].framesWritten);
    const std::filesystem::path out = options("full").outputDirectory;
    for (int i = 0; i < 3; ++i) {
      const std::filesystem::path shotDir =
          render::shotDirectory(out, i, sequence_.shots[static_cast<std::size_t>(i)].id);
      QVERIFY(std::filesystem::exists(render::tailLatentPath(shotDir)));
      const auto record = render::readShotRecord(shotDir);
      QVERIFY(record.has_value());
      QCOMPARE(record->framesWritten, summary.shots[static_cast<std::size_t>(i)].framesWritten);
    }
    QVERIFY(std::filesystem::exists(out / "report.json"));
    QVERIFY(std::filesystem::exists(out / "report.csv"));
  }

  // A `latent` cut on a model that continues with a fresh clip (the demo) needs the previous shot's
  // last frame only for its own decode: its sampling starts while that shot still decodes beside it
  // (pinned, overlapped), so the previous shot finishes after this one started, and nothing waited
  // for a decode in the gap before it.
  void latentCutSamplesWhileThePreviousShotDecodes() {
    struct Order : render::RenderObserver {
      std::vector<std::string> events;
      std::vector<render::GapParts> gaps;
      void shotStarted(const render::ShotStarted& e) override {
        events.push_back("started " + std::to_string(e.index));
        gaps.push_back(e.gap);
      }
      void shotFinished(const render::ShotFinished& e) override {
        events.push_back("finished " + std::to_string(e.index));
      }
    };
    const LoadResult loaded = loadSequenceFile(workflow("demo.json"));
    QVERIFY(loaded.ok());
    Sequence demo = *loaded.sequence;
    demo.shots.resize(2);
    demo.settings.sampler.steps = 4;
    QCOMPARE(demo.shots[1].continuity.mode, ContinuityMode::Latent);
    render::RenderOptions o = options("overlap");
    o.sequenceDirectory = workflow("demo.json").parent_path();
    o.policy = ResidencyPolicy::Pinned;
    render::Renderer renderer;
    Order order;
    const render::RenderSummary summary = renderer.render(demo, o, order);
    QVERIFY(summary.finished.completed);
    QVERIFY(summary.decodeOverlapped);
    const auto at = [&](const std::string& event) {
      return std::find(order.events.begin(), order.events.end(), event) - order.events.begin();
    };
    QVERIFY2(at("started 1") < at("finished 0"), "shot 2 waited for shot 1's decode before it sampled");
    QCOMPARE(order.gaps.size(), std::size_t{2});
    QCOMPARE(order.gaps[1].waitingForDecode, 0.0);
    QCOMPARE(order.gaps[1].encodingFrames, 0.0);  // the last frame's encode waits for shot 2's own decode
    QCOMPARE(summary.shots[1].framesWritten, 17);
  }

  // A decode beside the sampling changes no frame, and the sampling's thread count never depends on when a decode
  // ends (a reduction over another count of threads gives other bits: a render would not equal itself).
  void aDecodeBesideTheSamplingChangesNoFrame() {
    struct Frames : render::RenderObserver {
      std::vector<std::vector<std::uint8_t>> frames;
      std::vector<int> samplingThreads;  // the render thread's, at each of shot 2's steps
      void framesDecoded(const render::FramesDecoded& e) override {
        for (const render::RgbFrame& frame : e.frames) frames.push_back(frame.rgb);
      }
      void stepDone(const render::StepDone& e) override {
        if (e.shotIndex == 1) samplingThreads.push_back(runtime::thisThreadIntraOpThreads());
      }
    };
    const LoadResult loaded = loadSequenceFile(workflow("demo.json"));
    QVERIFY(loaded.ok());
    Sequence demo = *loaded.sequence;
    demo.shots.resize(2);
    demo.settings.sampler.steps = 6;
    const auto renderWith = [&](bool overlap, Frames& observer) {
      render::RenderOptions o = options(overlap ? "beside" : "serial");
      o.sequenceDirectory = workflow("demo.json").parent_path();
      o.policy = ResidencyPolicy::Pinned;
      o.overlapDecode = overlap;
      render::Renderer renderer;
      return renderer.render(demo, o, observer);
    };
    Frames beside, serial;
    QVERIFY(renderWith(true, beside).decodeOverlapped);
    QVERIFY(!renderWith(false, serial).decodeOverlapped);
    QCOMPARE(beside.frames.size(), serial.frames.size());
    QVERIFY(beside.frames == serial.frames);
    const int cores = at::get_num_threads();
    QVERIFY(!beside.samplingThreads.empty());
    for (const std::vector<int>* threads : {&beside.samplingThreads, &serial.samplingThreads}) {
      QCOMPARE(*std::min_element(threads->begin(), threads->end()), cores);
      QCOMPARE(*std::max_element(threads->begin(), threads->end()), cores);
    }
  }

  // The studio samples the probe at 10 Hz from the GUI thread while the worker renders: the probe
  // is chosen once per render and published under a lock (run under ThreadSanitizer: clean).
  void probeIsSampledFromAnotherThreadDuringARender() {
    render::Renderer renderer;
    CountingObserver observer;
    std::atomic<bool> rendering{true};
    std::atomic<int> samples{0};
    std::atomic<std::uint64_t> largestAllocated{0};
    std::thread sampler([&] {
      while (rendering.load()) {
        const memory::MemorySample sample = renderer.probe()->sample();
        largestAllocated.store(std::max(largestAllocated.load(), sample.allocated));
        samples.fetch_add(1);
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      }
    });
    render::RenderSummary summary;
    try {
      summary = renderer.render(sequence_, options("sampled"), observer);
    } catch (...) {
      rendering.store(false);
      sampler.join();
      throw;
    }
    rendering.store(false);
    sampler.join();
    QVERIFY(summary.finished.completed);
    QVERIFY2(samples.load() > 10, std::to_string(samples.load()).c_str());
    QVERIFY(largestAllocated.load() > 0);  // tensors seen alive mid-render
    QCOMPARE(renderer.probe()->sample().device, std::string("cpu"));
  }

  void stopNowEndsWithinAStep() {
    render::Renderer renderer;
    CountingObserver observer;
    observer.renderer = &renderer;
    observer.stopAtShot = 1;
    observer.stopAtStep = 1;
    observer.stopKind = render::StopRequest::Now;
    const render::RenderSummary summary = renderer.render(sequence_, options("stop-now"), observer);
    QVERIFY(summary.finished.cancelled);
    QVERIFY(!summary.finished.completed);
    QCOMPARE(observer.finished, 1);
    QCOMPARE(observer.steps, 3 + 1);  // no step after the one that asked
    const std::filesystem::path second = render::shotDirectory(options("stop-now").outputDirectory, 1, "b");
    QVERIFY(!render::readShotRecord(second).has_value());  // an unfinished shot leaves no record
  }

  void stopAfterShotFinishesTheCurrentShot() {
    render::Renderer renderer;
    CountingObserver observer;
    observer.renderer = &renderer;
    observer.stopAtShot = 1;
    observer.stopAtStep = 1;
    observer.stopKind = render::StopRequest::AfterShot;
    const render::RenderSummary summary = renderer.render(sequence_, options("stop-after"), observer);
    QVERIFY(summary.finished.cancelled);
    QCOMPARE(observer.finished, 2);
    QCOMPARE(observer.steps, 6);
  }

  void editingShotTwoRerendersTwoAndThree() {
    render::Renderer renderer;
    render::RenderOptions o = options("edit");
    o.reuse = true;
    CountingObserver first;
    QVERIFY(renderer.render(sequence_, o, first).finished.completed);
    QCOMPARE(first.rendered, (std::vector<int>{0, 1, 2}));

    CountingObserver again;
    QVERIFY(renderer.render(sequence_, o, again).finished.completed);
    QCOMPARE(again.reused, (std::vector<int>{0, 1, 2}));
    QCOMPARE(again.steps, 0);

    Sequence edited = sequence_;
    edited.shots[1].prompt = "a green circle moving down on a black background";
    CountingObserver afterEdit;
    const render::RenderSummary summary = renderer.render(edited, o, afterEdit);
    QVERIFY(summary.finished.completed);
    QCOMPARE(afterEdit.reused, (std::vector<int>{0}));
    QCOMPARE(afterEdit.rendered, (std::vector<int>{1, 2}));
  }

  // Every cut gets the after-cut figures, also a cut into a `none` shot (measured against the shot
  // before it in sequence order), in the events, report.json, report.csv and again from shot.json
  // when the shots are re-used.
  void everyCutHasAfterCutFigures() {
    Sequence sequence = sequence_;
    sequence.shots = {makeShot("a", "a red circle moving right on a black background", ContinuityMode::None, 1),
                      makeShot("b", "a red circle moving down on a black background", ContinuityMode::Latent, 2),
                      makeShot("c", "a blue square moving left on a black background", ContinuityMode::None, 3),
                      makeShot("d", "a blue square moving left on a black background", ContinuityMode::Latent, 4)};
    render::Renderer renderer;
    render::RenderOptions o = options("after-cut");
    o.reuse = true;
    CountingObserver observer;
    QVERIFY(renderer.render(sequence, o, observer).finished.completed);
    QCOMPARE(static_cast<int>(observer.cuts.size()), 3);
    for (int i = 0; i < 3; ++i) {
      const continuity::CutMetrics& cut = observer.cuts[static_cast<std::size_t>(i)];
      QCOMPARE(cut.fromIndex, i);
      QCOMPARE(cut.toIndex, i + 1);
      QCOMPARE(cut.afterCutFrames, 8);
      QVERIFY2(cut.flash && *cut.flash > 0 && cut.colourDrift && cut.spreadDrift && cut.structure,
               qPrintable(QString("cut %1").arg(i + 1)));
      QVERIFY(cut.psnrCut && cut.madRatio && cut.deltaEPrev);
    }
    const continuity::CutMetrics& hard = observer.cuts[1];
    QCOMPARE(QString::fromStdString(hard.mode), QString("none"));
    QCOMPARE(QString::fromStdString(hard.fromShotId), QString("b"));
    QVERIFY(!hard.handoffMse && !hard.latentStepRatio && !hard.roundtripMse);  // no handoff, no handoff figures
    QCOMPARE(*observer.cuts[2].handoffMse, 0.0);

    const std::filesystem::path out = o.outputDirectory;
    const nlohmann::json report = nlohmann::json::parse(readFile(out / "report.json"));
    QCOMPARE(static_cast<int>(report["cuts"].size()), 3);
    const std::string csv = readFile(out / "report.csv");
    for (int i = 0; i < 3; ++i) {
      const nlohmann::json& cut = report["cuts"][static_cast<std::size_t>(i)];
      const continuity::CutMetrics& seen = observer.cuts[static_cast<std::size_t>(i)];
      QCOMPARE(cut["flash_ratio"].get<double>(), *seen.flash);
      QCOMPARE(cut["colour_drift_delta_e"].get<double>(), *seen.colourDrift);
      QCOMPARE(cut["spread_drift_delta_e"].get<double>(), *seen.spreadDrift);
      QCOMPARE(cut["structure_ratio"].get<double>(), *seen.structure);
      QCOMPARE(cut["after_cut_frames"].get<int>(), 8);
      QVERIFY(cut["verdict"].is_string() && !cut["verdict"].get<std::string>().empty());
      const std::string index = std::to_string(i + 1) + "-" + std::to_string(i + 2);
      for (const char* field : {"flash_ratio", "colour_drift_delta_e", "spread_drift_delta_e", "structure_ratio"}) {
        const std::string row = "cut," + index + "," + field + "," + cut[field].dump() + "\n";
        QVERIFY2(csv.find(row) != std::string::npos, qPrintable(QString::fromStdString(row)));
      }
    }

    CountingObserver again;
    QVERIFY(renderer.render(sequence, o, again).finished.completed);
    QCOMPARE(again.reused, (std::vector<int>{0, 1, 2, 3}));
    QCOMPARE(static_cast<int>(again.cuts.size()), 3);
    for (std::size_t i = 0; i < 3; ++i) QCOMPARE(*again.cuts[i].flash, *observer.cuts[i].flash);
  }

  // A shot's files are written when its decode finishes, which may be while the next shot is
  // prepared: a failure there (a full disk; here a folder where the tail goes) names that shot.
  void aFailureWritingAShotsFilesNamesThatShot_data() {
    QTest::addColumn<int>("failing");
    QTest::newRow("shot 2, surfacing while shot 3 starts") << 1;
    QTest::newRow("shot 3, the last decode") << 2;
  }
  void aFailureWritingAShotsFilesNamesThatShot() {
    QFETCH(int, failing);
    struct Blocker : CountingObserver {
      std::filesystem::path out;
      int shot = -1;
      std::vector<int> failedShots;
      std::string id;
      void framesDecoded(const render::FramesDecoded& e) override {
        CountingObserver::framesDecoded(e);
        if (e.shotIndex == shot)
          std::filesystem::create_directories(render::tailLatentPath(render::shotDirectory(out, shot, id)));
      }
      void failed(const render::RenderFailure& f) override {
        CountingObserver::failed(f);
        failedShots.push_back(f.shotIndex);
      }
    };
    const render::RenderOptions o = options("tail-fails-" + std::to_string(failing));
    render::Renderer renderer;
    Blocker observer;
    observer.out = o.outputDirectory;
    observer.shot = failing;
    observer.id = sequence_.shots[static_cast<std::size_t>(failing)].id;
    const render::RenderSummary summary = renderer.render(sequence_, o, observer);
    QVERIFY(!summary.finished.completed);
    QCOMPARE(observer.failedShots, std::vector<int>{failing});
    const std::string expected =
        "shot " + std::to_string(failing + 1) + " (" + observer.id + "): writing its tail and record: ";
    QVERIFY2(observer.failuresText[0].rfind(expected, 0) == 0 &&
                 observer.failuresText[0].find("is a directory") != std::string::npos,
             observer.failuresText[0].c_str());
  }

  void refusesBeforeAnyWork_data() {
    QTest::addColumn<QString>("problem");
    QTest::addColumn<QString>("field");
    QTest::newRow("unwritable output folder") << "output"
                                              << "output";
    QTest::newRow("missing model file") << "model"
                                        << "model.dit";
    QTest::newRow("plan cannot fit") << "budget"
                                     << "memory.budget";
  }

  void refusesBeforeAnyWork() {
    QFETCH(QString, problem);
    QFETCH(QString, field);
    Sequence sequence = sequence_;
    render::RenderOptions o = options("refused-" + problem.toStdString());
    if (problem == "output") {
      writeFile(std::filesystem::path(dir_.path().toStdString()) / "a-file", "x");
      o.outputDirectory = std::filesystem::path(dir_.path().toStdString()) / "a-file" / "out";
    } else if (problem == "model") {
      sequence.settings.model.dit = (std::filesystem::path(dir_.path().toStdString()) / "missing.safetensors").string();
    } else {
      o.budget = 1024;
    }
    render::Renderer renderer;
    CountingObserver observer;
    try {
      renderer.render(sequence, o, observer);
      QFAIL("the render started");
    } catch (const render::RenderError& error) {
      QCOMPARE(QString::fromStdString(error.field()), field);
      QVERIFY(std::string(error.what()).size() > 10);
    }
    QCOMPARE(observer.started, 0);
    QVERIFY(!std::filesystem::exists(o.outputDirectory / "shots"));
  }
};

SHOTCHAIN_TEST(RendererTest, Core)
#include "test_renderer.moc"
