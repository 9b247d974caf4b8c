#include "cli/bench/bench_model_folder.h"

#include <stdexcept>

#include "io/safetensors_writer.h"
#include "models/model_files.h"
#include "models/umt5/umt5.h"
#include "models/umt5/umt5_tokenizer.h"
#include "models/wan/wan_model.h"
#include "models/wan/wan_vae.h"

namespace shotchain::cli {
namespace {

const char* const kPrompts[] = {
    "a red circle moving right on a black background",
    "a red circle moving down on a black background",
    "a red circle moving left on a black background",
    "a red circle moving up on a black background",
};

Shot benchShot(int index, const BenchSequenceShape& shape, int width, int height, int frames) {
  Shot shot;
  shot.id = "b" + std::to_string(index + 1);
  shot.name = "Bench " + std::to_string(index + 1);
  shot.prompt = kPrompts[index % 4];
  shot.width = shape.width > 0 ? shape.width : width;
  shot.height = shape.height > 0 ? shape.height : height;
  shot.frames = shape.frames > 0 ? shape.frames : frames;
  shot.seed = 7000 + static_cast<std::uint64_t>(index);
  shot.continuity.mode = index == 0 ? ContinuityMode::None : ContinuityMode::Latent;
  shot.continuity.tag = "bench";
  return shot;
}

// A random VAE (Wan 2.1's shapes, or the tiny one) and a one-layer text encoder of the DiT's text width in a
// ComfyUI-style folder, beside whatever DiT the chain reads.
void writeRandomCompanions(const models::WanConfig& ditConfig, bool tiny, const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir / "vae");
  std::filesystem::create_directories(dir / "text_encoders");
  {
    const models::WanVaeConfig vaeConfig = models::WanVaeConfig::preset(tiny ? "tiny" : "wan21");
    const models::WanVae vae = models::WanVae::random(vaeConfig, 2);
    io::saveSafetensors(dir / "vae" / "wan_vae_random.safetensors", vae.namedParameters(),
                        {{"config", vaeConfig.toJson()}});
  }
  const std::filesystem::path tokenizer = models::builtinModelDirectory("demo") / "tokenizer.model";
  if (!std::filesystem::exists(tokenizer))
    throw std::runtime_error(tokenizer.string() + ": the demo tokenizer is needed for a random text encoder");
  std::filesystem::copy_file(tokenizer, dir / "text_encoders" / "tokenizer.model",
                             std::filesystem::copy_options::overwrite_existing);
  models::Umt5Config textConfig;
  textConfig.vocab = models::Umt5Tokenizer::fromFile(tokenizer).vocabSize();
  textConfig.dim = ditConfig.textDim;
  textConfig.dimAttn = ditConfig.textDim;
  textConfig.dimFfn = ditConfig.textDim;
  textConfig.numHeads = 8;
  textConfig.numLayers = 1;
  const models::Umt5Encoder encoder = models::Umt5Encoder::random(textConfig, 3);
  io::saveSafetensors(dir / "text_encoders" / "umt5_random.safetensors", encoder.namedParameters());
}

void writeRandomModelSet(const std::string& config, const std::filesystem::path& dir) {
  const bool tiny = config == "tiny";
  const models::WanConfig ditConfig = models::WanConfig::preset(config);
  std::filesystem::create_directories(dir / "diffusion_models");
  models::WanLoadOptions options;
  if (!tiny) options.computeDtype = at::kBFloat16;
  const models::WanModel dit = models::WanModel::random(ditConfig, 1, options);
  io::saveSafetensors(dir / "diffusion_models" / ("wan_" + config + "_random.safetensors"), dit.namedParameters(),
                      {{"config", ditConfig.toJson()}});
  writeRandomCompanions(ditConfig, tiny, dir);
}

void addShots(Sequence& sequence, const BenchSequenceShape& shape, bool big) {
  sequence.settings.sampler.steps = shape.steps > 0 ? shape.steps : (big ? 4 : 10);
  for (int i = 0; i < shape.shots; ++i)
    sequence.shots.push_back(benchShot(i, shape, big ? 832 : 64, big ? 480 : 64, big ? 81 : 17));
}

}  // namespace

Sequence repeatShots(const Sequence& sequence, const BenchSequenceShape& shape) {
  if (sequence.shots.empty()) throw std::invalid_argument("the sequence has no shots");
  Sequence repeated = sequence;
  repeated.shots.clear();
  const int count = shape.shots > 0 ? shape.shots : static_cast<int>(sequence.shots.size());
  for (int i = 0; i < count; ++i) {
    Shot shot = sequence.shots[static_cast<std::size_t>(i) % sequence.shots.size()];
    shot.id = "b" + std::to_string(i + 1);
    shot.enabled = true;
    if (shape.width > 0) shot.width = shape.width;
    if (shape.height > 0) shot.height = shape.height;
    if (shape.frames > 0) shot.frames = shape.frames;
    if (shape.steps > 0) shot.steps = shape.steps;
    shot.continuity.mode = i == 0 ? ContinuityMode::None : ContinuityMode::Latent;
    shot.continuity.tag = "bench";
    repeated.shots.push_back(shot);
  }
  return repeated;
}

Sequence benchSequence(const std::string& config, const BenchSequenceShape& shape,
                       const std::filesystem::path& modelsDir) {
  Sequence sequence;
  sequence.settings.name = "bench " + config;
  const bool demo = config == "demo";
  if (!demo) {
    writeRandomModelSet(config, modelsDir);
    sequence.settings.model.builtin.clear();
    sequence.settings.model.folder = modelsDir.string();
    sequence.settings.model.tokenizer = (modelsDir / "text_encoders" / "tokenizer.model").string();
  }
  addShots(sequence, shape, config == "1.3b" || config == "14b");
  return sequence;
}

Sequence benchSequenceReading(const std::string& name, const models::WanConfig& ditConfig,
                              const std::filesystem::path& ditFile, const BenchSequenceShape& shape,
                              const std::filesystem::path& modelsDir) {
  writeRandomCompanions(ditConfig, false, modelsDir);
  Sequence sequence;
  sequence.settings.name = "bench " + name;
  ModelSet& model = sequence.settings.model;
  model.builtin.clear();
  model.folder = modelsDir.string();  // for a preview decoder in its vae_approx/
  model.dit = ditFile.string();
  model.vae = (modelsDir / "vae" / "wan_vae_random.safetensors").string();
  model.textEncoder = (modelsDir / "text_encoders" / "umt5_random.safetensors").string();
  model.tokenizer = (modelsDir / "text_encoders" / "tokenizer.model").string();
  addShots(sequence, shape, true);
  return sequence;
}

}  // namespace shotchain::cli
