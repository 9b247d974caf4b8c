#include "monitor/vram_panel.h"

#include <QLabel>
#include <QVBoxLayout>

#include "monitor/vram_chart.h"
#include "util/byte_size.h"

namespace shotchain::ui {
namespace {

QString bytes(std::uint64_t value) { return QString::fromStdString(util::formatByteSize(value)); }

}  // namespace

VramPanel::VramPanel(QWidget* parent)
    : QWidget(parent),
      chart_(new VramChart(&history_, this)),
      title_(new QLabel(this)),
      figures_(new QLabel(this)),
      moved_(new QLabel(this)),
      cache_(new QLabel(this)),
      planLabel_(new QLabel(this)) {
  title_->setStyleSheet(QStringLiteral("font-weight: bold;"));
  for (QLabel* label : {figures_, moved_, cache_, planLabel_}) {
    label->setWordWrap(true);
    label->setTextInteractionFlags(Qt::TextSelectableByMouse);
    label->setAlignment(Qt::AlignTop | Qt::AlignLeft);
  }
  planLabel_->setText(tr("<i>The memory plan appears when a render starts.</i>"));
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(6, 6, 6, 6);
  layout->addWidget(title_);
  layout->addWidget(chart_, 1);
  layout->addWidget(figures_);
  layout->addWidget(moved_);
  layout->addWidget(cache_);
  layout->addWidget(planLabel_);
  setHostMemory(true);
}

void VramPanel::setHostMemory(bool host) {
  host_ = host;
  chart_->setHostMemory(host);
  title_->setText(host ? tr("Host memory (CPU render)") : tr("GPU memory"));
}

void VramPanel::addSample(const memory::MemorySample& sample) {
  history_.add(sample);
  chart_->update();
  updateFigures();
}

void VramPanel::addCutSample(int cutIndex, const memory::MemorySample& sample) {
  if (cutIndex > 0) {
    history_.addMarker(sample.seconds, tr("cut %1").arg(cutIndex));
    movedPerCut_ << tr("→%1: %2").arg(cutIndex + 1).arg(bytes(sample.transferredBytes));
  } else if (cutIndex < 0) {
    history_.addMarker(sample.seconds, tr("end"));
  } else {
    history_.addMarker(sample.seconds, tr("start"));
  }
  addSample(sample);
  moved_->setText(
      movedPerCut_.isEmpty()
          ? QString()
          : tr("Bytes moved host↔device before each shot: %1").arg(movedPerCut_.join(QStringLiteral(", "))));
}

void VramPanel::updateFigures() {
  if (history_.empty()) return;
  const memory::MemorySample& s = history_.latest();
  const QString used = tr("<tr><td><span style='color:#3d8ed8'>■</span> allocated</td><td align=right>%1</td>"
                          "<td>&nbsp;&nbsp;peak</td><td align=right>%2</td></tr>"
                          "<tr><td><span style='color:#f0b03c'>■</span> reserved</td><td align=right>%3</td>"
                          "<td>&nbsp;&nbsp;%4 free / total</td><td align=right>%5 / %6</td></tr>")
                           .arg(bytes(s.allocated), bytes(history_.peakAllocated()), bytes(s.reserved),
                                host_ ? tr("host") : tr("device"), bytes(s.deviceFree), bytes(s.deviceTotal));
  const QString allocator = tr("<tr><td>cached unused</td><td align=right>%1</td><td>&nbsp;&nbsp;inactive "
                               "split</td><td align=right>%2</td></tr>"
                               "<tr><td>free fragmentation</td><td align=right>%3</td><td>&nbsp;&nbsp;retries / "
                               "OOM</td><td align=right>%4 / %5</td></tr>")
                                .arg(bytes(s.cachedUnused()), bytes(s.inactiveSplit))
                                .arg(QStringLiteral("%1 %").arg(s.freeFragmentation * 100, 0, 'f', 1))
                                .arg(s.allocRetries)
                                .arg(s.outOfMemoryEvents);
  figures_->setText(QStringLiteral("<table cellspacing=2>") + used + (advanced_ ? allocator : QString()) +
                    QStringLiteral("</table>"));
}

void VramPanel::setAdvanced(bool advanced) {
  advanced_ = advanced;
  updateFigures();
  if (hasPlan_) setPlan(plan_);
}

void VramPanel::setPlan(const memory::MemoryPlan& plan) {
  plan_ = plan;
  hasPlan_ = true;
  QString items;
  for (const memory::PlanItem& item : plan.items) {
    if (!advanced_) break;
    items += QStringLiteral("<tr><td>%1</td><td align=right>%2</td><td style='color:#909090'>%3</td></tr>")
                 .arg(QString::fromStdString(item.name).toHtmlEscaped(), bytes(item.bytes),
                      QString::fromStdString(item.detail).toHtmlEscaped());
  }
  QString notes;
  for (const std::string& note : plan.notes)
    notes +=
        QStringLiteral("<br><span style='color:#e0a030'>%1</span>").arg(QString::fromStdString(note).toHtmlEscaped());
  planLabel_->setText(tr("<b>Plan:</b> <span style='color:%1'>%2</span> (asked: %3)%4, peak %5 of %6<br>%7%9"
                         "<table cellspacing=2>%8</table>")
                          .arg(plan.fits ? QStringLiteral("#4cc36a") : QStringLiteral("#e84a4a"),
                               QString::fromLatin1(toString(plan.chosen)),
                               QString::fromLatin1(toString(plan.requested)),
                               plan.tiledDecode ? tr(", tiled decode") : QString(), bytes(plan.chosenPeak()),
                               bytes(plan.limit), QString::fromStdString(plan.reason).toHtmlEscaped(), items, notes));
}

QString VramPanel::planText() const { return planLabel_->text(); }
QString VramPanel::figuresText() const { return figures_->text(); }

void VramPanel::addStreamShot(int shotIndex, const render::StreamFigures& stream) {
  cachePerShot_ << tr("%1: %2, %3 (%4 frames)")
                       .arg(shotIndex + 1)
                       .arg(QString::fromStdString(stream.cache), bytes(stream.cacheBytes))
                       .arg(stream.framesHeld);
  cache_->setText(tr("KV cache after each stream shot (handed on, 0 bytes copied): %1")
                      .arg(cachePerShot_.join(QStringLiteral("; "))));
}

void VramPanel::clearRun() {
  movedPerCut_.clear();
  moved_->clear();
  cachePerShot_.clear();
  cache_->clear();
}

}  // namespace shotchain::ui
