#pragma once

#include <QMap>
#include <QSet>
#include <QWidget>

#include <functional>

#include "sequence/sequence.h"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QSpinBox;
class QTimer;

namespace shotchain::ui {

class FieldError;
class ImageField;
class LoraListField;
class SequenceDocument;

// Edits one shot. Each field commits through the document's undo stack when its edit is finished
// (typing in a prompt merges into one step); a value core refuses stays in the field with core's
// message under it and changes nothing.
class ShotInspector : public QWidget {
  Q_OBJECT

 public:
  explicit ShotInspector(SequenceDocument* document, QWidget* parent = nullptr);
  ~ShotInspector() override;

  void setShotIndex(int index);
  int shotIndex() const { return index_; }
  // Re-reads the shot (after an edit or undo); fields being typed in are left alone.
  void refresh();
  void showResolvedProblems();
  // The inline error of `field` ("frames", "seed", …), for tests.
  QString errorText(const QString& field) const;
  QWidget* fieldWidget(const QString& field) const { return widgets_.value(field); }
  LoraListField* lorasField() const { return loras_; }

 private:
  // Applies `change` to a copy of the shot and commits it; shows core's refusal under `field`.
  bool commit(const QString& field, const std::function<void(Shot&)>& change, const QString& mergeKey = {});
  void commitLength(int frames);
  void commitText(QPlainTextEdit* editor, const QString& field);
  void watchTyping(QPlainTextEdit* editor, const QString& field);

  SequenceDocument* document_;
  int index_ = -1;
  int typingSession_ = 0;
  QMap<QString, FieldError*> errors_;
  QSet<QString> fromResolved_;  // fields showing what the resolved shot refuses (not an edit's refusal)
  QMap<QString, QWidget*> widgets_;

  QLabel* heading_;
  QLineEdit* name_;
  QPlainTextEdit* prompt_;
  QPlainTextEdit* negative_;
  QSpinBox* frames_;
  QComboBox* preset_;
  QSpinBox* width_;
  QSpinBox* height_;
  QLineEdit* seed_;
  QSpinBox* steps_;
  QDoubleSpinBox* guidance_;
  QDoubleSpinBox* shift_;
  QComboBox* cache_;
  QComboBox* mode_;
  QLineEdit* tag_;
  QSpinBox* overlap_;
  QDoubleSpinBox* blend_;
  ImageField* start_;
  ImageField* end_;
  ImageField* fallback_;
  QSpinBox* motion_;
  ImageField* sviAnchor_;
  QCheckBox* anchor_;
  QCheckBox* recache_;
  QCheckBox* enabled_;
  LoraListField* loras_;
};

}  // namespace shotchain::ui
