#include "memory/expert_plan.h"

#include <string>

#include "util/byte_size.h"

namespace shotchain::memory {

std::uint64_t expertBytesForShot(ExpertResidency residency, const std::vector<int>& runs, std::uint64_t highBytes,
                                 std::uint64_t lowBytes) {
  if (residency == ExpertResidency::Resident || residency == ExpertResidency::Auto) return 0;
  std::uint64_t bytes = 0;
  int resident = 0;
  auto change = [&](int expert) {
    if (expert == resident) return;
    bytes += residency == ExpertResidency::Swap ? highBytes + lowBytes : (expert == 1 ? highBytes : lowBytes);
    resident = expert;
  };
  for (const int expert : runs) change(expert);
  change(0);
  return bytes;
}

MemoryPlan planExperts(const PlanRequest& request, MemoryPlan (*planOne)(const PlanRequest&)) {
  PlanRequest both = request, one = request;
  both.highNoiseResident = true;
  one.highNoiseResident = false;
  const MemoryPlan resident = planOne(both);
  const MemoryPlan single = planOne(one);
  const std::string bothText = "both experts resident (" + util::formatByteSize(resident.chosenPeak()) + ")";
  const std::string oneText = "one expert at a time (" + util::formatByteSize(single.chosenPeak()) + ")";

  MemoryPlan plan;
  switch (request.experts) {
    case ExpertResidency::Auto:
      if (resident.fits) {
        plan = resident;
        plan.expertsChosen = ExpertResidency::Resident;
        plan.expertReason = "auto kept both experts resident: " + bothText + " fits, so no bytes move between shots.";
      } else {
        plan = single;
        plan.expertsChosen = ExpertResidency::Swap;
        plan.expertReason = single.fits ? "auto swaps the experts at the boundary through host memory: " + bothText +
                                              " does not fit, " + oneText + " does."
                                        : "neither expert fits alone, even one at a time swapped at the boundary:";
      }
      break;
    case ExpertResidency::Resident:
      plan = resident;
      plan.expertsChosen = ExpertResidency::Resident;
      plan.expertReason = resident.fits
                              ? "both experts resident: " + bothText + " fits."
                              : std::string("both experts resident does not fit") +
                                    (single.fits ? "; one at a time (memory.experts swap) would fit, " + oneText + ":"
                                                 : ", and neither expert fits alone either:");
      break;
    case ExpertResidency::Swap:
    case ExpertResidency::Reload:
      plan = single;
      plan.expertsChosen = request.experts;
      plan.expertReason =
          std::string(toString(request.experts)) + ": " + (single.fits ? oneText + "." : "neither expert fits alone:");
      break;
  }
  plan.peakExpertsResident = resident.chosenPeak();
  plan.peakExpertsSwapped = single.chosenPeak();
  const std::uint64_t low =
      request.dit->weightBytes(request.ditDtype) - request.dit->keptAsStoredSaving(request.ditDtype);
  for (const PlanShot& shot : request.shots)
    plan.expertBytesPerShot.push_back(
        expertBytesForShot(plan.expertsChosen, shot.expertRuns, plan.highNoiseExpertWeights, low));
  if (!plan.fits) plan.reason = plan.expertReason + " " + plan.reason;
  return plan;
}

}  // namespace shotchain::memory
