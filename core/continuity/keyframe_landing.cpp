#include "continuity/keyframe_landing.h"

#include <cmath>
#include <cstdio>

#include "continuity/frame_measures.h"
#include "continuity/keyframe_measures.h"

namespace shotchain::continuity {
namespace {

std::string fixed(double value, int decimals) {
  if (std::isinf(value)) return "∞";
  char text[32];
  std::snprintf(text, sizeof text, "%.*f", decimals, value);
  return text;
}

}  // namespace

KeyframeLanding measureLanding(const char* end, const at::Tensor& frame, const at::Tensor& keyframe) {
  KeyframeLanding landing;
  landing.end = end;
  landing.psnr = psnrLuma(frame, keyframe);
  landing.ssim = ssimLuma(frame, keyframe);
  landing.deltaE = meanDeltaE76(frame, keyframe);
  landing.missed = landing.ssim < kLandingSsim || landing.deltaE > kLandingDeltaE;
  return landing;
}

std::string landingWarning(int shotIndex, const std::string& shotId, const KeyframeLanding& landing) {
  return "shot " + std::to_string(shotIndex + 1) + " (" + shotId + ") misses its " + landing.end + " keyframe: SSIM " +
         fixed(landing.ssim, 2) + ", mean ΔE " + fixed(landing.deltaE, 1) + " (lands at SSIM ≥ " +
         fixed(kLandingSsim, 1) + " and ΔE ≤ " + fixed(kLandingDeltaE, 0) + ")";
}

std::string landingSummary(const std::vector<KeyframeLanding>& landings) {
  std::string text;
  for (const KeyframeLanding& l : landings)
    text += (text.empty() ? "" : "\n") + l.end + " keyframe: PSNR " + fixed(l.psnr, 1) + " dB, SSIM " +
            fixed(l.ssim, 2) + ", ΔE " + fixed(l.deltaE, 1) + (l.missed ? " — missed" : "");
  return text;
}

}  // namespace shotchain::continuity
