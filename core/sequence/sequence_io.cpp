#include "sequence/sequence_io.h"

#include <cmath>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "io/strict_json.h"
#include "sequence/continuity_modes.h"
#include "sequence/step_cache_policies.h"
#include "util/atomic_file.h"
#include "util/bounded_file.h"
#include "util/byte_size.h"

namespace shotchain {
namespace {

using Json = nlohmann::ordered_json;

const char* typeName(const Json& value) {
  switch (value.type()) {
    case Json::value_t::null:
      return "null";
    case Json::value_t::boolean:
      return "a boolean";
    case Json::value_t::string:
      return "a string";
    case Json::value_t::array:
      return "an array";
    case Json::value_t::object:
      return "an object";
    case Json::value_t::number_float:
      return "a number with a fraction";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
      return "a whole number";
    default:
      return "an unsupported value";
  }
}

// Walks one JSON object, reads the known keys with type checks, and keeps the rest.
class ObjectReader {
 public:
  ObjectReader(const Json& object, std::string path, Diagnostics& out)
      : object_(object), path_(std::move(path)), out_(out) {}

  const Json* find(const std::string& key, bool required) {
    known_.insert(key);
    auto it = object_.find(key);
    if (it == object_.end()) {
      if (required) error(key, "missing (required)");
      return nullptr;
    }
    return &*it;
  }

  void string(const std::string& key, std::string& target, bool required = false) {
    if (const Json* v = find(key, required)) {
      if (v->is_string())
        target = v->get<std::string>();
      else
        typeError(key, "a string", *v);
    }
  }

  void boolean(const std::string& key, bool& target) {
    if (const Json* v = find(key, false)) {
      if (v->is_boolean())
        target = v->get<bool>();
      else
        typeError(key, "true or false", *v);
    }
  }

  void real(const std::string& key, double& target, bool required = false) {
    if (const Json* v = find(key, required)) {
      if (v->is_number())
        target = v->get<double>();
      else
        typeError(key, "a number", *v);
    }
  }

  void optionalReal(const std::string& key, std::optional<double>& target) {
    if (const Json* v = find(key, false); v && !v->is_null()) {
      double value = 0;
      real(key, value);
      if (v->is_number()) target = value;
    }
  }

  void integer(const std::string& key, int& target, bool required = false) {
    if (const Json* v = find(key, required)) {
      if (v->is_number_integer()) {
        const auto value = v->get<std::int64_t>();
        if (v->is_number_unsigned() && v->get<std::uint64_t>() > std::uint64_t(std::numeric_limits<int>::max()))
          error(key, v->dump() + " is far too large");
        else if (value < std::numeric_limits<int>::min() || value > std::numeric_limits<int>::max())
          error(key, v->dump() + " is far too large");
        else
          target = static_cast<int>(value);
      } else if (v->is_number_float()) {
        error(key, v->dump() + " must be a whole number");
      } else {
        typeError(key, "a whole number", *v);
      }
    }
  }

  void optionalBoolean(const std::string& key, std::optional<bool>& target) {
    if (const Json* v = find(key, false)) {
      if (v->is_boolean())
        target = v->get<bool>();
      else
        typeError(key, "true or false", *v);
    }
  }

  void optionalInteger(const std::string& key, std::optional<int>& target) {
    if (const Json* v = find(key, false); v && !v->is_null()) {
      int value = 0;
      const std::size_t before = out_.size();
      integer(key, value);
      if (out_.size() == before) target = value;
    }
  }

  void seed(const std::string& key, std::uint64_t& target, bool required) {
    if (const Json* v = find(key, required)) {
      if (v->is_number_unsigned())
        target = v->get<std::uint64_t>();
      else if (v->is_number_integer())
        error(key, v->dump() + " is negative; seeds are 0..18446744073709551615");
      else if (v->is_number_float() && std::floor(v->get<double>()) == v->get<double>())
        error(key, v->dump() + " does not fit in 64 bits (0..18446744073709551615)");
      else if (v->is_number_float())
        error(key, v->dump() + " must be a whole number");
      else
        typeError(key, "a whole number", *v);
    }
  }

