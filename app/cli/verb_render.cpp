#include <csignal>
#include <cstdio>
#include <unistd.h>

#include <cmath>
#include <optional>

#include "cli/option_values.h"
#include "cli/render_progress.h"
#include "cli/verbs.h"
#include "continuity/cut_verdict.h"
#include "export/render_to_disk.h"
#include "render/render_report.h"
#include "sequence/sequence_io.h"
#include "util/byte_size.h"

namespace shotchain::cli {
namespace {

// Exit codes of `shotchain render` (README): 0 done, 1 the render failed part-way, 2 usage,
// 3 the document is not valid, 4 refused before any work (output folder, model files, device, memory
// plan), 5 stopped by the user (Ctrl+C: the first finishes the current shot, the second stops now).
enum Exit { kDone = 0, kFailed = 1, kUsage = 2, kInvalid = 3, kRefused = 4, kStopped = 5 };

render::Renderer* gRenderer = nullptr;  // for the SIGINT handler only
volatile std::sig_atomic_t gInterrupts = 0;

void onInterrupt(int) {
  gInterrupts = gInterrupts + 1;
  if (gRenderer != nullptr)
    gRenderer->requestStop(gInterrupts > 1 ? render::StopRequest::Now : render::StopRequest::AfterShot);
}

struct RenderArgs {
  std::string sequence;
  std::optional<std::string> out;
  render::RenderOptions options;
  bool json = false;
};

// "A-B" or "A", 1-based, every part a whole number ("2x-4" and "2-" are refused).
bool parseRange(const std::string& text, int& first, int& last) {
  const auto dash = text.find('-');
  try {
    first = intOption("--shots", text.substr(0, dash)) - 1;
    last = dash == std::string::npos ? first : intOption("--shots", text.substr(dash + 1)) - 1;
  } catch (const std::invalid_argument&) {
    return false;
  }
  return first >= 0 && last >= first;
}

std::optional<RenderArgs> parseArgs(const Args& args) {
  RenderArgs parsed;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&]() -> std::optional<std::string> {
      if (i + 1 >= args.size()) return std::nullopt;
      return args[++i];
    };
    if (a == "--json") {
      parsed.json = true;
    } else if (a == "--resume") {
      parsed.options.reuse = true;
    } else if (a == "--no-preview") {
      parsed.options.previews = false;
    } else if (a == "--out" || a == "--policy" || a == "--budget" || a == "--device" || a == "--shots") {
      const std::optional<std::string> v = value();
      if (!v) return std::nullopt;
      if (a == "--out") parsed.out = *v;
      if (a == "--device") parsed.options.device = *v;
      if (a == "--policy") {
        parsed.options.policy = residencyPolicyFromString(*v);
        if (!parsed.options.policy) {
          std::fprintf(stderr, "shotchain render: --policy: \"%s\" is not pinned, offload, reload or auto\n", v->c_str());
          return std::nullopt;
        }
      }
      if (a == "--budget") {
        parsed.options.budget = parseByteSize(*v);
        if (!parsed.options.budget) {
          std::fprintf(stderr, "shotchain render: --budget: \"%s\" is not a size (e.g. 16GiB)\n", v->c_str());
          return std::nullopt;
        }
      }
      if (a == "--shots" && !parseRange(*v, parsed.options.firstShot, parsed.options.lastShot)) {
        std::fprintf(stderr, "shotchain render: --shots: \"%s\" is not a range like 2-4\n", v->c_str());
        return std::nullopt;
      }
    } else if (!a.empty() && a[0] != '-' && parsed.sequence.empty()) {
      parsed.sequence = a;
    } else {
      return std::nullopt;
    }
  }
  if (parsed.sequence.empty()) return std::nullopt;
  return parsed;
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
  std::fprintf(out, "%-7s %-14s %8s %10s %7s %8s %6s %6s %6s %6s %10s\n", "", "", "bytes", "MSE", "ratio", "dB", "", "ratio",
               "prev", "first", "MSE");
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
    std::fprintf(out, "%-9s %6d %7s %7s %7s %7s  %s\n", name.c_str(), cut.afterCutFrames, figure(cut.flash, "%.2f").c_str(),
                 figure(cut.colourDrift, "%.1f").c_str(), figure(cut.spreadDrift, "%.1f").c_str(),
                 figure(cut.structure, "%.2f").c_str(), continuity::judgeCut(cut).summary.c_str());
  }
}

}  // namespace

int runRender(const Args& args) {
  const std::optional<RenderArgs> parsed = parseArgs(args);
  if (!parsed) {
    std::fprintf(stderr,
                 "usage: shotchain render SEQUENCE [--out DIR] [--policy pinned|offload|reload|auto] [--budget SIZE]\n"
                 "                        [--device cpu|cuda] [--resume] [--shots A-B] [--json] [--no-preview]\n");
    return kUsage;
  }
  const std::filesystem::path file = parsed->sequence;
  const LoadResult loaded = loadSequenceFile(file);
  for (const Diagnostic& d : loaded.diagnostics) std::fprintf(stderr, "%s\n", d.format(file.string()).c_str());
  if (!loaded.ok()) return kInvalid;
  const Sequence& sequence = *loaded.sequence;

  render::RenderOptions options = parsed->options;
  options.sequenceDirectory = std::filesystem::absolute(file).parent_path();
  options.outputDirectory = parsed->out ? std::filesystem::path(*parsed->out)
                                        : options.sequenceDirectory / (file.stem().string() + ".render");

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
    std::fprintf(stderr, "shotchain render: %s: %s\n", error.field().c_str(), error.what());
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
    std::fprintf(stderr, "%s%s\n",
                 subset ? "note: the range is rendered; sequence.mp4 is written once every shot is: " : "shotchain render: ",
                 rendered.outputsError.c_str());
    if (!subset) status = kFailed;
  }
  printCutTable(stderr, summary);
  std::fprintf(stderr, "\n%d shots rendered, %d re-used, %.1f s; report: %s\n", summary.finished.shotsRendered,
               summary.finished.shotsReused, summary.finished.seconds,
               (options.outputDirectory / "report.json").string().c_str());
  if (parsed->json) std::fputs(render::renderReportJson(sequence, summary).c_str(), stdout);
  return status;
}

}  // namespace shotchain::cli
