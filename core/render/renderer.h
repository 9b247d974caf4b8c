#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "continuity/cut_metrics.h"
#include "memory/memory_plan.h"
#include "memory/memory_sample.h"
#include "render/render_events.h"
#include "sequence/sequence.h"

namespace shotchain {
class MemoryProbe;
}
namespace shotchain::sampling {
class StepCache;
}

namespace shotchain::render {

enum class StopRequest { None, AfterShot, Now };

// Reads an image file (a shot's fallback image) into a frame; throws std::runtime_error naming the
// file. Core cannot decode image formats: the CLI and the studio pass Qt's reader.
using ImageLoader = std::function<RgbFrame(const std::filesystem::path&)>;

struct RenderOptions {
  std::filesystem::path outputDirectory;    // <OUT>; created when missing
  std::filesystem::path sequenceDirectory;  // base of the document's relative paths
  std::optional<ResidencyPolicy> policy;    // overrides the document's policy
  std::optional<std::uint64_t> budget;      // overrides the document's budget
  std::string device = "cpu";               // "cpu", "cuda", "cuda:N"
  bool reuse = false;      // keep shots on disk whose key is unchanged (resume, re-render of dirty shots)
  int firstShot = 0;       // 0-based, inclusive; shots before it must be on disk when they hand off
  int lastShot = -1;       // −1: the last shot
  bool previews = true;    // latent preview with every step event
  bool overlapDecode = true;  // decode shot N while sampling N+1 when the plan allows
  ImageLoader loadImage;      // for blend-mode fallback images and to re-measure the cut into a re-used shot
  // The observers write frames/000001.png… (export's FrameFileWriter): a shot is re-used only when
  // all its frames are on disk. Off for renders that keep no frame files.
  bool framesOnDisk = true;
  // Off on the ranks other than 0 of a render spread over processes: they compute what rank 0
  // computes (the same shots, re-used or not, as the folder says) and write nothing.
  bool writesFiles = true;
  // `calibrate-cache`: every whole-clip shot records what its steps change (RenderSummary::calibrationRuns).
  bool calibrateCache = false;
};

// Everything a render produced, for report.json / report.csv and the CLI's closing table.
struct RenderSummary {
  MemoryPlan plan;
  std::vector<ShotFinished> shots;
  std::vector<continuity::CutMetrics> cuts;
  std::vector<std::pair<int, MemorySample>> memory;  // (cut index or −1, sample)
  std::vector<RenderWarning> warnings;
  SequenceFinished finished;
  double textEncodeSeconds = 0;
  double modelLoadSeconds = 0;
  std::vector<std::shared_ptr<const sampling::StepCache>> calibrationRuns;  // with RenderOptions::calibrateCache
  std::string calibratedFamily;  // VideoDiffusionModel::family() of the DiT they ran on
  int ditLoads = 0;            // DiT loads by the residency manager during the render (reload policy)
  double ditLoadSeconds = 0;
  int ditOffloads = 0;
  std::uint64_t reservedPeak = 0;  // the residency accounting's peak (what the budget was held to)
  bool decodeOverlapped = false;  // shot N decoded beside the sampling of N+1
  std::string allocatorTuning;    // what the allocator setting did, in words
};

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
  MemoryPlan plan(const Sequence& sequence, const RenderOptions& options);

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
  std::shared_ptr<MemoryProbe> probe() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// A problem found before any work started; `field` names the document field or option at fault.
class RenderError : public std::runtime_error {
 public:
  RenderError(std::string field, const std::string& message)
      : std::runtime_error(message), field_(std::move(field)) {}
  const std::string& field() const { return field_; }

 private:
  std::string field_;
};

}  // namespace shotchain::render
