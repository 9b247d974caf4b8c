#include "render/render_state.h"

#include <QFutureWatcher>
#include <QtConcurrent/QtConcurrentRun>


namespace shotchain::ui {

const char* toString(ShotState state) {
  switch (state) {
    case ShotState::Dirty: return "not rendered";
    case ShotState::Queued: return "queued";
    case ShotState::Rendering: return "rendering";
    case ShotState::Done: return "done";
    case ShotState::Failed: return "failed";
  }
  return "";
}

RenderState::RenderState(QObject* parent) : QObject(parent) {}

ShotStatus RenderState::status(const std::string& shotId) const {
  const auto it = status_.find(shotId);
  return it == status_.end() ? ShotStatus{} : it->second;
}

QVector<QImage> RenderState::frames(const std::string& shotId) const {
  auto it = frames_.find(shotId);
  if (it == frames_.end()) {
    const auto disk = onDisk_.find(shotId);
    if (disk == onDisk_.end()) return {};
    QVector<QImage> loaded = readShotFrames(disk->second.directory, disk->second.count);
    if (loaded.size() != disk->second.count) return {};  // the folder changed since: nothing to show
    it = frames_.emplace(shotId, std::move(loaded)).first;
  }
  touch(shotId);
  const QVector<QImage> result = it->second;
  dropFramesBeyondCache(shotId);
  return result;
}

void RenderState::setFrameCacheBytes(qint64 bytes) {
  frameCacheBytes_ = bytes;
  dropFramesBeyondCache({});
}

qint64 RenderState::cachedFrameBytes() const {
  qint64 total = 0;
  for (const auto& [id, frames] : frames_)
    for (const QImage& frame : frames) total += frame.sizeInBytes();
  return total;
}

void RenderState::touch(const std::string& shotId) const { lastUse_[shotId] = ++useClock_; }

void RenderState::dropFramesBeyondCache(const std::string& keep) const {
  qint64 total = cachedFrameBytes();
  while (total > frameCacheBytes_) {
    const std::string* oldest = nullptr;
    for (const auto& [id, frames] : frames_) {
      if (id == keep || onDisk_.count(id) == 0) continue;  // frames not on disk yet cannot be dropped
      if (!oldest || lastUse_[id] < lastUse_[*oldest]) oldest = &id;
    }
    if (!oldest) return;
    for (const QImage& frame : frames_[*oldest]) total -= frame.sizeInBytes();
    frames_.erase(*oldest);
  }
}

std::optional<continuity::CutMetrics> RenderState::cutInto(const std::string& toShotId) const {
  const auto it = cuts_.find(toShotId);
  if (it == cuts_.end()) return std::nullopt;
  return it->second;
}

std::vector<continuity::CutMetrics> RenderState::cuts() const {
  std::vector<continuity::CutMetrics> result;
  for (const Shot& shot : current_.shots)
    if (auto cut = cutInto(shot.id)) result.push_back(*cut);
  return result;
}

std::string RenderState::settingsKey(const SequenceSettings& settings) {
  SequenceSettings key = settings;
  key.name.clear();  // renaming the sequence does not change a single frame
  key.policy = ResidencyPolicy::Auto;
  key.memoryBudgetBytes.reset();
  key.allocatorTuning = true;
  return std::to_string(key.sampler.steps) + "|" + std::to_string(key.sampler.guidance) + "|" +
         std::to_string(key.sampler.shift) + "|" + toString(key.sampler.solver) + "|" + key.model.builtin + "|" +
         key.model.folder + "|" + key.model.dit + "|" + key.model.vae + "|" + key.model.textEncoder + "|" +
         std::to_string(key.fps) + "|" + toString(key.sampler.cache.policy) + "|" +
         std::to_string(key.sampler.cache.threshold.value_or(-1)) + "|" + key.sampler.cache.calibration;
}

void RenderState::documentChanged(const Sequence& sequence) {
  current_ = sequence;
  const std::string key = settingsKey(sequence.settings);
  bool previousDirty = false;
  for (std::size_t i = 0; i < sequence.shots.size(); ++i) {
    const Shot& shot = sequence.shots[i];
    ShotStatus& status = status_[shot.id];
    const std::string previousId = i == 0 ? std::string() : sequence.shots[i - 1].id;
    const auto snap = rendered_.find(shot.id);
    const bool handoff = usesHandoff(shot.continuity.mode);
    const bool dirty = snap == rendered_.end() || snap->second.shot != shot || snap->second.settingsKey != key ||
                       (handoff && (previousDirty || snap->second.previousId != previousId));
    if (status.state == ShotState::Queued || status.state == ShotState::Rendering) {
      previousDirty = true;
      continue;
    }
    if (dirty && status.state == ShotState::Done) status.state = ShotState::Dirty;
    if (!dirty && status.state == ShotState::Dirty) status.state = ShotState::Done;
    previousDirty = status.state != ShotState::Done;
  }
  Q_EMIT changed();
}

void RenderState::clear() {
  ++generation_;
  status_.clear();
  rendered_.clear();
  frames_.clear();
  lastUse_.clear();
  onDisk_.clear();
  cuts_.clear();
  Q_EMIT changed();
}

std::string RenderState::idAt(int shotIndex) const {
  if (shotIndex < 0 || static_cast<std::size_t>(shotIndex) >= rendering_.shots.size()) return {};
  return rendering_.shots[static_cast<std::size_t>(shotIndex)].id;
}

void RenderState::renderStarted(const Sequence& sequence) {
  rendering_ = sequence;
  for (const Shot& shot : sequence.shots) {
    ShotStatus& status = status_[shot.id];
    if (status.state != ShotState::Done) status = ShotStatus{ShotState::Queued, 0, status.firstThumbnail, status.lastThumbnail, status.cache, status.experts};
  }
  Q_EMIT changed();
}

void RenderState::shotStarted(const render::ShotStarted& shot) {
  ShotStatus& status = status_[shot.id];
  status.state = shot.reused ? ShotState::Done : ShotState::Rendering;
  status.progress = 0;
  if (!shot.reused) {
    frames_.erase(shot.id);
    onDisk_.erase(shot.id);
  }
  Q_EMIT changed();
}

void RenderState::stepDone(int shotIndex, int step, int steps) {
  const std::string id = idAt(shotIndex);
  if (id.empty() || steps <= 0) return;
  status_[id].progress = static_cast<double>(step) / steps;
  Q_EMIT changed();
}

void RenderState::framesDecoded(int shotIndex, int firstFrame, int shotFrames, const QVector<QImage>& frames) {
  const std::string id = idAt(shotIndex);
  if (id.empty() || frames.isEmpty()) return;
  QVector<QImage>& stored = frames_[id];
  if (stored.size() < firstFrame + frames.size()) stored.resize(firstFrame + frames.size());
  for (qsizetype i = 0; i < frames.size(); ++i) stored[firstFrame + i] = frames[i];
  if (firstFrame == 0) makeThumbnail(id, frames.front(), true);
  if (firstFrame + frames.size() >= shotFrames) makeThumbnail(id, frames.back(), false);
  touch(id);
  dropFramesBeyondCache(id);
  Q_EMIT framesChanged(QString::fromStdString(id));
}

// Scaling runs on the thread pool; the GUI only stores the result.
void RenderState::makeThumbnail(const std::string& shotId, const QImage& frame, bool first) {
  if (frame.isNull()) return;
  auto* watcher = new QFutureWatcher<QImage>(this);
  const int generation = generation_;
  connect(watcher, &QFutureWatcher<QImage>::finished, this, [this, watcher, shotId, first, generation] {
    watcher->deleteLater();
    if (generation != generation_) return;
    ShotStatus& status = status_[shotId];
    (first ? status.firstThumbnail : status.lastThumbnail) = watcher->result();
    Q_EMIT changed();
  });
  watcher->setFuture(QtConcurrent::run([frame] {
    return frame.scaledToHeight(kThumbnailHeight, Qt::SmoothTransformation);
  }));
}

void RenderState::cutMeasured(const continuity::CutMetrics& cut) {
  cuts_[cut.toShotId.empty() ? idAt(cut.toIndex) : cut.toShotId] = cut;
  Q_EMIT changed();
}

void RenderState::shotFinished(const render::ShotFinished& shot) {
  const std::string id = shot.id.empty() ? idAt(shot.index) : shot.id;
  const auto index = rendering_.indexOf(id);
  if (index) {
    Snapshot snap;
    snap.shot = rendering_.shots[*index];
    snap.previousId = *index == 0 ? std::string() : rendering_.shots[*index - 1].id;
    snap.settingsKey = settingsKey(rendering_.settings);
    rendered_[id] = snap;
  }
  if (!shot.directory.empty() && shot.framesWritten > 0) onDisk_[id] = {shot.directory, shot.framesWritten};
  dropFramesBeyondCache(id);
  ShotStatus& status = status_[id];
  status.state = ShotState::Done;
  status.progress = 1;
  status.cache = shot.cache;
  status.experts = shot.experts;
  documentChanged(current_);  // the document may have changed while it rendered
}

void RenderState::shotFailed(int shotIndex) {
  const std::string id = idAt(shotIndex);
  if (!id.empty()) status_[id].state = ShotState::Failed;
  Q_EMIT changed();
}

void RenderState::renderFinished() {
  for (auto& [id, status] : status_)
    if (status.state == ShotState::Queued || status.state == ShotState::Rendering) status.state = ShotState::Dirty;
  documentChanged(current_);
}

}  // namespace shotchain::ui
