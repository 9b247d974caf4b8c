#include "sequence/sequence.h"

#include <algorithm>
#include <iterator>

#include "sequence/continuity_modes.h"
#include "sequence/step_cache_policies.h"

#include <array>
#include <numeric>
#include <utility>

namespace shotchain {
namespace {

template <typename E, std::size_t N>
const char* nameOf(E value, const std::array<std::pair<E, const char*>, N>& table) {
  for (const auto& [candidate, name] : table)
    if (candidate == value) return name;
  return "?";
}

template <typename E, std::size_t N>
std::optional<E> valueOf(const std::string& text, const std::array<std::pair<E, const char*>, N>& table) {
  for (const auto& [candidate, name] : table)
    if (text == name) return candidate;
  return std::nullopt;
}

constexpr std::array<std::pair<Solver, const char*>, 2> kSolvers{{
    {Solver::Euler, "euler"},
    {Solver::UniPC, "unipc"},
}};
constexpr std::array<std::pair<ResidencyPolicy, const char*>, 4> kPolicies{{
    {ResidencyPolicy::Pinned, "pinned"},
    {ResidencyPolicy::Offload, "offload"},
    {ResidencyPolicy::Reload, "reload"},
    {ResidencyPolicy::Auto, "auto"},
}};
constexpr std::array<std::pair<DistilledUpdate, const char*>, 2> kDistilledUpdates{{
    {DistilledUpdate::Euler, "euler"},
    {DistilledUpdate::Renoise, "renoise"},
}};

constexpr std::array<std::pair<ExpertResidency, const char*>, 4> kExpertResidencies{{
    {ExpertResidency::Auto, "auto"},
    {ExpertResidency::Resident, "resident"},
    {ExpertResidency::Swap, "swap"},
    {ExpertResidency::Reload, "reload"},
}};

}  // namespace

const char* toString(ContinuityMode mode) { return traitsOf(mode).name; }
const char* toString(Solver solver) { return nameOf(solver, kSolvers); }
const char* toString(ResidencyPolicy policy) { return nameOf(policy, kPolicies); }
const char* toString(StepCachePolicy policy) { return traitsOf(policy).name; }
const char* toString(DistilledUpdate update) { return nameOf(update, kDistilledUpdates); }
const char* toString(ExpertResidency residency) { return nameOf(residency, kExpertResidencies); }
std::optional<ExpertResidency> expertResidencyFromString(const std::string& text) {
  return valueOf(text, kExpertResidencies);
}
std::optional<ContinuityMode> continuityModeFromString(const std::string& text) {
  for (const ContinuityModeTraits& traits : continuityModes())
    if (text == traits.name) return traits.mode;
  return std::nullopt;
}
std::optional<Solver> solverFromString(const std::string& text) { return valueOf(text, kSolvers); }
std::optional<ResidencyPolicy> residencyPolicyFromString(const std::string& text) { return valueOf(text, kPolicies); }
std::optional<StepCachePolicy> stepCachePolicyFromString(const std::string& text) {
  for (const StepCachePolicyTraits& traits : stepCachePolicies())
    if (text == traits.name) return traits.policy;
  return std::nullopt;
}

std::optional<DistilledUpdate> distilledUpdateFromString(const std::string& text) {
  return valueOf(text, kDistilledUpdates);
}

bool usesHandoff(ContinuityMode mode) { return traitsOf(mode).handoff; }

int Sequence::totalFrames() const { return startFrame(shots.size()); }

int Sequence::startFrame(std::size_t index) const {
  int start = 0;
  for (std::size_t i = 0; i < index && i < shots.size(); ++i) start += shots[i].frames;
  return start;
}

std::optional<std::size_t> Sequence::indexOf(const std::string& shotId) const {
  for (std::size_t i = 0; i < shots.size(); ++i)
    if (shots[i].id == shotId) return i;
  return std::nullopt;
}

std::string Sequence::unusedShotId() const {
  for (std::size_t n = shots.size() + 1;; ++n) {
    std::string candidate = "shot-" + std::to_string(n);
    if (!indexOf(candidate)) return candidate;
  }
}

bool isBuiltinModel(const std::string& name) {
  return std::any_of(std::begin(kBuiltinModels), std::end(kBuiltinModels),
                     [&](const char* builtin) { return name == builtin; });
}

std::string notABuiltinModel(const std::string& name) {
  std::string all;
  for (const char* builtin : kBuiltinModels) all += std::string(all.empty() ? "" : " and ") + "builtin:" + builtin;
  return "\"builtin:" + name + "\" is not a built-in model (they are " + all + ")";
}

}  // namespace shotchain
