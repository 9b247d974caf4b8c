// `shotchain render` as a user runs it, on a tiny random model set: every output file well-formed,
// a killed render resumed bit for bit, and the exit codes of refusals.
#include <QDir>
#include <QImage>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <filesystem>
#include <functional>

#include <nlohmann/json.hpp>

#include "cli_run.h"
#include "render/output_layout.h"
#include "runtime/torch_runtime.h"
#include "sequence/sequence_io.h"
#include "test_registry.h"
#include "test_support.h"
#include "tiny_model_set.h"

using namespace shotchain;
using namespace shotchain::testing;

namespace {

using Run = CliRun;

std::vector<std::filesystem::path> filesUnder(const std::filesystem::path& root, const std::string& extension) {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root))
    if (entry.is_regular_file() && entry.path().extension() == extension)
      files.push_back(std::filesystem::relative(entry.path(), root));
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

class RenderCli : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;
  std::filesystem::path root_, sequenceFile_;

  void writeSequence(int steps) {
    Sequence sequence;
    sequence.settings.name = "cli three shots";
    sequence.settings.model = writeTinyModelSet(root_ / "models").modelSet();
    sequence.settings.sampler.steps = steps;
    sequence.settings.policy = ResidencyPolicy::Pinned;
    const char* prompts[] = {"a red circle moving right on a black background",
                             "a red circle moving down on a black background",
                             "a blue square moving left on a black background"};
    const ContinuityMode modes[] = {ContinuityMode::None, ContinuityMode::Latent, ContinuityMode::Latent};
    for (int i = 0; i < 3; ++i) {
      Shot shot;
      shot.id = std::string(1, static_cast<char>('a' + i));
      shot.name = "Shot " + std::to_string(i + 1);
      shot.prompt = prompts[i];
      shot.frames = 9;
      shot.width = 32;
      shot.height = 32;
      shot.seed = 100 + static_cast<std::uint64_t>(i);
      shot.continuity.mode = modes[i];
      sequence.shots.push_back(shot);
    }
    saveSequenceFile(sequence, sequenceFile_);
  }

 private Q_SLOTS:
  void initTestCase() {
    root_ = dir_.path().toStdString();
    sequenceFile_ = root_ / "three.json";
    writeSequence(12);
  }

  void writesEveryFileWellFormed() {
    const std::filesystem::path out = root_ / "full";
    const Run run = runCli({"render", q(sequenceFile_.string()), "--out", q(out.string())});
    QVERIFY2(run.exitCode == 0, qPrintable(run.err));
    int totalFrames = 0;
    for (int i = 0; i < 3; ++i) {
      const std::filesystem::path shotDir = render::shotDirectory(out, i, std::string(1, static_cast<char>('a' + i)));
      QVERIFY(std::filesystem::exists(render::tailLatentPath(shotDir)));
      const nlohmann::json shot = nlohmann::json::parse(readFile(render::shotRecordPath(shotDir)));
      QCOMPARE(shot["format"].get<std::string>(), std::string("shotchain.shot/1"));
      const int frames = shot["frames_written"].get<int>();
      QCOMPARE(frames, 9);
      totalFrames += frames;
      for (int f = 0; f < frames; ++f) {
        QImage image(q(render::framePath(shotDir, f).string()));
        QVERIFY2(!image.isNull(), qPrintable(q(render::framePath(shotDir, f).string())));
        QCOMPARE(image.size(), QSize(32, 32));
      }
    }
    const nlohmann::json report = nlohmann::json::parse(readFile(out / "report.json"));
    QCOMPARE(report["format"].get<std::string>(), std::string("shotchain.report/1"));
    QVERIFY(report["completed"].get<bool>());
    QCOMPARE(report["shots"].size(), std::size_t{3});
    QCOMPARE(report["cuts"].size(), std::size_t{2});
    QCOMPARE(report["cuts"][0]["handoff_mse"].get<double>(), 0.0);
    for (const char* key : {"plan", "policy", "memory", "timings", "warnings"}) QVERIFY2(report.contains(key), key);
    QVERIFY(readFile(out / "report.csv").rfind("section,index,field,value\n", 0) == 0);

    const nlohmann::json otio = nlohmann::json::parse(readFile(out / "sequence.otio"));
    QCOMPARE(otio["OTIO_SCHEMA"].get<std::string>(), std::string("Timeline.1"));
    QCOMPARE(otio["tracks"]["children"][0]["children"].size(), std::size_t{3});

    QProcess probe;
    probe.start("ffprobe",
                {"-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries",
                 "stream=codec_name,pix_fmt,nb_read_frames", "-of", "json", q((out / "sequence.mp4").string())});
    if (!probe.waitForStarted(5000)) QSKIP("ffprobe is not installed");
    QVERIFY(probe.waitForFinished(60000));
    const nlohmann::json streams = nlohmann::json::parse(probe.readAllStandardOutput().toStdString());
    QCOMPARE(streams["streams"][0]["codec_name"].get<std::string>(), std::string("h264"));
    QCOMPARE(streams["streams"][0]["pix_fmt"].get<std::string>(), std::string("yuv420p"));
    QCOMPARE(std::stoi(streams["streams"][0]["nb_read_frames"].get<std::string>()), totalFrames);
  }

  void killedRenderResumesBitForBit() {
    const std::filesystem::path whole = root_ / "whole", resumed = root_ / "resumed";
    QCOMPARE(runCli({"render", q(sequenceFile_.string()), "--out", q(whole.string())}).exitCode, 0);

    QProcess killed;
    killed.setProcessChannelMode(QProcess::MergedChannels);
    killed.start(SHOTCHAIN_CLI, {"render", q(sequenceFile_.string()), "--out", q(resumed.string())});
    QByteArray seen;
    while (!seen.contains("shot 2/3") && killed.waitForReadyRead(60000)) seen += killed.readAll();
    QVERIFY2(seen.contains("shot 2/3"), seen.constData());
    killed.kill();
    killed.waitForFinished(10000);
    QVERIFY(!std::filesystem::exists(resumed / "sequence.mp4"));

    const Run resume = runCli({"render", q(sequenceFile_.string()), "--out", q(resumed.string()), "--resume"});
    QVERIFY2(resume.exitCode == 0, qPrintable(resume.err));
    QVERIFY2(resume.err.contains("re-used"), qPrintable(resume.err));

    for (const char* extension : {".png", ".safetensors", ".mp4"}) {
      const auto expected = filesUnder(whole, extension);
      QCOMPARE(filesUnder(resumed, extension), expected);
      QVERIFY(!expected.empty());
      for (const auto& file : expected)
        QVERIFY2(readFile(whole / file) == readFile(resumed / file), qPrintable(q(file.string())));
    }
  }

  // A render folder changed after the render (a frame or tail replaced, emptied, truncated or linked to another
  // shot's, a record that counts fewer frames or cannot be read) is not re-used: --resume says what it found,
  // renders that shot again, and the result is the untouched render's byte for byte; a second --resume re-uses
  // everything.
  void aTamperedRenderFolderIsRenderedAgain() {
    const std::filesystem::path whole = root_ / "untampered";
    QCOMPARE(runCli({"render", q(sequenceFile_.string()), "--out", q(whole.string())}).exitCode, 0);
    namespace fs = std::filesystem;
    const std::vector<std::pair<std::string, std::function<void(const fs::path&)>>> cases = {
        {"counts 5 frames",
         [](const fs::path& shot) {
           nlohmann::json record = nlohmann::json::parse(readFile(render::shotRecordPath(shot)));
           record["frames_written"] = 5;
           writeFile(render::shotRecordPath(shot), record.dump());
         }},
        {"frames/000005.png is missing or not a file of its own",
         [](const fs::path& shot) {
           fs::remove(render::framePath(shot, 4));
           fs::create_symlink("000004.png", render::framePath(shot, 4));
         }},
        {"frames is not a folder of its own",
         [](const fs::path& shot) {
           fs::remove_all(shot / "frames");
           fs::create_directory_symlink("../01-a/frames", shot / "frames");
         }},
        {"shot.json cannot be read", [](const fs::path& shot) { writeFile(render::shotRecordPath(shot), "{broken"); }},
        {"frames/000003.png is empty", [](const fs::path& shot) { writeFile(render::framePath(shot, 2), ""); }},
        {"frames/000007.png differs", [](const fs::path& shot) { fs::resize_file(render::framePath(shot, 6), 100); }},
        {"tail_latent.safetensors differs",
         [](const fs::path& shot) {
           fs::copy_file(render::tailLatentPath(shot.parent_path() / "01-a"), render::tailLatentPath(shot),
                         fs::copy_options::overwrite_existing);
         }},
        {"tail_latent.safetensors is missing", [](const fs::path& shot) { fs::remove(render::tailLatentPath(shot)); }},
    };
    int n = 0;
    for (const auto& [expected, tamper] : cases) {
      const fs::path out = root_ / ("tampered" + std::to_string(++n));
      fs::copy(whole, out, fs::copy_options::recursive);
      tamper(render::shotDirectory(out, 1, "b"));
      const Run resume = runCli({"render", q(sequenceFile_.string()), "--out", q(out.string()), "--resume"});
      QVERIFY2(resume.exitCode == 0, qPrintable(resume.err));
      QVERIFY2(resume.err.contains("shot 2 (b) on disk: ") && resume.err.contains(q(expected)) &&
                   resume.err.contains("1 shots rendered, 2 re-used"),
               qPrintable(q(expected) + "\n" + resume.err));
      for (const char* extension : {".png", ".safetensors", ".mp4"})
        for (const auto& file : filesUnder(whole, extension))
          QVERIFY2(readFile(whole / file) == readFile(out / file), qPrintable(q(expected + ": " + file.string())));
      QVERIFY(!fs::is_symlink(render::shotDirectory(out, 1, "b") / "frames"));
      QVERIFY(fs::exists(render::framePath(render::shotDirectory(out, 0, "a"), 8)));  // the link's target stays
      const Run again = runCli({"render", q(sequenceFile_.string()), "--out", q(out.string()), "--resume"});
      QVERIFY2(again.exitCode == 0 && again.err.contains("0 shots rendered, 3 re-used"), qPrintable(again.err));
    }
  }

  // A `none` shot's key does not depend on the shot before it: re-used after that shot changed, its
  // cut is measured again from its frames on disk (not the stale figures of its shot.json).
  void cutIntoReusedNoneShotIsMeasuredAgain() {
    Sequence sequence = *loadSequenceFile(sequenceFile_).sequence;
    sequence.shots[2].continuity.mode = ContinuityMode::None;
    const std::filesystem::path file = root_ / "hard_cut.json", out = root_ / "hard_cut",
                                fresh = root_ / "hard_cut_fresh";
    saveSequenceFile(sequence, file);
    const Run first = runCli({"render", q(file.string()), "--out", q(out.string())});
    QVERIFY2(first.exitCode == 0, qPrintable(first.err));
    QVERIFY2(first.err.contains("after the cut") && first.err.contains("2→3"), qPrintable(first.err));
    const nlohmann::json before = nlohmann::json::parse(readFile(out / "report.json"))["cuts"][1];
    QCOMPARE(before["mode"].get<std::string>(), std::string("none"));
    QCOMPARE(before["from_shot"].get<std::string>(), std::string("b"));

    sequence.shots[1].prompt = "a blue square moving right on a black background";
    sequence.shots[1].seed = 777;
    saveSequenceFile(sequence, file);
    const Run again = runCli({"render", q(file.string()), "--out", q(out.string()), "--resume"});
    QVERIFY2(again.exitCode == 0, qPrintable(again.err));
    const Run whole = runCli({"render", q(file.string()), "--out", q(fresh.string())});
    QVERIFY2(whole.exitCode == 0, qPrintable(whole.err));
    const nlohmann::json report = nlohmann::json::parse(readFile(out / "report.json"));
    QCOMPARE(report["shots_reused"].get<int>(), 2);
    const nlohmann::json remeasured = report["cuts"][1];
    const nlohmann::json expected = nlohmann::json::parse(readFile(fresh / "report.json"))["cuts"][1];
    // The same as a fresh render up to the 8-bit frames read back; the stale figures were different.
    for (const char* key : {"delta_e_prev", "colour_drift_delta_e", "spread_drift_delta_e"}) {
      const double got = remeasured[key].get<double>(), want = expected[key].get<double>(),
                   stale = before[key].get<double>();
      QVERIFY2(std::abs(got - want) < 0.5 && std::abs(stale - want) > 1.0,
               qPrintable(QString("%1: %2 (fresh %3, stale %4)").arg(key).arg(got).arg(want).arg(stale)));
    }
    QVERIFY(std::abs(remeasured["flash_ratio"].get<double>() - expected["flash_ratio"].get<double>()) <
            0.1 * expected["flash_ratio"].get<double>());
    const nlohmann::json record =
        nlohmann::json::parse(readFile(render::shotRecordPath(render::shotDirectory(out, 2, "c"))));
    QCOMPARE(record["cut_in"]["colour_drift_delta_e"].get<double>(), remeasured["colour_drift_delta_e"].get<double>());
  }

  // A shot whose handoff source is not on disk is refused before work, never rendered from noise and
  // stored under the key of a handed-off shot; rendering the missing shot first, then the range,
  // then resuming gives the uninterrupted render byte for byte.
  void subsetRenderThenResumeMatchesWholeRender() {
    const std::filesystem::path whole = root_ / "whole-for-subset", subset = root_ / "subset";
    QCOMPARE(runCli({"render", q(sequenceFile_.string()), "--out", q(whole.string())}).exitCode, 0);

    const Run refused = runCli({"render", q(sequenceFile_.string()), "--out", q(subset.string()), "--shots", "2-3"});
    QCOMPARE(refused.exitCode, 4);
    QVERIFY2(refused.err.contains("shot 1 (a) is not rendered on disk") && refused.err.contains("--shots 1-3"),
             qPrintable(refused.err));
    QVERIFY(!std::filesystem::exists(subset / "shots"));

    QCOMPARE(runCli({"render", q(sequenceFile_.string()), "--out", q(subset.string()), "--shots", "1"}).exitCode, 0);
    const Run range = runCli({"render", q(sequenceFile_.string()), "--out", q(subset.string()), "--shots", "2-3"});
    QVERIFY2(range.exitCode == 0, qPrintable(range.err));
    const Run resume = runCli({"render", q(sequenceFile_.string()), "--out", q(subset.string()), "--resume"});
    QVERIFY2(resume.exitCode == 0 && resume.err.contains("3 re-used"), qPrintable(resume.err));
    for (const char* extension : {".png", ".safetensors", ".mp4"}) {
      const auto expected = filesUnder(whole, extension);
      QCOMPARE(filesUnder(subset, extension), expected);
      for (const auto& file : expected)
        QVERIFY2(readFile(whole / file) == readFile(subset / file), qPrintable(q(file.string())));
    }
  }

  // A range render after an edit used to assemble sequence.mp4 with a stale shot after it, silently.
  void aRangeAfterAnEditSaysWhichShotsAreStale() {
    const std::filesystem::path out = root_ / "stale";
    QCOMPARE(runCli({"render", q(sequenceFile_.string()), "--out", q(out.string())}).exitCode, 0);
    Sequence edited = *loadSequenceFile(sequenceFile_).sequence;
    edited.shots[1].prompt = "a green circle moving down on a black background";
    const std::filesystem::path editedFile = root_ / "three-edited.json";
    saveSequenceFile(edited, editedFile);
    const Run range = runCli({"render", q(editedFile.string()), "--out", q(out.string()), "--shots", "2-2"});
    QVERIFY2(range.exitCode == 0, qPrintable(range.err));
    QVERIFY2(range.err.contains("shot 3 (c) on disk is out of date") && range.err.contains("render 3-3"),
             qPrintable(range.err));
    const nlohmann::json report = nlohmann::json::parse(readFile(out / "report.json"));
    bool reported = false;
    for (const auto& w : report["warnings"]) reported = reported || w.dump().find("stale") != std::string::npos;
    QVERIFY2(reported, report["warnings"].dump().c_str());
    const Run rest = runCli({"render", q(editedFile.string()), "--out", q(out.string()), "--shots", "3-3"});
    QVERIFY2(rest.exitCode == 0 && !rest.err.contains("out of date"), qPrintable(rest.err));
  }

  void shotRangesAreParsedWhole() {
    for (const char* range : {"2x-4", "2-", "-3", "2-4x", "1.5-2", "3-2", "0-1", ""}) {
      const Run run =
          runCli({"render", q(sequenceFile_.string()), "--out", q((root_ / "never").string()), "--shots", range});
      QCOMPARE(run.exitCode, 2);
      QVERIFY2(run.err.contains("--shots: \"" + QString(range) + "\" is not a range like 2-4"), qPrintable(run.err));
    }
    QVERIFY(!std::filesystem::exists(root_ / "never"));
  }

  void refusalsExitBeforeWork() {
    writeFile(root_ / "plain-file", "x");
    const Run unwritable =
        runCli({"render", q(sequenceFile_.string()), "--out", q((root_ / "plain-file" / "out").string())});
    QCOMPARE(unwritable.exitCode, 4);
    QVERIFY2(unwritable.err.contains("plain-file"), qPrintable(unwritable.err));

    const Run invalid = runCli({"render", q((root_ / "missing.json").string())});
    QCOMPARE(invalid.exitCode, 3);
  }
};

SHOTCHAIN_TEST(RenderCli, Core)
#include "test_render_cli.moc"
