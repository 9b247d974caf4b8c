#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace shotchain::continuity {

// Every figure of continuity.md for one cut (shot `fromIndex` → shot `toIndex`), as the report,
// the CLI table and the studio's cut table show them. Plain data: no tensors, so the UI and the
// report writers can hold it without libtorch. A figure that could not be computed (e.g. no
// handoff in mode `none`) is nullopt; an infinite PSNR (identical frames) is +infinity.
struct CutMetrics {
  int fromIndex = 0;
  int toIndex = 1;
  std::string fromShotId;
  std::string toShotId;
  // The shot keys (render/shot_key.h) of both shots when the cut was measured: the figures describe
  // this pair and no other (empty: measured before keys were recorded).
  std::string fromKey;
  std::string toKey;
  std::string mode;        // continuity mode of shot `toIndex`
  std::string source;      // what shot `toIndex` was conditioned on (Conditioning::source; empty: unknown)
  bool resampled = false;  // the handoff was resampled to a new resolution

  // Latent space (before decode).
  std::uint64_t handoffBytesCopied = 0;
  double handoffSeconds = 0;
  std::optional<double> handoffMse;          // stored tail vs what shot N+1 was conditioned on (0 exactly for `latent`)
  std::vector<double> channelMeanDeltaPrev;  // per channel: mean(N+1) − mean(N)
  std::vector<double> channelLogStdDeltaPrev;  // per channel: log std(N+1) − log std(N)
  std::vector<double> channelMeanDeltaFirst;   // vs shot 1
  std::vector<double> channelLogStdDeltaFirst;
  double meanAbsChannelMeanDeltaPrev = 0;  // summaries of the vectors above (mean of |·|)
  double meanAbsChannelLogStdDeltaPrev = 0;
  double meanAbsChannelMeanDeltaFirst = 0;
  double meanAbsChannelLogStdDeltaFirst = 0;
  std::optional<double> latentStepRatio;  // change across the cut / median change inside the shots

  // Pixel space (after decode), luma.
  std::optional<double> psnrCut;  // dB; +inf when the frames are identical
  std::optional<double> ssimCut;
  std::optional<double> psnrWithinMedian;  // median over neighbouring frames inside both shots
  std::optional<double> ssimWithinMedian;
  std::optional<double> madRatio;      // ≈1 seamless, >3 reads as a cut
  std::optional<double> deltaEPrev;    // mean Lab colour difference vs previous shot
  std::optional<double> deltaEFirst;   // vs shot 1
  std::optional<double> roundtripMse;  // decode tail → encode → MSE to the tail (the drift `vae_roundtrip` costs)

  // The first frames after the cut (up to 8 of shot N+1's), against the last frame before it and
  // the shots' own pace (measureAfterCut). Verdicts on them: cut_verdict.h.
  int afterCutFrames = 0;       // how many frames of N+1 the four figures looked at
  std::optional<double> flash;  // largest mean RGB change between neighbouring frames there / in-shot median
  std::optional<double>
      colourDrift;  // largest ΔE76 between a frame's mean Lab there and the last frame's before the cut
  std::optional<double> spreadDrift;  // the same for the frames' Lab spread (std of L*, a*, b*)
  std::optional<double> structure;    // lowest SSIM between neighbouring frames there / in-shot median
};

}  // namespace shotchain::continuity
