#include "timeline/timeline_view.h"

#include <QApplication>
#include <QHelpEvent>
#include <QPainter>
#include <QPainterPath>
#include <QToolTip>

#include <algorithm>
#include <cmath>

#include "document/sequence_document.h"
#include "render/render_state.h"
#include "resolve/frame_rules.h"
#include "sequence/shot_rules.h"
#include "sequence/validation.h"
#include "timeline/cut_marker.h"
#include "timeline/frame_snapping.h"
#include "util/byte_size.h"

namespace shotchain::ui {
namespace {

// "Step cache teacache 0.2: 24 of 40 DiT passes computed, 16 skipped", or why it was off.
QString stepCacheLine(const ShotStatus& status) {
  if (!status.cache) return {};
  const render::StepCacheFigures& c = *status.cache;
  if (!c.off.empty())
    return TimelineView::tr("Step cache %1: off (%2)")
        .arg(QString::fromStdString(c.policy), QString::fromStdString(c.off));
  return TimelineView::tr("Step cache %1 %2: %3 of %4 DiT passes computed, %5 skipped")
      .arg(QString::fromStdString(c.policy))
      .arg(c.threshold)
      .arg(c.computedPasses)
      .arg(c.computedPasses + c.skippedPasses)
      .arg(c.skippedPasses);
}

// "Experts (swap): high noise steps 1–10, low noise 11–20; 2.1 GiB moved in 0.4 s".
QString expertsLine(const ShotStatus& status) {
  if (!status.experts || status.experts->experts.empty()) return {};
  const render::ExpertFigures& e = *status.experts;
  const int steps = static_cast<int>(e.experts.size());
  const int low = e.switchStep < 0 ? steps : e.switchStep;
  QString runs = low > 0 ? TimelineView::tr("high noise steps 1–%1").arg(low) : QString();
  if (low < steps)
    runs += (runs.isEmpty() ? QString() : QStringLiteral(", ")) +
            TimelineView::tr("low noise %1–%2").arg(low + 1).arg(steps);
  QString line = TimelineView::tr("Experts (%1): %2")
                     .arg(QString::fromStdString(e.residency.empty() ? "resident" : e.residency), runs);
  if (e.bytesMoved > 0)
    line += TimelineView::tr("; %1 moved in %2 s")
                .arg(QString::fromStdString(util::formatByteSize(e.bytesMoved)))
                .arg(e.moveSeconds, 0, 'f', 1);
  return line;
}

QColor stateColour(ShotState state) {
  switch (state) {
    case ShotState::Dirty:
      return {0x3b, 0x44, 0x52};
    case ShotState::Stale:
      return {0x4a, 0x4a, 0x3a};
    case ShotState::Queued:
      return {0x4d, 0x48, 0x32};
    case ShotState::Rendering:
      return {0x27, 0x4f, 0x7a};
    case ShotState::Done:
      return {0x2c, 0x55, 0x3c};
    case ShotState::Failed:
      return {0x74, 0x2c, 0x2c};
  }
  return Qt::gray;
}

}  // namespace

TimelineView::TimelineView(SequenceDocument* document, RenderState* state, QWidget* parent)
    : QWidget(parent), document_(document), state_(state) {
  setObjectName(QStringLiteral("TimelineView"));
  setFocusPolicy(Qt::StrongFocus);
  setMouseTracking(true);
  setAcceptDrops(true);
  setAttribute(Qt::WA_OpaquePaintEvent);
  connect(document_, &SequenceDocument::changed, this, &TimelineView::documentChanged);
  connect(document_, &SequenceDocument::replaced, this, [this] {
    fitOnNextResize_ = true;
    setSelectedIndex(-1);
    setPlayhead(0);
    zoomToFit();
  });
  connect(state_, &RenderState::changed, this, qOverload<>(&QWidget::update));
}

void TimelineView::documentChanged() {
  const int count = static_cast<int>(document_->sequence().shots.size());
  if (selected_ >= count) setSelectedIndex(count - 1);
  if (playhead_ > std::max(0, document_->sequence().totalFrames() - 1))
    setPlayhead(std::max(0, document_->sequence().totalFrames() - 1));
  clampScroll();
  Q_EMIT viewChanged();
  update();
}

void TimelineView::setSelectedIndex(int index) {
  const int count = static_cast<int>(document_->sequence().shots.size());
  if (index < -1 || index >= count) index = -1;
  if (index == selected_) return;
  selected_ = index;
  update();
  Q_EMIT selectionChanged(selected_);
}

void TimelineView::setPlayhead(int frame) {
  frame = std::clamp(frame, 0, std::max(0, document_->sequence().totalFrames() - 1));
  if (frame == playhead_) return;
  playhead_ = frame;
  update();
  Q_EMIT playheadMoved(playhead_);
}

void TimelineView::setPixelsPerFrame(double ppf, int anchorX) {
  ppf = std::clamp(ppf, 0.25, 80.0);
  const double anchorFrame = frameAtX(anchorX);
  pixelsPerFrame_ = ppf;
  scrollX_ = static_cast<int>(std::lround(kMargin + anchorFrame * ppf - anchorX));
  clampScroll();
  Q_EMIT viewChanged();
  update();
}

void TimelineView::zoomToFit() {
  const int total = std::max(1, document_->sequence().totalFrames());
  pixelsPerFrame_ = std::clamp((width() - 2.0 * kMargin) / total, 0.25, 80.0);
  scrollX_ = 0;
  Q_EMIT viewChanged();
  update();
}

void TimelineView::setScrollX(int x) {
  scrollX_ = x;
  clampScroll();
  update();
}

int TimelineView::contentWidth() const {
  return static_cast<int>(std::ceil(2 * kMargin + document_->sequence().totalFrames() * pixelsPerFrame_));
}

void TimelineView::clampScroll() { scrollX_ = std::clamp(scrollX_, 0, std::max(0, contentWidth() - width())); }

double TimelineView::xOfFrame(double frame) const { return kMargin + frame * pixelsPerFrame_ - scrollX_; }
double TimelineView::frameAtX(double x) const { return (x + scrollX_ - kMargin) / pixelsPerFrame_; }

std::vector<TimelineView::Span> TimelineView::spans() const {
  std::vector<Span> result;
  int start = 0;
  const auto& shots = document_->sequence().shots;
  for (std::size_t i = 0; i < shots.size(); ++i) {
    int frames = shots[i].frames;
    if (gesture_ == Gesture::Trim && static_cast<int>(i) == gestureIndex_) frames = ghostFrames_;
    result.push_back({start, frames});
    start += frames;
  }
  return result;
}

QRect TimelineView::blockRect(int index) const {
  const auto all = spans();
  if (index < 0 || index >= static_cast<int>(all.size())) return {};
  const double left = xOfFrame(all[static_cast<std::size_t>(index)].start);
  const double right =
      xOfFrame(all[static_cast<std::size_t>(index)].start + all[static_cast<std::size_t>(index)].frames);
  return QRectF(QPointF(left + 1, kTrackTop), QPointF(right - 1, kTrackTop + kTrackHeight)).toRect();
}

int TimelineView::indexAt(const QPoint& pos) const {
  if (pos.y() < kTrackTop || pos.y() > kTrackTop + kTrackHeight) return -1;
  const auto all = spans();
  const double frame = frameAtX(pos.x());
  for (std::size_t i = 0; i < all.size(); ++i)
    if (frame >= all[i].start && frame < all[i].start + all[i].frames) return static_cast<int>(i);
  return -1;
}

int TimelineView::edgeAt(const QPoint& pos) const {
  if (pos.y() < kTrackTop || pos.y() > kTrackTop + kTrackHeight) return -1;
  const auto all = spans();
  for (std::size_t i = 0; i < all.size(); ++i) {
    const double right = xOfFrame(all[i].start + all[i].frames);
    if (std::abs(pos.x() - right) <= kEdgeGrip) return static_cast<int>(i);
  }
  return -1;
}

int TimelineView::cutAt(const QPoint& pos) const {
  if (pos.y() > cutBadgeRect(0, kTrackTop).bottom() || pos.y() < kTrackTop - 8) return -1;  // diamond and badge
  const auto all = spans();
  for (std::size_t i = 1; i < all.size(); ++i)
    if (std::abs(pos.x() - xOfFrame(all[i].start)) <= 7) return static_cast<int>(i);
  return -1;
}

// Index the dragged shot would have after the move: count the other blocks whose middle is left
// of the pointer.
int TimelineView::reorderTarget(int pointerX) const {
  const auto all = spans();
  const double frame = frameAtX(pointerX);
  int target = 0;
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (static_cast<int>(i) == gestureIndex_) continue;
    if (all[i].start + all[i].frames / 2.0 < frame) ++target;
  }
  return target;
}

