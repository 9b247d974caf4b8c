#include "monitor/cut_table_model.h"

#include <QColor>
#include <QFont>
#include <QStringList>

#include <algorithm>
#include <cmath>

#include "continuity/cut_verdict.h"

namespace shotchain::ui {
namespace {

QVariant figure(const std::optional<double>& value, int decimals) {
  if (!value) return QStringLiteral("—");
  if (std::isinf(*value)) return QStringLiteral("∞");
  return QString::number(*value, 'f', decimals);
}

// The verdict of the figure a column shows (nullptr for the other columns).
const continuity::FigureVerdict* figureVerdict(const continuity::CutVerdict& verdict, int column) {
  const int first = CutTableModel::Flash;
  if (column < first || column > CutTableModel::Structure) return nullptr;
  return &verdict.figures[static_cast<std::size_t>(column - first)];
}

QColor stateColour(continuity::FigureState state) {
  switch (state) {
    case continuity::FigureState::Warning:
      return QColor(0xe8, 0x4a, 0x4a);
    case continuity::FigureState::Fine:
      return QColor(0x4c, 0xc3, 0x6a);
    case continuity::FigureState::Expected:
      return QColor(0x8a, 0x9a, 0xb0);
    case continuity::FigureState::Unmeasured:
      break;
  }
  return QColor(0x8a, 0x8a, 0x8a);
}

QString vector(const std::vector<double>& values) {
  QStringList parts;
  for (double v : values) parts << QString::number(v, 'f', 3);
  return parts.isEmpty() ? QStringLiteral("—") : parts.join(QStringLiteral(", "));
}

}  // namespace

CutTableModel::CutTableModel(QObject* parent) : QAbstractTableModel(parent) {}

namespace {

bool sameRow(const CutRow& a, const CutRow& b) {
  return a.current == b.current && a.fromName == b.fromName && a.toName == b.toName &&
         a.cut.fromShotId == b.cut.fromShotId && a.cut.toShotId == b.cut.toShotId && a.cut.fromKey == b.cut.fromKey &&
         a.cut.toKey == b.cut.toKey && a.cut.flash == b.cut.flash && a.cut.madRatio == b.cut.madRatio;
}

}  // namespace

void CutTableModel::setRows(std::vector<CutRow> rows) {
  if (rows.size() == rows_.size() && std::equal(rows.begin(), rows.end(), rows_.begin(), sameRow)) return;
  if (rows.size() == rows_.size()) {  // same cuts, new figures or states: the view keeps its selection
    rows_ = std::move(rows);
    if (!rows_.empty()) Q_EMIT dataChanged(index(0, 0), index(static_cast<int>(rows_.size()) - 1, ColumnCount - 1));
    return;
  }
  beginResetModel();
  rows_ = std::move(rows);
  endResetModel();
}

int CutTableModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}
int CutTableModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant CutTableModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid)) return {};
  const CutRow& row = rows_[static_cast<std::size_t>(index.row())];
  const continuity::CutMetrics& c = row.cut;
  if (!row.current) {
    if (role == Qt::ForegroundRole) return QColor(0x80, 0x80, 0x80);
    if (role == Qt::FontRole && index.column() == Verdict) {
      QFont italic;
      italic.setItalic(true);
      return italic;
    }
    if (role == Qt::ToolTipRole)
      return tr("Measured between %1 and %2 as they were; the shots here changed since (an edit or a reorder). "
                "Render to measure this cut again.")
          .arg(QString::fromStdString(c.fromShotId), QString::fromStdString(c.toShotId));
    if (role == Qt::DisplayRole && index.column() == Verdict) return tr("out of date");
  }
  if (role == Qt::DisplayRole) {
    switch (index.column()) {
      case Cut:
        return QStringLiteral("%1 → %2").arg(QString::fromStdString(row.fromName), QString::fromStdString(row.toName));
      case Mode:
        return QString::fromStdString(c.mode);
      case Verdict: {
        const continuity::CutVerdict verdict = continuity::judgeCut(c);
        // The warning in words, so that nothing off to the right is needed to read it.
        const std::string prefix = "warning: ";
        const std::string words =
            verdict.summary.rfind(prefix, 0) == 0 ? verdict.summary.substr(prefix.size()) : verdict.summary;
        return verdict.warnings > 0 ? QStringLiteral("⚠ %1").arg(QString::fromStdString(words))
                                    : QString::fromStdString(verdict.summary);
      }
      case Flash:
        return figure(c.flash, 2);
      case ColourDrift:
        return figure(c.colourDrift, 1);
      case SpreadDrift:
        return figure(c.spreadDrift, 1);
      case Structure:
        return figure(c.structure, 2);
      case MadRatio:
        return figure(c.madRatio, 2);
      case PsnrCut:
        return figure(c.psnrCut, 1);
      case PsnrWithin:
        return figure(c.psnrWithinMedian, 1);
      case SsimCut:
        return figure(c.ssimCut, 3);
      case SsimWithin:
        return figure(c.ssimWithinMedian, 3);
      case DeltaEPrev:
        return figure(c.deltaEPrev, 2);
      case DeltaEFirst:
        return figure(c.deltaEFirst, 2);
      case HandoffMse:
        return figure(c.handoffMse, 6);
      case LatentStepRatio:
        return figure(c.latentStepRatio, 2);
      case MeanDeltaPrev:
        return QString::number(c.meanAbsChannelMeanDeltaPrev, 'f', 4);
      case LogStdDeltaPrev:
        return QString::number(c.meanAbsChannelLogStdDeltaPrev, 'f', 4);
      case MeanDeltaFirst:
        return QString::number(c.meanAbsChannelMeanDeltaFirst, 'f', 4);
      case LogStdDeltaFirst:
        return QString::number(c.meanAbsChannelLogStdDeltaFirst, 'f', 4);
      case RoundtripMse:
        return figure(c.roundtripMse, 6);
      case HandoffBytes:
        return QVariant::fromValue(static_cast<qulonglong>(c.handoffBytesCopied));
      case HandoffSeconds:
        return QString::number(c.handoffSeconds * 1000, 'f', 2);
      default:
        return {};
    }
  }
  if (role == Qt::ToolTipRole && index.column() >= Verdict && index.column() <= Structure) {
    const continuity::CutVerdict verdict = continuity::judgeCut(c);
    if (const continuity::FigureVerdict* f = figureVerdict(verdict, index.column()))
      return QString::fromStdString(f->words);
    QStringList lines;
    for (const continuity::FigureVerdict& f : verdict.figures) lines << QString::fromStdString(f.words);
    return lines.join(QLatin1Char('\n'));
  }
  if (role == Qt::ForegroundRole && index.column() >= Verdict && index.column() <= Structure) {
    const continuity::CutVerdict verdict = continuity::judgeCut(c);
    if (const continuity::FigureVerdict* f = figureVerdict(verdict, index.column())) return stateColour(f->state);
    if (!verdict.measured) return stateColour(continuity::FigureState::Unmeasured);
    return stateColour(verdict.warnings > 0 ? continuity::FigureState::Warning : continuity::FigureState::Fine);
  }
  if (role == Qt::ToolTipRole) {
    switch (index.column()) {
      case MeanDeltaPrev:
        return vector(c.channelMeanDeltaPrev);
      case LogStdDeltaPrev:
        return vector(c.channelLogStdDeltaPrev);
      case MeanDeltaFirst:
        return vector(c.channelMeanDeltaFirst);
      case LogStdDeltaFirst:
        return vector(c.channelLogStdDeltaFirst);
      default:
        return {};
    }
  }
  if (role == Qt::ForegroundRole && index.column() == MadRatio && c.madRatio) {
    if (*c.madRatio > 3) return QColor(0xe8, 0x4a, 0x4a);
    if (*c.madRatio > 1.5) return QColor(0xf0, 0xb0, 0x3c);
    return QColor(0x4c, 0xc3, 0x6a);
  }
  if (role == Qt::TextAlignmentRole && index.column() > Verdict) return int(Qt::AlignRight | Qt::AlignVCenter);
  return {};
}

