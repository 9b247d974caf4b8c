#include "timeline/cut_marker.h"

#include <QCoreApplication>
#include <QFont>
#include <QPainter>
#include <QPainterPath>
#include <QRectF>

#include <cmath>

#include "continuity/cut_verdict.h"

namespace shotchain::ui {
namespace {

QString tr(const char* text) { return QCoreApplication::translate("CutMarker", text); }

// ≈1 seamless, >3 reads as a hard cut.
QColor madColour(double ratio) {
  if (ratio <= 1.5) return {0x4c, 0xc3, 0x6a};
  if (ratio <= 3.0) return {0xf0, 0xb0, 0x3c};
  return {0xe8, 0x4a, 0x4a};
}

QString fmt(const std::optional<double>& value, int decimals = 3, const char* unit = "") {
  if (!value) return QStringLiteral("—");
  if (std::isinf(*value)) return QStringLiteral("∞");
  return QString::number(*value, 'f', decimals) + QString::fromUtf8(unit);
}

}  // namespace

QRectF cutBadgeRect(double x, double trackTop) { return {x - 8, trackTop + 10, 16, 16}; }

CutBadge cutBadgeOf(const std::optional<continuity::CutMetrics>& cut) {
  if (!cut) return CutBadge::None;
  const continuity::CutVerdict verdict = continuity::judgeCut(*cut);
  if (!verdict.measured) return CutBadge::None;
  return verdict.warnings == 0 ? CutBadge::Fine : verdict.warnings == 1 ? CutBadge::Warning : CutBadge::Bad;
}

void paintCutMarker(QPainter& p, const Shot& to, const std::optional<continuity::CutMetrics>& cut, double x,
                    double trackTop, double trackHeight) {
  QColor colour(0x8a, 0x8a, 0x8a);
  if (cut && cut->madRatio) colour = madColour(*cut->madRatio);
  QPainterPath diamond;
  const double y = trackTop;
  diamond.moveTo(x, y - 6);
  diamond.lineTo(x + 6, y);
  diamond.lineTo(x, y + 6);
  diamond.lineTo(x - 6, y);
  diamond.closeSubpath();
  p.setPen(QPen(colour, 1.5));
  p.setBrush(usesHandoff(to.continuity.mode) ? QBrush(colour) : QBrush(QColor(0x20, 0x20, 0x23)));
  p.drawPath(diamond);
  p.setPen(QPen(colour, 2));
  p.drawLine(QPointF(x, y + 6), QPointF(x, y + trackHeight));

  const CutBadge state = cutBadgeOf(cut);
  if (state == CutBadge::None) return;
  const QRectF badge = cutBadgeRect(x, trackTop);
  p.save();
  p.setPen(QPen(QColor(0x20, 0x20, 0x23), 1.5));
  p.setBrush(state == CutBadge::Fine      ? QColor(0x4c, 0xc3, 0x6a)
             : state == CutBadge::Warning ? QColor(0xf0, 0xb0, 0x3c)
                                          : QColor(0xe8, 0x4a, 0x4a));
  p.drawEllipse(badge);
  QFont font = p.font();
  font.setBold(true);
  font.setPixelSize(12);
  p.setFont(font);
  p.setPen(Qt::white);
  p.drawText(badge, Qt::AlignCenter, state == CutBadge::Fine ? QStringLiteral("✓") : QStringLiteral("!"));
  p.restore();
}

QString cutMarkerTooltip(const Shot& from, const Shot& to, const std::optional<continuity::CutMetrics>& cut,
                         bool outOfDate, bool advanced) {
  QString text = tr("<b>Cut %1 → %2</b><br>continuity: %3")
                     .arg(QString::fromStdString(from.displayName()).toHtmlEscaped(),
                          QString::fromStdString(to.displayName()).toHtmlEscaped(),
                          QString::fromLatin1(toString(to.continuity.mode)));
  if (!cut && outOfDate)
    return text + tr("<br><i>Out of date: its figures were measured before these shots changed (an edit or a reorder). "
                     "Render to measure it again.</i>");
  if (!cut) return text + tr("<br><i>Not measured yet: render to see its figures.</i>");
  text += tr("<br>flash %1× · colour drift ΔE %2 <i>(click: the cut's row and the frames after it)</i>")
              .arg(fmt(cut->flash, 2), fmt(cut->colourDrift, 1));
  const continuity::CutVerdict verdict = continuity::judgeCut(*cut);
  text += tr("<br><b>After the cut: %1</b><ul style=\"margin:0\">")
              .arg(QString::fromStdString(verdict.summary).toHtmlEscaped());
  for (const continuity::FigureVerdict& f : verdict.figures) {
    const QString words = QString::fromStdString(f.words).toHtmlEscaped();
    text += f.state == continuity::FigureState::Warning
                ? QStringLiteral("<li><b style=\"color:#e84a4a\">%1</b></li>").arg(words)
                : QStringLiteral("<li>%1</li>").arg(words);
  }
  text += QStringLiteral("</ul>");
  if (!advanced) return text;
  text += tr("<table>"
             "<tr><td>flash (after / within)</td><td>%1</td></tr>"
             "<tr><td>colour drift / spread drift</td><td>ΔE %2 / %3</td></tr>"
             "<tr><td>structure (SSIM after / within)</td><td>%4</td></tr>"
             "<tr><td>MAD ratio</td><td>%5</td></tr>"
             "<tr><td>PSNR at cut / within</td><td>%6 / %7</td></tr>"
             "<tr><td>SSIM at cut / within</td><td>%8 / %9</td></tr>")
              .arg(fmt(cut->flash, 2), fmt(cut->colourDrift, 1), fmt(cut->spreadDrift, 1), fmt(cut->structure, 2),
                   fmt(cut->madRatio, 2), fmt(cut->psnrCut, 1, " dB"), fmt(cut->psnrWithinMedian, 1, " dB"),
                   fmt(cut->ssimCut), fmt(cut->ssimWithinMedian));
  text +=
      tr("<tr><td>ΔE vs previous / first</td><td>%1 / %2</td></tr>"
         "<tr><td>handoff MSE</td><td>%3</td></tr>"
         "<tr><td>latent step ratio</td><td>%4</td></tr>"
         "<tr><td>handoff bytes copied</td><td>%5</td></tr></table>")
          .arg(fmt(cut->deltaEPrev, 2), fmt(cut->deltaEFirst, 2), fmt(cut->handoffMse, 6), fmt(cut->latentStepRatio, 2))
          .arg(cut->handoffBytesCopied);
  return text;
}

}  // namespace shotchain::ui
