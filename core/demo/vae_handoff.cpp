#include "demo/vae_handoff.h"

#include <cmath>
#include <vector>

#include <ATen/ATen.h>

#include "demo/frame_analysis.h"
#include "demo/procedural_clip.h"
#include "models/wan_vae.h"
#include "util/median.h"

namespace shotchain::demo {

VaeHandoffError measureVaeHandoff(const models::WanVae& vae, int clips, std::uint64_t firstSeed, HandoffDecode decode) {
  const at::NoGradGuard noGrad;
  VaeHandoffError result;
  std::vector<double> errors;
  for (int i = 0; i < clips; ++i) {
    const at::Tensor clip = renderClip(randomClipParams(firstSeed + static_cast<std::uint64_t>(i)));
    const at::Tensor latent = vae.encode(clip);
    const at::Tensor decoded = vae.decode(latent);
    const FrameObservation last = analyseFrame(decoded.select(1, decoded.size(1) - 1));
    if (!last.found) continue;
    ++result.clips;
    const std::int64_t take = decode == HandoffDecode::Alone ? 1 : 2;
    const at::Tensor handed = vae.decode(latent.narrow(1, latent.size(1) - take, take).contiguous());
    const FrameObservation first = analyseFrame(handed.select(1, handed.size(1) - 1));
    if (!first.found) {
      ++result.lost;
      continue;
    }
    errors.push_back(std::hypot(first.cx - last.cx, first.cy - last.cy));
  }
  for (double e : errors) result.meanPixels += e / static_cast<double>(errors.size());
  result.medianPixels = util::median(errors);
  return result;
}

}  // namespace shotchain::demo
