#pragma once

#include <QWidget>

#include "memory/memory_plan.h"
#include "memory/memory_sample.h"
#include "monitor/memory_history.h"
#include "render/render_events.h"

class QLabel;

namespace shotchain::ui {

class VramChart;

// The memory dock: the live chart, the current figures (allocated, reserved, peak, the three
// fragmentation figures, bytes moved at each cut) and the plan the renderer chose, with its reason.
class VramPanel : public QWidget {
  Q_OBJECT

 public:
  explicit VramPanel(QWidget* parent = nullptr);

  void addSample(const memory::MemorySample& sample);
  // A sample the renderer took at a cut (cutIndex = the shot about to start; −1 at the end).
  void addCutSample(int cutIndex, const memory::MemorySample& sample);
  void setPlan(const memory::MemoryPlan& plan);
  // A stream shot finished: its KV cache (what the cut did with it, and its size) joins the per-shot line.
  void addStreamShot(int shotIndex, const render::StreamFigures& stream);
  void clearRun();
  // On a CPU device the figures are host memory and say so.
  void setHostMemory(bool host);
  // Advanced: the allocator's figures (cached unused, inactive split, fragmentation, retries) and the
  // plan's items; otherwise only what was used, its peak and what is free.
  void setAdvanced(bool advanced);
  QString figuresText() const;

  const MemoryHistory& history() const { return history_; }
  VramChart* chart() const { return chart_; }
  QString planText() const;

 private:
  void updateFigures();

  MemoryHistory history_;
  VramChart* chart_;
  QLabel* title_;
  QLabel* figures_;
  QLabel* moved_;
  QLabel* cache_;
  QLabel* planLabel_;
  QStringList movedPerCut_;
  QStringList cachePerShot_;
  bool host_ = true;
  bool advanced_ = false;
  memory::MemoryPlan plan_;
  bool hasPlan_ = false;
};

}  // namespace shotchain::ui
