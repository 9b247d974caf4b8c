// A shot's LoRAs (docs/lora.md): its own list, else the sequence's, each file's header read once while it keeps
// its size and modification time (the elements it patches, for the memory plan; the shot key reads its bytes).
#include <map>
#include <mutex>

#include "models/lora/lora_file.h"
#include "resolve/shot_resolution.h"
#include "sequence/validation.h"
#include "util/bounded_file.h"

namespace shotchain::resolve {
namespace {

struct LoraHeader {
  std::uintmax_t size = 0;
  std::filesystem::file_time_type modified;
  std::uint64_t patchedElements = 0;
  std::string problem;
};

std::mutex headersMutex;
std::map<std::filesystem::path, LoraHeader> headers;

LoraHeader headerOf(const std::filesystem::path& path) {
  std::error_code error;
  LoraHeader header;
  header.size = std::filesystem::file_size(path, error);
  header.modified = std::filesystem::last_write_time(path, error);
  {
    const std::lock_guard<std::mutex> lock(headersMutex);
    if (const auto found = headers.find(path);
        found != headers.end() && found->second.size == header.size && found->second.modified == header.modified)
      return found->second;
  }
  try {
    header.patchedElements = models::loraPatchedElements(path);
  } catch (const std::exception& e) {
    header.problem = e.what();
  }
  const std::lock_guard<std::mutex> lock(headersMutex);
  headers[path] = header;
  return header;
}

LoraExpert expertOf(const std::string& expert) {
  return expert == "high" ? LoraExpert::High : expert == "low" ? LoraExpert::Low : LoraExpert::Both;
}

}  // namespace

void resolveLoras(const Sequence& sequence, ResolvedShot& shot, const ResolvedSequence&, const ResolveContext& context,
                  Problems& problems) {
  const Shot& document = sequence.shots[shot.index];
  shot.ownLoras = document.loras.has_value();
  const std::vector<LoraRef>& refs = shot.ownLoras ? *document.loras : sequence.settings.loras;
  const std::string list = shot.ownLoras ? shotPath(shot.index, "loras") : std::string("loras");
  for (std::size_t k = 0; k < refs.size(); ++k) {
    ResolvedLora& lora = shot.loras.emplace_back();
    lora.field = list + "[" + std::to_string(k) + "]";
    lora.written = refs[k];
    lora.file = refs[k].file;
    lora.path = documentFile(context, refs[k].file);
    lora.strength = refs[k].strength;
    lora.expert = expertOf(refs[k].expert);
    if (refs[k].file.empty()) continue;  // the document's rules name it
    std::error_code error;
    if (!std::filesystem::exists(lora.path, error)) {
      if (document.enabled) problems.missing(context, lora.field + ".file", lora.path.string() + ": does not exist");
      continue;
    }
    if (const std::string problem = util::regularFileProblem(lora.path, UINT64_MAX); !problem.empty()) {
      if (document.enabled) problems.error(lora.field + ".file", lora.path.string() + ": " + problem);
      continue;
    }
    const LoraHeader header = headerOf(lora.path);
    lora.present = header.problem.empty();
    lora.patchedElements = header.patchedElements;
    if (!lora.present && document.enabled) problems.error(lora.field + ".file", header.problem);
  }
}

}  // namespace shotchain::resolve
