#pragma once

#include <QWidget>

class QStackedWidget;

namespace shotchain::ui {

class SequenceDocument;
class SettingsInspector;
class ShotInspector;

// The inspector dock: the selected shot, or the sequence settings when nothing is selected.
class InspectorPanel : public QWidget {
  Q_OBJECT

 public:
  explicit InspectorPanel(SequenceDocument* document, QWidget* parent = nullptr);

  void showShot(int index);  // −1: the sequence settings
  ShotInspector* shotInspector() const { return shot_; }
  SettingsInspector* settingsInspector() const { return settings_; }

 private:
  QStackedWidget* stack_;
  ShotInspector* shot_;
  SettingsInspector* settings_;
};

}  // namespace shotchain::ui
