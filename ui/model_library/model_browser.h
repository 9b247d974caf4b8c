#pragma once

#include <QWidget>

#include <optional>
#include <vector>

#include "models/model_catalogue.h"

class QLabel;
class QPushButton;
class QTableWidget;

namespace shotchain::ui {

class SequenceDocument;
class StudioSettings;

// Every weights file in the model folders of the preferences (and the built-in demo model), as
// detected from its header: role, family and variant, size, dtype, problem. Above the list, which
// files the open sequence will load, or what is missing and why. "Use for this sequence" writes the
// document's model set (one undo step). The folders are read off the GUI thread.
class ModelBrowser : public QWidget {
  Q_OBJECT

 public:
  ModelBrowser(SequenceDocument* document, StudioSettings* settings, QWidget* parent = nullptr);

  const std::vector<models::CataloguedModel>& files() const { return files_; }
  bool isScanning() const { return scanning_; }
  QString useText() const;
  // What the details line under the list says of the selected file (its family, role and problem in full).
  QString detailsText() const;
  // What the document's model set resolves to (the Problems panel reads it too): resolved again only
  // when the model set or the document's folder changed.
  const models::ModelSetUse& currentUse();
  // Sets the file of row `row` as the sequence's model for its role; false (with the reason in the
  // status line) when the file cannot be used.
  bool useRow(int row);
  // Two experts (Wan 2.2 A14B): the DiT of row `row` becomes the high-noise expert beside the sequence's DiT
  // (its low-noise one); row −1 takes the expert away. One undo step; false with the reason in the status line.
  bool useRowAsHighNoiseExpert(int row);

 public Q_SLOTS:
  void rescan();
  void updateUse();

 Q_SIGNALS:
  void preferencesRequested();
  void statusMessage(const QString& message);

 private:
  void showFiles(std::vector<models::CataloguedModel> files);
  void showDetails(int row);

  SequenceDocument* document_;
  StudioSettings* settings_;
  QLabel* use_;
  QLabel* folders_;
  QTableWidget* table_;
  QLabel* details_;
  QPushButton* useButton_;
  QPushButton* highNoiseButton_;
  QPushButton* singleDitButton_;
  std::vector<models::CataloguedModel> files_;
  std::optional<models::ModelSetUse> resolved_;  // of resolvedModel_ against resolvedBase_
  ModelSet resolvedModel_;
  std::filesystem::path resolvedBase_;
  bool scanning_ = false;
  bool rescanPending_ = false;
};

}  // namespace shotchain::ui