  template <typename E>
  void enumeration(const std::string& key, E& target, std::optional<E> (*parse)(const std::string&),
                   const std::string& choices) {
    if (const Json* v = find(key, false)) {
      if (!v->is_string()) {
        typeError(key, "a string", *v);
      } else if (auto parsed = parse(v->get<std::string>())) {
        target = *parsed;
      } else {
        // Appended rather than `"\"" + text + …`: GCC 12 inlines that operator+ into a -Warray-bounds
        // false positive (GCC bug 105329).
        std::string message = "\"";
        message.append(v->get<std::string>()).append("\" is not one of ").append(choices);
        error(key, message);
      }
    }
  }

  // The value of an optional key, whatever it holds (nullptr when absent).
  const Json* any(const std::string& key) { return find(key, false); }

  // A nested object, or nullptr (with an error) when the key holds something else.
  const Json* object(const std::string& key, bool required = false) {
    const Json* v = find(key, required);
    if (v && !v->is_object()) {
      typeError(key, "an object", *v);
      return nullptr;
    }
    return v;
  }

  UnknownFields unknownFields() const {
    UnknownFields unknown;
    for (auto it = object_.begin(); it != object_.end(); ++it)
      if (!known_.count(it.key())) unknown[it.key()] = it.value().dump();
    return unknown;
  }

  std::string pathOf(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }

  void error(const std::string& key, std::string message) {
    out_.push_back({Diagnostic::Severity::Error, pathOf(key), std::move(message)});
  }

 private:
  void typeError(const std::string& key, const char* expected, const Json& actual) {
    error(key, std::string("must be ") + expected + ", not " + typeName(actual));
  }

