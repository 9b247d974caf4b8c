// `shotchain render --ranks 2` on a tiny random model set, against the same render on one process:
// the frames within one 8-bit level, the same report figures, rank 0 alone writing; guidance in
// parallel; the render-folder lock; a rank killed mid-render gives exit 6 naming it, and --resume
// completes the render.
#include <QElapsedTimer>
#include <QImage>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "cli_run.h"
#include "rank_processes.h"
#include "render/output_layout.h"
#include "sequence/sequence_io.h"
#include "test_registry.h"
#include "test_support.h"
#include "tiny_model_set.h"

using namespace shotchain;
using namespace shotchain::testing;

namespace {

// Largest difference of any pixel channel over every frame of the three shots.
int largestPixelDifference(const std::filesystem::path& a, const std::filesystem::path& b, int& frames) {
  int largest = 0;
  frames = 0;
  for (int i = 0; i < 3; ++i) {
    const std::string id(1, static_cast<char>('a' + i));
    for (int f = 0;; ++f) {
      const std::filesystem::path fa = render::framePath(render::shotDirectory(a, i, id), f);
      if (!std::filesystem::exists(fa)) break;
      const QImage ia = QImage(q(fa.string())).convertToFormat(QImage::Format_RGB888);
      const QImage ib = QImage(q(render::framePath(render::shotDirectory(b, i, id), f).string()))
                            .convertToFormat(QImage::Format_RGB888);
      if (ib.isNull() || ia.size() != ib.size()) return 255;
      for (int y = 0; y < ia.height(); ++y)
        for (int x = 0; x < ia.width() * 3; ++x)
          largest = std::max(largest, std::abs(int(ia.constScanLine(y)[x]) - int(ib.constScanLine(y)[x])));
      ++frames;
    }
  }
  return largest;
}

// The cut figures of two reports agree (to what 8-bit frames allow).
QString reportDifference(const std::filesystem::path& a, const std::filesystem::path& b) {
  const nlohmann::json ra = nlohmann::json::parse(readFile(a / "report.json")),
                       rb = nlohmann::json::parse(readFile(b / "report.json"));
  if (ra["cuts"].size() != rb["cuts"].size()) return "cut counts differ";
  for (std::size_t i = 0; i < ra["cuts"].size(); ++i)
    for (const auto& [key, value] : ra["cuts"][i].items()) {
      if (!value.is_number() || key.find("seconds") != std::string::npos) continue;  // timings differ from run to run
      const double x = value.get<double>(), y = rb["cuts"][i][key].get<double>();
      if (std::abs(x - y) > 1e-3 * std::max(1.0, std::abs(x)) + 0.05)
        return QString("cut %1 %2: %3 vs %4").arg(i).arg(q(key)).arg(x).arg(y);
    }
  return {};
}

}  // namespace

