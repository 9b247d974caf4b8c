#include "demo/demo_eval.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <optional>

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include "demo/frame_analysis.h"
#include "demo/procedural_clip.h"
#include "models/wan/wan_vae.h"
#include "util/median.h"

namespace shotchain::demo {
namespace {

void tally(AttributeAccuracy& a, const ClipObservation& o, const ClipParams& p, double weight) {
  a.colour += (o.colour == p.colour) * weight;
  a.shape += (o.shape == p.shape) * weight;
  a.direction += (o.direction == p.direction) * weight;
}

std::string fmt(const char* pattern, double value) {
  char text[64];
  std::snprintf(text, sizeof text, pattern, value);
  return text;
}

}  // namespace

std::vector<std::string> demoStoryPrompts() {
  return {"a red circle moving right on a black background", "a red circle moving down on a black background",
          "a red circle moving left on a black background", "a red circle moving up on a black background"};
}

DemoEvalReport evaluateDemo(const DemoEvalOptions& o) {
  auto log = [&](const std::string& line) {
    if (o.log) o.log(line);
  };
  const DemoModels loaded = DemoModels::load(o.dir);
  DemoEvalReport report;
  report.settings = o.settings;

  // Prompt following on held-out clips.
  int colour = 0, shape = 0, direction = 0, found = 0;
  for (const NamedColour& background : demoBackgrounds()) report.byBackground.push_back({background.name, 0, {}});
  for (int i = 0; i < o.samples; ++i) {
    const ClipParams params = randomClipParams(kHeldOutSeedStart + static_cast<std::uint64_t>(i));
    const DemoShot shot =
        generateDemoShot(loaded, clipPrompt(params), static_cast<std::uint64_t>(1000 + i), o.settings);
    const ClipObservation obs = analyseClip(shot.frames);
    BackgroundAccuracy& onBackground = report.byBackground[static_cast<std::size_t>(params.background)];
    ++onBackground.samples;
    if (2 * obs.foundFrames <= static_cast<int>(obs.frames.size())) continue;
    tally(onBackground.accuracy, obs, params, 1.0);
    ++found;
    colour += obs.colour == params.colour;
    shape += obs.shape == params.shape;
    direction += obs.direction == params.direction;
    if (i % 10 == 0)
      log("sample " + std::to_string(i) + ": \"" + clipPrompt(params) + "\" → " +
          (obs.colour >= 0 ? demoColours()[static_cast<std::size_t>(obs.colour)].name : "?") + " " +
          shapeName(obs.shape) + " (fill " + fmt("%.2f", obs.fill) + ") " + directionName(obs.direction));
  }
  report.samples = o.samples;
  const double n = std::max(1, o.samples);
  report.found = found / n;
  report.colourAccuracy = colour / n;
  report.shapeAccuracy = shape / n;
  report.directionAccuracy = direction / n;
  for (BackgroundAccuracy& b : report.byBackground)
    for (double* a : {&b.accuracy.colour, &b.accuracy.shape, &b.accuracy.direction}) *a /= std::max(1, b.samples);

  // Two-shot chains across each kind of cut.
  report.continuity = evaluateAllChainCuts(loaded, o.settings, o.chains);
  for (const ChainCutResult& c : report.continuity)
    log("chains " + c.mode + (c.method.empty() ? "" : " (" + c.method + ")") + ": jump/motion " +
        fmt("%.2f", c.jumpRatio) + ", flash " + fmt("%.2f", c.flash) + ", colour drift " + fmt("%.1f", c.colourDrift));

  // VAE reconstruction.
  {
    const at::NoGradGuard noGrad;
    double total = 0;
    const double share = 1.0 / std::max(1, o.psnrClips);
    for (int i = 0; i < o.psnrClips; ++i) {
      const ClipParams params = randomClipParams(kHeldOutSeedStart + 500'000 + static_cast<std::uint64_t>(i));
      const at::Tensor clip = renderClip(params);
      const at::Tensor recon = loaded.vae->decode(loaded.vae->encode(clip));
      const double mse = ((recon - clip) * 0.5).pow(2).mean().item<double>();
      total += 10 * std::log10(1.0 / std::max(mse, 1e-12));
      tally(report.sourceClips, analyseClip(clip), params, share);
      tally(report.vaeRoundTrips, analyseClip(recon), params, share);
    }
    report.vaePsnr = total / std::max(1, o.psnrClips);
    report.vaeHandoff = measureVaeHandoff(*loaded.vae, o.psnrClips, kHeldOutSeedStart + 500'000);
  }

  report.promptReliance = measurePromptReliance(loaded, 24, {0.4, 0.7, 0.9});

  // The 4-shot story with latent handoff.
  {
    const auto start = std::chrono::steady_clock::now();
    const ContinuityMode cuts[] = {ContinuityMode::None, ContinuityMode::Latent, ContinuityMode::LatentOverlap,
                                   ContinuityMode::Latent};
    std::optional<DemoShot> previous;
    std::uint64_t seed = 11;
    int index = 0;
    for (const std::string& prompt : demoStoryPrompts()) {
      Continuity cut;
      cut.mode = cuts[index++];
      cut.overlapLatents = 1;
      DemoShot shot = generateDemoShot(loaded, prompt, seed++, o.settings, cut, previous ? &*previous : nullptr);
      previous = std::move(shot);
    }
    report.sequenceSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  return report;
}

std::string formatDemoEvalTable(const DemoEvalReport& r) {
  std::string out;
  char line[200];
  auto row = [&](const char* what, const std::string& value, const char* goal, bool ok) {
    std::snprintf(line, sizeof line, "| %-46s | %-18s | %-11s | %-4s |\n", what, value.c_str(), goal,
                  ok ? "ok" : "MISS");
    out += line;
  };
  std::snprintf(line, sizeof line,
                "builtin:demo eval — %d held-out samples, %d steps, shift %.1f, guidance %.1f, condition noise %d\n",
                r.samples, r.settings.steps, r.settings.shift, r.settings.guidance, r.settings.conditionNoise);
  out += line;
  out += "| measure                                        | value              | goal        |      |\n";
  out += "|------------------------------------------------|--------------------|-------------|------|\n";
  row("object found (most frames)", fmt("%.0f%%", 100 * r.found), "-", true);
  row("colour accuracy", fmt("%.0f%%", 100 * r.colourAccuracy), ">= 90%", r.colourAccuracy >= 0.9);
  row("shape accuracy", fmt("%.0f%%", 100 * r.shapeAccuracy), ">= 70%", r.shapeAccuracy >= 0.7);
  row("direction accuracy", fmt("%.0f%%", 100 * r.directionAccuracy), ">= 85%", r.directionAccuracy >= 0.85);
  auto triple = [](const AttributeAccuracy& a) {
    return fmt("%.0f", 100 * a.colour) + "/" + fmt("%.0f", 100 * a.shape) + "/" + fmt("%.0f%%", 100 * a.direction);
  };
  for (const BackgroundAccuracy& b : r.byBackground) {
    const std::string what = "  on " + b.background + " (" + std::to_string(b.samples) + "; col/shape/dir)";
    row(what.c_str(), triple(b.accuracy), "report", true);
  }
  row("VAE reconstruction PSNR (held-out)", fmt("%.1f dB", r.vaePsnr), ">= 30 dB", r.vaePsnr >= 30);
  auto ceiling = [&](const char* what, const AttributeAccuracy& a) { row(what, triple(a), "report", true); };
  auto handoff = [&](const char* what, const VaeHandoffError& e) {
    row(what,
        fmt("%.1f", e.medianPixels) + "/" + fmt("%.1f", e.meanPixels) + ", " + std::to_string(e.lost) + "/" +
            std::to_string(e.clips),
        "report", true);
  };
  handoff("VAE handoff frame px: median/mean, lost", r.vaeHandoff.afterPredecessor);
  handoff("  the same decoded alone (no predecessor)", r.vaeHandoff.alone);
  ceiling("analyser on held-out clips (col/shape/dir)", r.sourceClips);
  ceiling("analyser on their VAE round trips", r.vaeRoundTrips);
  for (const PromptReliance& p : r.promptReliance) {
    char what[64], value[64];
    std::snprintf(what, sizeof what, "sigma %.1f: DiT loss %.3f, + wrong col/shp/dir", p.sigma, p.loss);
    std::snprintf(value, sizeof value, "+%.3f/%.3f/%.3f", p.colourGap, p.shapeGap, p.directionGap);
    row(what, value, "report", true);
  }
  row("4-shot demo sequence render", fmt("%.1f s", r.sequenceSeconds), "< 30 s", r.sequenceSeconds < 30);
  out += "\ntwo-shot chains: same colour, shape and background, a new direction (medians over the chains)\n";
  out +=
      "| cut (method)                        | chains | jump/motion | flash | colour dE | hue d, <=20 deg | not 1 "
      "object |      |\n";
  out +=
      "|-------------------------------------|--------|-------------|-------|-----------|-----------------|------------"
      "--|------|\n";
  for (const ChainCutResult& c : r.continuity) {
    const std::string what = c.mode + (c.method.empty() ? "" : " (" + c.method + ")");
    std::snprintf(line, sizeof line,
                  "| %-35s | %2d/%-3d | %11.2f | %5.2f | %9.1f | %5.1f, %3.0f%%     | %11.0f%% | %-4s |\n",
                  what.c_str(), c.measured, c.chains, c.jumpRatio, c.flash, c.colourDrift, c.hueChange,
                  100 * c.hueWithin20, 100 * c.wrongObjectFrames, meetsChainGoals(c) ? "ok" : "MISS");
    out += line;
  }
  out +=
      "goals for latent and latent_overlap: jump/motion <= 2, flash <= 2, colour dE <= 10, hue d <= 20 deg, not 1 "
      "object <= 10%;\n"
      "none: jump/motion >= 5 (a cut should look like one)\n";
  return out;
}

namespace {
nlohmann::json accuracyJson(const AttributeAccuracy& a) {
  return {{"colour_accuracy", a.colour}, {"shape_accuracy", a.shape}, {"direction_accuracy", a.direction}};
}
nlohmann::json handoffJson(const VaeHandoffError& e) {
  return {{"median_px", e.medianPixels}, {"mean_px", e.meanPixels}, {"lost", e.lost}, {"clips", e.clips}};
}
}  // namespace

std::string demoEvalJson(const DemoEvalReport& r) {
  nlohmann::json reliance = nlohmann::json::array();
  for (const PromptReliance& p : r.promptReliance)
    reliance.push_back({{"sigma", p.sigma},
                        {"loss", p.loss},
                        {"wrong_colour", p.colourGap},
                        {"wrong_shape", p.shapeGap},
                        {"wrong_direction", p.directionGap}});
  nlohmann::json byBackground = nlohmann::json::array();
  for (const BackgroundAccuracy& b : r.byBackground) {
    nlohmann::json entry = accuracyJson(b.accuracy);
    entry["background"] = b.background;
    entry["samples"] = b.samples;
    byBackground.push_back(entry);
  }
  nlohmann::json continuity = nlohmann::json::array();
  for (const ChainCutResult& c : r.continuity)
    continuity.push_back({{"mode", c.mode},
                          {"method", c.method},
                          {"chains", c.chains},
                          {"measured", c.measured},
                          {"jump_ratio", c.jumpRatio},
                          {"flash", c.flash},
                          {"colour_drift", c.colourDrift},
                          {"hue_change", c.hueChange},
                          {"hue_within_20", c.hueWithin20},
                          {"wrong_object_frames", c.wrongObjectFrames},
                          {"meets_goals", meetsChainGoals(c)}});
  const nlohmann::json json = {{"samples", r.samples},
                               {"found", r.found},
                               {"colour_accuracy", r.colourAccuracy},
                               {"shape_accuracy", r.shapeAccuracy},
                               {"direction_accuracy", r.directionAccuracy},
                               {"by_background", byBackground},
                               {"continuity", continuity},
                               {"vae_psnr_db", r.vaePsnr},
                               {"vae_handoff", handoffJson(r.vaeHandoff.afterPredecessor)},
                               {"vae_handoff_alone", handoffJson(r.vaeHandoff.alone)},
                               {"source_clips", accuracyJson(r.sourceClips)},
                               {"vae_round_trips", accuracyJson(r.vaeRoundTrips)},
                               {"prompt_reliance", reliance},
                               {"sequence_seconds", r.sequenceSeconds},
                               {"steps", r.settings.steps},
                               {"shift", r.settings.shift},
                               {"guidance", r.settings.guidance},
                               {"condition_noise", r.settings.conditionNoise}};
  return json.dump(2);
}

}  // namespace shotchain::demo