QString TimelineView::cutTooltip(int toIndex) const {
  const auto& shots = document_->sequence().shots;
  const Shot& to = shots[static_cast<std::size_t>(toIndex)];
  return cutMarkerTooltip(shots[static_cast<std::size_t>(toIndex - 1)], to, state_->cutInto(to.id),
                          state_->cutOutOfDate(to.id), advanced_);
}

void TimelineView::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.setRenderHint(QPainter::Antialiasing);
  p.fillRect(rect(), QColor(0x18, 0x18, 0x1a));
  p.fillRect(QRect(0, kTrackTop - 4, width(), kTrackHeight + 8), QColor(0x20, 0x20, 0x23));
  paintRuler(p);

  const auto all = spans();
  const auto& shots = document_->sequence().shots;
  if (shots.empty()) {
    p.setPen(QColor(0x90, 0x90, 0x90));
    p.drawText(QRect(0, kTrackTop, width(), kTrackHeight), Qt::AlignCenter,
               tr("No shots yet. Add one with Shot › Add Shot (Ctrl+T)."));
  }
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (gesture_ == Gesture::Reorder && static_cast<int>(i) == gestureIndex_) {
      // The block's place stays as a hollow slot while its ghost follows the pointer.
      p.setPen(QPen(QColor(0x70, 0x70, 0x70), 1, Qt::DashLine));
      p.setBrush(Qt::NoBrush);
      p.drawRoundedRect(QRectF(blockRect(static_cast<int>(i))).adjusted(0.5, 0.5, -0.5, -0.5), 5, 5);
      continue;
    }
    paintBlock(p, static_cast<int>(i), blockRect(static_cast<int>(i)), false);
  }
  for (std::size_t i = 1; i < all.size(); ++i) paintCut(p, static_cast<int>(i), xOfFrame(all[i].start));
  for (std::size_t i = 1; i < all.size(); ++i)
    if (const QRect slot = sharedKeyframeSlot(static_cast<int>(i)); !slot.isEmpty() && gesture_ != Gesture::Reorder) {
      p.drawImage(slot.topLeft(), startPicture(shots[i].startImage));
      p.setPen(QPen(QColor(0xff, 0xd0, 0x50), 2));
      p.setBrush(Qt::NoBrush);
      p.drawRect(QRectF(slot).adjusted(-1, -1, 1, 1));
    }

  if (gesture_ == Gesture::Trim && gestureIndex_ >= 0) {
    const QRect r = blockRect(gestureIndex_);
    const std::string problem = resolve::frameCountProblem(ghostFrames_, document_->resolved().geometry);
    const QString label = problem.empty() ? tr("%1 frames").arg(ghostFrames_) : QString::fromStdString(problem);
    p.setPen(QPen(problem.empty() ? QColor(0xff, 0xd0, 0x50) : QColor(0xff, 0x60, 0x60), 2));
    p.setBrush(Qt::NoBrush);
    p.drawRoundedRect(QRectF(r).adjusted(1, 1, -1, -1), 5, 5);
    const QRect tag(r.right() - 220, kTrackTop + kTrackHeight - 22, 216, 18);
    p.fillRect(tag.adjusted(tag.width() - p.fontMetrics().horizontalAdvance(label) - 12, 0, 0, 0),
               QColor(0, 0, 0, 180));
    p.drawText(tag.adjusted(0, 0, -4, 0), Qt::AlignRight | Qt::AlignVCenter, label);
  }
  if (gesture_ == Gesture::Reorder && gestureIndex_ >= 0) {
    const int target = reorderTarget(pointerX_);
    // Insertion line where the shot will land.
    int frame = 0;
    int seen = 0;
    for (std::size_t i = 0; i < all.size() && seen < target; ++i) {
      if (static_cast<int>(i) == gestureIndex_) continue;
      frame = all[i].start + all[i].frames;
      ++seen;
    }
    if (target == 0) frame = 0;
    const double x = xOfFrame(frame);
    p.setPen(QPen(QColor(0xff, 0xd0, 0x50), 3));
    p.drawLine(QPointF(x, kTrackTop - 6), QPointF(x, kTrackTop + kTrackHeight + 6));
    QRectF ghost = blockRect(gestureIndex_);
    ghost.moveLeft(pointerX_ - (pressPos_.x() - blockRect(gestureIndex_).left()));
    ghost.translate(0, 6);
    p.setOpacity(0.6);
    paintBlock(p, gestureIndex_, ghost, true);
    p.setOpacity(1);
  }

  // Playhead.
  const double x = xOfFrame(playhead_ + 0.5);
  p.setPen(QPen(QColor(0xff, 0x55, 0x40), 1.5));
  p.drawLine(QPointF(x, 2), QPointF(x, height()));
  QPainterPath head;
  head.moveTo(x - 6, 2);
  head.lineTo(x + 6, 2);
  head.lineTo(x, 11);
  head.closeSubpath();
  p.fillPath(head, QColor(0xff, 0x55, 0x40));
}

