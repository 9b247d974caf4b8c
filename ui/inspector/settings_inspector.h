#pragma once

#include <QMap>
#include <QWidget>

#include <functional>

#include "sequence/sequence.h"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QSpinBox;

namespace shotchain::ui {

class LoraListField;

class FieldError;
class SequenceDocument;

// Edits the sequence settings (shown when no shot is selected): model set, sampler defaults,
// memory policy, budget and allocator tuning, each change one SetSettings undo step. The render
// device is a studio setting, not part of the document.
class SettingsInspector : public QWidget {
  Q_OBJECT

 public:
  explicit SettingsInspector(SequenceDocument* document, QWidget* parent = nullptr);

  void refresh();
  void setDevice(const QString& device);
  // View › Advanced Figures: engineering settings (allocator tuning; the stream window without a stream shot).
  void setAdvanced(bool advanced);
  QString errorText(const QString& field) const;

 Q_SIGNALS:
  void deviceChanged(const QString& device);
  // An edit the document refused (the field shows why) or, empty, that nothing is pending any more:
  // the Problems panel lists it, so the two never disagree.
  void pendingProblemChanged(const QString& problem);

 private:
  bool commit(const QString& field, const std::function<void(SequenceSettings&)>& change);
  void updateModelRows();
  void detectLayout();

  SequenceDocument* document_;
  QMap<QString, FieldError*> errors_;
  QLineEdit* name_;
  QDoubleSpinBox* fps_;
  QComboBox* source_;
  QLineEdit* builtin_;
  QLineEdit* folder_;
  QLabel* layout_;
  QLineEdit* dit_;
  QLineEdit* ditHighNoise_;
  QLineEdit* vae_;
  QLineEdit* textEncoder_;
  QLineEdit* tokenizer_;
  QSpinBox* steps_;
  QDoubleSpinBox* guidance_;
  QDoubleSpinBox* shift_;
  QComboBox* solver_;
  QSpinBox* streamWindow_;
  QComboBox* cachePolicy_;
  QDoubleSpinBox* cacheThreshold_;
  QLineEdit* cacheCalibration_;
  QComboBox* device_;
  QDoubleSpinBox* budget_;
  QComboBox* policy_;
  QCheckBox* tuning_;
  QDoubleSpinBox* boundary_;
  QDoubleSpinBox* guidanceHighNoise_;
  QComboBox* experts_;
  LoraListField* loras_;
  QList<QWidget*> expertRows_;
  QList<QWidget*> streamRows_;    // shown when a shot streams (or in the advanced view)
  QList<QWidget*> advancedRows_;  // the allocator's switch: the advanced view only
  bool advanced_ = false;
  QList<QWidget*> builtinRows_, folderRows_, fileRows_;
};

}  // namespace shotchain::ui