  const Json& object_;
  std::string path_;
  Diagnostics& out_;
  std::set<std::string> known_;
};

void readModel(ObjectReader& root, ModelSet& model, Diagnostics& out) {
  const Json* v = root.find("model", false);
  if (!v) return;
  if (v->is_string()) {
    const std::string text = v->get<std::string>();
    const std::string prefix = "builtin:";
    if (text.rfind(prefix, 0) == 0 && text.size() > prefix.size())
      model.builtin = text.substr(prefix.size());
    else
      root.error("model", "\"" + text + "\" is not a model; use \"builtin:demo\" or an object with folder or files");
    return;
  }
  if (!v->is_object()) {
    root.error("model", std::string("must be \"builtin:demo\" or an object, not ") + typeName(*v));
    return;
  }
  model.builtin.clear();
  ObjectReader reader(*v, "model", out);
  reader.string("folder", model.folder);
  reader.string("dit", model.dit);
  reader.string("dit_high_noise", model.ditHighNoise);
  reader.string("vae", model.vae);
  reader.string("text_encoder", model.textEncoder);
  reader.string("tokenizer", model.tokenizer);
  reader.string("image_encoder", model.imageEncoder);
  model.unknown = reader.unknownFields();
}

std::vector<LoraRef> readLoras(const Json& value, const std::string& path, Diagnostics& out) {
  std::vector<LoraRef> loras;
  if (!value.is_array()) {
    out.push_back({Diagnostic::Severity::Error, path,
                   std::string("must be a list of {\"file\", \"strength\"}, not ") + typeName(value)});
    return loras;
  }
  for (std::size_t i = 0; i < value.size(); ++i) {
    const std::string at = path + "[" + std::to_string(i) + "]";
    if (!value[i].is_object()) {
      out.push_back({Diagnostic::Severity::Error, at, std::string("must be an object, not ") + typeName(value[i])});
      continue;
    }
    LoraRef lora;
    ObjectReader reader(value[i], at, out);
    reader.string("file", lora.file, true);
    reader.real("strength", lora.strength);
    reader.string("expert", lora.expert);
    lora.unknown = reader.unknownFields();
    loras.push_back(std::move(lora));
  }
  return loras;
}

StepCacheSettings readCache(const Json& value, const std::string& path, Diagnostics& out) {
  StepCacheSettings cache;
  ObjectReader reader(value, path, out);
  reader.enumeration("policy", cache.policy, &stepCachePolicyFromString, stepCachePolicyNames());
  reader.optionalReal("threshold", cache.threshold);
  reader.string("calibration", cache.calibration);
  cache.unknown = reader.unknownFields();
  return cache;
}

// `shot`: a shot's own few_step, whose empty list of steps samples that shot without the sequence's few-step
// schedule; the sequence's needs its steps.
FewStepSettings readFewStep(const Json& value, const std::string& path, Diagnostics& out, bool shot) {
  FewStepSettings fewStep;
  ObjectReader reader(value, path, out);
  const Json* steps = reader.any("steps");
  if (!steps || (!shot && steps->is_array() && steps->empty()))
    out.push_back({Diagnostic::Severity::Error, path + ".steps",
                   std::string(steps ? "is empty" : "missing") +
                       ": a few-step schedule needs its steps, e.g. [1000, 750, 500, 250]" +
                       (shot ? "; [] samples this shot without the sequence's few-step schedule" : "")});
  if (steps) {
    if (!steps->is_array())
      reader.error("steps", std::string("must be a list of whole numbers such as [1000, 750, 500, 250], not ") +
                                typeName(*steps));
    else
      for (std::size_t i = 0; i < steps->size(); ++i) {
        const Json& step = (*steps)[i];
        // An unsigned value past int64 reads as a negative one: its text is quoted, never -1.
        if (step.is_number_integer() && !(step.is_number_unsigned() && step.get<std::uint64_t>() > 1'000'000) &&
            step.get<std::int64_t>() >= -1'000'000 && step.get<std::int64_t>() <= 1'000'000)
          fewStep.steps.push_back(static_cast<int>(step.get<std::int64_t>()));
        else
          out.push_back({Diagnostic::Severity::Error, path + ".steps[" + std::to_string(i) + "]",
                         step.dump() + " must be a whole number in 1..1000"});
      }
  }
  reader.enumeration("update", fewStep.update, &distilledUpdateFromString, "euler, renoise");
  fewStep.unknown = reader.unknownFields();
  return fewStep;
}

void readSettings(ObjectReader& root, SequenceSettings& settings, Diagnostics& out) {
  root.string("name", settings.name);
  root.real("fps", settings.fps);
  readModel(root, settings.model, out);
  if (const Json* loras = root.any("loras")) settings.loras = readLoras(*loras, "loras", out);
  if (const Json* sampler = root.object("sampler")) {
    ObjectReader reader(*sampler, "sampler", out);
    reader.integer("steps", settings.sampler.steps);
    reader.real("guidance", settings.sampler.guidance);
    reader.real("shift", settings.sampler.shift);
    reader.enumeration("solver", settings.sampler.solver, &solverFromString, "euler, unipc");
    reader.optionalInteger("ar_step", settings.sampler.arStep);
    reader.optionalInteger("stream_window", settings.sampler.streamWindow);
    if (const Json* cache = reader.object("cache")) settings.sampler.cache = readCache(*cache, "sampler.cache", out);
    if (const Json* fewStep = reader.object("few_step"))
      settings.sampler.fewStep = readFewStep(*fewStep, "sampler.few_step", out, false);
    reader.optionalReal("boundary", settings.sampler.boundary);
    reader.optionalReal("guidance_high_noise", settings.sampler.guidanceHighNoise);
    settings.sampler.unknown = reader.unknownFields();
  }
  if (const Json* memory = root.object("memory")) {
    ObjectReader reader(*memory, "memory", out);
    reader.enumeration("policy", settings.policy, &residencyPolicyFromString, "pinned, offload, reload, auto");
    reader.enumeration("experts", settings.experts, &expertResidencyFromString, "auto, resident, swap, reload");
    if (const Json* budget = reader.find("budget", false); budget && !budget->is_null()) {
      if (budget->is_number_unsigned())
        settings.memoryBudgetBytes = budget->get<std::uint64_t>();
      else if (!budget->is_string())
        reader.error("budget", std::string("must be a size such as \"16GiB\" or null, not ") + typeName(*budget));
      else if (auto bytes = util::parseByteSize(budget->get<std::string>()))
        settings.memoryBudgetBytes = *bytes;
      else
        reader.error("budget", "\"" + budget->get<std::string>() + "\" is not a size (write e.g. \"16GiB\")");
    }
    reader.boolean("allocator_tuning", settings.allocatorTuning);
    settings.memoryUnknown = reader.unknownFields();
  }
}

Shot readShot(const Json& value, std::size_t index, Diagnostics& out) {
  Shot shot;
  ObjectReader reader(value, shotPath(index), out);
  reader.string("id", shot.id, true);
  reader.string("name", shot.name);
  reader.string("prompt", shot.prompt, true);
  reader.string("negative_prompt", shot.negativePrompt);
  reader.integer("frames", shot.frames, true);
  reader.integer("width", shot.width, true);
  reader.integer("height", shot.height, true);
  reader.seed("seed", shot.seed, true);
  reader.optionalInteger("steps", shot.steps);
  reader.optionalReal("guidance", shot.guidance);
  reader.optionalReal("guidance_high_noise", shot.guidanceHighNoise);
  reader.optionalInteger("switch_step", shot.switchStep);
  reader.optionalReal("shift", shot.shift);
  reader.string("start_image", shot.startImage);
  reader.string("end_image", shot.endImage);
  if (const Json* cache = reader.object("cache")) shot.cache = readCache(*cache, shotPath(index, "cache"), out);
  if (const Json* fewStep = reader.object("few_step"))
    shot.fewStep = readFewStep(*fewStep, shotPath(index, "few_step"), out, true);
  if (const Json* loras = reader.any("loras")) shot.loras = readLoras(*loras, shotPath(index, "loras"), out);
  reader.boolean("enabled", shot.enabled);
  if (const Json* continuity = reader.object("continuity")) {
    ObjectReader c(*continuity, shotPath(index, "continuity"), out);
    c.enumeration("mode", shot.continuity.mode, &continuityModeFromString, continuityModeNames().c_str());
    c.string("tag", shot.continuity.tag);
    c.integer("overlap_latents", shot.continuity.overlapLatents);
    c.real("blend_ratio", shot.continuity.blendRatio);
    c.string("fallback_image", shot.continuity.fallbackImage);
    c.boolean("anchor_colour", shot.continuity.anchorColour);
    c.optionalInteger("prefix_frames", shot.continuity.prefixFrames);
    c.optionalInteger("condition_noise", shot.continuity.conditionNoise);
    c.optionalBoolean("recache", shot.continuity.recache);
    c.optionalInteger("motion_latents", shot.continuity.motionLatents);
    c.string("anchor_image", shot.continuity.anchorImage);
    shot.continuity.unknown = c.unknownFields();
  }
  shot.unknown = reader.unknownFields();
  return shot;
}

bool looksBinary(std::string_view text) {
  if (text.size() >= 2 && (text.substr(0, 2) == "\xFF\xFE" || text.substr(0, 2) == "\xFE\xFF"))
    return false;  // UTF-16: said so by the parser
  const std::size_t probe = std::min<std::size_t>(text.size(), 512);
  for (std::size_t i = 0; i < probe; ++i)
    if (text[i] == '\0') return true;
  return false;
}

void addUnknown(Json& object, const UnknownFields& unknown) {
  for (const auto& [key, text] : unknown) object[key] = Json::parse(text);
}

Json modelToJson(const ModelSet& model) {
  if (model.isBuiltin()) return "builtin:" + model.builtin;
  Json object = Json::object();
  const std::pair<const char*, const std::string*> fields[] = {{"folder", &model.folder},
                                                               {"dit", &model.dit},
                                                               {"dit_high_noise", &model.ditHighNoise},
                                                               {"vae", &model.vae},
                                                               {"text_encoder", &model.textEncoder},
                                                               {"tokenizer", &model.tokenizer},
                                                               {"image_encoder", &model.imageEncoder}};
  for (const auto& [key, value] : fields)
    if (!value->empty()) object[key] = *value;
  addUnknown(object, model.unknown);
  return object;
}

Json lorasToJson(const std::vector<LoraRef>& loras) {
  Json list = Json::array();
  for (const LoraRef& lora : loras) {
    Json object = {{"file", lora.file}, {"strength", lora.strength}};
    if (!lora.expert.empty()) object["expert"] = lora.expert;
    addUnknown(object, lora.unknown);
    list.push_back(object);
  }
  return list;
}

Json cacheToJson(const StepCacheSettings& cache) {
  Json object = Json::object();
  object["policy"] = toString(cache.policy);
  if (cache.threshold) object["threshold"] = *cache.threshold;
  if (!cache.calibration.empty()) object["calibration"] = cache.calibration;
  addUnknown(object, cache.unknown);
  return object;
}

Json fewStepToJson(const FewStepSettings& fewStep) {
  Json object = Json::object();
  object["steps"] = fewStep.steps;
  object["update"] = toString(fewStep.update);
  addUnknown(object, fewStep.unknown);
  return object;
}

Json shotToJson(const Shot& shot) {
  Json object = Json::object();
  object["id"] = shot.id;
  object["name"] = shot.name;
  object["prompt"] = shot.prompt;
  if (!shot.negativePrompt.empty()) object["negative_prompt"] = shot.negativePrompt;
  object["frames"] = shot.frames;
  object["width"] = shot.width;
  object["height"] = shot.height;
  object["seed"] = shot.seed;
  if (shot.steps) object["steps"] = *shot.steps;
  if (shot.guidance) object["guidance"] = *shot.guidance;
  if (shot.guidanceHighNoise) object["guidance_high_noise"] = *shot.guidanceHighNoise;
  if (shot.switchStep) object["switch_step"] = *shot.switchStep;
  if (shot.shift) object["shift"] = *shot.shift;
  if (!shot.startImage.empty()) object["start_image"] = shot.startImage;
  if (!shot.endImage.empty()) object["end_image"] = shot.endImage;
  if (shot.cache) object["cache"] = cacheToJson(*shot.cache);
  if (shot.fewStep) object["few_step"] = fewStepToJson(*shot.fewStep);
  if (shot.loras) object["loras"] = lorasToJson(*shot.loras);
  Json continuity = Json::object();
  continuity["mode"] = toString(shot.continuity.mode);
  continuity["tag"] = shot.continuity.tag;
  continuity["overlap_latents"] = shot.continuity.overlapLatents;
  continuity["blend_ratio"] = shot.continuity.blendRatio;
  if (!shot.continuity.fallbackImage.empty()) continuity["fallback_image"] = shot.continuity.fallbackImage;
  if (shot.continuity.anchorColour) continuity["anchor_colour"] = true;
  if (shot.continuity.prefixFrames) continuity["prefix_frames"] = *shot.continuity.prefixFrames;
  if (shot.continuity.conditionNoise) continuity["condition_noise"] = *shot.continuity.conditionNoise;
  if (shot.continuity.recache) continuity["recache"] = *shot.continuity.recache;
  if (shot.continuity.motionLatents) continuity["motion_latents"] = *shot.continuity.motionLatents;
  if (!shot.continuity.anchorImage.empty()) continuity["anchor_image"] = shot.continuity.anchorImage;
  addUnknown(continuity, shot.continuity.unknown);
  object["continuity"] = continuity;
  object["enabled"] = shot.enabled;
  addUnknown(object, shot.unknown);
  return object;
}

}  // namespace

LoadResult parseSequence(std::string_view text, const ValidationContext& context) {
  LoadResult result;
  auto fatal = [&](std::string path, std::string message) {
    result.diagnostics.push_back({Diagnostic::Severity::Error, std::move(path), std::move(message)});
    return result;
  };
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos)
    return fatal("", "the file is empty, not a sequence document");
  if (looksBinary(text)) return fatal("", "this is a binary file, not a JSON sequence document");

