#pragma once

#include <memory>

#include "render/render_options.h"

namespace shotchain::memory {
class MemoryProbe;
}

namespace shotchain::render {

// Renders sequences shot by shot with one model set kept loaded between renders (the immutable
// context); everything about one render lives in render()'s own state. Torch stays out of this
// header so that the studio can hold a Renderer.
//
// Threads: one thread renders (the studio's worker, the CLI's main thread): it alone calls plan()
// and render(), never two at once. requestStop() and probe() may be called from any thread at any
// time, also during a render.
class Renderer {
 public:
  Renderer();
  ~Renderer();
  Renderer(const Renderer&) = delete;
  Renderer& operator=(const Renderer&) = delete;

  // Render thread. The memory plan for `sequence` without rendering (loads nothing heavier than
  // file headers). Throws std::runtime_error naming the file for a missing or unreadable model file.
  memory::MemoryPlan plan(const Sequence& sequence, const RenderOptions& options);

  // Render thread. Renders; events go to `observer` as they happen, on this thread. Errors found
  // before any work (an unwritable output folder, a missing model file, a plan that cannot fit)
  // throw RenderError; errors during the render are reported through observer.failed() and end
  // the render (the summary says where).
  RenderSummary render(const Sequence& sequence, const RenderOptions& options, RenderObserver& observer);

  // Any thread.
  void requestStop(StopRequest request);

  // Any thread. The probe of the device the current (or last) render ran on: chosen once when a
  // render starts, before its first event, and kept for the whole render. The pointer stays valid
  // for as long as the caller holds it, also when a later render on another device publishes a new
  // one. Its sample() may be called from several threads at once.
  std::shared_ptr<memory::MemoryProbe> probe() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace shotchain::render
