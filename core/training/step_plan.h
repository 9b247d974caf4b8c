#pragma once

namespace shotchain::training {

// How many of the requested training steps fit a time cap. The pace is measured at `firstCheck`
// (from the start) and again at `secondCheck` (from firstCheck on, past the slow first steps and
// any lasting change in how busy the machine is); each check re-plans the total, never above the
// request nor below `minimum` (or the step reached). After that, every `secondCheck` steps, a
// machine that got slower shortens the plan to what the latest pace fits, so a schedule planned on
// the total (the cosine decay) still ends in the cap instead of being cut off there.
class StepPlan {
 public:
  StepPlan(long requested, double maxSeconds, long firstCheck, long secondCheck, long minimum);

  // Call before running `step` (0-based) with the seconds spent so far; true when the total changed.
  bool update(long step, double elapsedSeconds);
  long total() const { return total_; }

 private:
  long requested_;
  double maxSeconds_;
  long firstCheck_, secondCheck_, minimum_;
  long total_;
  double elapsedAtFirstCheck_ = 0;
  long lastCheck_ = 0;
  double elapsedAtLastCheck_ = 0;
};

}  // namespace shotchain::training
