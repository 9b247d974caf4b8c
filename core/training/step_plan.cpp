#include "training/step_plan.h"

#include <algorithm>

namespace shotchain::training {

StepPlan::StepPlan(long requested, double maxSeconds, long firstCheck, long secondCheck, long minimum)
    : requested_(requested),
      maxSeconds_(maxSeconds),
      firstCheck_(firstCheck),
      secondCheck_(secondCheck),
      minimum_(minimum),
      total_(requested) {}

bool StepPlan::update(long step, double elapsedSeconds) {
  if (maxSeconds_ <= 0 || step <= 0) return false;
  const long before = total_;
  if (step == firstCheck_) {
    elapsedAtFirstCheck_ = elapsedSeconds;
    const double pace = elapsedSeconds / static_cast<double>(step);
    const long fit = pace > 0 ? static_cast<long>(maxSeconds_ / pace) : requested_;
    total_ = std::clamp(fit, std::min(minimum_, requested_), requested_);
  } else if (step == secondCheck_ && step < total_ && secondCheck_ > firstCheck_) {
    const double pace = (elapsedSeconds - elapsedAtFirstCheck_) / static_cast<double>(step - firstCheck_);
    const long fit = pace > 0 ? step + static_cast<long>((maxSeconds_ - elapsedSeconds) / pace) : requested_;
    total_ = std::clamp(fit, std::min(std::max(minimum_, step + 1), requested_), requested_);
  } else if (step > secondCheck_ && secondCheck_ > firstCheck_ && step % secondCheck_ == 0 && step < total_) {
    const double pace = (elapsedSeconds - elapsedAtLastCheck_) / static_cast<double>(step - lastCheck_);
    const long fit = pace > 0 ? step + static_cast<long>((maxSeconds_ - elapsedSeconds) / pace) : total_;
    total_ = std::clamp(fit, std::min(std::max(minimum_, step + 1), total_), total_);
  }
  if (step >= secondCheck_ && step % secondCheck_ == 0) {
    lastCheck_ = step;
    elapsedAtLastCheck_ = elapsedSeconds;
  }
  return total_ != before;
}

}  // namespace shotchain::training
