#include "cli/bench/bench_lora_switch.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include "cli/bench/bench_options.h"
#include "io/safetensors_writer.h"
#include "io/weight_set.h"
#include "memory/memory_probe.h"
#include "models/model_files.h"
#include "render/renderer.h"
#include "util/median.h"

namespace shotchain::cli {
namespace {

int writeLora(const io::WeightSet& dit, const std::filesystem::path& path, std::uint64_t seed) {
  at::Generator g = at::make_generator<at::CPUGeneratorImpl>(seed);
  io::NamedTensors tensors;
  int weights = 0;
  for (const io::WeightInfo& w : dit.weights()) {
    if (w.name.rfind("blocks.", 0) != 0 || !w.name.ends_with(".weight") || w.shape.size() != 2) continue;
    const std::string layer = "diffusion_model." + w.name.substr(0, w.name.size() - 7);
    tensors.emplace_back(layer + ".lora_B.weight", at::randn({static_cast<std::int64_t>(w.shape[0]), 16}, g) * 0.01);
    tensors.emplace_back(layer + ".lora_A.weight", at::randn({16, static_cast<std::int64_t>(w.shape[1])}, g) * 0.01);
    ++weights;
  }
  io::saveSafetensors(path, tensors);
  return weights;
}

render::RenderOptions optionsFor(const std::filesystem::path& baseDir, const std::filesystem::path& out,
                                 const std::string& device, ResidencyPolicy policy) {
  render::RenderOptions options = quietBenchRender(baseDir, out, device);
  options.policy = policy;
  return options;
}

}  // namespace

LoraSwitchFigures benchLoraSwitch(const Sequence& sequence, const std::filesystem::path& baseDir,
                                  const std::filesystem::path& work, const std::string& device) {
  LoraSwitchFigures figures;
  try {
    const models::ModelFiles files = models::resolveModelFiles(sequence.settings.model, baseDir);
    const io::WeightSet dit = io::WeightSet::open(files.dit);
    std::filesystem::create_directories(work);
    figures.loraWeights = writeLora(dit, work / "lora_a.safetensors", 1);
    writeLora(dit, work / "lora_b.safetensors", 2);

    Sequence switching = sequence;
    for (std::size_t i = 0; i < switching.shots.size(); ++i)
      switching.shots[i].loras =
          std::vector<LoraRef>{{(work / (i % 2 ? "lora_b.safetensors" : "lora_a.safetensors")).string(), 1.0, {}}};
    render::RenderObserver quiet;
    render::Renderer pinned;
    pinned.probe()->markTransfers();
    const render::RenderSummary summary =
        pinned.render(switching, optionsFor(baseDir, work / "pinned", device, ResidencyPolicy::Pinned), quiet);
    if (!summary.finished.completed) throw std::runtime_error("the pinned render with LoRAs did not complete");
    figures.baseBytesMoved = pinned.probe()->sample().transferredBytes;
    std::vector<double> seconds, bytes;
    for (std::size_t i = 1; i < summary.shots.size(); ++i)
      if (summary.shots[i].loras) {
        seconds.push_back(summary.shots[i].loras->seconds);
        bytes.push_back(static_cast<double>(summary.shots[i].loras->bytesWritten));
      }
    figures.switches = static_cast<int>(seconds.size());
    figures.medianPatchSeconds = util::medianOr(seconds, 0.0);
    figures.medianBytesWritten = util::medianOr(bytes, 0.0);

    render::Renderer reload;
    const render::RenderSummary reloaded =
        reload.render(sequence, optionsFor(baseDir, work / "reload", device, ResidencyPolicy::Reload), quiet);
    if (!reloaded.finished.completed) throw std::runtime_error("the reload render did not complete");
    figures.reloadSecondsPerShot = reloaded.ditLoads > 0 ? reloaded.ditLoadSeconds / reloaded.ditLoads : 0.0;
  } catch (const std::exception& error) {
    figures.error = error.what();
  }
  return figures;
}

}  // namespace shotchain::cli
