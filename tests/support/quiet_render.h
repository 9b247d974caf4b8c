#pragma once

// A render that observes nothing and must complete, and the tail latent it left of a shot: for tests that compare
// two renders of one document.
#include <QtTest/qtestassert.h>

#include <filesystem>
#include <string>

#include <ATen/ATen.h>

#include "render/output_layout.h"
#include "render/renderer.h"
#include "render/shot_record.h"

namespace shotchain::testing {

inline render::RenderSummary renderQuietly(const Sequence& sequence, const render::RenderOptions& options) {
  render::Renderer renderer;
  render::RenderObserver quiet;
  const render::RenderSummary summary = renderer.render(sequence, options, quiet);
  QTEST_ASSERT(summary.finished.completed);
  return summary;
}

inline at::Tensor shotTailLatent(const std::filesystem::path& out, int index, const std::string& id) {
  return render::readShotTail(render::shotDirectory(out, index, id), at::kCPU)->latent;
}

}  // namespace shotchain::testing