void TimelineView::paintBlock(QPainter& p, int index, const QRectF& rect, bool ghost) {
  const Shot& shot = document_->sequence().shots[static_cast<std::size_t>(index)];
  const ShotStatus status = state_->status(shot.id);
  QColor fill = stateColour(status.state);
  if (!shot.enabled) fill = fill.darker(160);
  QPainterPath path;
  path.addRoundedRect(rect, 5, 5);
  p.fillPath(path, fill);
  if (index == dropHover_) p.fillPath(path, QColor(0xff, 0xd0, 0x50, 60));

  p.save();
  p.setClipPath(path);
  // First/last frame thumbnails at the block's ends once rendered.
  const int thumbTop = static_cast<int>(rect.bottom()) - RenderState::kThumbnailHeight - 4;
  int textRight = static_cast<int>(rect.right()) - 6;
  if (!ghost && showsRenderedFrames(index)) {
    p.drawImage(QPointF(rect.left() + 4, thumbTop), status.firstThumbnail);
    if (!status.lastThumbnail.isNull())
      p.drawImage(QPointF(rect.right() - 4 - status.lastThumbnail.width(), thumbTop), status.lastThumbnail);
  } else {
    // Keyframes of a shot not rendered yet, dashed; one shared at a cut is drawn once, over the cut (paintEvent).
    const auto keyframe = [&](const std::string& file, bool atEnd) {
      const QImage picture = startPicture(file);
      if (picture.isNull() || rect.width() <= 3 * picture.width()) return;
      const double left = atEnd ? rect.right() - 4 - picture.width() : rect.left() + 4;
      p.drawImage(QPointF(left, thumbTop), picture);
      p.setPen(QPen(QColor(0xff, 0xd0, 0x50), 1, Qt::DashLine));
      p.drawRect(QRectF(left, thumbTop, picture.width(), picture.height()));
    };
    if (!shot.startImage.empty() && (ghost || sharedKeyframeSlot(index).isEmpty())) keyframe(shot.startImage, false);
    if (!shot.endImage.empty() && (ghost || sharedKeyframeSlot(index + 1).isEmpty())) keyframe(shot.endImage, true);
  }
  if (status.state == ShotState::Rendering) {
    const QRectF bar(rect.left(), rect.bottom() - 4, rect.width() * status.progress, 4);
    p.fillRect(bar, QColor(0x5c, 0xb0, 0xff));
  }

  const QRect textRect = QRectF(rect.left() + 7, rect.top() + 4, textRight - rect.left() - 7, rect.height()).toRect();
  QFont bold = font();
  bold.setBold(true);
  p.setFont(bold);
  p.setPen(QColor(0xf2, 0xf2, 0xf2));
  const QString name = QString::fromStdString(shot.displayName());
  p.drawText(textRect, Qt::AlignLeft | Qt::AlignTop,
             p.fontMetrics().elidedText(name, Qt::ElideRight, textRect.width()));
  p.setFont(font());
  const int line = p.fontMetrics().height();
  p.setPen(QColor(0xc8, 0xc8, 0xc8));
  const QString prompt = QString::fromStdString(shot.prompt).simplified();
  p.drawText(
      textRect.adjusted(0, line, 0, 0), Qt::AlignLeft | Qt::AlignTop,
      p.fontMetrics().elidedText(prompt.isEmpty() ? tr("(no prompt)") : prompt, Qt::ElideRight, textRect.width()));
  QString stateText = shot.enabled ? QString::fromLatin1(toString(status.state)) : tr("off");
  if (status.state == ShotState::Rendering) stateText += QStringLiteral(" %1%").arg(qRound(status.progress * 100));
  const QString facts = tr("%1 f · %2").arg(shot.frames).arg(stateText);
  p.setPen(QColor(0xa8, 0xa8, 0xa8));
  const bool thumbs =
      (!status.firstThumbnail.isNull() && rect.width() > 3 * status.firstThumbnail.width()) ||
      (status.firstThumbnail.isNull() && ((!shot.startImage.empty() && !startPicture(shot.startImage).isNull()) ||
                                          (!shot.endImage.empty() && !startPicture(shot.endImage).isNull())));
  const QRect factsRect =
      thumbs ? textRect.adjusted(0, 2 * line, 0, 0)
             : QRect(textRect.left(), static_cast<int>(rect.bottom()) - line - 6, textRect.width(), line);
  p.drawText(factsRect, Qt::AlignLeft | Qt::AlignTop,
             p.fontMetrics().elidedText(facts, Qt::ElideRight, textRect.width()));
  p.restore();

  const bool selected = index == selected_ && !ghost;
  p.setPen(selected ? QPen(QColor(0xff, 0xd0, 0x50), 2) : QPen(fill.lighter(140), 1));
  p.setBrush(Qt::NoBrush);
  p.drawPath(path);
  // Trim grip.
  if (!ghost && rect.width() > 16) {
    p.setPen(QPen(QColor(255, 255, 255, 90), 1));
    const double gx = rect.right() - 3;
    p.drawLine(QPointF(gx, rect.center().y() - 8), QPointF(gx, rect.center().y() + 8));
  }
}

