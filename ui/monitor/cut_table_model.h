#pragma once

#include <QAbstractTableModel>

#include <vector>

#include "continuity/cut_metrics.h"
#include "render/render_state.h"

namespace shotchain::ui {

// One row per measured cut of the sequence in its order, one column per CutMetrics figure (per-channel
// vectors are summarised by their mean |·| columns and shown whole in the tooltip). The after-cut
// figures come first with their verdict (continuity/cut_verdict.h): red past a threshold, the plain
// words in the tooltip. A cut whose shots changed since it was measured stays, greyed, as out of date.
class CutTableModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column {
    Cut,
    Mode,
    Verdict,
    Flash,
    ColourDrift,
    SpreadDrift,
    Structure,
    MadRatio,
    PsnrCut,
    PsnrWithin,
    SsimCut,
    SsimWithin,
    DeltaEPrev,
    DeltaEFirst,
    HandoffMse,
    LatentStepRatio,
    MeanDeltaPrev,
    LogStdDeltaPrev,
    MeanDeltaFirst,
    LogStdDeltaFirst,
    RoundtripMse,
    HandoffBytes,
    HandoffSeconds,
    ColumnCount
  };

  explicit CutTableModel(QObject* parent = nullptr);

  // The first of the engineering columns, shown only in the Advanced view.
  static constexpr int kFirstAdvancedColumn = MadRatio;

  // Takes the rows as RenderState::cutRows() gives them; nothing happens when they are the same.
  void setRows(std::vector<CutRow> rows);
  const std::vector<CutRow>& rows() const { return rows_; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 private:
  std::vector<CutRow> rows_;
};

}  // namespace shotchain::ui
