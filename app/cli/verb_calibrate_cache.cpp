// `shotchain calibrate-cache`: what each sampling step of a model changes, measured on a sequence's
// shots, written to the file `sampler.cache.calibration` names (docs/step-cache.md).
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "cli/command_specs.h"
#include "cli/output_rule.h"
#include "cli/render_progress.h"
#include "cli/verbs.h"
#include "models/model_files.h"
#include "render/renderer.h"
#include "sampling/cache_calibration.h"
#include "sequence/sequence_io.h"
#include "util/atomic_file.h"

namespace shotchain::cli {

int runCalibrateCache(const Args& args) {
  const ParsedOptions parsed = kCalibrateCacheCommand.parse(args);
  const std::filesystem::path file = parsed.operands().front();
  const LoadResult loaded = loadSequenceFile(file);
  for (const Diagnostic& d : loaded.diagnostics) std::fprintf(stderr, "%s\n", d.format(file.string()).c_str());
  if (!loaded.ok()) return 3;
  const Sequence& sequence = *loaded.sequence;

  render::RenderOptions options;
  options.sequenceDirectory = std::filesystem::absolute(file).parent_path();
  options.outputDirectory = std::filesystem::temp_directory_path() / "shotchain-calibrate-cache";
  options.device = parsed.text("--device").value_or("cpu");
  options.previews = false;
  options.writesFiles = false;
  options.framesOnDisk = false;
  options.overlapDecode = false;
  options.calibrateCache = true;
  if (const std::optional<ShotRange> range = parsed.range("--shots")) {
    options.firstShot = range->first - 1;
    options.lastShot = range->last - 1;
  }
  const std::filesystem::path target = parsed.text("--out")
                                           ? std::filesystem::path(*parsed.text("--out"))
                                           : options.sequenceDirectory / (file.stem().string() + ".cache.json");

  // Before any sampling: the calibration never replaces the sequence, a model file it reads, or (without --force)
  // any existing file.
  std::vector<std::filesystem::path> inputs = {file};
  try {
    const models::ModelFiles files = models::resolveModelFiles(sequence.settings.model, options.sequenceDirectory);
    inputs.insert(inputs.end(),
                  {files.dit, files.ditHighNoise, files.vae, files.textEncoder, files.tokenizer, files.imageEncoder});
  } catch (const std::exception&) {
    // the render says what is wrong with the model set
  }
  if (const std::string refusal = outputRefusal(target, inputs, parsed.flag("--force")); !refusal.empty()) {
    std::fprintf(stderr, "shotchain calibrate-cache: --out: %s\n", refusal.c_str());
    return 4;
  }
  RenderProgress progress(stderr, isatty(fileno(stderr)) != 0, false);
  render::Renderer renderer;
  render::RenderSummary summary;
  try {
    summary = renderer.render(sequence, options, progress);
  } catch (const render::RenderError& error) {
    std::fprintf(stderr, "shotchain calibrate-cache: %s: %s\n", error.field().c_str(), error.what());
    return 4;
  }
  if (!summary.finished.completed) return 1;
  if (summary.calibrationRuns.empty()) {
    std::fprintf(stderr,
                 "shotchain calibrate-cache: %s: no shot samples the whole clip (stream shots and per-frame-timestep "
                 "models take no step cache)\n",
                 file.string().c_str());
    return 1;
  }
  std::vector<const sampling::StepCache*> runs;
  // The runs of the first shot's schedule (its steps and shift) are averaged; a figure is a step's.
  const resolve::ResolvedShot& first = summary.resolved.shots[summary.calibrationRuns.front().shot];
  for (const auto& run : summary.calibrationRuns) {
    const resolve::ResolvedShot& shot = summary.resolved.shots[run.shot];
    if (shot.steps == first.steps && shot.shift == first.shift) runs.push_back(run.cache.get());
  }
  if (runs.size() < summary.calibrationRuns.size())
    std::fprintf(stderr,
                 "warning: %zu shot(s) with another schedule than the first shot's (%d steps, shift %g) are left out\n",
                 summary.calibrationRuns.size() - runs.size(), first.steps, first.shift);
  const std::string family = summary.calibratedFamily;
  const sampling::CacheCalibration calibration = sampling::fitCacheCalibration(runs, family, first.shift);
  util::writeFileAtomically(target, sampling::cacheCalibrationJson(calibration));
  std::fprintf(stderr, "\n%s: %d steps, averaged over %d shot(s) of %s\n", target.string().c_str(), calibration.steps,
               calibration.shots, family.c_str());
  std::fprintf(stderr, "magnitude ratio (conditional):");
  for (int s = 0; s < calibration.steps; ++s)
    std::fprintf(stderr, " %.3f", calibration.magCacheRatios[static_cast<std::size_t>(2 * s)]);
  std::fprintf(stderr,
               "\nset \"sampler\": {\"cache\": {\"policy\": \"magcache\", \"calibration\": \"%s\"}} to use it\n",
               target.filename().string().c_str());
  return 0;
}

}  // namespace shotchain::cli
