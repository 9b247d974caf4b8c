#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace shotchain {

// JSON text of a key this build does not know, kept verbatim so a save does not drop it.
using UnknownFields = std::map<std::string, std::string>;

enum class ContinuityMode { None, Latent, LatentOverlap, Blend, VaeRoundtrip, Stream, Svi };
enum class Solver { Euler, UniPC };
enum class ResidencyPolicy { Pinned, Offload, Reload, Auto };
// Skipping sampling steps whose DiT output would barely change (docs/step-cache.md).
enum class StepCachePolicy { Off, TeaCache, MagCache, EasyCache, FirstBlock };
// Where the two experts of a Wan 2.2 A14B pair live (docs/wan22.md §8): both on the device, one at a time
// with the other parked in host memory and swapped at the boundary, or one at a time loaded from disk.
enum class ExpertResidency { Auto, Resident, Swap, Reload };
// The update a few-step distilled model was trained for (docs/lora.md §3).
enum class DistilledUpdate { Euler, Renoise };

const char* toString(ContinuityMode mode);
const char* toString(Solver solver);
const char* toString(ResidencyPolicy policy);
const char* toString(StepCachePolicy policy);
const char* toString(DistilledUpdate update);
const char* toString(ExpertResidency residency);
std::optional<ContinuityMode> continuityModeFromString(const std::string& text);
std::optional<Solver> solverFromString(const std::string& text);
std::optional<ResidencyPolicy> residencyPolicyFromString(const std::string& text);
std::optional<StepCachePolicy> stepCachePolicyFromString(const std::string& text);
std::optional<DistilledUpdate> distilledUpdateFromString(const std::string& text);
std::optional<ExpertResidency> expertResidencyFromString(const std::string& text);

// True for every mode that takes something from the previous shot through the ring buffer.
bool usesHandoff(ContinuityMode mode);

// Where the weights come from: the embedded demo model, a ComfyUI-style models folder,
// or one file per component. Relative paths are relative to the sequence file.
struct ModelSet {
  std::string builtin = "demo";  // non-empty means "builtin:<name>"
  std::string folder;
  std::string dit;
  // Wan 2.2 A14B: the high-noise expert, run for the steps at or above sampler.boundary; `dit` (or the
  // folder's DiT) is then the low-noise expert. Empty: one DiT.
  std::string ditHighNoise;
  std::string vae;
  std::string textEncoder;
  std::string tokenizer;
  // Wan 2.1 I2V / FLF2V: the CLIP vision encoder whose features of the shot's pictures the DiT attends to (a
  // models folder's clip_vision/ when not named).
  std::string imageEncoder;
  UnknownFields unknown = {};

  bool isBuiltin() const { return !builtin.empty(); }
  bool operator==(const ModelSet&) const = default;
};

// The models that come with ShotChain (resources/<name>/): "demo", and "demo-keyframes", the demo's first–last
// frame image-to-video DiT on its VAE and text encoder.
inline constexpr const char* kBuiltinModels[] = {"demo", "demo-keyframes"};
bool isBuiltinModel(const std::string& name);
// "\"builtin:NAME\" is not a built-in model (they are builtin:demo and builtin:demo-keyframes)".
std::string notABuiltinModel(const std::string& name);

// Latent frames of a stream's local attention window when the sequence does not say (sampler.stream_window).
inline constexpr int kDefaultStreamWindow = 8;

// A LoRA applied to the DiT (docs/lora.md): the file (relative to the sequence file) and its strength.
struct LoraRef {
  std::string file;
  double strength = 1.0;
  // Two experts (model.dit_high_noise): which one it patches, "high" or "low"; empty: both.
  std::string expert;
  UnknownFields unknown = {};
  bool operator==(const LoraRef&) const = default;
};

// `sampler.cache`, or a shot's `cache` (which replaces the sequence's for that shot).
struct StepCacheSettings {
  StepCachePolicy policy = StepCachePolicy::Off;
  std::optional<double> threshold;  // unset: the policy's default
  // MagCache and TeaCache: a file `shotchain calibrate-cache` wrote (relative to the sequence file);
  // empty: the published numbers of the model's variant, where there are some.
  std::string calibration;
  UnknownFields unknown = {};
  bool operator==(const StepCacheSettings&) const = default;
};

// `sampler.few_step`, or a shot's `few_step` (which replaces the sequence's): a distilled model's own
// denoising steps, e.g. [1000, 750, 500, 250], in place of `steps` and `solver`.
struct FewStepSettings {
  std::vector<int> steps;  // descending, in 1..1000; empty: off (the ordinary schedule)
  DistilledUpdate update = DistilledUpdate::Euler;
  UnknownFields unknown = {};
  bool on() const { return !steps.empty(); }
  bool operator==(const FewStepSettings&) const = default;
};

