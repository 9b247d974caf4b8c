#pragma once

#include <optional>
#include <string>
#include <vector>

#include "continuity/cut_metrics.h"

namespace shotchain::continuity {

// The one place that says when an after-cut figure is a problem; the CLI's closing table, the
// studio's cut table and its timeline badges all read it.
struct CutThresholds {
  static constexpr double flash = 2.0;         // warn above: × the in-shot frame-to-frame change
  static constexpr double colourDrift = 10.0;  // warn above: ΔE76 of the mean colour
  static constexpr double spreadDrift = 10.0;  // warn above: ΔE76 of the colour spread
  static constexpr double structure = 0.8;     // warn below: × the in-shot SSIM
};

enum class FigureState {
  Unmeasured,
  Fine,
  Warning,
  Expected,  // beyond the threshold, but what a `none` cut (a new scene) is for: colour may change there
};

struct FigureVerdict {
  std::string figure;  // "flash", "colour drift", "spread drift", "structure"
  std::optional<double> value;
  FigureState state = FigureState::Unmeasured;
  std::string brief;  // e.g. "flash 5.3×" (empty when unmeasured)
  std::string words;  // one plain sentence
};

struct CutVerdict {
  std::vector<FigureVerdict> figures;  // flash, colour drift, spread drift, structure
  int warnings = 0;
  bool measured = false;  // at least one figure was measured
  std::string summary;    // "fine", "not measured" or "warning: flash 5.3×, colour drift ΔE 23.4"
};

CutVerdict judgeCut(const CutMetrics& cut);

}  // namespace shotchain::continuity
