#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace shotchain::continuity {

// Per-channel statistics of a latent (population std).
struct ChannelStats {
  std::vector<double> mean;
  std::vector<double> std;
  bool empty() const { return mean.empty(); }
  bool operator==(const ChannelStats&) const = default;
};

// Mean CIE L*a*b* colour (D65) of a frame.
struct LabColour {
  double l = 0;
  double a = 0;
  double b = 0;
  bool operator==(const LabColour&) const = default;
};

// Measures between two neighbouring output frames of one shot (luma).
struct FramePairMeasures {
  double mad = 0;   // mean absolute difference of luma in [0, 1]
  double psnr = 0;  // dB; +inf for identical frames
  double ssim = 0;
  bool operator==(const FramePairMeasures&) const = default;
};

// What a cut needs to know about the shot before it, kept by the renderer (and persisted next to
// the shot's frames) so that a cut can be measured when the previous shot was rendered earlier.
// Plain data: no tensors. Latent figures cover the generated latent frames only (the leading
// `heldLatentFrames` were conditioning held from the previous shot).
struct ShotStats {
  std::string shotId;
  std::int64_t heldLatentFrames = 0;
  ChannelStats latent;      // over the generated latent frames: shot 1's is the colour-anchor reference
  ChannelStats latentHead;  // the first generated latent frame
  ChannelStats latentTail;  // the last latent frame
  // RMS change between neighbouring latent frames j → j+1 for j ≥ max(1, heldLatentFrames) (the
  // step out of the 1-frame latent 0 mixes latent kinds and is skipped), in order.
  std::vector<double> latentSteps;
  LabColour firstFrameLab;  // mean Lab of the first and last output frames
  LabColour lastFrameLab;
  std::vector<FramePairMeasures> headPairs;  // the first `window` neighbouring output frame pairs
  std::vector<FramePairMeasures> tailPairs;  // the last `window` pairs
  // Written since the after-cut figures; nullopt when read from an older shot.json, and the
  // figures that need them are then left out.
  std::optional<LabColour> lastFrameLabSpread;     // spread (std) of L*, a*, b* over the last frame's pixels
  std::optional<std::vector<double>> tailChanges;  // meanRgbChange of the last `window` pairs, in order
  bool operator==(const ShotStats&) const = default;
};

// JSON object with numbers only (an infinite PSNR is written as the string "inf").
std::string shotStatsToJson(const ShotStats& stats);
// Throws std::runtime_error naming `source` and the field for malformed input.
ShotStats shotStatsFromJson(std::string_view json, const std::string& source);

}  // namespace shotchain::continuity
