#include "models/model_set_facts.h"

#include <algorithm>
#include <cctype>
#include <stdexcept>

#include "io/weight_set.h"
#include "models/model_registry.h"

namespace shotchain::models {

const PublishedCacheTable* publishedCacheTable(const FamilyKnowledge& knowledge, const std::string& variant) {
  if (variant.empty()) return nullptr;
  for (const PublishedCacheTable& table : knowledge.cacheTables)
    if (variant == table.variant) return &table;
  return nullptr;
}

ModelSetFacts readModelSetFacts(const ModelFiles& files) {
  ModelSetFacts facts;
  facts.files = files;
  const auto read = [](const std::filesystem::path& file, ModelRole role, const char* field, auto&& fill) {
    std::optional<io::WeightSet> weights;
    try {
      weights.emplace(io::WeightSet::open(file));
    } catch (const std::exception& error) {
      throw std::runtime_error(std::string(field) + ": " + error.what());
    }
    const auto [row, id] = identifyFamily(*weights);
    if (!row || id.role != role)
      throw std::runtime_error(std::string(field) + ": " + file.string() + " is not a " + roleName(role) +
                               " of a model family ShotChain knows" +
                               (id.role == ModelRole::None ? "" : std::string(" (it is a ") + roleName(id.role) + ")"));
    if (!id.problem.empty()) throw std::runtime_error(std::string(field) + ": " + file.string() + ": " + id.problem);
    fill(*row, id, *weights);
  };
  const auto dit = [&](const std::filesystem::path& file, const char* field) {
    DitFacts out;
    read(file, ModelRole::Dit, field,
         [&](const ModelFamilyRow& row, const IdentifiedModel&, const io::WeightSet& weights) {
           if (!row.ditFacts) throw std::logic_error(std::string(row.name) + ": a DiT row without ditFacts");
           out = row.ditFacts(weights);
           out.family = row.name;
           out.knowledge = row.knowledge;
         });
    out.file = file;
    return out;
  };
  facts.dit = dit(files.dit, "model.dit");
  if (!files.ditHighNoise.empty()) facts.ditHighNoise = dit(files.ditHighNoise, "model.dit_high_noise");
  read(files.vae, ModelRole::Vae, "model.vae",
       [&](const ModelFamilyRow& row, const IdentifiedModel& id, const io::WeightSet& weights) {
         if (!row.vaeFacts) throw std::logic_error(std::string(row.name) + ": a VAE row without vaeFacts");
         facts.vae = row.vaeFacts(weights);
         facts.vae.family = row.name;
         facts.vae.description = id.description;
         facts.vae.knowledge = row.knowledge;
       });
  facts.vae.file = files.vae;
  read(files.textEncoder, ModelRole::TextEncoder, "model.text_encoder",
       [&](const ModelFamilyRow& row, const IdentifiedModel& id, const io::WeightSet& weights) {
         if (row.textEncoderFacts) facts.textEncoder = row.textEncoderFacts(weights);
         facts.textEncoder.family = row.name;
         facts.textEncoder.description = id.description;
         facts.textEncoder.knowledge = row.knowledge;
       });
  facts.textEncoder.file = files.textEncoder;
  facts.textEncoder.tokenizer = files.tokenizer;
  if (!files.imageEncoder.empty())
    read(files.imageEncoder, ModelRole::ImageEncoder, "model.image_encoder",
         [&](const ModelFamilyRow&, const IdentifiedModel& id, const io::WeightSet&) {
           facts.imageEncoder = id.description;
         });
  return facts;
}

std::string familyFromFileName(const std::string& fileName) {
  std::string n = fileName;
  std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  std::replace(n.begin(), n.end(), '-', '_');
  for (const ModelFamilyRow& row : modelFamilies())
    if (row.familyFromFileName)
      if (std::string family = row.familyFromFileName(n); !family.empty()) return family;
  return "";
}

std::vector<const FamilyKnowledge*> ditFamilyKnowledge() {
  std::vector<const FamilyKnowledge*> out;
  for (const ModelFamilyRow& row : modelFamilies())
    if (row.role == ModelRole::Dit && row.knowledge) out.push_back(row.knowledge);
  return out;
}

const FamilyKnowledge* familyKnowledge(const std::string& family) {
  for (const ModelFamilyRow& row : modelFamilies())
    if (family == row.name) return row.knowledge;
  return nullptr;
}

std::vector<ComfyWords> comfyWordsOfFamilies() {
  std::vector<ComfyWords> words;
  for (const ModelFamilyRow& row : modelFamilies())
    if (row.knowledge) words.push_back(row.knowledge->comfy);
  return words;
}

ModelSetFacts assumedModelSetFacts() {
  const ModelFamilyRow* family = nullptr;
  const ModelFamilyRow* text = nullptr;
  for (const ModelFamilyRow& row : modelFamilies()) {
    if (row.assumed && !family) family = &row;
    if (row.role == ModelRole::TextEncoder && !text) text = &row;
  }
  if (!family || !text) throw std::logic_error("the registry names no default family");
  ModelSetFacts facts = family->assumed();
  facts.textEncoder.family = text->name;
  facts.textEncoder.knowledge = text->knowledge;
  facts.textEncoder.embeddedTokenizer = true;
  return facts;
}

}  // namespace shotchain::models
