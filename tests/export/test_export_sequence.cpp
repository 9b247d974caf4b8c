#include <QTemporaryDir>
#include <QTest>

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "export/frame_file_writer.h"
#include "export/otio_timeline.h"
#include "export/sequence_outputs.h"
#include "export/shot_paths.h"
#include "export/video_probe.h"
#include "export_test_frames.h"
#include "render/renderer.h"
#include "sequence/sequence.h"
#include "test_registry.h"
#include "test_support.h"

using namespace shotchain;
using namespace shotchain::exporting;
using nlohmann::json;
using shotchain::testing::errorOf;
using shotchain::testing::readFile;
using shotchain::testing::syntheticFrame;
using shotchain::testing::temporaryFilesIn;
namespace fs = std::filesystem;

namespace {

Sequence threeShots() {
  Sequence sequence;
  sequence.settings.name = "Red circle";
  sequence.settings.fps = 16;
  const int frames[] = {5, 9, 5};
  const char* ids[] = {"intro", "walk", "outro"};
  for (int i = 0; i < 3; ++i) {
    Shot shot;
    shot.id = ids[i];
    shot.name = std::string("Shot ") + ids[i];
    shot.prompt = std::string("a red circle, part ") + std::to_string(i + 1);
    shot.frames = frames[i];
    shot.width = 32;
    shot.height = 24;
    shot.seed = 1000 + static_cast<std::uint64_t>(i);
    shot.continuity.mode = i == 0 ? ContinuityMode::None : ContinuityMode::Latent;
    sequence.shots.push_back(shot);
  }
  return sequence;
}

// Streams every shot's frames through a FrameFileWriter, two frames per event, as a render would.
render::RenderSummary renderThrough(FrameFileWriter& writer, const Sequence& sequence) {
  render::RenderSummary summary;
  for (std::size_t i = 0; i < sequence.shots.size(); ++i) {
    const Shot& shot = sequence.shots[i];
    render::ShotStarted started;
    started.index = static_cast<int>(i);
    started.count = static_cast<int>(sequence.shots.size());
    started.id = shot.id;
    started.frames = shot.frames;
    writer.shotStarted(started);
    for (int first = 0; first < shot.frames; first += 2) {
      render::FramesDecoded event;
      event.shotIndex = static_cast<int>(i);
      event.firstFrame = first;
      event.shotFrames = shot.frames;
      for (int f = first; f < std::min(first + 2, shot.frames); ++f)
        event.frames.push_back(syntheticFrame(shot.width, shot.height, static_cast<int>(i) * 50 + f));
      writer.framesDecoded(event);
    }
    render::ShotFinished finished;
    finished.index = static_cast<int>(i);
    finished.id = shot.id;
    finished.key = "key-" + shot.id;
    finished.framesWritten = shot.frames;
    writer.shotFinished(finished);
    summary.shots.push_back(finished);
  }
  return summary;
}

}  // namespace

