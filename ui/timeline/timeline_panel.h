#pragma once

#include <QList>
#include <QWidget>

class QAction;
class QScrollBar;

namespace shotchain::ui {

class TimelineView;

// The timeline dock's content: a strip of shot actions, the track, and its scroll bar.
class TimelinePanel : public QWidget {
  Q_OBJECT

 public:
  TimelinePanel(TimelineView* view, const QList<QAction*>& actions, QWidget* parent = nullptr);

 private:
  void syncScrollBar();

  TimelineView* view_;
  QScrollBar* scrollBar_;
};

}  // namespace shotchain::ui
