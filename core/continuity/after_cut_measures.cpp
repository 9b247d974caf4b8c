#include "continuity/after_cut_measures.h"

#include <algorithm>
#include <stdexcept>
#include <vector>

#include <ATen/ATen.h>

#include "continuity/frame_measures.h"
#include "util/median.h"

namespace shotchain::continuity {

void measureAfterCut(const ShotStats& previous, const at::Tensor& nextFrames, int window, CutMetrics& m) {
  if (!nextFrames.defined() || nextFrames.dim() != 4 || nextFrames.size(0) != 3 || nextFrames.size(1) < 1)
    throw std::invalid_argument("measureAfterCut: expected frames [3, T, H, W]");
  at::NoGradGuard noGrad;
  const std::int64_t total = nextFrames.size(1);
  const std::int64_t n = std::min<std::int64_t>(kAfterCutFrames, total);
  const auto frame = [&](std::int64_t i) { return nextFrames.select(1, i); };
  m.afterCutFrames = static_cast<int>(n);

  double drift = 0, spread = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const LabStats lab = labStats(frame(i));
    drift = std::max(drift, deltaE76(lab.mean, previous.lastFrameLab));
    if (previous.lastFrameLabSpread) spread = std::max(spread, deltaE76(lab.spread, *previous.lastFrameLabSpread));
  }
  m.colourDrift = drift;
  if (previous.lastFrameLabSpread) m.spreadDrift = spread;
  if (n < 2) return;

  double largestChange = 0, lowestSsim = 1;
  for (std::int64_t i = 0; i + 1 < n; ++i) {
    largestChange = std::max(largestChange, meanRgbChange(frame(i), frame(i + 1)));
    lowestSsim = std::min(lowestSsim, ssimLuma(frame(i), frame(i + 1)));
  }
  std::vector<double> changes = previous.tailChanges.value_or(std::vector<double>{});
  std::vector<double> ssims;
  for (const FramePairMeasures& pair : previous.tailPairs) ssims.push_back(pair.ssim);
  for (std::int64_t i = n; i + 1 < total && i < n + std::max(window, 0); ++i) {
    changes.push_back(meanRgbChange(frame(i), frame(i + 1)));
    ssims.push_back(ssimLuma(frame(i), frame(i + 1)));
  }
  if (previous.tailChanges)
    if (const std::optional<double> usual = util::median(changes))
      m.flash = std::max(largestChange, kVisibleChange) / std::max(*usual, kVisibleChange);
  if (const std::optional<double> usual = util::median(ssims); usual && *usual > 0) m.structure = lowestSsim / *usual;
}

}  // namespace shotchain::continuity
