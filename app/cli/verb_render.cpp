#include <unistd.h>
#include <csignal>
#include <cstdio>

#include <algorithm>
#include <cmath>
#include <optional>

#include "cli/command_specs.h"
#include "cli/distributed_session.h"
#include "cli/rank_launcher.h"
#include "cli/render_progress.h"
#include "cli/render_ranks.h"
#include "cli/verbs.h"
#include "continuity/cut_verdict.h"
#include "export/render_to_disk.h"
#include "render/render_report.h"
#include "resolve/resolve_sequence.h"
#include "sequence/sequence_io.h"

namespace shotchain::cli {
namespace {

// Exit codes of `shotchain render` (README): 0 done, 1 the render failed part-way, 2 usage,
// 3 the document is not valid, 4 refused before any work (output folder, model files, device, memory
// plan), 5 stopped by the user (Ctrl+C: the first finishes the current shot, the second stops now),
// 6 a rank of a distributed render died, hung or failed (kRankLostExit).
enum Exit { kDone = 0, kFailed = 1, kUsage = 2, kInvalid = 3, kRefused = 4, kStopped = 5 };

render::Renderer* gRenderer = nullptr;  // for the SIGINT handler only
volatile std::sig_atomic_t gInterrupts = 0;

void onInterrupt(int) {
  gInterrupts = gInterrupts + 1;
  if (gRenderer != nullptr)
    gRenderer->requestStop(gInterrupts > 1 ? render::StopRequest::Now : render::StopRequest::AfterShot);
}

// The options as the renderer takes them; the output folder is set by the caller.
render::RenderOptions renderOptions(const ParsedOptions& parsed) {
  render::RenderOptions options;
  if (const auto policy = parsed.text("--policy")) options.policy = residencyPolicyFromString(*policy);
  options.budget = parsed.byteSize("--budget");
  if (const auto device = parsed.text("--device")) options.device = *device;
  options.reuse = parsed.flag("--resume");
  options.previews = !parsed.flag("--no-preview");
  options.overlapDecode = !parsed.flag("--serial-decode");
  options.decodeThreads = std::max(1, parsed.integer("--decode-threads").value_or(1));
  if (const std::optional<ShotRange> range = parsed.range("--shots")) {
    options.firstShot = range->first - 1;
    options.lastShot = range->last - 1;
  }
  return options;
}

std::string figure(const std::optional<double>& value, const char* format) {
  if (!value) return "-";
  if (std::isinf(*value)) return "inf";
  char text[32];
  std::snprintf(text, sizeof text, format, *value);
  return text;
}

void printCutTable(std::FILE* out, const render::RenderSummary& summary) {
  if (summary.cuts.empty()) return;
  std::fprintf(out, "\n%-7s %-14s %8s %10s %7s %8s %6s %6s %6s %6s %10s\n", "cut", "mode", "copied", "handoff", "step",
               "PSNR", "SSIM", "MAD", "dE", "dE1", "roundtrip");
  std::fprintf(out, "%-7s %-14s %8s %10s %7s %8s %6s %6s %6s %6s %10s\n", "", "", "bytes", "MSE", "ratio", "dB", "",
               "ratio", "prev", "first", "MSE");
  for (const continuity::CutMetrics& cut : summary.cuts) {
    const std::string name = std::to_string(cut.fromIndex + 1) + "→" + std::to_string(cut.toIndex + 1);
    std::fprintf(out, "%-9s %-14s %8llu %10s %7s %8s %6s %6s %6s %6s %10s\n", name.c_str(), cut.mode.c_str(),
                 static_cast<unsigned long long>(cut.handoffBytesCopied), figure(cut.handoffMse, "%.3g").c_str(),
                 figure(cut.latentStepRatio, "%.2f").c_str(), figure(cut.psnrCut, "%.1f").c_str(),
                 figure(cut.ssimCut, "%.3f").c_str(), figure(cut.madRatio, "%.2f").c_str(),
                 figure(cut.deltaEPrev, "%.1f").c_str(), figure(cut.deltaEFirst, "%.1f").c_str(),
                 figure(cut.roundtripMse, "%.3g").c_str());
  }
  std::fprintf(out, "\nafter the cut (first frames of the next shot; thresholds: core/continuity/cut_verdict.h)\n");
  std::fprintf(out, "%-7s %6s %7s %7s %7s %7s  %s\n", "cut", "frames", "flash", "dE", "dE", "struct", "verdict");
  std::fprintf(out, "%-7s %6s %7s %7s %7s %7s\n", "", "", "ratio", "mean", "spread", "ratio");
  for (const continuity::CutMetrics& cut : summary.cuts) {
    const std::string name = std::to_string(cut.fromIndex + 1) + "→" + std::to_string(cut.toIndex + 1);
    std::fprintf(out, "%-9s %6d %7s %7s %7s %7s  %s\n", name.c_str(), cut.afterCutFrames,
                 figure(cut.flash, "%.2f").c_str(), figure(cut.colourDrift, "%.1f").c_str(),
                 figure(cut.spreadDrift, "%.1f").c_str(), figure(cut.structure, "%.2f").c_str(),
                 continuity::judgeCut(cut).summary.c_str());
  }
}

void printCacheTable(std::FILE* out, const render::RenderSummary& summary) {
  bool any = false;
  for (const render::ShotFinished& shot : summary.shots) any = any || shot.cache.has_value();
  if (!any) return;
  std::fprintf(out, "\nstep cache (docs/step-cache.md; C computed, s skipped, conditional branch)\n");
  std::fprintf(out, "%-5s %-12s %6s %8s %8s %6s  %s\n", "shot", "policy", "thresh", "computed", "skipped", "saved",
               "steps");
  for (const render::ShotFinished& shot : summary.shots) {
    if (!shot.cache) continue;
    const render::StepCacheFigures& c = *shot.cache;
    const int passes = c.computedPasses + c.skippedPasses;
    const std::string saved = passes > 0 ? std::to_string(100 * c.skippedPasses / passes) + "%" : "-";
    std::fprintf(out, "%-5d %-12s %6.3g %8d %8d %6s  %s\n", shot.index + 1, c.policy.c_str(), c.threshold,
                 c.computedPasses, c.skippedPasses, saved.c_str(),
                 c.off.empty() ? c.pattern.c_str() : ("off: " + c.off).c_str());
  }
}

}  // namespace

int runRender(const Args& args) {
  const ParsedOptions parsed = kRenderCommand.parse(args);
  if (const std::optional<int> launched = launchRanksIfAsked("render", args, parsed)) return *launched;
  const std::filesystem::path file = parsed.operands().front();
  const LoadResult loaded = loadSequenceFile(file);
  const Diagnostics problems =
      loaded.ok() ? resolve::validate(*loaded.sequence, {std::filesystem::absolute(file).parent_path()})
                  : loaded.diagnostics;
  for (const Diagnostic& d : problems) std::fprintf(stderr, "%s\n", d.format(file.string()).c_str());
  // The document is invalid (exit 3); a model, LoRA or calibration file it names that cannot be used is refused by
  // the renderer before any work (exit 4).
  const bool invalid = std::any_of(problems.begin(), problems.end(), [](const Diagnostic& d) {
    return d.isError() && !d.path.starts_with("model") && !d.path.ends_with(".file") &&
           !d.path.ends_with(".calibration");
  });
  if (!loaded.ok() || invalid) return kInvalid;
  const Sequence& sequence = *loaded.sequence;

  render::RenderOptions options = renderOptions(parsed);
  options.sequenceDirectory = std::filesystem::absolute(file).parent_path();
  const std::optional<std::string> out = parsed.text("--out");
  options.outputDirectory =
      out ? std::filesystem::path(*out) : options.sequenceDirectory / (file.stem().string() + ".render");
  const bool cuda = options.device.rfind("cuda", 0) == 0;
  DistributedSession session = joinDistributed("render", parsed, cuda);
  if (session.group && options.device == "cuda") options.device = "cuda:" + std::to_string(session.localRank);
  if (!session.primary()) return renderOnFollowerRank(sequence, options, session);

  const bool terminal = isatty(fileno(stderr)) != 0;
  RenderProgress progress(stderr, terminal, false);
  render::Renderer renderer;
  gRenderer = &renderer;
  std::signal(SIGINT, onInterrupt);

  exporting::RenderedToDisk rendered;
  try {
    rendered = exporting::renderToDisk(renderer, sequence, options, progress);
  } catch (const render::RenderError& error) {
    gRenderer = nullptr;
    std::fprintf(stderr, "shotchain render: %s%s: %s\n", session.prefix().c_str(), error.field().c_str(), error.what());
    session.reportFailure(std::string("refused: ") + error.what());
    return kRefused;
  }
  gRenderer = nullptr;
  const render::RenderSummary& summary = rendered.summary;

  int status = summary.finished.completed ? kDone : summary.finished.cancelled ? kStopped : kFailed;
  if (const std::optional<exporting::FinalizedOutputs>& outputs = rendered.outputs) {
    for (const std::string& w : outputs->warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());
    std::fprintf(stderr, "\nwrote %s (%d frames, %s) and %s\n", outputs->movie.string().c_str(), outputs->frames,
                 outputs->encoder.c_str(), outputs->timeline.string().c_str());
  } else if (!rendered.outputsError.empty()) {
    // A range (--shots) renders its shots; the movie needs every shot, which may not be on disk yet.
    const int shots = static_cast<int>(sequence.shots.size());
    const bool subset = options.firstShot > 0 || (options.lastShot >= 0 && options.lastShot + 1 < shots);
    std::fprintf(
        stderr, "%s%s\n",
        subset ? "note: the range is rendered; sequence.mp4 is written once every shot is: " : "shotchain render: ",
        rendered.outputsError.c_str());
    if (!subset) status = kFailed;
  }
  printCutTable(stderr, summary);
  printCacheTable(stderr, summary);
  if (summary.promptsFromCache > 0)
    std::fprintf(stderr, "\nprompts: %d kept from earlier renders, %d encoded%s\n", summary.promptsFromCache,
                 summary.promptsEncoded, summary.textEncoderLoads == 0 ? " (the text encoder was not loaded)" : "");
  std::fprintf(stderr, "\n%d shots rendered, %d re-used, %.1f s; report: %s\n", summary.finished.shotsRendered,
               summary.finished.shotsReused, summary.finished.seconds,
               (options.outputDirectory / "report.json").string().c_str());
  if (parsed.flag("--json")) std::fputs(render::renderReportJson(sequence, summary).c_str(), stdout);
  return finishDistributed(session, status);
}

}  // namespace shotchain::cli
