#pragma once

#include <QRectF>
#include <QString>

#include <optional>

#include "continuity/cut_metrics.h"
#include "sequence/sequence.h"

class QPainter;

namespace shotchain::ui {

// The timeline's cut marker: a diamond on the track's top edge (filled when the cut carries a
// handoff) coloured by the MAD ratio, and once the cut is measured a badge below it with the verdict
// on the frames after the cut (continuity/cut_verdict.h): green fine, amber one warning, red more.
enum class CutBadge { None, Fine, Warning, Bad };
CutBadge cutBadgeOf(const std::optional<continuity::CutMetrics>& cut);
void paintCutMarker(QPainter& p, const Shot& to, const std::optional<continuity::CutMetrics>& cut, double x,
                    double trackTop, double trackHeight);
// Where the badge of a cut at `x` sits (for hit tests and tests).
QRectF cutBadgeRect(double x, double trackTop);

// Rich-text tooltip of the cut from `from` into `to`: its figures, the after-cut ones and the verdict
// in words; `cut` is empty until a render measured it for these shots as they are (`outOfDate`: it was
// measured, for other shots or settings). The table of every figure only with `advanced` (View › Advanced Figures).
QString cutMarkerTooltip(const Shot& from, const Shot& to, const std::optional<continuity::CutMetrics>& cut,
                         bool outOfDate = false, bool advanced = false);

}  // namespace shotchain::ui
