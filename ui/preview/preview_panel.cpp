#include "preview/preview_panel.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

#include "document/sequence_document.h"
#include "preview/frame_view.h"
#include "render/render_state.h"
#include "sequence/shot_rules.h"

namespace shotchain::ui {

PreviewPanel::PreviewPanel(SequenceDocument* document, RenderState* state, QWidget* parent)
    : QWidget(parent),
      document_(document),
      state_(state),
      view_(new FrameView(this)),
      play_(new QToolButton(this)),
      follow_(new QToolButton(this)),
      scope_(new QComboBox(this)),
      position_(new QLabel(this)),
      timer_(new QTimer(this)),
      liveTimer_(new QTimer(this)) {
  play_->setText(tr("▶ Play"));
  play_->setToolTip(tr("Play / pause (Space); J / K / L shuttle backward, stop, forward; I / O loop in and out"));
  play_->setAutoRaise(true);
  auto* back = new QToolButton(this);
  back->setText(tr("◀|"));
  back->setToolTip(tr("Previous frame (Left or ,)"));
  back->setAutoRaise(true);
  auto* forward = new QToolButton(this);
  forward->setText(tr("|▶"));
  forward->setToolTip(tr("Next frame (Right or .)"));
  forward->setAutoRaise(true);
  follow_->setText(tr("● Follow render"));
  follow_->setObjectName(QStringLiteral("FollowRender"));
  follow_->setToolTip(tr("Show what the render sends again (the latest step or decoded frame)"));
  follow_->setVisible(false);
  scope_->addItems({tr("Whole sequence"), tr("Selected shot")});
  position_->setMinimumWidth(220);

  auto* controls = new QHBoxLayout;
  controls->setContentsMargins(6, 2, 6, 4);
  controls->addWidget(back);
  controls->addWidget(play_);
  controls->addWidget(forward);
  controls->addSpacing(8);
  controls->addWidget(scope_);
  controls->addWidget(follow_);
  controls->addStretch();
  controls->addWidget(position_);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(0);
  layout->addWidget(view_, 1);
  layout->addLayout(controls);

  connect(play_, &QToolButton::clicked, this, &PreviewPanel::togglePlay);
  connect(follow_, &QToolButton::clicked, this, &PreviewPanel::followRender);
  connect(back, &QToolButton::clicked, this, [this] { stepFrame(-1); });
  connect(forward, &QToolButton::clicked, this, [this] { stepFrame(1); });
  connect(timer_, &QTimer::timeout, this, &PreviewPanel::advance);
  connect(liveTimer_, &QTimer::timeout, this, [this] {
    if (liveFrames_.isEmpty()) return;
    liveFrame_ = (liveFrame_ + 1) % static_cast<int>(liveFrames_.size());
    showLiveFrame();
  });
  connect(state_, &RenderState::framesChanged, this, [this] {
    if (!live_) showFrameAt(frame_);
  });
  connect(document_, &SequenceDocument::replaced, this, [this] {
    pause();
    clearLoop();
    showFrameAt(0);
  });
  showFrameAt(0);
}

bool PreviewPanel::isPlaying() const { return timer_->isActive(); }

void PreviewPanel::showFrameAt(int sequenceFrame) {
  frame_ = sequenceFrame;
  const Sequence& sequence = document_->sequence();
  const int total = sequence.totalFrames();
  if (sequence.shots.empty()) {
    position_->clear();
    if (!live_) view_->setMessage(tr("An empty sequence. Add a shot to begin."));
    return;
  }
  const std::size_t index = shotAtFrame(sequence, sequenceFrame).value_or(sequence.shots.size() - 1);
  const Shot& shot = sequence.shots[index];
  const int local = sequenceFrame - sequence.startFrame(index);
  const double fps = sequence.settings.fps > 0 ? sequence.settings.fps : 16;
  QString text = tr("%1 · frame %2/%3 · %4 s")
                     .arg(QString::fromStdString(shot.displayName()))
                     .arg(local + 1)
                     .arg(shot.frames)
                     .arg(sequenceFrame / fps, 0, 'f', 2);
  if (loopIn_ >= 0 || loopOut_ >= 0)
    text += tr(" · loop %1–%2")
                .arg(loopIn_ >= 0 ? QString::number(loopIn_ + 1) : tr("start"),
                     loopOut_ >= 0 ? QString::number(loopOut_ + 1) : tr("end"));
  if (timer_->isActive() && rate_ != 1) text += tr(" · %1×").arg(rate_);
  position_->setText(text);
  const QVector<QImage> frames = state_->frames(shot.id);
  const bool rendered = local >= 0 && local < frames.size() && !frames[local].isNull();
  if (live_ && !rendered) {
    followRender();
    return;
  }
  if (live_) {
    held_ = true;
    follow_->setVisible(true);
  }
  if (rendered) {
    const bool outOfDate = state_->status(shot.id).state == ShotState::Stale;
    view_->setFrame(frames[local], tr("%1 · %2/%3%4")
                                       .arg(QString::fromStdString(shot.displayName()))
                                       .arg(local + 1)
                                       .arg(shot.frames)
                                       .arg(outOfDate ? tr(" · out of date: render to update") : QString()));
  } else {
    view_->setMessage(tr("%1 is not rendered yet.\n\nPress Render sequence (Ctrl+R): the latent preview of every "
                         "step shows here, then the decoded frames.\nFrame %2 of %3.")
                          .arg(QString::fromStdString(shot.displayName()))
                          .arg(sequenceFrame + 1)
                          .arg(total));
  }
}

void PreviewPanel::showLive(const QImage& image, const QString& caption) {
  if (!live_ || image.isNull()) return;
  liveTimer_->stop();
  liveFrames_.clear();
  liveImage_ = image;
  liveCaption_ = caption;
  if (!held_) view_->setFrame(image, caption);
}

void PreviewPanel::showLiveFrames(const QVector<QImage>& frames, const QString& caption) {
  if (!live_ || frames.isEmpty()) return;
  liveFrames_ = frames;
  liveCaption_ = caption;
  liveFrame_ = 0;
  showLiveFrame();
  const double fps = document_->sequence().settings.fps > 0 ? document_->sequence().settings.fps : 16;
  liveTimer_->start(static_cast<int>(std::lround(1000.0 / fps)));
}

void PreviewPanel::showLiveFrame() {
  liveImage_ = liveFrames_[liveFrame_];
  if (!held_)
    view_->setFrame(liveImage_, tr("%1 · frame %2/%3").arg(liveCaption_).arg(liveFrame_ + 1).arg(liveFrames_.size()));
}

void PreviewPanel::followRender() {
  const bool wasHeld = held_;
  held_ = false;
  follow_->setVisible(false);
  if (live_ && wasHeld && !liveImage_.isNull()) view_->setFrame(liveImage_, liveCaption_);
}

void PreviewPanel::setLive(bool live) {
  live_ = live;
  held_ = false;
  follow_->setVisible(false);
  liveImage_ = {};
  liveTimer_->stop();
  liveFrames_.clear();
  if (live) {
    timer_->stop();
    play_->setText(tr("▶ Play"));
  } else {
    showFrameAt(frame_);
  }
}

void PreviewPanel::togglePlay() {
  if (timer_->isActive()) {
    pause();
    return;
  }
  rate_ = 1;
  start();
}

void PreviewPanel::start() {
  const double fps = document_->sequence().settings.fps > 0 ? document_->sequence().settings.fps : 16;
  timer_->start(static_cast<int>(std::lround(1000.0 / fps)));
  play_->setText(tr("❚❚ Pause"));
  showFrameAt(frame_);
}

void PreviewPanel::pause() {
  timer_->stop();
  rate_ = 1;
  play_->setText(tr("▶ Play"));
  showFrameAt(frame_);
}

void PreviewPanel::shuttle(int direction) {
  if (live_ || direction == 0) return;
  const int sign = direction > 0 ? 1 : -1;
  if (timer_->isActive() && (rate_ > 0) == (sign > 0))
    rate_ = std::clamp(rate_ * 2, -8, 8);
  else
    rate_ = sign;
  start();
}

void PreviewPanel::setLoopIn() {
  loopIn_ = frame_;
  if (loopOut_ >= 0 && loopOut_ < loopIn_) loopOut_ = -1;
  Q_EMIT loopChanged(loopIn_, loopOut_);
  showFrameAt(frame_);
}

void PreviewPanel::setLoopOut() {
  loopOut_ = frame_;
  if (loopIn_ > loopOut_) loopIn_ = -1;
  Q_EMIT loopChanged(loopIn_, loopOut_);
  showFrameAt(frame_);
}

void PreviewPanel::clearLoop() {
  loopIn_ = loopOut_ = -1;
  Q_EMIT loopChanged(loopIn_, loopOut_);
  showFrameAt(frame_);
}

void PreviewPanel::stepFrame(int delta) {
  const int total = document_->sequence().totalFrames();
  if (total <= 0) return;
  Q_EMIT playheadRequested(std::clamp(frame_ + delta, 0, total - 1));
}

void PreviewPanel::advance() {
  const Sequence& sequence = document_->sequence();
  const int total = sequence.totalFrames();
  if (total <= 0) return;
  int first = 0, last = total - 1;
  if (scope_->currentIndex() == 1 && selected_ >= 0 && selected_ < static_cast<int>(sequence.shots.size())) {
    first = sequence.startFrame(static_cast<std::size_t>(selected_));
    last = first + sequence.shots[static_cast<std::size_t>(selected_)].frames - 1;
  }
  if (loopIn_ >= 0) first = std::clamp(loopIn_, 0, total - 1);
  if (loopOut_ >= 0) last = std::clamp(loopOut_, first, total - 1);
  int next = frame_ + rate_;
  if (next > last) next = first;  // loop
  if (next < first) next = rate_ < 0 ? last : first;
  Q_EMIT playheadRequested(next);
}

}  // namespace shotchain::ui