  Json root;
  try {
    root = io::parseJsonChecked<Json>(text, kMaxDocumentDepth);
  } catch (const io::JsonRefused& refused) {
    return fatal(refused.problem().path, refused.problem().message);
  }
  if (!root.is_object()) return fatal("", std::string("the document must be a JSON object, not ") + typeName(root));

  auto schema = root.find("schema");
  if (schema == root.end()) return fatal("schema", std::string("missing; expected \"") + kSequenceSchema + "\"");
  if (!schema->is_string()) return fatal("schema", std::string("must be a string, not ") + typeName(*schema));
  const std::string schemaText = schema->get<std::string>();
  if (schemaText != kSequenceSchema) {
    const std::string family = "shotchain.sequence/";
    if (schemaText.rfind(family, 0) == 0)
      return fatal("schema", "\"" + schemaText + "\" was written by a newer or unknown ShotChain; this build reads \"" +
                                 kSequenceSchema + "\"");
    return fatal("schema", "\"" + schemaText + "\" is not a ShotChain sequence (expected \"" + kSequenceSchema + "\")");
  }

  Diagnostics& out = result.diagnostics;
  Sequence sequence;
  ObjectReader reader(root, "", out);
  reader.find("schema", true);
  readSettings(reader, sequence.settings, out);
  if (const Json* shots = reader.find("shots", true)) {
    if (!shots->is_array()) {
      reader.error("shots", std::string("must be an array, not ") + typeName(*shots));
    } else {
      for (std::size_t i = 0; i < shots->size(); ++i) {
        const Json& value = (*shots)[i];
        if (!value.is_object()) {
          out.push_back(
              {Diagnostic::Severity::Error, shotPath(i), std::string("must be an object, not ") + typeName(value)});
          continue;
        }
        sequence.shots.push_back(readShot(value, i, out));
      }
    }
  }
  sequence.unknown = reader.unknownFields();

