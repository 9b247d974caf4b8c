#include "io/pt_archive.h"

#include <set>

#include "io/pt_pickle.h"
#include "io/safetensors_header.h"

namespace shotchain::io {
namespace {

using Kind = PickleNode::Kind;

constexpr std::size_t kMaxNesting = 4;
// Stripped while every name of a state dict carries one (DDP's module., torch.compile's _orig_mod.,
// the training wrapper's model.), so the names are the ones the model loaders expect.
constexpr std::string_view kWrapperPrefixes[] = {"model.diffusion_model.", "module.", "_orig_mod.", "model."};

[[noreturn]] void failArchive(std::string_view label, const std::string& what) {
  throw SafetensorsError(std::string(label) + ": " + what);
}

bool hasMagic(std::span<const std::byte> file, std::string_view magic) {
  if (file.size() < magic.size()) return false;
  for (std::size_t i = 0; i < magic.size(); ++i)
    if (static_cast<char>(file[i]) != magic[i]) return false;
  return true;
}

std::string_view entryText(std::span<const std::byte> file, const ZipEntry& entry) {
  return {reinterpret_cast<const char*>(file.data() + entry.offset), static_cast<std::size_t>(entry.size)};
}

std::string describeValue(const PickleObjects& objects, std::size_t index) {
  const PickleNode& node = objects.nodes[index];
  switch (node.kind) {
    case Kind::None:
      return "None";
    case Kind::Bool:
      return node.integer != 0 ? "True" : "False";
    case Kind::Int:
      return "int " + std::to_string(node.integer);
    case Kind::Float:
      return "float " + std::to_string(node.real);
    case Kind::String:
      return "str \"" + (node.text.size() > 40 ? node.text.substr(0, 37) + "..." : node.text) + "\"";
    case Kind::Tuple:
      return "tuple of " + std::to_string(node.items.size());
    case Kind::List:
      return "list of " + std::to_string(node.items.size());
    case Kind::Dict:
      return "dict of " + std::to_string(node.items.size() / 2);
    default:
      return "object";
  }
}

class StateDictFinder {
 public:
  StateDictFinder(std::string_view label, const PickleObjects& objects, PtArchive& archive)
      : label_(label), objects_(objects), archive_(archive) {}

  void walk(std::size_t index, const std::string& path, std::size_t depth) {
    if (!visited_.insert(index).second) return;  // a dict met twice (shared or cyclic) is read once
    const PickleNode& dict = objects_.nodes[index];
    PtStateDict found{path, {}, {}};
    std::set<std::string> names;
    for (std::size_t i = 0; i + 1 < dict.items.size(); i += 2) {
      const PickleNode& key = objects_.nodes[dict.items[i]];
      const std::size_t value = dict.items[i + 1];
      if (key.kind != Kind::String) continue;
      const PickleNode& node = objects_.nodes[value];
      if (node.kind == Kind::Tensor) {
        if (!names.insert(key.text).second)
          failArchive(label_, where(path) + "tensor \"" + key.text + "\" appears twice");
        found.tensors.push_back(record(key.text, node, path));
      } else if (node.kind == Kind::Dict && depth < kMaxNesting) {
        walk(value, path.empty() ? key.text : path + "/" + key.text, depth + 1);
      } else if (depth == 0) {
        archive_.values.emplace_back(key.text, describeValue(objects_, value));
      }
    }
    if (!found.tensors.empty()) {
      stripWrapperPrefixes(found);
      archive_.stateDicts.push_back(std::move(found));
    }
  }

 private:
  static std::string where(const std::string& path) { return path.empty() ? "" : "\"" + path + "\": "; }

  PtTensorRecord record(const std::string& name, const PickleNode& tensor, const std::string& path) {
    const PickleNode& storage = objects_.nodes[tensor.items.front()];
    const std::string entryName = archive_.prefix + "/data/" + storage.text;
    const auto found = entries_->find(entryName);
    if (found == entries_->end())
      failArchive(label_, where(path) + "tensor \"" + name + "\": its storage " + entryName + " is not in the archive");
    const std::uint64_t need = static_cast<std::uint64_t>(storage.integer) * (dtypeBits(storage.dtype) / 8);
    if (found->second.size < need)
      failArchive(label_, where(path) + "tensor \"" + name + "\": storage " + entryName + " holds " +
                              std::to_string(found->second.size) + " bytes, its " + std::to_string(storage.integer) +
                              " " + std::string(dtypeName(storage.dtype)) + " elements need " + std::to_string(need));
    const auto [it, inserted] =
        archive_.storages.emplace(storage.text, PtStorage{found->second, storage.dtype, storage.integer});
    if (!inserted && (it->second.dtype != storage.dtype || it->second.elements != storage.integer))
      failArchive(label_,
                  where(path) + "tensor \"" + name + "\": storage " + entryName + " is read with two dtypes or sizes");
    return PtTensorRecord{name, tensor.dtype, storage.text, tensor.offset, tensor.sizes, tensor.strides};
  }