void TimelineView::paintCut(QPainter& p, int toIndex, double x) {
  const Shot& to = document_->sequence().shots[static_cast<std::size_t>(toIndex)];
  paintCutMarker(p, to, state_->cutInto(to.id), x, kTrackTop, kTrackHeight);
}

void TimelineView::mousePressEvent(QMouseEvent* event) {
  if (event->button() != Qt::LeftButton) return QWidget::mousePressEvent(event);
  pressPos_ = event->position().toPoint();
  pointerX_ = pressPos_.x();
  if (pressPos_.y() < kTrackTop - 8) {
    gesture_ = Gesture::Scrub;
    setPlayhead(static_cast<int>(std::floor(frameAtX(pressPos_.x()))));
    return;
  }
  // The marker and its badge select the cut; the edge below them still trims.
  if (const int cut = cutAt(pressPos_); cut >= 0) {
    setPlayhead(document_->sequence().startFrame(static_cast<std::size_t>(cut)));
    Q_EMIT cutActivated(cut);
    return;
  }
  if (const int edge = edgeAt(pressPos_); edge >= 0) {
    gesture_ = Gesture::Trim;
    gestureIndex_ = edge;
    ghostFrames_ = document_->sequence().shots[static_cast<std::size_t>(edge)].frames;
    setSelectedIndex(edge);
    update();
    return;
  }
  const int index = indexAt(pressPos_);
  setSelectedIndex(index);
  if (index >= 0) {
    gesture_ = Gesture::Pending;
    gestureIndex_ = index;
  }
}