  // A field that already has a type error keeps its default value; its rule findings would
  // only repeat the problem, so they are left out. Every other rule is still reported.
  std::set<std::string> reported;
  for (const Diagnostic& d : out) reported.insert(d.path);
  for (Diagnostic& d : validateSequence(sequence, context))
    if (!reported.count(d.path)) out.push_back(std::move(d));
  if (!hasErrors(out)) result.sequence = std::move(sequence);
  return result;
}

LoadResult loadSequenceFile(const std::filesystem::path& path) {
  std::string text;
  if (std::string problem = util::regularFileProblem(path, kMaxDocumentBytes);
      !problem.empty() && problem != "is empty") {
    LoadResult result;
    result.diagnostics.push_back(
        {Diagnostic::Severity::Error, "", problem == "does not exist" ? "no such file" : problem});
    return result;
  }
  try {
    if (!std::filesystem::is_empty(path)) text = util::readRegularFile(path, kMaxDocumentBytes);
  } catch (const std::runtime_error&) {
    LoadResult result;
    result.diagnostics.push_back({Diagnostic::Severity::Error, "", "cannot be read (permissions?)"});
    return result;
  }
  ValidationContext context;
  context.baseFolder = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  return parseSequence(text, context);
}

std::string serializeSequence(const Sequence& sequence) {
  const SequenceSettings& s = sequence.settings;
  Json root = Json::object();
  root["schema"] = kSequenceSchema;
  root["name"] = s.name;
  root["fps"] = s.fps;
  root["model"] = modelToJson(s.model);
  Json sampler = Json::object();
  sampler["steps"] = s.sampler.steps;
  sampler["guidance"] = s.sampler.guidance;
  sampler["shift"] = s.sampler.shift;
  sampler["solver"] = toString(s.sampler.solver);
  if (s.sampler.arStep) sampler["ar_step"] = *s.sampler.arStep;
  if (s.sampler.streamWindow) sampler["stream_window"] = *s.sampler.streamWindow;
  if (s.sampler.cache != StepCacheSettings{}) sampler["cache"] = cacheToJson(s.sampler.cache);
  if (s.sampler.fewStep != FewStepSettings{}) sampler["few_step"] = fewStepToJson(s.sampler.fewStep);
  if (s.sampler.boundary) sampler["boundary"] = *s.sampler.boundary;
  if (s.sampler.guidanceHighNoise) sampler["guidance_high_noise"] = *s.sampler.guidanceHighNoise;
  addUnknown(sampler, s.sampler.unknown);
  root["sampler"] = sampler;
  if (!s.loras.empty()) root["loras"] = lorasToJson(s.loras);
  Json memory = Json::object();
  memory["policy"] = toString(s.policy);
  if (s.experts != ExpertResidency::Auto) memory["experts"] = toString(s.experts);
  memory["budget"] = s.memoryBudgetBytes ? Json(util::formatByteSizeExact(*s.memoryBudgetBytes)) : Json(nullptr);
  memory["allocator_tuning"] = s.allocatorTuning;
  addUnknown(memory, s.memoryUnknown);
  root["memory"] = memory;
  Json shots = Json::array();
  for (const Shot& shot : sequence.shots) shots.push_back(shotToJson(shot));
  root["shots"] = shots;
  addUnknown(root, sequence.unknown);
  return root.dump(2) + "\n";
}

std::string serializeShot(const Shot& shot) { return shotToJson(shot).dump(); }

void saveSequenceFile(const Sequence& sequence, const std::filesystem::path& path) {
  util::writeFileAtomically(path, serializeSequence(sequence));
}

}  // namespace shotchain