class DistributedRender : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;
  std::filesystem::path root_, sequenceFile_, single_;

 private Q_SLOTS:
  void initTestCase() {
    root_ = dir_.path().toStdString();
    sequenceFile_ = root_ / "three.json";
    Sequence sequence;
    sequence.settings.name = "three shots over ranks";
    sequence.settings.model = writeTinyModelSet(root_ / "models").modelSet();
    sequence.settings.sampler.steps = 8;
    sequence.settings.policy = ResidencyPolicy::Pinned;
    const char* prompts[] = {"a red circle moving right on a black background",
                             "a red circle moving down on a black background",
                             "a blue square moving left on a black background"};
    const ContinuityMode modes[] = {ContinuityMode::None, ContinuityMode::Latent, ContinuityMode::LatentOverlap};
    for (int i = 0; i < 3; ++i) {
      Shot shot;
      shot.id = std::string(1, static_cast<char>('a' + i));
      shot.name = "Shot " + std::to_string(i + 1);
      shot.prompt = prompts[i];
      shot.frames = 9;
      shot.width = 48;
      shot.height = 48;  // 3·3 patches × 3 latent frames = 27 tokens: padded to 28 over 2 ranks
      shot.seed = 200 + static_cast<std::uint64_t>(i);
      shot.continuity.mode = modes[i];
      sequence.shots.push_back(shot);
    }
    saveSequenceFile(sequence, sequenceFile_);
    single_ = root_ / "single";
    const CliRun run = runCli({"render", q(sequenceFile_.string()), "--out", q(single_.string())});
    QVERIFY2(run.exitCode == 0, qPrintable(run.err));
  }

  void twoRanksEqualOneProcess() {
    const std::filesystem::path out = root_ / "two";
    const CliRun run =
        runCli({"render", q(sequenceFile_.string()), "--out", q(out.string()), "--ranks", "2", "--timeout", "60"});
    QVERIFY2(run.exitCode == 0, qPrintable(run.err));
    QVERIFY2(run.err.contains("[rank 1] rank 1: joined 2 ranks"), qPrintable(run.err));
    QVERIFY2(run.err.contains("[rank 1] rank 1: shot 3 (c) done"), qPrintable(run.err));
    int frames = 0;
    const int largest = largestPixelDifference(single_, out, frames);
    QCOMPARE(frames, 9 + 9 + 8);  // latent_overlap writes frames − 1
    QVERIFY2(largest <= 1, qPrintable(QString("largest pixel difference %1").arg(largest)));
    const QString difference = reportDifference(single_, out);
    QVERIFY2(difference.isEmpty(), qPrintable(difference));
    QVERIFY(std::filesystem::exists(out / "sequence.mp4"));
    QVERIFY(std::filesystem::exists(out / "sequence.otio"));
  }

  void guidanceInParallelEqualsOneProcess() {
    const std::filesystem::path out = root_ / "guidance";
    const CliRun run = runCli({"render", q(sequenceFile_.string()), "--out", q(out.string()), "--ranks", "2",
                               "--guidance-parallel", "--timeout", "60"});
    QVERIFY2(run.exitCode == 0, qPrintable(run.err));
    QVERIFY2(run.err.contains("1 sequence x 2 guidance"), qPrintable(run.err));
    int frames = 0;
    const int largest = largestPixelDifference(single_, out, frames);
    QCOMPARE(frames, 26);
    QVERIFY2(largest <= 1, qPrintable(QString("largest pixel difference %1").arg(largest)));
    QVERIFY2(reportDifference(single_, out).isEmpty(), qPrintable(reportDifference(single_, out)));
  }

  // The largest forward is the latent_overlap shot's: 3·3 patches × 4 latent frames (its 3 and the
  // tail before them) = 36 tokens, 18 per rank; width 64, float32, guidance as a batch of 2:
  // 4 · 2 · 18 · 64 · 4 bytes · ½ sent per layer.
  void planShowsEachRanksShare() {
    const CliRun run = runCli({"plan", q(sequenceFile_.string()), "--ranks", "2", "--json"});
    QVERIFY2(run.exitCode == 0, qPrintable(run.out));
    const QString stdout_ = run.out.left(run.out.size() - run.err.size());
    const nlohmann::json perRank = nlohmann::json::parse(stdout_.toStdString())["per_rank"];
    QCOMPARE(perRank["tokens"].get<int>(), 36);
    QCOMPARE(perRank["tokens_per_rank"].get<int>(), 18);
    QCOMPARE(perRank["bytes_per_layer"].get<std::uint64_t>(), std::uint64_t{4 * 2 * 18 * 64 * 4 / 2});
    QVERIFY(perRank["dit_weights"].get<std::uint64_t>() > 0 && perRank["dit_activations"].get<std::uint64_t>() > 0);
    const CliRun text = runCli({"plan", q(sequenceFile_.string()), "--ranks", "4"});
    QVERIFY2(text.exitCode == 1 && text.out.contains("cannot split: 2 heads do not divide by 4 sequence ranks"),
             qPrintable(text.out));
  }

  // 9 tokens (3×3) padded to 10, 5 a rank; width 64, float32: 4 · 5 · 64 · 4 bytes · ½ per layer.
  void benchDitReportsWhatTheCollectivesCost() {
    const CliRun run =
        runCli({"bench", "dit", "--config", "tiny", "--tokens", "9", "--repeats", "1", "--ranks", "2", "--json"});
    QVERIFY2(run.exitCode == 0, qPrintable(run.out));
    const nlohmann::json bench = nlohmann::json::parse(run.out.left(run.out.size() - run.err.size()).toStdString());
    QCOMPARE(bench["ranks"].get<int>(), 2);
    QCOMPARE(bench["all_to_all_bytes_per_layer"].get<double>(), 4.0 * 5 * 64 * 4 / 2);
    QCOMPARE(bench["collectives"].get<int>(), 2 * 4 + 1);  // four all-to-alls a layer, one gather
    QVERIFY(bench["collective_s"].get<double>() > 0 && bench["compute_s"].get<double>() > 0);
    QVERIFY(bench["rel_l2_vs_one_process"].get<double>() <= 1e-5);
  }

  void secondRenderIntoTheSameFolderIsRefused() {
    const std::filesystem::path out = root_ / "locked";
    std::filesystem::create_directories(out);
    const int fd = ::open((out / ".shotchain-render.lock").c_str(), O_RDWR | O_CREAT, 0644);
    QVERIFY(fd >= 0 && ::flock(fd, LOCK_EX | LOCK_NB) == 0);  // as a running render holds it
    const CliRun refused = runCli({"render", q(sequenceFile_.string()), "--out", q(out.string())});
    ::close(fd);
    QCOMPARE(refused.exitCode, 4);
    QVERIFY2(refused.err.contains("another render is writing into this folder"), qPrintable(refused.err));
    QVERIFY(!std::filesystem::exists(out / "shots"));
  }

  void killedRankStopsTheOthersAndResumeCompletes() {
    const std::filesystem::path out = root_ / "killed";
    RankProcesses ranks(SHOTCHAIN_CLI,
                        {"render", q(sequenceFile_.string()), "--out", q(out.string()), "--timeout", "10"}, 2);
    const std::filesystem::path firstShot = render::shotRecordPath(render::shotDirectory(out, 0, "a"));
    QVERIFY(ranks[0].waitForStarted(30000) && ranks[1].waitForStarted(30000));
    QElapsedTimer waited;
    waited.start();
    while (!std::filesystem::exists(firstShot) && waited.elapsed() < 120000 && ranks[0].state() == QProcess::Running)
      QTest::qWait(20);
    QVERIFY2(std::filesystem::exists(firstShot), "shot 1 was not written");
    ::kill(static_cast<pid_t>(ranks[1].processId()), SIGKILL);
    QElapsedTimer stopping;
    stopping.start();
    const std::vector<RankRun> runs = ranks.finish(40000);
    QVERIFY2(runs[0].exitCode == 6, qPrintable(runs[0].output));
    QVERIFY2(stopping.elapsed() < 25000, qPrintable(runs[0].output));
    QVERIFY2(runs[0].output.contains("rank 1 stopped responding") || runs[0].output.contains("rank 1 failed"),
             qPrintable(runs[0].output));
    QVERIFY(!std::filesystem::exists(out / "sequence.mp4"));

    const CliRun resume = runCli(
        {"render", q(sequenceFile_.string()), "--out", q(out.string()), "--resume", "--ranks", "2", "--timeout", "60"});
    QVERIFY2(resume.exitCode == 0, qPrintable(resume.err));
    QVERIFY2(resume.err.contains("re-used"), qPrintable(resume.err));
    int frames = 0;
    const int largest = largestPixelDifference(single_, out, frames);
    QCOMPARE(frames, 26);
    QVERIFY2(largest <= 1, qPrintable(QString("largest pixel difference %1").arg(largest)));
  }
};

SHOTCHAIN_TEST(DistributedRender, Gui)
#include "test_distributed_render.moc"
