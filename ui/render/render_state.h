#pragma once

#include <QHash>
#include <QImage>
#include <QObject>
#include <QVector>

#include <map>
#include <optional>
#include <string>

#include "render/render_event_types.h"

namespace shotchain::ui {

enum class ShotState { Dirty, Queued, Rendering, Done, Failed };
const char* toString(ShotState state);

struct ShotStatus {
  ShotState state = ShotState::Dirty;
  double progress = 0;  // 0..1 while rendering
  QImage firstThumbnail;
  QImage lastThumbnail;
  std::optional<render::StepCacheFigures> cache;  // its last render's step cache, when its policy was not off
  std::optional<render::ExpertFigures> experts;   // two experts: which ran when, and what moved for them
};

// What the studio knows about each shot's render: its state, decoded frames, thumbnails and the
// figures of the cut into it. Shots are keyed by id so reordering keeps what was rendered; an edit
// makes a shot dirty, and every later shot that takes a handoff from a dirty one.
class RenderState : public QObject {
  Q_OBJECT

 public:
  static constexpr int kThumbnailHeight = 40;
  static constexpr qint64 kDefaultFrameCacheBytes = qint64{1} << 30;

  explicit RenderState(QObject* parent = nullptr);

  ShotStatus status(const std::string& shotId) const;
  // A shot's decoded frames: from memory, or read back from the render's PNGs when they were dropped.
  QVector<QImage> frames(const std::string& shotId) const;
  // Decoded frames kept in memory. Beyond this the least recently shown finished shots are dropped
  // (their PNGs stay on disk); the shot being decoded is always kept.
  void setFrameCacheBytes(qint64 bytes);
  qint64 cachedFrameBytes() const;
  bool framesInMemory(const std::string& shotId) const { return frames_.count(shotId) > 0; }
  // The cut that ends in `toShotId`, once measured.
  std::optional<continuity::CutMetrics> cutInto(const std::string& toShotId) const;
  std::vector<continuity::CutMetrics> cuts() const;

  // Re-evaluates which shots are dirty after an edit.
  void documentChanged(const Sequence& sequence);
  // Forgets everything (a different document).
  void clear();

  void renderStarted(const Sequence& sequence);
  void shotStarted(const render::ShotStarted& shot);
  void stepDone(int shotIndex, int step, int steps);
  void framesDecoded(int shotIndex, int firstFrame, int shotFrames, const QVector<QImage>& frames);
  void cutMeasured(const continuity::CutMetrics& cut);
  void shotFinished(const render::ShotFinished& shot);
  void shotFailed(int shotIndex);
  void renderFinished();

 Q_SIGNALS:
  void changed();
  // Decoded frames of a shot arrived (the preview may show them).
  void framesChanged(const QString& shotId);

 private:
  struct Snapshot {
    Shot shot;
    std::string previousId;
    std::string settingsKey;
  };
  struct FramesOnDisk {
    std::string directory;  // shots/<NN>-<id> of the render that wrote them
    int count = 0;
  };
  std::string idAt(int shotIndex) const;
  void touch(const std::string& shotId) const;
  void dropFramesBeyondCache(const std::string& keep) const;
  void makeThumbnail(const std::string& shotId, const QImage& frame, bool first);
  static std::string settingsKey(const SequenceSettings& settings);

  Sequence current_;
  Sequence rendering_;
  std::map<std::string, ShotStatus> status_;
  std::map<std::string, Snapshot> rendered_;
  // The frame cache: filled from the render, refilled from disk by frames() (hence mutable).
  mutable std::map<std::string, QVector<QImage>> frames_;
  mutable std::map<std::string, std::uint64_t> lastUse_;
  mutable std::uint64_t useClock_ = 0;
  std::map<std::string, FramesOnDisk> onDisk_;
  qint64 frameCacheBytes_ = kDefaultFrameCacheBytes;
  std::map<std::string, continuity::CutMetrics> cuts_;
  int generation_ = 0;  // thumbnails made for an older document are dropped
};

}  // namespace shotchain::ui
