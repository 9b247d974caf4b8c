#pragma once

// The vocabulary of a render: what it is asked (RenderOptions), what it produced (RenderSummary) and what
// refuses it before any work (RenderError). Torch-free: the studio and the writers hold these.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "continuity/cut_metrics.h"
#include "memory/memory_plan.h"
#include "memory/memory_sample.h"
#include "render/prompt_embedding_folder.h"
#include "render/render_events.h"
#include "resolve/resolved_shot.h"
#include "sequence/sequence.h"

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
  bool reuse = false;         // keep shots on disk whose key is unchanged (resume, re-render of dirty shots)
  int firstShot = 0;          // 0-based, inclusive; shots before it must be on disk when they hand off
  int lastShot = -1;          // −1: the last shot
  bool previews = true;       // latent preview with every step event
  bool overlapDecode = true;  // decode shot N while sampling N+1 when the plan allows
  // The intra-op threads of a decode beside the sampling (which keeps every core: its figures must not depend on
  // when a decode ends, so no thread count may change with the timing).
  int decodeThreads = 1;
  ImageLoader loadImage;  // for blend-mode fallback images and to re-measure the cut into a re-used shot
  // The observers write frames/000001.png… (export's FrameFileWriter): a shot is re-used only when
  // all its frames are on disk. Off for renders that keep no frame files.
  bool framesOnDisk = true;
  // Off on the ranks other than 0 of a render spread over processes: they compute what rank 0
  // computes (the same shots, re-used or not, as the folder says) and write nothing.
  bool writesFiles = true;
  // `calibrate-cache`: every whole-clip shot records what its steps change (RenderSummary::calibrationRuns).
  bool calibrateCache = false;
  // Prompts encoded before come from the embeddings kept on disk (render/prompt_embeddings.h); off: every
  // prompt is encoded and nothing is kept.
  bool promptEmbeddings = true;
  // What the folder of them may hold; the least recently used go first.
  std::uint64_t promptEmbeddingBytes = kDefaultPromptEmbeddingBytes;
};

// Everything a render produced, for report.json / report.csv and the CLI's closing table.
struct RenderSummary {
  resolve::ResolvedSequence resolved;  // every shot's settings as rendered (the report writes them)
  memory::MemoryPlan plan;
  std::vector<ShotFinished> shots;
  std::vector<continuity::CutMetrics> cuts;
  std::vector<std::pair<int, memory::MemorySample>> memory;  // (cut index or −1, sample)
  std::vector<RenderWarning> warnings;
  SequenceFinished finished;
  double textEncodeSeconds = 0;
  int textEncoderLoads = 0;  // 0 when every prompt came from the prompt embeddings kept on disk
  int promptsEncoded = 0;
  int promptsFromCache = 0;
  // Frames decoded by the preview decoder during sampling (RenderOptions::previews with a decoder in the set).
  std::string previewDecoder;  // its file name; empty: latent previews
  int previewDecodes = 0;
  double previewSeconds = 0;  // all of them together
  double modelLoadSeconds = 0;
  // With RenderOptions::calibrateCache: each whole-clip shot's recorded run, with the shot's index in `resolved`.
  struct CalibrationRun {
    std::size_t shot = 0;
    std::shared_ptr<const sampling::StepCache> cache;
  };
  std::vector<CalibrationRun> calibrationRuns;
  std::string calibratedFamily;  // VideoDiffusionModel::family() of the DiT they ran on
  int ditLoads = 0;              // DiT loads by the residency manager during the render (reload policy)
  double ditLoadSeconds = 0;
  int ditOffloads = 0;
  std::uint64_t reservedPeak = 0;  // the residency accounting's peak (what the budget was held to)
  bool decodeOverlapped = false;   // shot N decoded beside the sampling of N+1
  std::string allocatorTuning;     // what the allocator setting did, in words
};

// A problem found before any work started; `field` names the document field or option at fault.
class RenderError : public std::runtime_error {
 public:
  RenderError(std::string field, const std::string& message) : std::runtime_error(message), field_(std::move(field)) {}
  const std::string& field() const { return field_; }

 private:
  std::string field_;
};

}  // namespace shotchain::render