void TimelineView::mouseMoveEvent(QMouseEvent* event) {
  const QPoint pos = event->position().toPoint();
  pointerX_ = pos.x();
  switch (gesture_) {
    case Gesture::None:
      setCursor(edgeAt(pos) >= 0 ? Qt::SizeHorCursor : Qt::ArrowCursor);
      return;
    case Gesture::Scrub:
      setPlayhead(static_cast<int>(std::floor(frameAtX(pos.x()))));
      return;
    case Gesture::Trim: {
      const int original = document_->sequence().shots[static_cast<std::size_t>(gestureIndex_)].frames;
      const bool bypass = event->modifiers().testFlag(Qt::AltModifier);
      ghostFrames_ = trimmedLength(original, (pos.x() - pressPos_.x()) / pixelsPerFrame_, bypass, limits::kMaxFrames,
                                   document_->resolved().geometry);
      update();
      return;
    }
    case Gesture::Pending:
      if ((pos - pressPos_).manhattanLength() < QApplication::startDragDistance()) return;
      gesture_ = Gesture::Reorder;
      setCursor(Qt::ClosedHandCursor);
      [[fallthrough]];
    case Gesture::Reorder:
      update();
      return;
  }
}

void TimelineView::mouseReleaseEvent(QMouseEvent* event) {
  if (event->button() != Qt::LeftButton) return QWidget::mouseReleaseEvent(event);
  const Gesture gesture = std::exchange(gesture_, Gesture::None);
  const int index = std::exchange(gestureIndex_, -1);
  pointerX_ = event->position().toPoint().x();
  setCursor(Qt::ArrowCursor);
  if (gesture == Gesture::Trim) {
    const int frames = ghostFrames_;
    if (frames != document_->sequence().shots[static_cast<std::size_t>(index)].frames) {
      const Diagnostics errors = document_->edit(SetShotLength{static_cast<std::size_t>(index), frames});
      if (!errors.empty()) Q_EMIT statusMessage(QString::fromStdString(errors.front().format()));
    }
  } else if (gesture == Gesture::Reorder) {
    gestureIndex_ = index;  // reorderTarget skips the dragged block
    const int target = reorderTarget(pointerX_);
    gestureIndex_ = -1;
    if (target != index) {
      document_->edit(MoveShot{static_cast<std::size_t>(index), static_cast<std::size_t>(target)});
      setSelectedIndex(target);
    }
  }
  update();
}

