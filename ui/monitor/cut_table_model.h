#pragma once

#include <QAbstractTableModel>

#include <vector>

#include "continuity/cut_metrics.h"

namespace shotchain::ui {

// One row per measured cut, one column per CutMetrics figure (per-channel vectors are summarised
// by their mean |·| columns and shown whole in the tooltip). The after-cut figures come first with
// their verdict (continuity/cut_verdict.h): red past a threshold, the plain words in the tooltip.
class CutTableModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column {
    Cut, Mode, Verdict, Flash, ColourDrift, SpreadDrift, Structure, MadRatio, PsnrCut, PsnrWithin, SsimCut, SsimWithin, DeltaEPrev, DeltaEFirst, HandoffMse,
    LatentStepRatio, MeanDeltaPrev, LogStdDeltaPrev, MeanDeltaFirst, LogStdDeltaFirst, RoundtripMse,
    HandoffBytes, HandoffSeconds, ColumnCount
  };

  explicit CutTableModel(QObject* parent = nullptr);

  void setCuts(std::vector<continuity::CutMetrics> cuts);
  // Replaces the row of the same cut or appends one.
  void addCut(const continuity::CutMetrics& cut);
  void clear();
  const std::vector<continuity::CutMetrics>& cuts() const { return cuts_; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 private:
  std::vector<continuity::CutMetrics> cuts_;
};

}  // namespace shotchain::ui
