#pragma once

#include <vector>

#include "memory/memory_planner.h"
#include "sequence/sequence.h"

namespace shotchain::sampling {

// The runs of experts over a shot's steps (1 high noise, 0 low noise), as ExpertSwitch will switch them on its
// schedule: {1, 0} for the usual shot.
std::vector<int> expertRuns(const Shot& shot, const SamplerDefaults& defaults, bool imageToVideo);

// The first step the low-noise expert runs: the shot's switch_step, else how many of its steps are at or above
// the boundary (what export-comfy writes as the two samplers' split).
int switchStepOf(const Shot& shot, const SamplerDefaults& defaults, bool imageToVideo);

// Fills PlanShot::expertRuns of a two-expert request (its shots are the sequence's enabled ones, in order).
void addExpertRuns(PlanRequest& request, const Sequence& sequence);

}  // namespace shotchain::sampling
