#pragma once

// A shot's effective settings, decided once from the document and the model set's facts: what the
// validation, the memory plan, the shot key, the shot pass, the report, ComfyUI export and the studio's
// inspectors read, instead of each applying "the shot's value, else the sequence's, else the family's"
// on its own. Plain data, no torch.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "models/model_set_facts.h"
#include "sequence/continuity_modes.h"
#include "sequence/diagnostic.h"
#include "sequence/sequence.h"

namespace shotchain::resolve {

// Frame counts and picture sizes a model set takes: frames = frameStep·k + 1, sides multiples of sideMultiple.
struct FrameGeometry {
  int temporalFactor = 4;  // pixel frames per latent frame (the VAE's)
  int patchFrames = 1;     // latent frames per token (the DiT's)
  int spatialFactor = 8;   // pixels per latent pixel (the VAE's stride)
  int patchSide = 2;       // latent pixels per token side (the DiT's)
  std::string family;      // the DiT family's name, for messages ("Wan 2.2 TI2V")

  int frameStep() const { return temporalFactor * patchFrames; }
  int sideMultiple() const { return spatialFactor * patchSide; }
  int latentFrames(int frames) const { return (frames - 1) / temporalFactor + 1; }
  int pixelFrames(int latentFrames) const { return 1 + temporalFactor * (latentFrames - 1); }
};

// How a shot's latent is sampled.
enum class SamplingKind {
  OneSchedule,  // one timestep for the whole clip (held latents re-noised, or a clean prefix on a model trained for it)
  PerFrame,     // diffusion forcing: one timestep per latent frame, the handed latents a clean prefix
  KvStream,     // chunk by chunk over the DiT's KV cache
};

enum class LoraExpert { Both, High, Low };

struct ResolvedLora {
  std::string field;           // "loras[0]" or "shots[2].loras[0]"
  LoraRef written;             // the entry as the document writes it (the shot's list, else the sequence's)
  std::string file;            // as the document writes it
  std::filesystem::path path;  // resolved against the sequence's folder
  double strength = 1.0;
  LoraExpert expert = LoraExpert::Both;
  bool present = false;               // a regular file is there
  std::uint64_t patchedElements = 0;  // elements of the weights it patches, from its header (0: unreadable)
};

// A shot's step cache: what the document asks and whether it runs.
struct ResolvedStepCache {
  StepCachePolicy policy = StepCachePolicy::Off;  // the shot's, else the sequence's
  std::string field;                              // where it was asked ("sampler.cache", "shots[2].cache")
  double threshold = 0;                           // the document's, else the policy's default
  int warmupSteps = 0;                            // first steps always computed
  std::filesystem::path calibration;              // a calibrate-cache file (resolved), empty: none
  bool applies = false;                           // it runs for this shot
  std::string off;                                // why it does not, when a policy was asked
  std::string limit;   // why no step cache could run for this shot, whatever the policy ("" none)
  std::string source;  // where its numbers come from ("published: wan2.1-t2v-1.3b", a file, "online: …")
  std::vector<double> teaCacheCoefficients;  // published for the DiT's variant (empty: none)
  std::vector<double> magCacheRatios;
  int residualTensors = 0;  // float32 [tokens, hidden] tensors kept per guidance branch while it runs (the plan's)
};

// Two experts (model.dit_high_noise): where the shot switches and what each runs at.
struct ResolvedExperts {
  double fraction = 0;  // the switch as a fraction of the 1000 training timesteps: the document's, else the family's
  double boundary = 0;  // … in model timesteps (1000 · fraction)
  bool familyBoundary = true;  // the fraction is the family's (the document gives none)
  double highGuidance = 5.0;   // the high-noise expert's guidance
  int switchStep = -1;         // the shot's switch_step (−1: the boundary decides)
  std::vector<int> runs;       // the experts over the steps in order, 1 high noise, 0 low noise ({1, 0})
  int highSteps = 0;           // steps the high-noise expert runs (export's split)
};

struct ResolvedShot {
  std::size_t index = 0;
  std::string id;
  std::string name;
  bool enabled = true;

  // What it renders.
  std::string prompt;
  std::string negativePrompt;  // as the shot writes it
  std::string uncondPrompt;    // what the unconditional branch encodes: the shot's, else the family's default
  std::uint64_t seed = 0;
  int frames = 17, width = 832, height = 480;

  // Latent geometry (the family's factors).
  int latentFrames = 0;  // of its own frames
  int latentWidth = 0, latentHeight = 0;
  int latentChannels = 16;
  ContinuityGeometry continuity;  // of its mode, with a predecessor (all zero without one)
  int sampledLatentFrames = 0;    // what the DiT samples: latentFrames + the mode's extra latents when it continues
  int outputFrames = 0;           // pixel frames it writes

  // Sampling.
  SamplingKind sampling = SamplingKind::OneSchedule;
  int steps = 30;  // model evaluations of its schedule (a few-step schedule's length)
  double guidance = 5.0;
  double shift = 5.0;
  Solver solver = Solver::UniPC;
  int branches = 2;  // guidance branches per step (1 at guidance 1)
  std::optional<FewStepSettings> fewStep;
  std::optional<ResolvedExperts> experts;
  bool cleanPrefix =
      false;  // handed or start-image latents held clean at timestep 0 (one schedule, a model trained for it)
  int conditionNoise = 0;   // PerFrame: the handed latents' timestep (SkyReels' addnoise_condition)
  int arStep = 0;           // PerFrame: frames staggered by this many iterations
  int causalBlockSize = 1;  // PerFrame: frames sharing one timestep
  ResolvedStepCache cache;
  std::vector<ResolvedLora> loras;  // the shot's, else the sequence's
  bool ownLoras = false;            // the list is the shot's own

  // Continuity.
  Continuity settings;   // as the shot writes them (mode, tag, k, ratio, …)
  int predecessor = -1;  // the enabled shot before it that writes its tag and that it hands off from (−1: none)
  int neighbour = -1;    // the enabled shot just before it (−1: none)
  int anchor = -1;       // anchor_colour: the first enabled shot (−1: none)
  std::vector<int> streamChain;  // KvStream: the shots whose latents its cache holds, oldest first
  bool recache = true;

  // Pictures.
  std::filesystem::path
      startImage;  // held as its first latent (or y of an image-to-video model); empty: none or unused
  std::filesystem::path fallbackImage;  // blend's (resolved); empty: none
  // Image-to-video: where its first frame will come from ("start_image", "handed_latent", "previous_last_frame",
  // "svi", or "none" when only its end is given; "" not I2V).
  std::string imageCondition;
  std::filesystem::path endImage;     // the keyframe it ends on (a first–last-frame model); empty: none
  bool sharedStartKeyframe = false;   // its start image is the end image of the shot before it
  std::filesystem::path anchorImage;  // svi: the chain's anchor picture
  int motionLatents = 0;              // svi: the previous shot's last latents in its image condition (0: none)
};

struct ResolvedSequence {
  models::ModelSetFacts models;  // models.assumed: the files could not be read (the problems say why)
  FrameGeometry geometry;
  bool twoExperts = false;
  double fps = 16.0;
  int streamWindow = kDefaultStreamWindow;  // latent frames a stream chunk attends to besides its sink
  std::vector<ResolvedShot> shots;          // one per shot of the document, disabled ones included
  Diagnostics problems;                     // what the document and its model set break; an error refuses a render
  bool ok() const { return !hasErrors(problems); }
};

}  // namespace shotchain::resolve