void TimelineView::mouseDoubleClickEvent(QMouseEvent* event) {
  // Double-click on a block puts the playhead at its first frame.
  const int index = indexAt(event->position().toPoint());
  if (index >= 0) setPlayhead(document_->sequence().startFrame(static_cast<std::size_t>(index)));
}

void TimelineView::wheelEvent(QWheelEvent* event) {
  const double steps = event->angleDelta().y() / 120.0;
  if (event->modifiers().testFlag(Qt::ControlModifier)) {
    setPixelsPerFrame(pixelsPerFrame_ * std::pow(1.25, steps), static_cast<int>(event->position().x()));
  } else {
    const int delta = event->angleDelta().x() != 0 ? event->angleDelta().x() : event->angleDelta().y();
    setScrollX(scrollX_ - delta);
    Q_EMIT viewChanged();
  }
  event->accept();
}

void TimelineView::keyPressEvent(QKeyEvent* event) {
  const int count = static_cast<int>(document_->sequence().shots.size());
  const bool shift = event->modifiers().testFlag(Qt::ShiftModifier);
  switch (event->key()) {
    case Qt::Key_Left:
      if (shift)
        nudgeLength(selected_, -4);
      else
        setSelectedIndex(std::max(0, selected_ - 1));
      return;
    case Qt::Key_Right:
      if (shift)
        nudgeLength(selected_, 4);
      else
        setSelectedIndex(std::min(count - 1, selected_ + 1));
      return;
    case Qt::Key_Home:
      setPlayhead(0);
      return;
    case Qt::Key_End:
      setPlayhead(document_->sequence().totalFrames() - 1);
      return;
    case Qt::Key_Escape:
      if (gesture_ != Gesture::None) {
        gesture_ = Gesture::None;
        gestureIndex_ = -1;
        update();
      } else {
        setSelectedIndex(-1);
      }
      return;
    default:
      QWidget::keyPressEvent(event);
  }
}

