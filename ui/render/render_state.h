#pragma once

#include <QHash>
#include <QImage>
#include <QObject>
#include <QVector>

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "io/content_digest.h"
#include "render/render_event_types.h"

namespace shotchain::ui {

// Dirty: nothing rendered for it; Stale: what the studio holds of it (frames, figures) was rendered for
// other settings than it has now; Done: they are for exactly what it is now (its shot key).
enum class ShotState { Dirty, Stale, Queued, Rendering, Done, Failed };
const char* toString(ShotState state);

struct ShotStatus {
  ShotState state = ShotState::Dirty;
  double progress = 0;  // 0..1 while rendering
  QImage firstThumbnail = {};
  QImage lastThumbnail = {};
  std::optional<render::StepCacheFigures> cache = {};       // its last render's step cache, when its policy was not off
  std::optional<render::ExpertFigures> experts = {};        // two experts: which ran when, and what moved for them
  std::vector<continuity::KeyframeLanding> keyframes = {};  // how close it came to its start and end pictures
};

// One row of the Cuts table: the cut into a shot as last measured, and whether it still describes the
// pair of shots the sequence has there now.
struct CutRow {
  continuity::CutMetrics cut;
  std::string fromName;
  std::string toName;
  bool current = true;
};

// What the studio knows about each shot's render: its state, decoded frames, thumbnails and the
// figures of the cut into it. Everything held is tied to the shot key (render/shot_key.h) it was
// rendered for, so a shot is "done" exactly when the next render would re-use it, and a cut's figures
// count only while both its shots keep the keys they were measured with. Shots are kept by id, so a
// reorder keeps what was rendered.
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
  // The cut that ends in `toShotId`, measured between the shots there now as they are now.
  std::optional<continuity::CutMetrics> cutInto(const std::string& toShotId) const;
  // A cut into `toShotId` was measured, but for another shot before it or other settings of either.
  bool cutOutOfDate(const std::string& toShotId) const;
  std::vector<continuity::CutMetrics> cuts() const;
  // Every cut of the sequence in order that has figures, current or not.
  std::vector<CutRow> cutRows() const;

  // Files the keys name that are not digested yet and hold more than this in all are read on the thread
  // pool; until then no shot counts as done (keyProblem() says what is being read).
  static constexpr qint64 kDefaultInlineDigestBytes = qint64{256} << 20;
  void setInlineDigestBytes(qint64 bytes);

  // The key shot `shotId` would render under now ("" when it cannot be known: see keyProblem()).
  std::string currentKey(const std::string& shotId) const;
  const std::string& keyProblem() const { return keyProblem_; }

  // The document's folder (base of its relative paths) and its render folder, for `sequence`; a new
  // render folder is read for what it holds.
  void setFolders(const Sequence& sequence, const std::string& sequenceDirectory, const std::string& outputDirectory);
  // Works out the shot keys again after an edit.
  void documentChanged(const Sequence& sequence);
  // Forgets everything (a different document).
  void clear();
  // What the render folder holds for each shot of the document (a reopened project): the frames,
  // thumbnails and figures of every finished shot, current or out of date.
  void readRenderFolder();

  void renderStarted(const Sequence& sequence);
  void shotStarted(const render::ShotStarted& shot);
  void stepDone(int shotIndex, int step, int steps);
  void framesDecoded(int shotIndex, int firstFrame, int shotFrames, const QVector<QImage>& frames);
  void cutMeasured(const continuity::CutMetrics& cut);
  void shotFinished(const render::ShotFinished& shot);
  void shotFailed(int shotIndex);
  // The render ended (finished, stopped or failed): shots it did not reach are as the folder says.
  void renderFinished();

 Q_SIGNALS:
  void changed();
  // A cut was measured or dropped, or an edit changed which cuts count (cutRows() may differ); not
  // with every step, as changed() is.
  void cutsChanged();
  // Decoded frames of a shot arrived (the preview may show them).
  void framesChanged(const QString& shotId);

 private:
  struct FramesOnDisk {
    std::string directory;  // shots/<NN>-<id> of the render that wrote them
    int count = 0;
  };
  std::string idAt(int shotIndex) const;
  void touch(const std::string& shotId) const;
  void dropFramesBeyondCache(const std::string& keep) const;
  void makeThumbnail(const std::string& shotId, const QImage& frame, const QString& file, bool first);
  ShotState restingState(const std::string& shotId) const;
  std::string previousEnabledKey(const std::string& shotId) const;
  std::string knownDigest(const std::filesystem::path& path, std::vector<std::filesystem::path>& unread) const;
  bool readDigests(std::vector<std::filesystem::path> unread);

  Sequence current_;
  Sequence rendering_;
  std::string sequenceDirectory_;
  std::string outputDirectory_;
  std::vector<std::string> keys_;  // of current_'s shots; empty when they cannot be worked out
  std::string keyProblem_;
  qint64 inlineDigestBytes_ = kDefaultInlineDigestBytes;
  bool digesting_ = false;
  // Files that could not be digested, by path: the stamp they had then and why (tried again once it changes).
  std::map<std::string, std::pair<io::FileStamp, std::string>> failedDigests_;
  // Per shot: Queued, Rendering or Failed while those hold; anything else is worked out from the keys.
  std::map<std::string, ShotStatus> status_;
  std::map<std::string, std::string> heldKey_;    // the key of the frames, thumbnails and figures held
  std::map<std::string, std::string> failedKey_;  // a failed shot stays failed until its key changes
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