struct SamplerDefaults {
  int steps = 30;
  double guidance = 5.0;
  double shift = 5.0;
  Solver solver = Solver::UniPC;
  // Diffusion forcing on a model with per-frame timesteps: each generated latent frame starts this
  // many iterations after the one before (0 or unset: all frames share the schedule).
  std::optional<int> arStep;
  // Streaming shots (continuity mode stream): the latent frames a chunk attends to besides the first
  // chunk of the stream (a local window; unset: kDefaultStreamWindow).
  std::optional<int> streamWindow;
  StepCacheSettings cache;
  FewStepSettings fewStep;
  // Two experts (model.dit_high_noise): the switch, as a fraction of the 1000 training timesteps (unset: the
  // family's, 0.875 text-to-video, 0.9 image-to-video), and the high-noise expert's guidance (unset: guidance).
  std::optional<double> boundary;
  std::optional<double> guidanceHighNoise;
  UnknownFields unknown = {};
  bool operator==(const SamplerDefaults&) const = default;
};

struct Continuity {
  ContinuityMode mode = ContinuityMode::None;
  std::string tag = "main";   // ring-buffer slot this shot reads its handoff from and writes its tail to
  int overlapLatents = 1;     // k, for latent_overlap
  double blendRatio = 0.5;    // weight of the handoff against the fallback image, for blend
  std::string fallbackImage;  // relative to the sequence file
  bool anchorColour = false;  // AdaIN of the shot's latent channel statistics toward shot 1's
  // `latent`: how many tail latents of the previous shot start this one (unset: 1).
  std::optional<int> prefixFrames;
  // On a model with per-frame timesteps: the handed latents are fed at this timestep with as much
  // noise (SkyReels' addnoise_condition, 0…999; unset or 0: clean at timestep 0).
  std::optional<int> conditionNoise;
  // `stream`: at a cut to a new prompt, rebuild the cache of the frames it holds under the new prompt
  // (unset: true); false keeps it as the previous prompt left it.
  std::optional<bool> recache;
  // `svi`: the previous shot's last latents handed into the image condition (unset: 1), and the picture every
  // shot of the chain is anchored to (relative to the sequence file; empty: the chain's first start image).
  std::optional<int> motionLatents;
  std::string anchorImage;
  UnknownFields unknown = {};
  bool operator==(const Continuity&) const = default;
};

struct Shot {
  std::string id;
  std::string name;
  std::string prompt;
  std::string negativePrompt;
  int frames = 17;
  int width = 832;
  int height = 480;
  std::uint64_t seed = 0;
  std::optional<int> steps;
  std::optional<double> guidance;
  std::optional<double> guidanceHighNoise;  // two experts: the high-noise expert's (unset: the sequence's)
  // Two experts: the first step of the low-noise expert, as a step index (ComfyUI's KSamplerAdvanced pair);
  // unset: the boundary decides.
  std::optional<int> switchStep;
  std::optional<double> shift;
  // A picture the shot starts from (relative to the sequence file): encoded as its first latent frame
  // and held clean through sampling on models trained for it (Wan 2.2 TI2V). Empty: none.
  std::string startImage;
  // A picture the shot ends on (a first–last-frame model). When it is also the next shot's start_image, the
  // two shots share one keyframe at their cut. Empty: none.
  std::string endImage;
  std::optional<StepCacheSettings> cache;     // unset: the sequence's sampler.cache
  std::optional<FewStepSettings> fewStep;     // unset: the sequence's sampler.few_step
  std::optional<std::vector<LoraRef>> loras;  // replaces the sequence's `loras` for this shot ([]: none)
  Continuity continuity;
  bool enabled = true;
  UnknownFields unknown = {};

  // What the user sees: the name, or the id while the shot has none.
  const std::string& displayName() const { return name.empty() ? id : name; }
  bool operator==(const Shot&) const = default;
};

// Everything about a sequence except its shots: what "set sequence settings" edits.
struct SequenceSettings {
  std::string name = "Untitled";
  double fps = 16.0;
  ModelSet model;
  SamplerDefaults sampler;
  std::vector<LoraRef> loras;  // every shot's, unless it gives its own
  ResidencyPolicy policy = ResidencyPolicy::Auto;
  ExpertResidency experts = ExpertResidency::Auto;  // memory.experts (two experts only)
  std::optional<std::uint64_t> memoryBudgetBytes;
  bool allocatorTuning = true;
  UnknownFields memoryUnknown;
  bool operator==(const SequenceSettings&) const = default;
};

struct Sequence {
  SequenceSettings settings;
  std::vector<Shot> shots;
  UnknownFields unknown = {};

  int totalFrames() const;
  // First frame of shot `index` on the gapless single track.
  int startFrame(std::size_t index) const;
  std::optional<std::size_t> indexOf(const std::string& shotId) const;
  // An id of the form "shot-N" that no shot uses yet.
  std::string unusedShotId() const;
  bool operator==(const Sequence&) const = default;
};

}  // namespace shotchain
