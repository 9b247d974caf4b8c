// The timeline's pictures: images dropped on a shot (a start image or a fallback, shot_rules' rule) and the
// start image drawn on a shot that has no rendered frames yet.
#include "timeline/timeline_view.h"

#include <QContextMenuEvent>
#include <QDir>
#include <QDragEnterEvent>
#include <QFileInfo>
#include <QFutureWatcher>
#include <QImageReader>
#include <QMenu>
#include <QMimeData>
#include <QUrl>
#include <QtConcurrent/QtConcurrentRun>

#include "document/sequence_document.h"
#include "render/render_state.h"
#include "sequence/shot_rules.h"
#include "util/image_file_check.h"

namespace shotchain::ui {
namespace {

bool isImageFile(const QString& path) {
  return QImageReader::supportedImageFormats().contains(QFileInfo(path).suffix().toLower().toLatin1());
}

QStringList droppedImages(const QMimeData* mime) {
  QStringList paths;
  if (mime == nullptr || !mime->hasUrls()) return paths;
  for (const QUrl& url : mime->urls())
    if (url.isLocalFile() && isImageFile(url.toLocalFile())) paths << url.toLocalFile();
  return paths;
}

}  // namespace

void TimelineView::dragEnterEvent(QDragEnterEvent* event) {
  if (droppedImages(event->mimeData()).isEmpty()) return event->ignore();
  event->acceptProposedAction();
}

void TimelineView::dragMoveEvent(QDragMoveEvent* event) {
  const int index = indexAt(event->position().toPoint());
  if (index != dropHover_) {
    dropHover_ = index;
    update();
  }
  if (index >= 0)
    event->acceptProposedAction();
  else
    event->ignore();
}

void TimelineView::dragLeaveEvent(QDragLeaveEvent*) {
  dropHover_ = -1;
  update();
}

void TimelineView::dropEvent(QDropEvent* event) {
  dropHover_ = -1;
  const QStringList images = droppedImages(event->mimeData());
  const int index = indexAt(event->position().toPoint());
  if (images.isEmpty() || index < 0) return event->ignore();
  const bool end = endKeyframeZone(index).contains(event->position().toPoint());
  if (end ? placeEndImage(index, images.front()) : placeImage(index, images.front())) {
    setSelectedIndex(index);
    event->acceptProposedAction();
  }
  update();
}

QImage TimelineView::startPicture(const std::string& path) {
  const QString file = QString::fromStdString(path);
  const QString absolute = QFileInfo(file).isAbsolute()
                               ? file
                               : QDir(QString::fromStdString(document_->baseFolder().string())).filePath(file);
  if (const auto found = pictures_.constFind(absolute); found != pictures_.constEnd()) return *found;
  pictures_.insert(absolute, QImage());
  auto* watcher = new QFutureWatcher<QImage>(this);
  connect(watcher, &QFutureWatcher<QImage>::finished, this, [this, watcher, absolute] {
    watcher->deleteLater();
    pictures_.insert(absolute, watcher->result());
    update();
  });
  watcher->setFuture(QtConcurrent::run([absolute] {
    if (!util::imageFileProblem(absolute.toStdString()).empty()) return QImage();  // never blocks on a FIFO
    QImageReader reader(absolute);
    reader.setAllocationLimit(util::kMaxImageDecodeMiB);
    const QImage image = reader.read();
    return image.isNull() ? image : image.scaledToHeight(RenderState::kThumbnailHeight, Qt::SmoothTransformation);
  }));
  return {};
}

QRect TimelineView::endKeyframeZone(int index) const {
  const QRect block = blockRect(index);
  return QRect(block.right() - block.width() / 4, block.top(), block.width() / 4, block.height());
}

bool TimelineView::placeEndImage(int index, const QString& imagePath) {
  if (index < 0 || index >= static_cast<int>(document_->sequence().shots.size())) return false;
  const std::string path = documentPath(document_->baseFolder(), imagePath.toStdString());
  const Diagnostics errors =
      document_->edit(keyframeEdit(document_->sequence(), static_cast<std::size_t>(index), true, path));
  const Shot& shot = document_->sequence().shots[static_cast<std::size_t>(index)];
  Q_EMIT statusMessage(
      errors.empty()
          ? tr("End image of %1: %2").arg(QString::fromStdString(shot.displayName()), QString::fromStdString(path))
          : QString::fromStdString(errors.front().format()));
  return errors.empty();
}

bool TimelineView::showsRenderedFrames(int index) const {
  const QImage& first = state_->status(document_->sequence().shots[static_cast<std::size_t>(index)].id).firstThumbnail;
  return !first.isNull() && blockRect(index).width() > 3 * first.width();
}

QRect TimelineView::sharedKeyframeSlot(int toIndex) {
  const auto& shots = document_->sequence().shots;
  if (toIndex < 1 || toIndex >= static_cast<int>(shots.size())) return {};
  const Shot& after = shots[static_cast<std::size_t>(toIndex)];
  if (after.startImage.empty() || shots[static_cast<std::size_t>(toIndex) - 1].endImage != after.startImage ||
      showsRenderedFrames(toIndex) || showsRenderedFrames(toIndex - 1))
    return {};
  const QImage picture = startPicture(after.startImage);
  const QRect before = blockRect(toIndex - 1), block = blockRect(toIndex);
  if (picture.isNull() || 2 * std::min(before.width(), block.width()) <= 3 * picture.width()) return {};
  const int top = block.bottom() - RenderState::kThumbnailHeight - 4;
  return {block.left() - picture.width() / 2, top, picture.width(), picture.height()};
}

bool TimelineView::clearKeyframe(int index, bool end) {
  const auto& shots = document_->sequence().shots;
  if (index < 0 || index >= static_cast<int>(shots.size())) return false;
  const Shot& shot = shots[static_cast<std::size_t>(index)];
  if ((end ? shot.endImage : shot.startImage).empty()) return false;
  const QString name = QString::fromStdString(shot.displayName());
  const Diagnostics errors =
      document_->edit(keyframeEdit(document_->sequence(), static_cast<std::size_t>(index), end, ""));
  Q_EMIT statusMessage(errors.empty()
                           ? (end ? tr("End keyframe of %1 cleared") : tr("Start keyframe of %1 cleared")).arg(name)
                           : QString::fromStdString(errors.front().format()));
  return errors.empty();
}

void TimelineView::contextMenuEvent(QContextMenuEvent* event) {
  const auto& shots = document_->sequence().shots;
  QMenu menu(this);
  for (int cut = 1; cut < static_cast<int>(shots.size()); ++cut)
    if (sharedKeyframeSlot(cut).contains(event->pos()))
      connect(menu.addAction(tr("Clear Keyframe Shared by %1 and %2")
                                 .arg(QString::fromStdString(shots[static_cast<std::size_t>(cut) - 1].displayName()),
                                      QString::fromStdString(shots[static_cast<std::size_t>(cut)].displayName()))),
              &QAction::triggered, this, [this, cut] { clearKeyframe(cut, false); });
  const int index = indexAt(event->pos());
  if (menu.isEmpty() && index >= 0) {
    const Shot& shot = shots[static_cast<std::size_t>(index)];
    if (!shot.startImage.empty())
      connect(menu.addAction(tr("Clear Start Keyframe")), &QAction::triggered, this,
              [this, index] { clearKeyframe(index, false); });
    if (!shot.endImage.empty())
      connect(menu.addAction(tr("Clear End Keyframe")), &QAction::triggered, this,
              [this, index] { clearKeyframe(index, true); });
  }
  if (menu.isEmpty()) return event->ignore();
  if (index >= 0) setSelectedIndex(index);
  menu.exec(event->globalPos());
}

bool TimelineView::placeImage(int index, const QString& imagePath) {
  if (index < 0 || index >= static_cast<int>(document_->sequence().shots.size())) return false;
  Shot shot = document_->sequence().shots[static_cast<std::size_t>(index)];
  const std::string field = placeDroppedImage(shot, documentPath(document_->baseFolder(), imagePath.toStdString()));
  const Diagnostics errors = document_->edit(SetShot{static_cast<std::size_t>(index), shot});
  const bool start = field == "start_image";
  if (!errors.empty())
    Q_EMIT statusMessage(QString::fromStdString(errors.front().format()));
  else
    Q_EMIT statusMessage((start ? tr("Start image of %1: %2") : tr("Fallback image of %1: %2"))
                             .arg(QString::fromStdString(shot.displayName()),
                                  QString::fromStdString(start ? shot.startImage : shot.continuity.fallbackImage)));
  return errors.empty();
}

}  // namespace shotchain::ui