void TimelineView::resizeEvent(QResizeEvent*) {
  if (fitOnNextResize_ && width() > 100) {
    fitOnNextResize_ = false;
    zoomToFit();
  }
  clampScroll();
  Q_EMIT viewChanged();
}

bool TimelineView::event(QEvent* event) {
  if (event->type() == QEvent::ToolTip) {
    auto* help = static_cast<QHelpEvent*>(event);
    if (const int cut = cutAt(help->pos()); cut > 0) {
      QToolTip::showText(help->globalPos(), cutTooltip(cut), this);
    } else if (const int index = indexAt(help->pos()); index >= 0) {
      const Shot& shot = document_->sequence().shots[static_cast<std::size_t>(index)];
      QString cache = stepCacheLine(state_->status(shot.id));
      if (const QString experts = expertsLine(state_->status(shot.id)); !experts.isEmpty())
        cache += (cache.isEmpty() ? QString() : QStringLiteral("\n")) + experts;
      if (const std::string landing = continuity::landingSummary(state_->status(shot.id).keyframes); !landing.empty())
        cache += (cache.isEmpty() ? QString() : QStringLiteral("\n")) + QString::fromStdString(landing);
      QToolTip::showText(
          help->globalPos(),
          tr("<b>%1</b> — %2 frames, %3×%4, seed %5<br>%6<br>%7%8<i>Drag to reorder, drag the right "
             "edge to trim (Alt: no snapping), drop a picture on its last quarter to end the shot on it, elsewhere to "
             "start the shot from it (or, on a continuing shot, to "
             "blend it in).</i>")
              .arg(QString::fromStdString(shot.displayName()).toHtmlEscaped())
              .arg(shot.frames)
              .arg(shot.width)
              .arg(shot.height)
              .arg(shot.seed)
              .arg(QString::fromStdString(shot.prompt).toHtmlEscaped())
              .arg(cache.isEmpty() ? QString()
                                   : cache.toHtmlEscaped().replace(QStringLiteral("\n"), QStringLiteral("<br>")) +
                                         QStringLiteral("<br>"))
              .arg(shot.enabled ? QString() : tr("<b>Off:</b> not rendered and not in the movie.<br>")),
          this);
    } else {
      QToolTip::hideText();
    }
    return true;
  }
  return QWidget::event(event);
}

bool TimelineView::nudgeLength(int index, int deltaFrames) {
  if (index < 0 || index >= static_cast<int>(document_->sequence().shots.size())) return false;
  const Shot& shot = document_->sequence().shots[static_cast<std::size_t>(index)];
  const Diagnostics errors = document_->edit(SetShotLength{static_cast<std::size_t>(index), shot.frames + deltaFrames},
                                             QStringLiteral("nudge:") + QString::fromStdString(shot.id));
  if (!errors.empty()) Q_EMIT statusMessage(QString::fromStdString(errors.front().format()));
  return errors.empty();
}

// The cut goes at the latent boundary nearest the playhead when the playhead is inside the shot,
// else in the middle; core decides whether it can be split. One undo step.
bool TimelineView::splitShot(int index) {
  if (index < 0 || index >= static_cast<int>(document_->sequence().shots.size())) return false;
  const auto at = static_cast<std::size_t>(index);
  const int offset = playhead_ - document_->sequence().startFrame(at);
  const int frames = document_->sequence().shots[at].frames;
  const int step = document_->resolved().geometry.frameStep();
  const Diagnostics errors =
      document_->edit(SplitShot{at, splitFrameNear(document_->sequence().shots[at], offset, step), step, {}});
  if (!errors.empty()) {
    Q_EMIT statusMessage(QString::fromStdString(errors.front().message));
    return false;
  }
  // Two shots of whole latents can never add up to one: the parts share the cut frame.
  const auto& shots = document_->sequence().shots;
  Q_EMIT statusMessage(
      tr("Split %1 frames into %2 + %3: every shot is %4k+1 frames long, so the two parts share the cut "
         "frame and the sequence is one frame longer (%5 frames)")
          .arg(frames)
          .arg(shots[at].frames)
          .arg(shots[at + 1].frames)
          .arg(step)
          .arg(document_->sequence().totalFrames()));
  setSelectedIndex(index + 1);
  return true;
}

}  // namespace shotchain::ui
