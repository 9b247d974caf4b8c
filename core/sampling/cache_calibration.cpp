#include "sampling/cache_calibration.h"

#include <cmath>
#include <stdexcept>

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include "io/strict_json.h"
#include "util/bounded_file.h"

namespace shotchain::sampling {
namespace {

constexpr int kPolynomialDegree = 4;
constexpr int kMaxCalibrationSteps = 1000;

// Least squares y ≈ poly(x), highest power first; x scaled to [0, 1] for the solve and unscaled after.
std::vector<double> fitPolynomial(const std::vector<double>& x, const std::vector<double>& y) {
  if (x.size() < kPolynomialDegree + 1) return {};
  double scale = 0;
  for (const double v : x) scale = std::max(scale, std::abs(v));
  if (scale <= 0) return {};
  const auto n = static_cast<std::int64_t>(x.size());
  at::Tensor a = at::empty({n, kPolynomialDegree + 1}, at::kDouble);
  at::Tensor b = at::empty({n, 1}, at::kDouble);
  auto A = a.accessor<double, 2>();
  auto B = b.accessor<double, 2>();
  for (std::int64_t i = 0; i < n; ++i) {
    const double u = x[static_cast<std::size_t>(i)] / scale;
    double power = 1;
    for (int k = kPolynomialDegree; k >= 0; --k) {
      A[i][k] = power;
      power *= u;
    }
    B[i][0] = y[static_cast<std::size_t>(i)];
  }
  const at::Tensor solution = std::get<0>(at::linalg_lstsq(a, b, std::nullopt, "gelsd"));
  std::vector<double> out(kPolynomialDegree + 1);
  for (int k = 0; k <= kPolynomialDegree; ++k)  // coefficient of u^(degree−k) → of x^(degree−k)
    out[static_cast<std::size_t>(k)] = solution[k][0].item<double>() / std::pow(scale, kPolynomialDegree - k);
  return out;
}

[[noreturn]] void refuse(const std::filesystem::path& path, const std::string& field, const std::string& why) {
  throw std::runtime_error(path.string() + ": " + (field.empty() ? "" : field + ": ") + why);
}

std::vector<double> numbers(const std::filesystem::path& path, const nlohmann::json& root, const char* key,
                            std::size_t maxEntries) {
  const auto it = root.find(key);
  if (it == root.end()) return {};
  if (!it->is_array()) refuse(path, key, "must be an array of numbers");
  if (it->size() > maxEntries)
    refuse(path, key, std::to_string(it->size()) + " entries; at most " + std::to_string(maxEntries));
  std::vector<double> out;
  for (std::size_t i = 0; i < it->size(); ++i) {
    const nlohmann::json& v = (*it)[i];
    if (!v.is_number() || !std::isfinite(v.get<double>()))
      refuse(path, std::string(key) + "[" + std::to_string(i) + "]", "must be a finite number");
    out.push_back(v.get<double>());
  }
  return out;
}

}  // namespace

CacheCalibration fitCacheCalibration(const std::vector<const StepCache*>& runs, const std::string& model,
                                     double shift) {
  if (runs.empty()) throw std::invalid_argument("calibrate-cache: no shot was sampled");
  CacheCalibration out;
  out.model = model;
  out.shift = shift;
  out.steps = runs.front()->config().steps;
  out.shots = static_cast<int>(runs.size());
  std::vector<double> sums(static_cast<std::size_t>(2 * out.steps), 0.0);
  std::vector<int> counts(sums.size(), 0);
  std::vector<double> xs, ys;
  for (const StepCache* run : runs) {
    if (run->config().steps != out.steps)
      throw std::invalid_argument("calibrate-cache: every shot needs the same number of steps");
    for (int b = 0; b < 2; ++b) {
      // A branch that never ran (guidance 1) takes the conditional branch's figures.
      const CalibrationTrace& trace = run->trace(run->trace(b).magnitudeRatio.empty() ? 0 : b);
      for (std::size_t s = 0; s < trace.magnitudeRatio.size() && s < static_cast<std::size_t>(out.steps); ++s) {
        sums[2 * s + static_cast<std::size_t>(b)] += trace.magnitudeRatio[s];
        ++counts[2 * s + static_cast<std::size_t>(b)];
      }
      for (std::size_t s = 1; s < trace.modulationChange.size() && s < trace.outputChange.size(); ++s) {
        xs.push_back(trace.modulationChange[s]);
        ys.push_back(trace.outputChange[s]);
      }
    }
  }
  for (std::size_t i = 0; i < sums.size(); ++i) out.magCacheRatios.push_back(counts[i] ? sums[i] / counts[i] : 1.0);
  out.teaCacheCoefficients = fitPolynomial(xs, ys);
  return out;
}

std::string cacheCalibrationJson(const CacheCalibration& c) {
  nlohmann::ordered_json json;
  json["format"] = kCacheCalibrationFormat;
  json["model"] = c.model;
  json["steps"] = c.steps;
  json["shift"] = c.shift;
  json["shots"] = c.shots;
  json["magcache_ratios"] = c.magCacheRatios;
  json["teacache_coefficients"] = c.teaCacheCoefficients;
  return json.dump(1) + "\n";
}

CacheCalibration readCacheCalibration(const std::filesystem::path& path) {
  const std::string text = util::readRegularFile(path, kMaxCalibrationFileBytes);
  nlohmann::json root;
  try {
    root = io::parseJsonChecked<nlohmann::json>(text, 4);
  } catch (const io::JsonRefused& refused) {
    refuse(path, refused.problem().path, refused.problem().message);
  }
  if (!root.is_object())
    refuse(path, "",
           "not a calibration file (a JSON object with \"format\": \"" + std::string(kCacheCalibrationFormat) + "\")");
  const auto format = root.find("format");
  if (format == root.end() || !format->is_string() || format->get<std::string>() != kCacheCalibrationFormat)
    refuse(path, "format",
           std::string("must be \"") + kCacheCalibrationFormat + "\" (write it with shotchain calibrate-cache)");
  for (auto it = root.begin(); it != root.end(); ++it)
    if (it.key() != "format" && it.key() != "model" && it.key() != "steps" && it.key() != "shift" &&
        it.key() != "shots" && it.key() != "magcache_ratios" && it.key() != "teacache_coefficients")
      refuse(path, it.key(), "is not a field of a calibration file");
  CacheCalibration c;
  if (const auto m = root.find("model"); m != root.end()) {
    if (!m->is_string()) refuse(path, "model", "must be a string");
    c.model = m->get<std::string>();
  }
  const auto steps = root.find("steps");
  if (steps == root.end() || !steps->is_number_integer() || steps->get<std::int64_t>() < 1 ||
      steps->get<std::int64_t>() > kMaxCalibrationSteps)
    refuse(path, "steps", "must be a whole number in 1.." + std::to_string(kMaxCalibrationSteps));
  c.steps = steps->get<int>();
  if (const auto s = root.find("shift"); s != root.end()) {
    if (!s->is_number()) refuse(path, "shift", "must be a number");
    c.shift = s->get<double>();
  }
  if (const auto s = root.find("shots"); s != root.end()) {
    if (!s->is_number_integer() || s->get<std::int64_t>() < 0) refuse(path, "shots", "must be a whole number");
    c.shots = static_cast<int>(std::min<std::int64_t>(s->get<std::int64_t>(), 1 << 30));
  }
  c.magCacheRatios = numbers(path, root, "magcache_ratios", 2 * kMaxCalibrationSteps);
  if (!c.magCacheRatios.empty() && c.magCacheRatios.size() != static_cast<std::size_t>(2 * c.steps))
    refuse(path, "magcache_ratios",
           std::to_string(c.magCacheRatios.size()) + " entries; " + std::to_string(2 * c.steps) +
               " expected (conditional and unconditional for each of " + std::to_string(c.steps) + " steps)");
  for (std::size_t i = 0; i < c.magCacheRatios.size(); ++i)
    if (c.magCacheRatios[i] <= 0)
      refuse(path, "magcache_ratios[" + std::to_string(i) + "]", "must be greater than 0 (a ratio of magnitudes)");
  c.teaCacheCoefficients = numbers(path, root, "teacache_coefficients", 16);
  return c;
}

}  // namespace shotchain::sampling
