#include "cli/bench/bench_experts.h"

#include <algorithm>
#include <chrono>

#include "cli/bench/bench_options.h"
#include "models/model_files.h"
#include "render/renderer.h"
#include "util/median.h"

namespace shotchain::cli {

std::vector<ExpertRun> benchExperts(const Sequence& sequence, const std::filesystem::path& baseDir,
                                    const std::filesystem::path& work, const std::string& device) {
  std::vector<ExpertRun> runs;
  Sequence paired = sequence;
  try {
    // Explicit files (a built-in model cannot name a second expert), the DiT copied as the high-noise one.
    const models::ModelFiles files = models::resolveModelFiles(sequence.settings.model, baseDir);
    std::filesystem::create_directories(work);
    const std::filesystem::path high = work / "high_noise_expert.safetensors";
    std::filesystem::copy_file(files.dit, high, std::filesystem::copy_options::overwrite_existing);
    ModelSet& model = paired.settings.model;
    model = ModelSet{};
    model.builtin.clear();
    model.dit = files.dit.string();
    model.ditHighNoise = high.string();
    model.vae = files.vae.string();
    model.textEncoder = files.textEncoder.string();
    model.tokenizer = files.tokenizer.string();
  } catch (const std::exception& error) {
    runs.push_back({"-", error.what()});
    return runs;
  }
  for (const ExpertResidency residency : {ExpertResidency::Resident, ExpertResidency::Swap, ExpertResidency::Reload}) {
    ExpertRun run;
    run.residency = toString(residency);
    try {
      Sequence s = paired;
      s.settings.experts = residency;
      s.settings.policy = ResidencyPolicy::Pinned;
      const render::RenderOptions options = quietBenchRender(baseDir, work / run.residency, device);
      render::Renderer renderer;
      struct Failures : render::RenderObserver {
        std::string first;
        void failed(const render::RenderFailure& failure) override {
          if (first.empty()) first = failure.message;
        }
      } quiet;
      const auto start = std::chrono::steady_clock::now();
      const render::RenderSummary summary = renderer.render(s, options, quiet);
      run.wallSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (!summary.finished.completed)
        throw std::runtime_error(quiet.first.empty() ? "the render did not complete" : quiet.first);
      std::vector<double> seconds, bytes;
      for (const render::ShotFinished& shot : summary.shots)
        if (shot.experts) {
          seconds.push_back(shot.experts->moveSeconds);
          bytes.push_back(static_cast<double>(shot.experts->bytesMoved));
        }
      run.medianMoveSeconds = util::medianOr(seconds, 0.0);
      run.medianBytesPerShot = static_cast<std::uint64_t>(util::medianOr(bytes, 0.0));
      std::vector<double> planned(summary.plan.expertBytesPerShot.begin(), summary.plan.expertBytesPerShot.end());
      run.plannedBytesPerShot = static_cast<std::uint64_t>(util::medianOr(planned, 0.0));
      run.reservedPeak = summary.reservedPeak;
      run.expertBytes = summary.plan.highNoiseExpertWeights;
    } catch (const std::exception& error) {
      run.error = error.what();
    }
    runs.push_back(run);
  }
  return runs;
}

}  // namespace shotchain::cli
