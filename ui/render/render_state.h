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
};

// What the studio knows about each shot's render: its state, decoded frames, thumbnails and the
// figures of the cut into it. Shots are keyed by id so reordering keeps what was rendered; an edit
// makes a shot dirty, and every later shot that takes a handoff from a dirty one.
class RenderState : public QObject {
  Q_OBJECT

 public:
  static constexpr int kThumbnailHeight = 40;

  explicit RenderState(QObject* parent = nullptr);

  ShotStatus status(const std::string& shotId) const;
  QVector<QImage> frames(const std::string& shotId) const;
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
  std::string idAt(int shotIndex) const;
  void makeThumbnail(const std::string& shotId, const QImage& frame, bool first);
  static std::string settingsKey(const SequenceSettings& settings);

  Sequence current_;
  Sequence rendering_;
  std::map<std::string, ShotStatus> status_;
  std::map<std::string, Snapshot> rendered_;
  std::map<std::string, QVector<QImage>> frames_;
  std::map<std::string, continuity::CutMetrics> cuts_;
  int generation_ = 0;  // thumbnails made for an older document are dropped
};

}  // namespace shotchain::ui