class TestExportSequence : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void describeOutputsFollowsTheSequence() {
    Sequence sequence = threeShots();
    sequence.shots[1].enabled = false;
    render::RenderSummary summary;
    render::ShotFinished finished;
    finished.id = "outro";
    finished.key = "k3";
    finished.framesWritten = 5;
    summary.shots.push_back(finished);
    const SequenceOutputs outputs = describeOutputs(sequence, summary, "/out");
    QCOMPARE(outputs.shots.size(), std::size_t{2});
    QCOMPARE(outputs.shots[0].directory.string(), std::string("/out/shots/01-intro"));
    QCOMPARE(outputs.shots[0].frames, 0);  // not in this render: counted on disk
    QCOMPARE(outputs.shots[1].directory.string(), std::string("/out/shots/03-outro"));
    QCOMPARE(outputs.shots[1].key, std::string("k3"));
    QCOMPARE(outputs.shots[1].frames, 5);
    QCOMPARE(outputs.shots[1].continuityMode, std::string("latent"));
    QCOMPARE(outputs.fps, 16.0);
  }

  void threeShotsGiveAMovieAndATimeline() {
    QTemporaryDir dir;
    const fs::path out = dir.path().toStdString();
    const Sequence sequence = threeShots();
    FrameFileWriter writer(out);
    const render::RenderSummary summary = renderThrough(writer, sequence);
    QVERIFY(writer.errors().empty());

    const FinalizedOutputs result = finalizeOutputs(describeOutputs(sequence, summary, out));
    QCOMPARE(result.frames, 19);
    QCOMPARE(result.movie, out / "sequence.mp4");
    QCOMPARE(result.timeline, out / "sequence.otio");
    QCOMPARE(temporaryFilesIn(out), std::string());

    const VideoProbe probe = probeVideo(result.movie);
    QCOMPARE(probe.codec, std::string("h264"));
    QCOMPARE(probe.decodedFrames, 19);
    QCOMPARE(probe.width, 32);

    const json timeline = json::parse(readFile(result.timeline));
    QCOMPARE(timeline["OTIO_SCHEMA"].get<std::string>(), std::string("Timeline.1"));
    QCOMPARE(timeline["name"].get<std::string>(), std::string("Red circle"));
    const json& stack = timeline["tracks"];
    QCOMPARE(stack["OTIO_SCHEMA"].get<std::string>(), std::string("Stack.1"));
    QCOMPARE(stack["children"].size(), std::size_t{1});
    const json& track = stack["children"][0];
    QCOMPARE(track["OTIO_SCHEMA"].get<std::string>(), std::string("Track.1"));
    QCOMPARE(track["kind"].get<std::string>(), std::string("Video"));
    const json& clips = track["children"];
    QCOMPARE(clips.size(), std::size_t{3});

    double next = 0;
    for (std::size_t i = 0; i < 3; ++i) {
      const json& clip = clips[i];
      const Shot& shot = sequence.shots[i];
      QCOMPARE(clip["OTIO_SCHEMA"].get<std::string>(), std::string("Clip.2"));
      QCOMPARE(clip["name"].get<std::string>(), shot.name);
      const json& range = clip["source_range"];
      QCOMPARE(range["OTIO_SCHEMA"].get<std::string>(), std::string("TimeRange.1"));
      QCOMPARE(range["start_time"]["OTIO_SCHEMA"].get<std::string>(), std::string("RationalTime.1"));
      QCOMPARE(range["start_time"]["rate"].get<double>(), 16.0);
      QCOMPARE(range["start_time"]["value"].get<double>(), next);  // gapless
      QCOMPARE(range["duration"]["value"].get<double>(), double(shot.frames));
      next += shot.frames;

      QCOMPARE(clip["active_media_reference_key"].get<std::string>(), std::string("DEFAULT_MEDIA"));
      const json& movie = clip["media_references"]["DEFAULT_MEDIA"];
      QCOMPARE(movie["OTIO_SCHEMA"].get<std::string>(), std::string("ExternalReference.1"));
      QCOMPARE(movie["target_url"].get<std::string>(), std::string("sequence.mp4"));
      QVERIFY(movie["available_range"] == range);

      const json& frames = clip["media_references"]["frames"];
      QCOMPARE(frames["OTIO_SCHEMA"].get<std::string>(), std::string("ImageSequenceReference.1"));
      const fs::path firstFrame = out / (frames["target_url_base"].get<std::string>() + "000001.png");
      QVERIFY2(fs::is_regular_file(firstFrame), firstFrame.c_str());
      QCOMPARE(frames["frame_zero_padding"].get<int>(), 6);

      const json& meta = clip["metadata"]["shotchain"];
      QCOMPARE(meta["id"].get<std::string>(), shot.id);
      QCOMPARE(meta["prompt"].get<std::string>(), shot.prompt);
      QCOMPARE(meta["seed"].get<std::uint64_t>(), shot.seed);
      QCOMPARE(meta["continuity"].get<std::string>(), std::string(toString(shot.continuity.mode)));
      QCOMPARE(meta["key"].get<std::string>(), "key-" + shot.id);
    }
    QCOMPARE(next, double(probe.decodedFrames));  // the clips cover the movie exactly
  }

  void missingFramesAreNamedAndNothingIsWritten() {
    QTemporaryDir dir;
    const fs::path out = dir.path().toStdString();
    const Sequence sequence = threeShots();
    FrameFileWriter writer(out);
    const render::RenderSummary summary = renderThrough(writer, sequence);
    const fs::path walk = shotDirectory(out, 1, "walk");
    fs::remove(frameFile(walk, 3));

    const SequenceOutputs outputs = describeOutputs(sequence, summary, out);
    QString error = errorOf([&] { finalizeOutputs(outputs); });
    QVERIFY2(error.contains(QString::fromStdString(framesDirectory(walk).string())), qPrintable(error));
    QVERIFY2(error.contains("000003.png"), qPrintable(error));
    QVERIFY(!fs::exists(out / "sequence.mp4"));
    QVERIFY(!fs::exists(out / "sequence.otio"));

    fs::remove_all(walk);
    error = errorOf([&] { finalizeOutputs(outputs); });
    QVERIFY2(error.contains(QString::fromStdString(framesDirectory(walk).string())), qPrintable(error));
    QVERIFY2(error.contains("walk"), qPrintable(error));
  }

  void reusedShotsAreCountedOnDisk() {
    QTemporaryDir dir;
    const fs::path out = dir.path().toStdString();
    const Sequence sequence = threeShots();
    FrameFileWriter writer(out);
    renderThrough(writer, sequence);
    // A later render that re-rendered nothing: every shot comes from disk.
    const FinalizedOutputs result = finalizeOutputs(describeOutputs(sequence, render::RenderSummary{}, out));
    QCOMPARE(result.frames, 19);
  }

  void anUnwritableOutputFolderIsNamed() {
    QTemporaryDir dir;
    const fs::path out = dir.path().toStdString();
    const Sequence sequence = threeShots();
    FrameFileWriter writer(out);
    SequenceOutputs outputs = describeOutputs(sequence, renderThrough(writer, sequence), out);
    // The frames stay where they are; the sequence files would go into a "folder" that is a file.
    const fs::path blocked = out / "blocked";
    shotchain::testing::writeFile(blocked, "x");
    outputs.outputDirectory = blocked;
    const QString error = errorOf([&] { finalizeOutputs(outputs); });
    QVERIFY2(error.contains(QString::fromStdString(blocked.string())), qPrintable(error));
  }

  void timelineJsonKeepsUnicodeAndOddText() {
    OtioTimeline timeline;
    timeline.name = "Nuit étoilée";
    timeline.fps = 23.976;
    OtioShot shot;
    shot.id = "a";
    shot.prompt = "quotes \" and \\ and\nnewline, 星";
    shot.frames = 17;
    timeline.shots.push_back(shot);
    const json parsed = json::parse(otioTimelineJson(timeline));
    const json& clip = parsed["tracks"]["children"][0]["children"][0];
    QCOMPARE(clip["metadata"]["shotchain"]["prompt"].get<std::string>(), shot.prompt);
    QCOMPARE(clip["name"].get<std::string>(), std::string("a"));  // no name: the id
    QCOMPARE(clip["source_range"]["duration"]["rate"].get<double>(), 23.976);
    QVERIFY(!clip["media_references"].contains("frames"));  // no frames folder given
  }
};

SHOTCHAIN_TEST(TestExportSequence, Core)
#include "test_export_sequence.moc"
