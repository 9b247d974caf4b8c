#include "continuity/cut_measures.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include <ATen/ATen.h>

#include "continuity/after_cut_measures.h"
#include "continuity/frame_measures.h"
#include "continuity/handoff.h"
#include "continuity/latent_ops.h"
#include "util/median.h"

namespace shotchain::continuity {

namespace {

std::optional<double> ratio(double cut, std::optional<double> baseline) {
  if (!baseline) return std::nullopt;
  if (*baseline == 0.0) return cut == 0.0 ? 1.0 : std::numeric_limits<double>::infinity();
  return cut / *baseline;
}

void channelDeltas(const ChannelStats& to, const ChannelStats& from, std::vector<double>& mean,
                   std::vector<double>& logStd, double& meanAbsMean, double& meanAbsLogStd) {
  mean.clear();
  logStd.clear();
  if (to.empty() || from.empty() || to.mean.size() != from.mean.size()) return;
  double sumMean = 0, sumStd = 0;
  for (std::size_t c = 0; c < to.mean.size(); ++c) {
    mean.push_back(to.mean[c] - from.mean[c]);
    logStd.push_back(std::log(std::max(to.std[c], 1e-12)) - std::log(std::max(from.std[c], 1e-12)));
    sumMean += std::abs(mean.back());
    sumStd += std::abs(logStd.back());
  }
  meanAbsMean = sumMean / static_cast<double>(mean.size());
  meanAbsLogStd = sumStd / static_cast<double>(logStd.size());
}

// The last `window` of the previous shot's values and the first `window` of the next's.
template <typename T, typename F>
std::vector<double> windowValues(const std::vector<T>& previousTail, const std::vector<T>& nextHead, int window,
                                 F get) {
  std::vector<double> out;
  const auto w = static_cast<std::size_t>(std::max(window, 0));
  for (std::size_t i = previousTail.size() > w ? previousTail.size() - w : 0; i < previousTail.size(); ++i)
    out.push_back(get(previousTail[i]));
  for (std::size_t i = 0; i < std::min(w, nextHead.size()); ++i) out.push_back(get(nextHead[i]));
  return out;
}

std::int64_t firstGenerated(const at::Tensor& latent, std::int64_t held) { return std::min(held, latent.size(1) - 1); }

}  // namespace

ShotStats computeShotStats(const std::string& shotId, const at::Tensor& latent, std::int64_t heldLatentFrames,
                           const at::Tensor& frames, int window) {
  if (!latent.defined() || latent.dim() != 4)
    throw std::invalid_argument("shot " + shotId + " latent: expected [C, F, h, w]");
  if (!frames.defined() || frames.dim() != 4 || frames.size(0) != 3 || frames.size(1) < 1)
    throw std::invalid_argument("shot " + shotId + " frames: expected [3, T, H, W]");
  at::NoGradGuard noGrad;
  ShotStats s;
  s.shotId = shotId;
  s.heldLatentFrames = std::clamp<std::int64_t>(heldLatentFrames, 0, latent.size(1));
  const std::int64_t first = firstGenerated(latent, s.heldLatentFrames);
  const std::int64_t count = latent.size(1);
  s.latent = latentChannelStats(latent.narrow(1, first, count - first));
  s.latentHead = latentChannelStats(latent.narrow(1, first, 1));
  s.latentTail = latentChannelStats(latent.narrow(1, count - 1, 1));
  for (std::int64_t j = std::max<std::int64_t>(1, first); j + 1 < count; ++j)
    s.latentSteps.push_back(rmsDifference(latent.select(1, j + 1), latent.select(1, j)));

  const std::int64_t t = frames.size(1);
  s.firstFrameLab = meanLab(frames.select(1, 0));
  const LabStats last = labStats(frames.select(1, t - 1));
  s.lastFrameLab = last.mean;
  s.lastFrameLabSpread = last.spread;
  const std::int64_t pairs = t - 1;
  const std::int64_t w = std::min<std::int64_t>(std::max(window, 0), pairs);
  for (std::int64_t i = 0; i < w; ++i)
    s.headPairs.push_back(measureFramePair(frames.select(1, i), frames.select(1, i + 1)));
  s.tailChanges.emplace();
  for (std::int64_t i = pairs - w; i < pairs; ++i) {
    s.tailPairs.push_back(measureFramePair(frames.select(1, i), frames.select(1, i + 1)));
    s.tailChanges->push_back(meanRgbChange(frames.select(1, i), frames.select(1, i + 1)));
  }
  return s;
}

CutMetrics measureCut(const CutInputs& in) {
  if (in.previous == nullptr || in.next == nullptr)
    throw std::invalid_argument("measureCut: both shots' stats are required");
  at::NoGradGuard noGrad;
  CutMetrics m;
  m.fromIndex = in.fromIndex;
  m.toIndex = in.toIndex;
  m.fromShotId = in.fromShotId;
  m.toShotId = in.toShotId;
  m.fromKey = in.fromKey;
  m.toKey = in.toKey;
  m.mode = toString(in.mode);

  if (in.conditioning != nullptr) {
    m.handoffBytesCopied = in.conditioning->bytesCopied;
    m.handoffSeconds = in.conditioning->seconds;
    m.handoffMse = handoffMse(*in.conditioning);
    m.source = in.conditioning->source;
    m.resampled = in.conditioning->resampled;
  }

  channelDeltas(in.next->latentHead, in.previous->latentTail, m.channelMeanDeltaPrev, m.channelLogStdDeltaPrev,
                m.meanAbsChannelMeanDeltaPrev, m.meanAbsChannelLogStdDeltaPrev);
  if (in.first != nullptr)
    channelDeltas(in.next->latent, in.first->latent, m.channelMeanDeltaFirst, m.channelLogStdDeltaFirst,
                  m.meanAbsChannelMeanDeltaFirst, m.meanAbsChannelLogStdDeltaFirst);

  if (in.previousTail.defined() && in.nextLatent.defined()) {
    const at::Tensor head = in.nextLatent.select(1, firstGenerated(in.nextLatent, in.next->heldLatentFrames));
    const at::Tensor tail =
        resampleLatent(in.previousTail.narrow(1, in.previousTail.size(1) - 1, 1), head.size(1), head.size(2))
            .select(1, 0)
            .to(head.device());
    const double cut = rmsDifference(head, tail);
    m.latentStepRatio = ratio(cut, util::median(windowValues(in.previous->latentSteps, in.next->latentSteps, in.window,
                                                             [](double v) { return v; })));
  }

  if (in.previousLastFrame.defined() && in.nextFrames.defined()) {
    const at::Tensor next = in.nextFrames.select(1, 0);
    at::Tensor previous = in.previousLastFrame.to(next.device());
    if (previous.size(1) != next.size(1) || previous.size(2) != next.size(2)) {
      const std::vector<std::int64_t> size{next.size(1), next.size(2)};
      previous = at::upsample_bicubic2d(previous.to(at::kFloat).unsqueeze(0), at::IntArrayRef(size), false)
                     .squeeze(0)
                     .clamp(-1.0, 1.0);
    }
    const FramePairMeasures cut = measureFramePair(previous, next);
    m.psnrCut = cut.psnr;
    m.ssimCut = cut.ssim;
    const auto& before = in.previous->tailPairs;
    const auto& after = in.next->headPairs;
    m.psnrWithinMedian =
        util::median(windowValues(before, after, in.window, [](const FramePairMeasures& p) { return p.psnr; }));
    m.ssimWithinMedian =
        util::median(windowValues(before, after, in.window, [](const FramePairMeasures& p) { return p.ssim; }));
    m.madRatio =
        ratio(cut.mad,
              util::median(windowValues(before, after, in.window, [](const FramePairMeasures& p) { return p.mad; })));
    measureAfterCut(*in.previous, in.nextFrames, in.window, m);
  }
  m.deltaEPrev = deltaE76(in.next->firstFrameLab, in.previous->lastFrameLab);
  if (in.first != nullptr) m.deltaEFirst = deltaE76(in.next->firstFrameLab, in.first->firstFrameLab);

  if (in.vae != nullptr && in.previousTail.defined()) m.roundtripMse = roundtripMse(*in.vae, in.previousTail);
  return m;
}

}  // namespace shotchain::continuity
