#pragma once

#include <optional>
#include <string>
#include <vector>

namespace shotchain::continuity {

// How close a shot's first or last decoded frame came to the keyframe it was to start or end on. Plain
// data (no tensors) for the report, shot.json and the studio; measured by keyframe_measures.h.
struct KeyframeLanding {
  std::string end;      // "start" or "end"
  double psnr = 0;      // of the luma, dB (+infinity: identical)
  double ssim = 0;      // of the luma
  double deltaE = 0;    // mean CIE76 ΔE over the pixels
  bool missed = false;  // below kLandingSsim or above kLandingDeltaE
};

// A frame lands on its keyframe when its luma SSIM is at least this and its mean ΔE at most this.
inline constexpr double kLandingSsim = 0.6;
inline constexpr double kLandingDeltaE = 10.0;

// "shot 3 (s3) misses its end keyframe: SSIM 0.41, mean ΔE 14.2 (lands at SSIM ≥ 0.6 and ΔE ≤ 10)".
std::string landingWarning(int shotIndex, const std::string& shotId, const KeyframeLanding& landing);
// One line per landing for a tooltip: "end keyframe: PSNR 31.2 dB, SSIM 0.93, ΔE 2.1".
std::string landingSummary(const std::vector<KeyframeLanding>& landings);

}  // namespace shotchain::continuity
