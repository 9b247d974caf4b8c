#include "continuity/shot_stats.h"

#include <cmath>
#include <limits>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "io/strict_json.h"

namespace shotchain::continuity {

namespace {

using Json = nlohmann::ordered_json;

Json number(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  return value;
}

Json numbers(const std::vector<double>& values) {
  Json out = Json::array();
  for (const double v : values) out.push_back(number(v));
  return out;
}

Json channelJson(const ChannelStats& s) { return Json{{"mean", numbers(s.mean)}, {"std", numbers(s.std)}}; }
Json labJson(const LabColour& c) { return Json::array({c.l, c.a, c.b}); }
Json pairsJson(const std::vector<FramePairMeasures>& pairs) {
  Json out = Json::array();
  for (const FramePairMeasures& p : pairs)
    out.push_back(Json{{"mad", number(p.mad)}, {"psnr", number(p.psnr)}, {"ssim", number(p.ssim)}});
  return out;
}

class Reader {
 public:
  explicit Reader(const std::string& source) : source_(source) {}

  [[noreturn]] void fail(const std::string& field, const std::string& message) const {
    throw std::runtime_error(source_ + ": " + field + ": " + message);
  }

  const Json& at(const Json& object, const std::string& key, const std::string& field) const {
    if (!object.is_object()) fail(field, "must be an object");
    const auto it = object.find(key);
    if (it == object.end()) fail(field.empty() ? key : field + "." + key, "missing");
    return *it;
  }

  double value(const Json& v, const std::string& field) const {
    if (v.is_number()) return v.get<double>();
    if (v.is_string()) {
      const std::string s = v.get<std::string>();
      if (s == "inf") return std::numeric_limits<double>::infinity();
      if (s == "-inf") return -std::numeric_limits<double>::infinity();
      if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
    }
    fail(field, "must be a number");
  }

  std::vector<double> values(const Json& v, const std::string& field) const {
    if (!v.is_array()) fail(field, "must be an array of numbers");
    std::vector<double> out;
    for (std::size_t i = 0; i < v.size(); ++i) out.push_back(value(v[i], field + "[" + std::to_string(i) + "]"));
    return out;
  }

  ChannelStats channels(const Json& object, const std::string& key) const {
    const Json& v = at(object, key, "");
    ChannelStats s{values(at(v, "mean", key), key + ".mean"), values(at(v, "std", key), key + ".std")};
    if (s.mean.size() != s.std.size()) fail(key, "mean and std have different lengths");
    return s;
  }

  LabColour lab(const Json& object, const std::string& key) const {
    const std::vector<double> v = values(at(object, key, ""), key);
    if (v.size() != 3) fail(key, "must hold 3 numbers (L, a, b)");
    return {v[0], v[1], v[2]};
  }

  std::vector<FramePairMeasures> pairs(const Json& object, const std::string& key) const {
    const Json& v = at(object, key, "");
    if (!v.is_array()) fail(key, "must be an array");
    std::vector<FramePairMeasures> out;
    for (std::size_t i = 0; i < v.size(); ++i) {
      const std::string field = key + "[" + std::to_string(i) + "]";
      out.push_back({value(at(v[i], "mad", field), field + ".mad"), value(at(v[i], "psnr", field), field + ".psnr"),
                     value(at(v[i], "ssim", field), field + ".ssim")});
    }
    return out;
  }

 private:
  const std::string& source_;
};

}  // namespace

std::string shotStatsToJson(const ShotStats& s) {
  Json j;
  j["shot_id"] = s.shotId;
  j["held_latent_frames"] = s.heldLatentFrames;
  j["latent"] = channelJson(s.latent);
  j["latent_head"] = channelJson(s.latentHead);
  j["latent_tail"] = channelJson(s.latentTail);
  j["latent_steps"] = numbers(s.latentSteps);
  j["first_frame_lab"] = labJson(s.firstFrameLab);
  j["last_frame_lab"] = labJson(s.lastFrameLab);
  j["head_pairs"] = pairsJson(s.headPairs);
  j["tail_pairs"] = pairsJson(s.tailPairs);
  if (s.lastFrameLabSpread) j["last_frame_lab_spread"] = labJson(*s.lastFrameLabSpread);
  if (s.tailChanges) j["tail_changes"] = numbers(*s.tailChanges);
  return j.dump(2);
}

ShotStats shotStatsFromJson(std::string_view json, const std::string& source) {
  const Reader r(source);
  Json j;
  try {
    j = io::parseJsonChecked<Json>(json, io::kMaxJsonDepth);
  } catch (const io::JsonRefused& e) {
    throw std::runtime_error(source + ": not valid JSON (" + e.what() + ")");
  }
  if (!j.is_object()) r.fail("(root)", "must be an object");
  ShotStats s;
  const Json& id = r.at(j, "shot_id", "");
  if (!id.is_string()) r.fail("shot_id", "must be a string");
  s.shotId = id.get<std::string>();
  const Json& held = r.at(j, "held_latent_frames", "");
  if (!held.is_number_integer() || held.get<std::int64_t>() < 0)
    r.fail("held_latent_frames", "must be a whole number ≥ 0");
  s.heldLatentFrames = held.get<std::int64_t>();
  s.latent = r.channels(j, "latent");
  s.latentHead = r.channels(j, "latent_head");
  s.latentTail = r.channels(j, "latent_tail");
  s.latentSteps = r.values(r.at(j, "latent_steps", ""), "latent_steps");
  s.firstFrameLab = r.lab(j, "first_frame_lab");
  s.lastFrameLab = r.lab(j, "last_frame_lab");
  s.headPairs = r.pairs(j, "head_pairs");
  s.tailPairs = r.pairs(j, "tail_pairs");
  if (j.contains("last_frame_lab_spread")) s.lastFrameLabSpread = r.lab(j, "last_frame_lab_spread");
  if (j.contains("tail_changes")) s.tailChanges = r.values(j["tail_changes"], "tail_changes");
  return s;
}

}  // namespace shotchain::continuity
