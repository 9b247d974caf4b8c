#include "inspector/inspector_panel.h"

#include <QScrollArea>
#include <QStackedWidget>
#include <QVBoxLayout>

#include "inspector/settings_inspector.h"
#include "inspector/shot_inspector.h"

namespace shotchain::ui {

InspectorPanel::InspectorPanel(SequenceDocument* document, QWidget* parent)
    : QWidget(parent),
      stack_(new QStackedWidget),
      shot_(new ShotInspector(document)),
      settings_(new SettingsInspector(document)) {
  stack_->addWidget(settings_);
  stack_->addWidget(shot_);
  auto* scroll = new QScrollArea(this);
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  scroll->setWidget(stack_);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(scroll);
  settings_->refresh();
}

void InspectorPanel::showShot(int index) {
  if (index < 0) {
    settings_->refresh();
    stack_->setCurrentWidget(settings_);
  } else {
    shot_->setShotIndex(index);
    stack_->setCurrentWidget(shot_);
  }
}

}  // namespace shotchain::ui
