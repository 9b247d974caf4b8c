#pragma once

#include <QTest>
#include <QUndoStack>

#include "continuity/cut_metrics.h"
#include "document/sequence_document.h"
#include "render/render_state.h"
#include "sequence/sequence_io.h"
#include "test_support.h"
#include "timeline/timeline_view.h"

namespace shotchain::testing {

// A document on demo.json with the timeline shown at a known size.
struct Fixture {
  using SequenceDocument = ui::SequenceDocument;
  using RenderState = ui::RenderState;
  using TimelineView = ui::TimelineView;

  SequenceDocument document;
  RenderState state;
  TimelineView view{&document, &state};

  Fixture() {
    document.reset(*loadSequenceFile(workflow("demo.json")).sequence, q(workflow("demo.json").string()));
    view.resize(900, 150);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    view.zoomToFit();
    state.documentChanged(document.sequence());
  }
  QUndoStack* stack() { return document.undoStack(); }
};

// A cut into shot `to` of demo.json, measured between the shots as `state` keys them now.
inline continuity::CutMetrics fakeCut(int to, double mad, const ui::RenderState* state = nullptr) {
  continuity::CutMetrics cut;
  cut.fromIndex = to - 1;
  cut.toIndex = to;
  cut.fromShotId = to == 1 ? "enter" : "cross";
  cut.toShotId = to == 1 ? "cross" : "turn";
  cut.mode = "latent";
  cut.madRatio = mad;
  cut.psnrCut = 31.5;
  cut.ssimCut = 0.93;
  cut.channelMeanDeltaPrev = {0.1, -0.2};
  if (state != nullptr) {
    cut.fromKey = state->currentKey(cut.fromShotId);
    cut.toKey = state->currentKey(cut.toShotId);
  }
  return cut;
}

}  // namespace shotchain::testing
