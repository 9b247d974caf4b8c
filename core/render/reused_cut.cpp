#include "render/reused_cut.h"

#include <algorithm>
#include <vector>

#include <ATen/ATen.h>

#include "continuity/after_cut_measures.h"
#include "continuity/cut_measures.h"
#include "render/frame_conversion.h"
#include "render/output_layout.h"
#include "sequence/sequence.h"

namespace shotchain::render {

std::optional<continuity::CutMetrics> remeasureReusedCut(const std::optional<continuity::CutMetrics>& stored,
                                                         const PriorShot& before, const PriorShot* first,
                                                         const PriorShot& self, const at::Tensor& latent,
                                                         ContinuityMode mode, int framesWritten,
                                                         const std::filesystem::path& shotDir,
                                                         const ImageLoader& loadImage) {
  if (!loadImage || !before.stats || !self.stats || !before.lastFrame.defined() || framesWritten < 1)
    return std::nullopt;
  // Frame 0 for the cut, then the after-cut frames and the in-shot pairs after them.
  const int needed = std::min(framesWritten, continuity::kAfterCutFrames + continuity::kWithinShotWindow + 1);
  std::vector<at::Tensor> frames;
  try {
    for (int i = 0; i < needed; ++i) {
      const RgbFrame frame = loadImage(framePath(shotDir, i));
      if (frame.empty()) return std::nullopt;
      frames.push_back(frameToTensor(frame).unsqueeze(1));
    }
  } catch (const std::exception&) {
    return std::nullopt;
  }
  continuity::CutInputs inputs;
  inputs.fromIndex = before.index;
  inputs.toIndex = self.index;
  inputs.fromShotId = before.id;
  inputs.toShotId = self.id;
  inputs.fromKey = before.key;
  inputs.toKey = self.key;
  inputs.mode = mode;
  inputs.previous = &*before.stats;
  inputs.next = &*self.stats;
  inputs.first = first != nullptr && first != &self && first->stats ? &*first->stats : nullptr;
  inputs.previousLastFrame = before.lastFrame;
  inputs.nextLatent = latent;
  inputs.nextFrames = at::cat(frames, 1);
  continuity::CutMetrics cut = continuity::measureCut(inputs);
  if (stored) {
    cut.source = stored->source;
    cut.resampled = stored->resampled;
    cut.handoffBytesCopied = stored->handoffBytesCopied;
    cut.handoffSeconds = stored->handoffSeconds;
    cut.handoffMse = stored->handoffMse;
  }
  return cut;
}

}  // namespace shotchain::render