QVariant CutTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation == Qt::Vertical) return role == Qt::DisplayRole ? QVariant(section + 1) : QVariant();
  static const char* const names[] = {"Cut",
                                      "Mode",
                                      "After the cut",
                                      "Flash",
                                      "Colour drift (ΔE)",
                                      "Spread drift (ΔE)",
                                      "Structure",
                                      "MAD ratio",
                                      "PSNR cut (dB)",
                                      "PSNR within (dB)",
                                      "SSIM cut",
                                      "SSIM within",
                                      "ΔE prev",
                                      "ΔE first",
                                      "Handoff MSE",
                                      "Latent step ratio",
                                      "|Δmean| prev",
                                      "|Δlog σ| prev",
                                      "|Δmean| first",
                                      "|Δlog σ| first",
                                      "Round-trip MSE",
                                      "Handoff bytes",
                                      "Handoff ms"};
  static const char* const tips[] = {
      "From shot → to shot",
      "Continuity mode of the later shot",
      "Verdict on the first frames after the cut (hover it for the words)",
      "Largest change between neighbouring frames in the first 8 after the cut over the median inside the shots "
      "(≈1 steady)",
      "Largest Lab distance between the mean colour of the first 8 frames after the cut and the last frame before it",
      "The same for the colour spread (contrast) of those frames",
      "Lowest SSIM between neighbouring frames in the first 8 after the cut over the median inside the shots",
      "Mean absolute difference across the cut over the median inside the shots: ≈1 seamless, >3 reads as a cut",
      "Luma PSNR between the last frame and the next shot's first",
      "Median PSNR between neighbouring frames inside the shots",
      "SSIM across the cut",
      "Median SSIM inside the shots",
      "Mean Lab colour difference to the previous shot",
      "Mean Lab colour difference to shot 1",
      "Stored tail vs what the next shot was conditioned on",
      "Latent change across the cut over the median change inside the shots",
      "Mean over channels of |mean(N+1) − mean(N)|",
      "Mean over channels of |log std(N+1) − log std(N)|",
      "As above, against shot 1",
      "As above, against shot 1",
      "Decode → encode of the tail (the drift vae_roundtrip costs)",
      "Bytes copied for the handoff (0: a view)",
      "Wall time of the handoff"};
  if (section < 0 || section >= ColumnCount) return {};
  if (role == Qt::DisplayRole) return QString::fromUtf8(names[section]);
  if (role != Qt::ToolTipRole) return {};
  const QString tip = QString::fromUtf8(tips[section]);
  using T = continuity::CutThresholds;
  switch (section) {
    case Flash:
      return tip + tr(": a warning above %1").arg(T::flash);
    case ColourDrift:
      return tip + tr(": a warning above %1").arg(T::colourDrift);
    case SpreadDrift:
      return tip + tr(": a warning above %1").arg(T::spreadDrift);
    case Structure:
      return tip + tr(": a warning below %1").arg(T::structure);
    default:
      return tip;
  }
}

}  // namespace shotchain::ui
