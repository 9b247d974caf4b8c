#include "timeline/timeline_panel.h"

#include "widgets/elided_label.h"

#include <QAction>
#include <QHBoxLayout>
#include <QLabel>
#include <QScrollBar>
#include <QToolButton>
#include <QVBoxLayout>

#include "timeline/timeline_view.h"

namespace shotchain::ui {

TimelinePanel::TimelinePanel(TimelineView* view, const QList<QAction*>& actions, QWidget* parent)
    : QWidget(parent), view_(view), scrollBar_(new QScrollBar(Qt::Horizontal, this)) {
  auto* strip = new QHBoxLayout;
  strip->setContentsMargins(6, 2, 6, 0);
  strip->setSpacing(2);
  for (QAction* action : actions) {
    if (action == nullptr) {
      strip->addSpacing(10);
      continue;
    }
    auto* button = new QToolButton(this);
    button->setDefaultAction(action);
    button->setToolButtonStyle(Qt::ToolButtonTextOnly);
    button->setAutoRaise(true);
    strip->addWidget(button);
  }
  strip->addStretch();
  auto* hint =
      new ElidedLabel(tr("Ctrl+wheel: zoom · Shift+Left/Right: length ±4 · Alt while trimming: no snap"), this);
  hint->setAlignment(Qt::AlignRight);
  hint->setStyleSheet(QStringLiteral("color: #808080;"));
  strip->addWidget(hint, 1);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(0);
  layout->addLayout(strip);
  layout->addWidget(view_, 1);
  layout->addWidget(scrollBar_);

  connect(view_, &TimelineView::viewChanged, this, &TimelinePanel::syncScrollBar);
  connect(scrollBar_, &QScrollBar::valueChanged, view_, &TimelineView::setScrollX);
}

void TimelinePanel::syncScrollBar() {
  const QSignalBlocker block(scrollBar_);
  scrollBar_->setRange(0, std::max(0, view_->contentWidth() - view_->width()));
  scrollBar_->setPageStep(view_->width());
  scrollBar_->setValue(view_->scrollX());
}

}  // namespace shotchain::ui
