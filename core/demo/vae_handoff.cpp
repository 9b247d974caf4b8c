#include "demo/vae_handoff.h"

#include <cmath>
#include <vector>

#include <ATen/ATen.h>

#include "demo/frame_analysis.h"
#include "demo/procedural_clip.h"
#include "models/wan/wan_vae.h"
#include "util/median.h"

namespace shotchain::demo {

VaeHandoffErrors measureVaeHandoff(const models::WanVae& vae, int clips, std::uint64_t firstSeed) {
  const at::NoGradGuard noGrad;
  VaeHandoffErrors result;
  std::vector<double> errorsAlone, errorsAfter;
  auto tally = [](VaeHandoffError& r, std::vector<double>& errors, const at::Tensor& handed,
                  const FrameObservation& last) {
    ++r.clips;
    const FrameObservation first = analyseFrame(handed.select(1, handed.size(1) - 1));
    if (first.found)
      errors.push_back(std::hypot(first.cx - last.cx, first.cy - last.cy));
    else
      ++r.lost;
  };
  for (int i = 0; i < clips; ++i) {
    const at::Tensor clip = renderClip(randomClipParams(firstSeed + static_cast<std::uint64_t>(i)));
    const at::Tensor latent = vae.encode(clip);
    const at::Tensor decoded = vae.decode(latent);
    const FrameObservation last = analyseFrame(decoded.select(1, decoded.size(1) - 1));
    if (!last.found) continue;
    const std::int64_t n = latent.size(1);
    tally(result.alone, errorsAlone, vae.decode(latent.narrow(1, n - 1, 1).contiguous()), last);
    tally(result.afterPredecessor, errorsAfter, vae.decode(latent.narrow(1, n - 2, 2).contiguous()), last);
  }
  auto summarise = [](VaeHandoffError& r, const std::vector<double>& errors) {
    for (double e : errors) r.meanPixels += e / static_cast<double>(errors.size());
    r.medianPixels = util::medianOr(errors, 0);
  };
  summarise(result.alone, errorsAlone);
  summarise(result.afterPredecessor, errorsAfter);
  return result;
}

}  // namespace shotchain::demo
