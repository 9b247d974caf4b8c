#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <c10/core/Device.h>

#include "models/model_family.h"
#include "models/model_memory.h"
#include "models/model_set_facts.h"

namespace shotchain::io {
class WeightSet;
}

namespace shotchain::models {

class VideoDiffusionModel;
class VideoVae;
class TextEncoder;
class ImageEncoder;
class PreviewDecoder;

// What `shotchain inspect` prints of a file a family recognises: lines of "name: value", and the
// problems that keep it from loading (empty: loadable).
struct FamilyInspection {
  std::vector<std::pair<std::string, std::string>> lines;
  std::vector<std::string> problems;
};

// One model family for one role: everything detection, loading, the memory model and `inspect`
// need of it. A family lives in its own folder under core/models/ and contributes its rows to
// modelFamilies(); nothing else in the product names its classes. Only the entries of its role
// are set (a DiT row has loadDit and ditMemory, and so on).
struct ModelFamilyRow {
  const char* name;  // "wan_dit", "wan_vae", "umt5"
  ModelRole role;
  // From the header alone: nullopt when the file is not of this family.
  std::optional<IdentifiedModel> (*identify)(const io::WeightSet& weights);
  // fp8 matmul weights stay as stored (one byte each), dequantised layer by layer at each call.
  std::unique_ptr<VideoDiffusionModel> (*loadDit)(const io::WeightSet& weights, c10::Device device) = nullptr;
  std::shared_ptr<const DitMemoryModel> (*ditMemory)(const io::WeightSet& weights) = nullptr;
  std::unique_ptr<VideoVae> (*loadVae)(const io::WeightSet& weights, c10::Device device) = nullptr;
  std::shared_ptr<const VaeMemoryModel> (*vaeMemory)(const io::WeightSet& weights) = nullptr;
  // `maxTokens`: the DiT's context length (tokens per prompt, EOS included).
  std::unique_ptr<TextEncoder> (*loadTextEncoder)(const std::filesystem::path& file,
                                                  const std::filesystem::path& tokenizer, c10::Device device,
                                                  std::size_t maxTokens) = nullptr;
  EncoderMemory (*textEncoderMemory)(const io::WeightSet& weights) = nullptr;
  std::unique_ptr<ImageEncoder> (*loadImageEncoder)(const io::WeightSet& weights, c10::Device device) = nullptr;
  EncoderMemory (*imageEncoderMemory)(const io::WeightSet& weights) = nullptr;
  std::unique_ptr<PreviewDecoder> (*loadPreviewDecoder)(const io::WeightSet& weights, c10::Device device) = nullptr;
  std::int64_t (*previewLatentChannels)(const io::WeightSet& weights) = nullptr;
  FamilyInspection (*inspect)(const io::WeightSet& weights) = nullptr;
  // What the product knows of the family beyond its classes (family_knowledge.h).
  const FamilyKnowledge* knowledge = nullptr;
  // From the header alone: what the resolver needs of a file of the row's role.
  DitFacts (*ditFacts)(const io::WeightSet& weights) = nullptr;
  VaeFacts (*vaeFacts)(const io::WeightSet& weights) = nullptr;
  TextEncoderFacts (*textEncoderFacts)(const io::WeightSet& weights) = nullptr;
  // The family a file name (lower case, '-' as '_') suggests, in words; "" when it says nothing of this family.
  std::string (*familyFromFileName)(const std::string& normalisedName) = nullptr;
  // Set on the registry's default family only: the facts a sequence is checked against while its files cannot be read.
  ModelSetFacts (*assumed)() = nullptr;
  // The tensors the family's published GGUF files keep unquantised (whatever type the rest is written in); null:
  // only the generic rule (models/gguf_tensor_types.h).
  bool (*ggufKeepsUnquantised)(const std::string& name) = nullptr;
  // general.architecture of the family's GGUF files ("wan"); null: none is written.
  const char* ggufArchitecture = nullptr;
};

// Every family ShotChain knows, in the order detection tries them.
std::span<const ModelFamilyRow> modelFamilies();

// The row that recognises the file, with what it says of it; {nullptr, {}} when none does.
std::pair<const ModelFamilyRow*, IdentifiedModel> identifyFamily(const io::WeightSet& weights);

// The row of the family a file that must serve as `role` belongs to. Throws std::runtime_error naming
// the file when no family recognises it as that role, or (`usable`) when the family reports a problem.
const ModelFamilyRow& familyFor(const io::WeightSet& weights, ModelRole role, bool usable);

}  // namespace shotchain::models
