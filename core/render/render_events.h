#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "continuity/cut_metrics.h"
#include "continuity/keyframe_landing.h"
#include "memory/memory_plan.h"
#include "memory/memory_sample.h"

namespace shotchain::render {

// An 8-bit RGB image, rows top to bottom, 3 bytes per pixel, no padding. Events carry frames in
// this form so that observers (the studio, the file writers) never touch a tensor.
struct RgbFrame {
  int width = 0;
  int height = 0;
  std::vector<std::uint8_t> rgb;
  bool empty() const { return rgb.empty(); }
};

// What the time between the previous shot's last sampling step and this shot's start went to, in
// seconds (the rest of the gap is bookkeeping: events, the ring buffer, the sampler's set-up).
struct GapParts {
  double waitingForDecode = 0;  // for a decode of an earlier shot (a frame this shot needs, or no overlap)
  double encodingFrames = 0;    // VAE encodes of a decoded frame (the conditioning, a decode prefix)
  double movingWeights = 0;     // loading, offloading or restoring the DiT
  double writingFiles = 0;      // a finished shot's tail and record
  double total() const { return waitingForDecode + encodingFrames + movingWeights + writingFiles; }
};

struct ShotStarted {
  int index = 0;  // position in the sequence (0-based)
  int count = 0;  // shots in the sequence
  std::string id;
  std::string name;
  std::string key;  // hash of everything that affects this shot's result
  int steps = 0;
  int frames = 0;       // pixel frames this shot will write
  bool reused = false;  // its result on disk is current; nothing is sampled
  GapParts gap;         // since the previous rendered shot's last step (rendered shots only)
};

struct StepDone {
  int shotIndex = 0;
  int step = 0;  // 1-based: steps completed
  int steps = 0;
  double sigma = 0;
  double seconds = 0;  // wall time of this step
  RgbFrame preview;    // latent preview of the middle latent frame (latent resolution); empty when off
  // With a preview decoder: the whole shot's frames decoded from this step's prediction of the clean latent
  // (at the shot's size); empty at steps the decoder skipped to keep its cost near a fifth of the wall.
  std::vector<RgbFrame> previewFrames;
  double previewSeconds = 0;  // what decoding them took
};

struct FramesDecoded {
  int shotIndex = 0;
  int firstFrame = 0;  // index of frames[0] within the shot's written frames
  int shotFrames = 0;  // frames the shot writes in all
  std::vector<RgbFrame> frames;
};

// A shot of continuity mode stream: what its KV cache did and cost.
struct StreamFigures {
  // "started" (first shot of a stream), "kept" (same prompt, or recache off), "recached" (rebuilt under
  // the new prompt); "rebuilt from N shots" first when the cache was not in memory (resume, re-render).
  std::string cache;
  int framesHeld = 0;                // latent frames in the cache when the shot ended (sink + window)
  std::uint64_t cacheBytes = 0;      // its bytes then
  std::uint64_t peakCacheBytes = 0;  // its largest (while a chunk is committed)
  std::uint64_t bytesCopied = 0;     // bytes copied to hand the cache to this shot: 0, it is the same object
  int framesCommitted = 0;           // latent frames the stream has taken in so far
  double recacheSeconds = 0;         // rebuilding it at the cut (recache and/or replay)
};

// A shot whose step cache policy is not off (docs/step-cache.md): what the cache did.
struct StepCacheFigures {
  std::string policy;  // "teacache", "magcache", "easycache", "first_block"
  double threshold = 0;
  std::string source;  // where the rule's numbers came from ("published: Wan 2.1 T2V, 1.3B", a calibration file, …)
  std::string off;     // why it was not applied (empty: it was)
  int steps = 0;
  int computedPasses = 0;  // branch passes through the DiT (or its block stack), conditional and unconditional
  int skippedPasses = 0;
  std::string pattern;  // the conditional branch: 'C' computed, 's' skipped, one character a step
};

// A shot whose DiT carried LoRAs (docs/lora.md).
struct LoraFigures {
  std::vector<std::string> files;
  std::vector<double> strengths;
  int weightsPatched = 0;
  std::uint64_t bytesWritten = 0;  // patched weights made for this shot (0: the previous shot's were kept)
  std::uint64_t bytesKept = 0;     // base weights kept to restore
  double seconds = 0;
};

// A shot sampled on a few-step distilled schedule (docs/lora.md §3).
struct FewStepFigures {
  std::vector<int> steps;         // the document's denoising steps
  std::string update;             // "euler" or "renoise"
  std::vector<double> timesteps;  // what the DiT was given, step by step (warped through the shift)
  double guidance = 1;
  int ditPasses = 0;  // batch rows through the DiT (a chunk's commit pass included)
};

// A shot sampled by two experts (Wan 2.2 A14B): which ran each step, with its guidance.
struct ExpertFigures {
  double boundary = 0;       // model timesteps (boundary·1000)
  std::vector<int> experts;  // per step: 1 high-noise expert, 0 low-noise expert
  std::vector<std::int64_t> timesteps;
  std::vector<double> guidances;
  int switchStep = -1;  // the first low-noise step (−1: none ran)
  // image-to-video: "start_image", "handed_latent", "previous_last_frame", "svi" or "none"; empty: text-to-video
  std::string imageCondition;
  std::string residency;         // "resident", "swap", "reload" (memory.experts as planned)
  std::uint64_t bytesMoved = 0;  // swap: host↔device; reload: read from the files
  double moveSeconds = 0;        // spent moving or reading them during the shot
};

struct ShotFinished {
  int index = 0;
  std::string id;
  std::string key;
  bool reused = false;
  int framesWritten = 0;
  double sampleSeconds = 0;
  double decodeSeconds = 0;
  double seconds = 0;
  double firstFrameSeconds = 0;  // from the shot's start to its first decoded frame (0: not measured)
  std::string conditionedOn;     // what it started from (ShotRecord::conditionedOn)
  std::optional<StreamFigures> stream;
  std::optional<StepCacheFigures> cache;
  std::optional<LoraFigures> loras;
  std::optional<FewStepFigures> fewStep;
  std::optional<ExpertFigures> experts;
  std::vector<continuity::KeyframeLanding> keyframes;  // how close it came to the pictures it starts and ends on
  std::string directory;                               // shots/<NN>-<id> inside the output folder
};

struct SequenceFinished {
  bool completed = false;  // every requested shot is done
  bool cancelled = false;
  int shotsRendered = 0;
  int shotsReused = 0;
  double seconds = 0;
  std::string outputDirectory;
};

struct RenderWarning {
  int shotIndex = -1;   // −1: the whole sequence
  std::string kind;     // "fallback", "plan", "output", …
  std::string message;  // one sentence a user can act on
};

struct RenderFailure {
  int shotIndex = -1;
  std::string message;
};

// What a render reports while it runs. Called on the render thread; an observer that feeds a GUI
// must hand events over to its own thread. Every method has an empty default.
class RenderObserver {
 public:
  virtual ~RenderObserver() = default;
  virtual void planReady(const memory::MemoryPlan&) {}
  virtual void shotStarted(const ShotStarted&) {}
  virtual void stepDone(const StepDone&) {}
  virtual void framesDecoded(const FramesDecoded&) {}
  virtual void cutMeasured(const continuity::CutMetrics&) {}
  // At the start, at every cut (cutIndex = index of the shot about to start) and at the end (−1).
  virtual void memorySampled(int /*cutIndex*/, const memory::MemorySample&) {}
  virtual void shotFinished(const ShotFinished&) {}
  virtual void sequenceFinished(const SequenceFinished&) {}
  virtual void warning(const RenderWarning&) {}
  virtual void failed(const RenderFailure&) {}
};

}  // namespace shotchain::render
