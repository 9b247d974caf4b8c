#pragma once

#include <QRectF>
#include <QString>

#include <optional>

#include "continuity/cut_metrics.h"
#include "sequence/sequence.h"

class QPainter;

namespace shotchain::ui {

// The timeline's cut marker: a diamond on the track's top edge (filled when the cut carries a
// handoff) coloured by the MAD ratio, and a warning badge below it when the verdict on the frames
// after the cut warns (continuity/cut_verdict.h).
void paintCutMarker(QPainter& p, const Shot& to, const std::optional<continuity::CutMetrics>& cut, double x,
                    double trackTop, double trackHeight);
// Where the badge of a cut at `x` sits (for hit tests and tests).
QRectF cutBadgeRect(double x, double trackTop);

// Rich-text tooltip of the cut from `from` into `to`: its figures, the after-cut ones and the verdict
// in words; `cut` is empty until a render measured it.
QString cutMarkerTooltip(const Shot& from, const Shot& to, const std::optional<continuity::CutMetrics>& cut);

}  // namespace shotchain::ui
