#include "render/shot_key.h"

#include <array>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <map>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "io/mapped_file.h"
#include "io/pt_checkpoint.h"
#include "io/pt_zip.h"
#include "render/shot_step_cache.h"
#include "sampling/cache_calibration.h"
#include "sequence/continuity_modes.h"
#include "util/bounded_file.h"
#include "util/image_file_check.h"

namespace shotchain::render {
namespace {

std::uint64_t fnv1a(std::string_view bytes, std::uint64_t hash) {
  for (const unsigned char c : bytes) {
    hash ^= c;
    hash *= 0x100000001b3ull;
  }
  return hash;
}

std::string readAll(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path.string() + ": cannot be read");
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

std::string digestHex(std::string_view bytes) {
  const std::uint64_t a = fnv1a(bytes, 0xcbf29ce484222325ull);
  const std::uint64_t b = fnv1a(bytes, a ^ 0x9e3779b97f4a7c15ull);
  std::array<char, 33> text{};
  std::snprintf(text.data(), text.size(), "%016llx%016llx", static_cast<unsigned long long>(a),
                static_cast<unsigned long long>(b));
  return text.data();
}

namespace {

// A checkpoint's pickle names every tensor, its storage, shape and stride, as a safetensors header does.
std::string checkpointFingerprint(const std::filesystem::path& path) {
  const auto mapping = io::MappedFile::map(path);
  const auto bytes = mapping->bytes();
  for (const auto& [name, entry] : io::readZipDirectory(path.filename().string(), bytes))
    if (name.ends_with("/data.pkl") && name.find('/') == name.size() - 9) {
      const std::string_view pickle(reinterpret_cast<const char*>(bytes.data() + entry.offset), entry.size);
      return digestHex(std::string(pickle) + ":" + std::to_string(bytes.size()));
    }
  return digestHex(readAll(path));
}

// An image a shot reads (relative to the sequence's folder): its bytes' digest, or "missing:<name>".
std::string imageDigest(const std::filesystem::path& sequenceDirectory, const std::string& file) {
  const std::filesystem::path image = sequenceDirectory / file;
  std::error_code error;
  return std::filesystem::exists(image, error) ? digestHex(readRegularFile(image, kMaxImageFileBytes)) : "missing:" + file;
}

std::string calibrationDigest(const std::filesystem::path& sequenceDirectory, const std::string& file) {
  const std::filesystem::path path = std::filesystem::path(file).is_absolute() ? std::filesystem::path(file) : sequenceDirectory / file;
  std::error_code error;
  return std::filesystem::exists(path, error) ? digestHex(readRegularFile(path, sampling::kMaxCalibrationFileBytes)) : "missing:" + file;
}

}  // namespace

std::string fileFingerprint(const std::filesystem::path& path) {
  if (std::string problem = regularFileProblem(path, UINT64_MAX); !problem.empty())
    throw std::runtime_error(path.string() + ": " + problem);
  if (io::isPtCheckpointPath(path)) return checkpointFingerprint(path);
  if (path.extension() != ".safetensors") return digestHex(readAll(path));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path.string() + ": cannot be read");
  std::array<unsigned char, 8> lengthBytes{};
  in.read(reinterpret_cast<char*>(lengthBytes.data()), lengthBytes.size());
  std::uint64_t headerLength = 0;
  for (int i = 7; i >= 0; --i) headerLength = (headerLength << 8) | lengthBytes[static_cast<std::size_t>(i)];
  std::error_code error;
  const std::uintmax_t size = std::filesystem::file_size(path, error);
  if (!in || error || headerLength > size) throw std::runtime_error(path.string() + ": not a safetensors file");
  std::string header(static_cast<std::size_t>(headerLength), '\0');
  in.read(header.data(), static_cast<std::streamsize>(header.size()));
  if (!in) throw std::runtime_error(path.string() + ": the header is truncated");
  return digestHex(header + ":" + std::to_string(size));
}

std::string modelFingerprint(const models::ModelFiles& files,
                             const std::function<std::string(const std::filesystem::path&)>& ofFile) {
  std::string all;
  for (const auto* path : {&files.dit, &files.vae, &files.textEncoder, &files.tokenizer, &files.latentRgb})
    all += path->empty() ? std::string("-") : ofFile(*path);
  if (!files.ditHighNoise.empty()) all += "high-noise expert " + ofFile(files.ditHighNoise);
  return digestHex(all);
}

std::vector<std::string> shotKeys(const Sequence& sequence, const std::string& modelFingerprint,
                                  const std::filesystem::path& sequenceDirectory) {
  const SamplerDefaults& defaults = sequence.settings.sampler;
  std::vector<std::string> keys;
  keys.reserve(sequence.shots.size());
  std::map<std::string, std::string> lastKeyByTag;
  std::string firstKey;
  for (std::size_t i = 0; i < sequence.shots.size(); ++i) {
    const Shot& shot = sequence.shots[i];
    const Continuity& c = shot.continuity;
    nlohmann::ordered_json j;
    j["model"] = modelFingerprint;
    j["prompt"] = shot.prompt;
    j["negative"] = shot.negativePrompt;
    j["size"] = {shot.width, shot.height, shot.frames};
    j["seed"] = shot.seed;
    const FewStepSettings& fewStep = effectiveFewStep(shot, defaults);
    if (fewStep.on()) j["few_step"] = {fewStep.steps, toString(fewStep.update)};
    else j["steps"] = shot.steps.value_or(defaults.steps);
    j["guidance"] = shot.guidance.value_or(defaults.guidance);
    if (!sequence.settings.model.ditHighNoise.empty()) {
      const double guidance = shot.guidance.value_or(defaults.guidance);
      using Json = nlohmann::ordered_json;
      j["experts"] = {defaults.boundary ? Json(*defaults.boundary) : Json("default"),
                      shot.guidanceHighNoise.value_or(defaults.guidanceHighNoise.value_or(guidance)),
                      shot.switchStep ? Json(*shot.switchStep) : Json(nullptr)};
    }
    j["shift"] = shot.shift.value_or(defaults.shift);
    if (!fewStep.on()) j["solver"] = toString(defaults.solver);
    j["mode"] = toString(c.mode);
    j["enabled"] = shot.enabled;
    const ContinuityModeTraits& mode = traitsOf(c.mode);
    if (mode.readsOverlap) j["overlap"] = c.overlapLatents;
    if (mode.decodesAfterPredecessor) j["decode"] = "after_predecessor";  // frames decoded before it differ
    if (mode.readsPrefix && c.prefixFrames.value_or(1) != 1) j["prefix"] = *c.prefixFrames;
    if (mode.handoff && c.conditionNoise.value_or(0) != 0) j["condition_noise"] = *c.conditionNoise;
    if (defaults.arStep.value_or(0) != 0 && !fewStep.on()) j["ar_step"] = *defaults.arStep;
    if (mode.sampling == ShotSampling::KvStream) {
      j["stream_window"] = defaults.streamWindow.value_or(kDefaultStreamWindow);
      j["recache"] = recaches(c);
    }
    if (mode.readsBlend) {
      j["blend"] = c.blendRatio;
      if (!c.fallbackImage.empty()) j["fallback"] = imageDigest(sequenceDirectory, c.fallbackImage);
    }
    if (!shot.startImage.empty()) j["start_image"] = imageDigest(sequenceDirectory, shot.startImage);
    if (const std::vector<LoraRef>& loras = shot.loras ? *shot.loras : sequence.settings.loras; !loras.empty()) {
      nlohmann::ordered_json& list = j["loras"] = nlohmann::ordered_json::array();
      for (const LoraRef& lora : loras) {
        const std::filesystem::path file(lora.file);
        const std::filesystem::path path = file.is_absolute() ? file : sequenceDirectory / file;
        std::error_code error;
        list.push_back({std::filesystem::exists(path, error) ? fileFingerprint(path) : "missing:" + lora.file, lora.strength});
      }
    }
    if (const StepCacheSettings& cache = effectiveCache(shot, defaults);
        cache.policy != StepCachePolicy::Off && mode.sampling != ShotSampling::KvStream && !fewStep.on()) {
      j["cache"] = {toString(cache.policy), effectiveThreshold(cache)};
      if (!cache.calibration.empty()) j["cache"].push_back(calibrationDigest(sequenceDirectory, cache.calibration));
    }
    if (const auto before = lastKeyByTag.find(c.tag); mode.handoff && before != lastKeyByTag.end())
      j["after"] = before->second;
    if (c.anchorColour && !firstKey.empty()) j["anchor"] = firstKey;
    keys.push_back(digestHex(j.dump()));
    if (shot.enabled) {
      lastKeyByTag[c.tag] = keys.back();
      if (firstKey.empty()) firstKey = keys.back();
    }
  }
  return keys;
}

}  // namespace shotchain::render
