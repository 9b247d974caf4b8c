#pragma once

#include <filesystem>
#include <optional>

#include <ATen/core/Tensor.h>

#include "continuity/cut_metrics.h"
#include "render/prior_shot.h"
#include "render/render_options.h"

namespace shotchain::render {

// The cut into a re-used shot, measured again because the shot before it changed since (a `none`
// shot's key does not depend on the shot before it) or because its record holds no cut. Reads the
// shot's first frames back from disk through `loadImage` (8-bit PNG, so the figures can differ from
// a fresh render's in the last digits) and its latent from the tail file; handoff figures (bytes,
// time, MSE, source) are kept from `stored`, the latent figures that need the handed tail are left
// out. nullopt when the frames cannot be read (no loader, missing or unreadable files).
std::optional<continuity::CutMetrics> remeasureReusedCut(const std::optional<continuity::CutMetrics>& stored,
                                                         const PriorShot& before, const PriorShot* first,
                                                         const PriorShot& self, const at::Tensor& latent,
                                                         ContinuityMode mode, int framesWritten,
                                                         const std::filesystem::path& shotDir,
                                                         const ImageLoader& loadImage);

}  // namespace shotchain::render
