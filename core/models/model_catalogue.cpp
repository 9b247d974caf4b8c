#include "models/model_catalogue.h"

#include <algorithm>
#include <cctype>
#include <climits>
#include <map>
#include <optional>

#include "io/dtype.h"
#include "io/weight_set.h"
#include "models/model_files.h"
#include "models/model_memory.h"
#include "models/model_set_facts.h"

namespace shotchain::models {

namespace {

// `word` as a word of `name` (both lower-case): not inside another word.
bool hasWord(const std::string& name, const char* word) {
  const auto letter = [](char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; };
  const std::size_t size = std::char_traits<char>::length(word);
  for (std::size_t at = name.find(word); at != std::string::npos; at = name.find(word, at + 1))
    if ((at == 0 || !letter(name[at - 1])) && (at + size == name.size() || !letter(name[at + size]))) return true;
  return false;
}

// What the family of `lora` publishes under the file's name (FamilyKnowledge::namedLoras), or "".
std::string namedLora(const LoraSummary& lora, const std::filesystem::path& file) {
  if (!lora.family) return "";
  std::string name = file.filename().string();
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  for (const NamedLora& named : lora.family->namedLoras)
    if (std::all_of(named.words.begin(), named.words.end(),
                    [&](const char* word) { return *word == '\0' || hasWord(name, word); }))
      return named.says;
  return "";
}

}  // namespace

std::string describeLora(const LoraSummary& lora, const std::filesystem::path& file) {
  std::string out = "LoRA, " + std::to_string(lora.layers) + " layers";
  if (lora.rank > 0) out += ", rank " + std::to_string(lora.rank);
  if (!lora.target.empty()) out += ", for a " + lora.target;
  if (const std::string named = namedLora(lora, file); !named.empty()) out += ", " + named;
  return out;
}

CataloguedModel catalogueModelFile(const std::filesystem::path& file) {
  CataloguedModel m;
  m.file = file;
  if (file.native().size() >= PATH_MAX) {
    m.problem = "its path is " + std::to_string(file.native().size()) + " bytes, past the system's limit of " +
                std::to_string(PATH_MAX - 1) + ": nothing at or under it can be opened (move it higher)";
    return m;
  }
  try {
    const io::WeightSet weights = io::WeightSet::open(file);
    m.id = identifyModel(weights);
    m.bytes = weights.totalBytes();
    std::map<std::string, std::uint64_t> byDtype;
    for (const io::WeightInfo& info : weights.weights()) byDtype[io::storedTypeName(info)] += info.bytes;
    for (const auto& [name, bytes] : byDtype)
      if (m.dtype.empty() || bytes > byDtype[m.dtype]) m.dtype = name;
    // A GGUF file by its block types, largest first ("Q4_K+Q6_K"), whatever its unquantised tensors weigh.
    if (weights.quantisation().starts_with("GGUF ")) {
      m.dtype = weights.quantisation().substr(5);
      for (std::size_t comma; (comma = m.dtype.find(", ")) != std::string::npos;) m.dtype.replace(comma, 2, "+");
    }
    if (m.id.role == ModelRole::None) m.lora = summariseLora(weights, ditFamilyKnowledge());
    m.problem = m.id.role != ModelRole::None || !m.id.family.empty() ? m.id.problem
                : m.lora                                             ? (m.lora->target.empty()
                                                                            ? "a LoRA for a model ShotChain does not know (its layer names are no DiT's it reads)"
                                                                            : "")
                                                                     : "not a model of a family ShotChain knows";
  } catch (const std::exception& error) {
    m.problem = error.what();
    std::error_code ignored;  // what the file takes on disk, even when its header cannot be read
    if (const std::uintmax_t size = std::filesystem::file_size(file, ignored); !ignored) m.bytes = size;
  }
  return m;
}

std::string describeModelFile(const std::filesystem::path& file) {
  const CataloguedModel m = catalogueModelFile(file);
  if (m.id.role == ModelRole::None) return "";
  return m.problem.empty() ? m.id.description : m.id.description + ": " + m.problem;
}

std::vector<CataloguedModel> catalogueModelFolders(const std::vector<std::filesystem::path>& folders) {
  std::vector<CataloguedModel> out;
  for (const std::filesystem::path& folder : folders) {
    std::error_code error;
    if (!std::filesystem::is_directory(folder, error)) continue;
    for (const std::filesystem::path& file : weightsFilesIn(folder)) out.push_back(catalogueModelFile(file));
  }
  return out;
}

namespace {

std::string* roleField(ModelSet& set, ModelRole role) {
  switch (role) {
    case ModelRole::Dit:
      return &set.dit;
    case ModelRole::Vae:
      return &set.vae;
    case ModelRole::TextEncoder:
      return &set.textEncoder;
    case ModelRole::ImageEncoder:
      return &set.imageEncoder;
    case ModelRole::PreviewDecoder:  // found in the models folder's vae_approx/, never named by a document
    case ModelRole::None:
      break;
  }
  return nullptr;
}

// `file` relative to `folder` when it lies inside it.
std::optional<std::filesystem::path> inside(const std::filesystem::path& file, const std::filesystem::path& folder) {
  const std::filesystem::path relative =
      std::filesystem::weakly_canonical(file).lexically_relative(std::filesystem::weakly_canonical(folder));
  if (relative.empty() || *relative.begin() == "..") return std::nullopt;
  return relative;
}

}  // namespace

ModelSetUse resolveModelSetUse(const ModelSet& model, const std::filesystem::path& sequenceDirectory) {
  ModelSetUse use;
  try {
    const ModelFiles files = resolveModelFiles(model, sequenceDirectory);
    use.dit = files.dit;
    use.vae = files.vae;
    use.textEncoder = files.textEncoder;
    use.ditHighNoise = files.ditHighNoise;
    try {
      use.ditParameters = ditMemoryModel(files.dit)->parameterCount();
    } catch (const std::exception&) {
      // The DiT's own loader says what is wrong with it; its share of a LoRA is then not shown.
    }
  } catch (const std::exception& error) {
    use.problem = error.what();
  }
  return use;
}

ModelSet chooseModelFile(const ModelSet& current, ModelRole role, const std::filesystem::path& file,
                         const std::vector<std::filesystem::path>& folders) {
  ModelSet next = current;
  if (roleField(next, role) == nullptr) return next;  // no field of the document holds a file of this role
  const auto clearFiles = [&next] {
    next.dit.clear();
    next.vae.clear();
    next.textEncoder.clear();
    next.tokenizer.clear();
  };
  if (inside(file, builtinModelDirectory("demo"))) {
    clearFiles();
    next.folder.clear();
    next.builtin = "demo";
    return next;
  }
  for (const std::filesystem::path& folder : folders) {
    const auto relative = inside(file, folder);
    if (!relative) continue;
    if (next.isBuiltin() || next.folder != folder.string()) clearFiles();
    next.builtin.clear();
    next.folder = folder.string();
    *roleField(next, role) = relative->generic_string();
    return next;
  }
  if (next.isBuiltin()) next.folder.clear();
  next.builtin.clear();
  *roleField(next, role) = std::filesystem::absolute(file).lexically_normal().string();
  return next;
}

ModelSet chooseHighNoiseExpert(const ModelSet& current, const std::filesystem::path& file) {
  ModelSet next = current;
  if (file.empty()) {
    next.ditHighNoise.clear();
    return next;
  }
  const auto relative = next.folder.empty() ? std::nullopt : inside(file, next.folder);
  next.ditHighNoise =
      relative ? relative->generic_string() : std::filesystem::absolute(file).lexically_normal().string();
  return next;
}

std::vector<LoraRef> addSequenceLora(const std::vector<LoraRef>& current, const std::filesystem::path& file,
                                     const std::filesystem::path& sequenceDirectory) {
  std::vector<LoraRef> next = current;
  LoraRef lora;
  const auto relative = sequenceDirectory.empty() ? std::nullopt : inside(file, sequenceDirectory);
  lora.file = relative ? relative->generic_string() : std::filesystem::absolute(file).lexically_normal().string();
  next.push_back(lora);
  return next;
}

}  // namespace shotchain::models