  static void stripWrapperPrefixes(PtStateDict& dict) {
    for (bool stripped = true; stripped;) {
      stripped = false;
      for (const std::string_view prefix : kWrapperPrefixes) {
        bool all = true;
        for (const PtTensorRecord& tensor : dict.tensors)
          all = all && tensor.name.size() > prefix.size() && tensor.name.starts_with(prefix);
        if (!all) continue;
        for (PtTensorRecord& tensor : dict.tensors) tensor.name.erase(0, prefix.size());
        dict.strippedPrefix += prefix;
        stripped = true;
        break;
      }
    }
  }

 public:
  const std::map<std::string, ZipEntry, std::less<>>* entries_ = nullptr;

 private:
  std::string_view label_;
  const PickleObjects& objects_;
  PtArchive& archive_;
  std::set<std::size_t> visited_;
};

}  // namespace

std::uint64_t PtTensorRecord::elements() const {
  std::uint64_t n = 1;
  for (const std::int64_t size : sizes) n *= static_cast<std::uint64_t>(size);
  return n;
}

PtArchive parsePtArchive(std::string_view label, std::span<const std::byte> file) {
  if (!file.empty() && static_cast<std::uint8_t>(file[0]) == 0x80)
    failArchive(label,
                "a legacy (non-zip) PyTorch pickle; only the zip format of torch.save (PyTorch 1.6 and later) is read. "
                "Re-save it once in Python: torch.save(torch.load(f, weights_only=True), out) (shotchain convert "
                "cannot read this format either)");
  if (!hasMagic(file, "PK\x03\x04")) failArchive(label, "not a PyTorch zip checkpoint (no zip signature)");
  const auto entries = readZipDirectory(label, file);

  PtArchive archive;
  const ZipEntry* pickle = nullptr;
  for (const auto& [name, entry] : entries) {
    const auto slash = name.find('/');
    if (slash == std::string::npos || name.substr(slash) != "/data.pkl") continue;
    if (pickle != nullptr)
      failArchive(label, "two data.pkl entries (" + archive.prefix + "/data.pkl and " + name + ")");
    archive.prefix = name.substr(0, slash);
    pickle = &entry;
  }
  if (pickle == nullptr) failArchive(label, "no <prefix>/data.pkl entry: not a torch.save checkpoint");
  const auto byteOrder = entries.find(archive.prefix + "/byteorder");
  if (byteOrder != entries.end() && entryText(file, byteOrder->second) != "little")
    failArchive(label, archive.prefix + "/byteorder: only little-endian checkpoints are read");

  const PickleObjects objects = unpickleRestricted(std::string(label) + ": " + archive.prefix + "/data.pkl",
                                                   file.subspan(pickle->offset, pickle->size));
  if (objects.nodes[objects.root].kind != Kind::Dict)
    failArchive(label, "data.pkl holds " + describeValue(objects, objects.root) + ", not a dict of tensors");
  StateDictFinder finder(label, objects, archive);
  finder.entries_ = &entries;
  finder.walk(objects.root, "", 0);
  if (archive.stateDicts.empty()) failArchive(label, "holds no dict of tensors");
  return archive;
}

const PtStateDict& choosePtStateDict(std::string_view label, const PtArchive& archive, std::string_view key) {
  std::string candidates;
  for (const PtStateDict& dict : archive.stateDicts)
    candidates +=
        (candidates.empty() ? "" : ", ") + (dict.key.empty() ? std::string("(top level)") : "\"" + dict.key + "\"");
  const auto find = [&](std::string_view wanted) -> const PtStateDict* {
    for (const PtStateDict& dict : archive.stateDicts)
      if (dict.key == wanted) return &dict;
    return nullptr;
  };
  if (!key.empty()) {
    if (const PtStateDict* dict = find(key)) return *dict;
    failArchive(label, "no state dict \"" + std::string(key) + "\"; the checkpoint holds " + candidates);
  }
  if (archive.stateDicts.size() == 1) return archive.stateDicts.front();
  if (const PtStateDict* top = find("")) return *top;
  for (const std::string_view preferred : kPreferredStateDicts)
    if (const PtStateDict* dict = find(preferred)) return *dict;
  failArchive(label, "holds several state dicts (" + candidates + "); choose one by its key (--key)");
}

}  // namespace shotchain::io
