#include "continuity/cut_verdict.h"

#include <cmath>
#include <cstdio>

namespace shotchain::continuity {
namespace {

std::string number(double value, int decimals) {
  if (std::isinf(value)) return value > 0 ? "∞" : "-∞";
  char text[32];
  std::snprintf(text, sizeof text, "%.*f", decimals, value);
  return text;
}

std::string frames(const CutMetrics& cut) {
  return cut.afterCutFrames == 1 ? "the first frame" : "the first " + std::to_string(cut.afterCutFrames) + " frames";
}

FigureVerdict unmeasured(const std::string& figure, const std::string& why) {
  return {figure, std::nullopt, FigureState::Unmeasured, {}, figure + ": not measured (" + why + ")"};
}

FigureVerdict flashVerdict(const CutMetrics& cut) {
  if (!cut.flash) return unmeasured("flash", "needs two frames after the cut and the shot before's in-shot changes");
  const double v = *cut.flash;
  const std::string times = number(v, 1) + "×";
  if (v > CutThresholds::flash)
    return {"flash", v, FigureState::Warning, "flash " + times,
            "flash: in " + frames(cut) + " after the cut the picture changes up to " + times +
                " as much as between neighbouring frames inside the shots"};
  return {"flash", v, FigureState::Fine, "flash " + times,
          "no flash: the frames after the cut change at most " + times + " as much as inside the shots"};
}

FigureVerdict driftVerdict(const CutMetrics& cut, const std::optional<double>& value, const std::string& figure,
                           const std::string& what, double threshold) {
  if (!value) return unmeasured(figure, "the shot before was recorded without it");
  const std::string delta = "ΔE " + number(*value, 1);
  const std::string brief = figure + " " + delta;
  if (*value <= threshold)
    return {figure, value, FigureState::Fine, brief,
            "no " + figure + ": " + what + " of " + frames(cut) + " stays within " + delta +
                " of the last frame before the cut"};
  if (cut.mode == "none")
    return {figure, value, FigureState::Expected, brief,
            "new scene: " + what + " moves up to " + delta +
                " from the last frame before the cut (expected at a hard cut)"};
  return {
      figure, value, FigureState::Warning, brief,
      figure + ": " + what + " of " + frames(cut) + " moves up to " + delta + " from the last frame before the cut"};
}

FigureVerdict structureVerdict(const CutMetrics& cut) {
  if (!cut.structure) return unmeasured("structure", "needs two frames after the cut and a positive in-shot SSIM");
  const double v = *cut.structure;
  const std::string times = number(v, 2) + "×";
  if (v < CutThresholds::structure)
    return {"structure", v, FigureState::Warning, "structure " + times,
            "structure break: neighbouring frames after the cut are only " + times +
                " as similar (SSIM) as inside the shots"};
  return {"structure", v, FigureState::Fine, "structure " + times,
          "structure holds: neighbouring frames after the cut are " + times + " as similar (SSIM) as inside the shots"};
}

}  // namespace

CutVerdict judgeCut(const CutMetrics& cut) {
  CutVerdict verdict;
  verdict.figures = {
      flashVerdict(cut),
      driftVerdict(cut, cut.colourDrift, "colour drift", "the mean colour", CutThresholds::colourDrift),
      driftVerdict(cut, cut.spreadDrift, "spread drift", "the colour spread", CutThresholds::spreadDrift),
      structureVerdict(cut)};
  std::string warned;
  for (const FigureVerdict& f : verdict.figures) {
    if (f.state != FigureState::Unmeasured) verdict.measured = true;
    if (f.state != FigureState::Warning) continue;
    ++verdict.warnings;
    warned += (warned.empty() ? "" : ", ") + f.brief;
  }
  verdict.summary = verdict.warnings > 0 ? "warning: " + warned : verdict.measured ? "fine" : "not measured";
  return verdict;
}

}  // namespace shotchain::continuity
