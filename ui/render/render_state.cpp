#include "render/render_state.h"

#include <QFutureWatcher>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>

#include "export/shot_paths.h"
#include "io/content_digest.h"
#include "render/shot_folders.h"
#include "resolve/resolve_sequence.h"

namespace shotchain::ui {

const char* toString(ShotState state) {
  switch (state) {
    case ShotState::Dirty:
      return "not rendered";
    case ShotState::Stale:
      return "out of date";
    case ShotState::Queued:
      return "queued";
    case ShotState::Rendering:
      return "rendering";
    case ShotState::Done:
      return "done";
    case ShotState::Failed:
      return "failed";
  }
  return "";
}

RenderState::RenderState(QObject* parent) : QObject(parent) {}

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

std::string RenderState::currentKey(const std::string& shotId) const {
  const auto index = current_.indexOf(shotId);
  return index && *index < keys_.size() ? keys_[*index] : std::string();
}

std::string RenderState::previousEnabledKey(const std::string& shotId) const {
  const auto index = current_.indexOf(shotId);
  if (!index) return {};
  for (std::size_t i = *index; i-- > 0;)
    if (current_.shots[i].enabled) return i < keys_.size() ? keys_[i] : std::string();
  return {};
}

ShotState RenderState::restingState(const std::string& shotId) const {
  const auto held = heldKey_.find(shotId);
  if (held == heldKey_.end()) return ShotState::Dirty;
  const std::string key = currentKey(shotId);
  return !key.empty() && held->second == key ? ShotState::Done : ShotState::Stale;
}

ShotStatus RenderState::status(const std::string& shotId) const {
  const auto it = status_.find(shotId);
  ShotStatus result = it == status_.end() ? ShotStatus{} : it->second;
  if (result.state == ShotState::Queued || result.state == ShotState::Rendering) return result;
  if (result.state == ShotState::Failed) {
    const auto failed = failedKey_.find(shotId);
    if (failed != failedKey_.end() && failed->second == currentKey(shotId)) return result;
  }
  result.state = restingState(shotId);
  return result;
}

std::optional<continuity::CutMetrics> RenderState::cutInto(const std::string& toShotId) const {
  const auto it = cuts_.find(toShotId);
  if (it == cuts_.end()) return std::nullopt;
  const continuity::CutMetrics& cut = it->second;
  const std::string to = currentKey(toShotId);
  if (to.empty() || cut.toKey != to || cut.fromKey.empty() || cut.fromKey != previousEnabledKey(toShotId))
    return std::nullopt;
  return cut;
}

bool RenderState::cutOutOfDate(const std::string& toShotId) const {
  return cuts_.count(toShotId) > 0 && !cutInto(toShotId);
}

std::vector<continuity::CutMetrics> RenderState::cuts() const {
  std::vector<continuity::CutMetrics> result;
  for (const Shot& shot : current_.shots)
    if (auto cut = cutInto(shot.id)) result.push_back(*cut);
  return result;
}

std::vector<CutRow> RenderState::cutRows() const {
  std::vector<CutRow> rows;
  const Shot* before = nullptr;
  for (const Shot& shot : current_.shots) {
    if (!shot.enabled) continue;
    const auto it = cuts_.find(shot.id);
    if (before != nullptr && it != cuts_.end()) {
      // An out-of-date row keeps the name of the pair it measured: after a reorder that is another shot.
      const auto measuredFrom = current_.indexOf(it->second.fromShotId);
      const std::string from = measuredFrom ? current_.shots[*measuredFrom].displayName() : it->second.fromShotId;
      rows.push_back({it->second, from, shot.displayName(), cutInto(shot.id).has_value()});
    }
    before = &shot;
  }
  return rows;
}

void RenderState::setFolders(const Sequence& sequence, const std::string& sequenceDirectory,
                             const std::string& outputDirectory) {
  const bool newFolder = outputDirectory != outputDirectory_;
  if (!newFolder && sequenceDirectory == sequenceDirectory_ && sequence == current_) return;
  sequenceDirectory_ = sequenceDirectory;  // relative image and LoRA paths in the keys
  outputDirectory_ = outputDirectory;
  if (newFolder) {
    ++generation_;
    heldKey_.clear();
    frames_.clear();
    lastUse_.clear();
    onDisk_.clear();
    cuts_.clear();
    for (auto& [id, status] : status_) status = ShotStatus{status.state};
  }
  documentChanged(sequence);
  if (newFolder) readRenderFolder();
}

void RenderState::documentChanged(const Sequence& sequence) {
  current_ = sequence;
  keys_.clear();
  keyProblem_.clear();
  try {
    const resolve::ResolvedSequence resolved = resolve::resolveSequence(sequence, {sequenceDirectory_});
    std::vector<std::filesystem::path> unread;
    const auto keys = [&] {
      unread.clear();
      return render::currentShotKeys(
          resolved, [this, &unread](const std::filesystem::path& path) { return knownDigest(path, unread); });
    };
    std::vector<std::string> current = keys();
    if (!unread.empty() && readDigests(unread)) current = keys();
    if (unread.empty()) keys_ = std::move(current);
  } catch (const std::exception& e) {
    keys_.clear();
    keyProblem_ = e.what();
  }
  Q_EMIT cutsChanged();
  Q_EMIT changed();
}

std::string RenderState::knownDigest(const std::filesystem::path& path,
                                     std::vector<std::filesystem::path>& unread) const {
  if (const auto failed = failedDigests_.find(path.string());
      failed != failedDigests_.end() && failed->second.first == io::fileStamp(path).value_or(io::FileStamp{}))
    throw std::runtime_error(failed->second.second);
  if (std::optional<std::string> digest = io::knownContentDigest(path)) return *digest;
  unread.push_back(path);
  return {};
}

// The keys follow every byte of the files they name. Files not digested yet are read here when they are small in
// all (true: the keys can be worked out again at once), else on the thread pool, after which the document is
// worked out again.
bool RenderState::readDigests(std::vector<std::filesystem::path> unread) {
  std::sort(unread.begin(), unread.end());
  unread.erase(std::unique(unread.begin(), unread.end()), unread.end());
  std::uint64_t bytes = 0;
  for (const std::filesystem::path& path : unread) bytes += io::fileStamp(path).value_or(io::FileStamp{}).size;
  using Failures = std::map<std::string, std::pair<io::FileStamp, std::string>>;
  const auto digestAll = [](const std::vector<std::filesystem::path>& files) {
    Failures failures;
    for (const std::filesystem::path& path : files) try {
        io::contentDigest(path);
      } catch (const std::exception& e) {
        failures[path.string()] = {io::fileStamp(path).value_or(io::FileStamp{}), e.what()};
      }
    return failures;
  };
  for (const std::filesystem::path& path : unread) failedDigests_.erase(path.string());  // changed since it failed
  if (bytes <= static_cast<std::uint64_t>(inlineDigestBytes_)) {
    failedDigests_.merge(digestAll(unread));
    return true;
  }
  keyProblem_ = "reading " + unread.front().filename().string() +
                (unread.size() > 1 ? " and " + std::to_string(unread.size() - 1) + " more files" : std::string()) +
                " to tell which shots are up to date";
  if (digesting_) return false;  // the running job works the document out again when it ends
  digesting_ = true;
  auto* watcher = new QFutureWatcher<Failures>(this);
  connect(watcher, &QFutureWatcher<Failures>::finished, this, [this, watcher] {
    watcher->deleteLater();
    digesting_ = false;
    Failures failures = watcher->result();
    failedDigests_.merge(failures);
    documentChanged(current_);
  });
  watcher->setFuture(QtConcurrent::run(digestAll, unread));
  return false;
}

void RenderState::setInlineDigestBytes(qint64 bytes) { inlineDigestBytes_ = bytes; }

void RenderState::readRenderFolder() {
  if (outputDirectory_.empty()) return;
  for (std::size_t i = 0; i < current_.shots.size(); ++i) {
    const Shot& shot = current_.shots[i];
    if (heldKey_.count(shot.id) || status(shot.id).state == ShotState::Rendering) continue;
    const std::string key = i < keys_.size() ? keys_[i] : std::string();
    const std::optional<render::FinishedShotFolder> folder =
        render::findFinishedShot(outputDirectory_, static_cast<int>(i), shot.id, key);
    if (!folder) continue;
    heldKey_[shot.id] = folder->key;
    onDisk_[shot.id] = {folder->directory.string(), folder->framesWritten};
    if (folder->cutIn) cuts_[shot.id] = *folder->cutIn;
    ShotStatus& status = status_[shot.id];
    status.cache = folder->cache;
    status.experts = folder->experts;
    const auto png = [&folder](int frame) {
      return QString::fromStdString(exporting::frameFile(folder->directory, frame).string());
    };
    makeThumbnail(shot.id, {}, png(1), true);
    makeThumbnail(shot.id, {}, png(folder->framesWritten), false);
  }
  Q_EMIT cutsChanged();
  Q_EMIT changed();
}

void RenderState::clear() {
  ++generation_;
  outputDirectory_.clear();  // read again by the next setFolders
  status_.clear();
  heldKey_.clear();
  failedKey_.clear();
  frames_.clear();
  lastUse_.clear();
  onDisk_.clear();
  cuts_.clear();
  Q_EMIT cutsChanged();
  Q_EMIT changed();
}

std::string RenderState::idAt(int shotIndex) const {
  if (shotIndex < 0 || static_cast<std::size_t>(shotIndex) >= rendering_.shots.size()) return {};
  return rendering_.shots[static_cast<std::size_t>(shotIndex)].id;
}

void RenderState::renderStarted(const Sequence& sequence) {
  rendering_ = sequence;
  failedKey_.clear();
  for (const Shot& shot : sequence.shots) {
    ShotStatus& status = status_[shot.id];
    status.state = shot.enabled && restingState(shot.id) != ShotState::Done ? ShotState::Queued : ShotState::Dirty;
    status.progress = 0;
  }
  Q_EMIT changed();
}

void RenderState::shotStarted(const render::ShotStarted& shot) {
  ShotStatus& status = status_[shot.id];
  status.progress = 0;
  if (shot.reused) {
    status.state = ShotState::Dirty;  // resting: done, as its key says
    heldKey_[shot.id] = shot.key;
  } else {
    status.state = ShotState::Rendering;
    heldKey_.erase(shot.id);  // the render clears the shot's folder: nothing of the last render of it is left
    status.firstThumbnail = status.lastThumbnail = QImage();
    frames_.erase(shot.id);
    onDisk_.erase(shot.id);
    cuts_.erase(shot.id);
  }
  Q_EMIT cutsChanged();
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
  if (firstFrame == 0) makeThumbnail(id, frames.front(), {}, true);
  if (firstFrame + frames.size() >= shotFrames) makeThumbnail(id, frames.back(), {}, false);
  touch(id);
  dropFramesBeyondCache(id);
  Q_EMIT framesChanged(QString::fromStdString(id));
}

// Reading and scaling run on the thread pool; the GUI only stores the result. `frame` is the decoded
// frame itself, or null with `file` the PNG to read it from.
void RenderState::makeThumbnail(const std::string& shotId, const QImage& frame, const QString& file, bool first) {
  if (frame.isNull() && file.isEmpty()) return;
  auto* watcher = new QFutureWatcher<QImage>(this);
  const int generation = generation_;
  connect(watcher, &QFutureWatcher<QImage>::finished, this, [this, watcher, shotId, first, generation] {
    watcher->deleteLater();
    if (generation != generation_ || watcher->result().isNull()) return;
    ShotStatus& status = status_[shotId];
    (first ? status.firstThumbnail : status.lastThumbnail) = watcher->result();
    Q_EMIT changed();
  });
  watcher->setFuture(QtConcurrent::run([frame, file] {
    const QImage image = frame.isNull() ? QImage(file) : frame;
    return image.isNull() ? image : image.scaledToHeight(kThumbnailHeight, Qt::SmoothTransformation);
  }));
}

void RenderState::cutMeasured(const continuity::CutMetrics& cut) {
  cuts_[cut.toShotId.empty() ? idAt(cut.toIndex) : cut.toShotId] = cut;
  Q_EMIT cutsChanged();
  Q_EMIT changed();
}

void RenderState::shotFinished(const render::ShotFinished& shot) {
  const std::string id = shot.id.empty() ? idAt(shot.index) : shot.id;
  heldKey_[id] = shot.key;
  if (!shot.directory.empty() && shot.framesWritten > 0) onDisk_[id] = {shot.directory, shot.framesWritten};
  dropFramesBeyondCache(id);
  ShotStatus& status = status_[id];
  status.state = ShotState::Dirty;  // resting: done while its key is the document's
  status.progress = 1;
  status.cache = shot.cache;
  status.experts = shot.experts;
  status.keyframes = shot.keyframes;
  Q_EMIT changed();
}

void RenderState::shotFailed(int shotIndex) {
  const std::string id = idAt(shotIndex);
  if (id.empty()) return;
  status_[id].state = ShotState::Failed;
  failedKey_[id] = currentKey(id);
  Q_EMIT changed();
}

void RenderState::renderFinished() {
  for (auto& [id, status] : status_)
    if (status.state == ShotState::Queued || status.state == ShotState::Rendering) status.state = ShotState::Dirty;
  Q_EMIT changed();
}

}  // namespace shotchain::ui
