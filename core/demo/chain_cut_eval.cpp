#include "demo/chain_cut_eval.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>

#include <ATen/ATen.h>

#include "continuity/after_cut_measures.h"
#include "continuity/cut_measures.h"
#include "demo/frame_analysis.h"
#include "demo/procedural_clip.h"
#include "models/wan/wan_model.h"
#include "util/median.h"

namespace shotchain::demo {
namespace {

// The jump of the object's centroid across the cut over the median per-frame motion inside both shots.
std::optional<double> jumpRatio(const ClipObservation& a, const ClipObservation& b) {
  const FrameObservation& last = a.frames.back();
  const FrameObservation& first = b.frames.front();
  if (!last.found || !first.found) return std::nullopt;
  std::vector<double> steps;
  for (const ClipObservation* o : {&a, &b})
    for (std::size_t i = 1; i < o->frames.size(); ++i)
      if (o->frames[i].found && o->frames[i - 1].found)
        steps.push_back(std::hypot(o->frames[i].cx - o->frames[i - 1].cx, o->frames[i].cy - o->frames[i - 1].cy));
  const double within = util::medianOr(std::move(steps), 0);
  return std::hypot(first.cx - last.cx, first.cy - last.cy) / std::max(within, 0.25);
}

double hueDistance(double a, double b) {
  const double d = std::fmod(std::fabs(a - b), 360.0);
  return std::min(d, 360.0 - d);
}

}  // namespace

ChainCutResult measureChainCuts(const std::string& mode, const std::string& method, int chains,
                                const ChainShots& shots) {
  ChainCutResult result;
  result.mode = mode;
  result.method = method;
  result.chains = chains;
  const Direction moving[4] = {Direction::Right, Direction::Up, Direction::Left, Direction::Down};
  std::vector<double> ratios, flashes, drifts, hues;
  int within20 = 0, frames = 0, wrongFrames = 0;
  for (int c = 0; c < chains; ++c) {
    const int colour = c % static_cast<int>(demoColours().size());
    const auto shape = static_cast<Shape>(c % kShapeCount);
    const int background = (c / static_cast<int>(demoColours().size())) % static_cast<int>(demoBackgrounds().size());
    const Direction d1 = moving[c % 4], d2 = moving[(c + 1 + c / 4) % 4];
    const auto seed = static_cast<std::uint64_t>(5000 + 2 * c);
    const auto [a, b] =
        shots(clipPrompt(colour, shape, d1, background), clipPrompt(colour, shape, d2, background), seed);
    const ClipObservation oa = analyseClip(a.frames), ob = analyseClip(b.frames);
    if (const auto r = jumpRatio(oa, ob)) ratios.push_back(*r);
    const continuity::ShotStats stats = continuity::computeShotStats("a", a.latent, a.heldLatentFrames, a.frames);
    continuity::CutMetrics cut;
    continuity::measureAfterCut(stats, b.frames, continuity::kWithinShotWindow, cut);
    if (cut.flash) flashes.push_back(*cut.flash);
    if (cut.colourDrift) drifts.push_back(*cut.colourDrift);
    if (demoColours()[static_cast<std::size_t>(colour)].name != std::string("white") && oa.foundFrames > 0 &&
        ob.foundFrames > 0) {
      hues.push_back(hueDistance(oa.hue, ob.hue));
      within20 += hues.back() <= ChainCutGoals::hueChange;
    }
    for (const FrameObservation& f : ob.frames) {
      ++frames;
      wrongFrames += !f.found || f.components != 1;
    }
  }
  result.measured = static_cast<int>(ratios.size());
  result.jumpRatio = util::medianOr(ratios, 0);
  result.flash = util::medianOr(flashes, 0);
  result.colourDrift = util::medianOr(drifts, 0);
  result.hueChange = util::medianOr(hues, 0);
  result.hueWithin20 = hues.empty() ? 0 : static_cast<double>(within20) / static_cast<double>(hues.size());
  result.wrongObjectFrames = frames > 0 ? static_cast<double>(wrongFrames) / frames : 0;
  return result;
}

ChainCutResult evaluateChainCuts(const DemoModels& models, const DemoShotSettings& settings,
                                 const Continuity& continuity, int chains, bool renoisedSlot) {
  const bool perFrame = models.dit->capabilities().perFrameTimesteps;
  const std::string method = continuity.mode == ContinuityMode::None ? ""
                             : (perFrame && !renoisedSlot)           ? "diffusion forcing"
                                                                     : "re-noised slot";
  DemoShotSettings second = settings;
  second.renoisedSlot = renoisedSlot;
  return measureChainCuts(toString(continuity.mode), method, chains,
                          [&](const std::string& first, const std::string& next, std::uint64_t seed) {
                            DemoShot a = generateDemoShot(models, first, seed, settings);
                            DemoShot b = generateDemoShot(models, next, seed + 1, second, continuity, &a);
                            return std::make_pair(std::move(a), std::move(b));
                          });
}

std::vector<ChainCutResult> evaluateAllChainCuts(const DemoModels& models, const DemoShotSettings& settings,
                                                 int chains) {
  const bool perFrame = models.dit->capabilities().perFrameTimesteps;
  std::vector<ChainCutResult> results;
  auto run = [&](ContinuityMode mode, bool renoised) {
    Continuity continuity;
    continuity.mode = mode;
    continuity.overlapLatents = 1;
    results.push_back(evaluateChainCuts(models, settings, continuity, chains, renoised));
  };
  run(ContinuityMode::None, false);
  for (ContinuityMode mode : {ContinuityMode::Latent, ContinuityMode::LatentOverlap}) {
    run(mode, false);
    if (perFrame) run(mode, true);
  }
  run(ContinuityMode::VaeRoundtrip, false);
  return results;
}

bool meetsChainGoals(const ChainCutResult& r) {
  if (r.mode == "none") return r.measured > 0 && r.jumpRatio >= ChainCutGoals::noneJumpRatio;
  if (r.mode != "latent" && r.mode != "latent_overlap") return true;
  return r.measured > 0 && r.jumpRatio <= ChainCutGoals::jumpRatio && r.flash <= ChainCutGoals::flash &&
         r.colourDrift <= ChainCutGoals::colourDrift && r.hueChange <= ChainCutGoals::hueChange &&
         r.wrongObjectFrames <= ChainCutGoals::wrongObjectFrames;
}

}  // namespace shotchain::demo
