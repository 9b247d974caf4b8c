#include <cstdio>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/command_specs.h"
#include "cli/output_rule.h"
#include "cli/verbs.h"
#include "interop/comfy_export.h"
#include "interop/comfy_import.h"
#include "models/model_catalogue.h"
#include "models/model_set_facts.h"
#include "resolve/resolve_sequence.h"
#include "sequence/sequence_io.h"
#include "util/atomic_file.h"
#include "util/bounded_file.h"

namespace shotchain::cli {
namespace {

std::filesystem::path besideWith(const std::filesystem::path& file, const std::string& suffix) {
  std::filesystem::path out = file;
  if (out.extension() == ".json") out.replace_extension();
  out += suffix;
  return out;
}

}  // namespace

int runImportComfy(const Args& args) {
  const ParsedOptions options = kImportComfyCommand.parse(args);
  const std::filesystem::path workflow = options.operands().front();
  const std::filesystem::path target =
      options.text("-o") ? std::filesystem::path(*options.text("-o")) : besideWith(workflow, ".sequence.json");
  interop::ComfyImportOptions importOptions;
  if (const auto models = options.text("--models")) importOptions.modelFolders.push_back(*models);
  importOptions.readModelFile = models::describeModelFile;
  importOptions.familyFromName = models::familyFromFileName;
  importOptions.families = models::comfyWordsOfFamilies();
  interop::ComfyImport imported;
  try {
    imported =
        interop::importComfyWorkflow(util::readRegularFile(workflow, 64u << 20), workflow.string(), importOptions);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "shotchain import-comfy: %s\n", error.what());
    return 1;
  }
  if (const std::string refusal = outputRefusal(target, {workflow}, options.flag("--force")); !refusal.empty()) {
    std::fprintf(stderr, "shotchain import-comfy: %s\n", refusal.c_str());
    return 1;
  }
  imported.sequence.settings.name = workflow.stem().string();
  const std::filesystem::path folder = target.parent_path().empty() ? std::filesystem::path(".") : target.parent_path();
  const Diagnostics problems = resolve::validate(imported.sequence, {folder});
  // Written even when it does not validate: the user fixes the document, not the workflow.
  saveSequenceFile(imported.sequence, target);
  const int status = hasErrors(problems) ? 3 : 0;
  if (options.flag("--json")) {
    nlohmann::json unmapped = nlohmann::json::array(), shots = nlohmann::json::array();
    for (const interop::UnmappedNode& n : imported.unmapped)
      unmapped.push_back({{"id", n.id}, {"type", n.type}, {"why", n.why}});
    for (const Shot& s : imported.sequence.shots)
      shots.push_back(
          {{"id", s.id}, {"prompt", s.prompt}, {"frames", s.frames}, {"continuity", toString(s.continuity.mode)}});
    const nlohmann::json out = {{"sequence", target.string()},
                                {"format", imported.format == interop::ComfyFormat::Ui ? "ui" : "api"},
                                {"shots", shots},
                                {"unmapped", unmapped},
                                {"notes", imported.notes},
                                {"models", imported.models},
                                {"left_out", imported.problems},
                                {"problems", formatAll(problems)}};
    std::printf("%s\n", out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    return status;
  }
  std::printf("%s: %s format, %zu shots of %s → %s\n", workflow.string().c_str(),
              imported.format == interop::ComfyFormat::Ui ? "UI" : "API", imported.sequence.shots.size(),
              imported.models.c_str(), target.string().c_str());
  for (const std::string& problem : imported.problems) std::printf("  left out: %s\n", problem.c_str());
  for (const Shot& s : imported.sequence.shots)
    std::printf("  %-8s %3d frames %dx%d  seed %llu  %-14s \"%s\"\n", s.id.c_str(), s.frames, s.width, s.height,
                static_cast<unsigned long long>(s.seed), toString(s.continuity.mode), s.prompt.c_str());
  for (const interop::UnmappedNode& n : imported.unmapped)
    std::printf("  not mapped: node %s (%s): %s\n", n.id.c_str(), n.type.c_str(), n.why.c_str());
  for (const std::string& note : imported.notes) std::printf("  note: %s\n", note.c_str());
  if (!problems.empty()) std::fprintf(status ? stderr : stdout, "%s", formatAll(problems, target.string()).c_str());
  if (status)
    std::fprintf(
        stderr,
        "shotchain import-comfy: %s was written but does not validate; fix the problems above before rendering\n",
        target.string().c_str());
  return status;
}

int runExportComfy(const Args& args) {
  const ParsedOptions options = kExportComfyCommand.parse(args);
  const std::filesystem::path file = options.operands().front();
  const LoadResult loaded = loadSequenceFile(file);
  if (!loaded.ok()) {
    std::fprintf(stderr, "%s", formatAll(loaded.diagnostics, file.string()).c_str());
    return 3;
  }
  const std::filesystem::path dir =
      options.text("-o") ? std::filesystem::path(*options.text("-o")) : besideWith(file, ".comfy");
  std::error_code error;
  if (std::filesystem::exists(dir, error) && !std::filesystem::is_directory(dir, error)) {
    std::fprintf(stderr, "shotchain export-comfy: %s is not a folder; give -o a folder for the workflows\n",
                 dir.string().c_str());
    return 1;
  }
  std::filesystem::create_directories(dir, error);
  if (error) {
    std::fprintf(stderr, "shotchain export-comfy: %s: cannot make the folder: %s\n", dir.string().c_str(),
                 error.message().c_str());
    return 1;
  }
  int index = 0;
  // Resolved against the document's model set when its files are here (another machine's paths: the default family).
  const resolve::ResolvedSequence resolved =
      resolve::resolveSequence(*loaded.sequence, {std::filesystem::absolute(file).parent_path()});
  for (const interop::ComfyShotWorkflow& w : interop::exportComfyWorkflows(*loaded.sequence, resolved)) {
    char name[32];
    std::snprintf(name, sizeof name, "%02d-", ++index);
    const std::filesystem::path path = dir / (name + w.shotId + ".json");
    util::writeFileAtomically(path, w.json + "\n");
    std::printf("%s\n", path.string().c_str());
    for (const std::string& note : w.notes) std::printf("  note: %s\n", note.c_str());
  }
  return 0;
}

}  // namespace shotchain::cli
