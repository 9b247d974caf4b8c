#pragma once

// A complete tiny model set on disk (DiT, VAE, text encoder, tokenizer) with random weights, so
// render tests run the real loaders and the real pipeline without the shipped demo model.
#include <QProcess>
#include <QString>

#include <filesystem>
#include <stdexcept>
#include <string>

#include "io/safetensors_writer.h"
#include "models/umt5/umt5.h"
#include "models/wan/wan_config.h"
#include "models/wan/wan_model.h"
#include "models/wan/wan_vae.h"
#include "render/render_options.h"
#include "sequence/sequence.h"
#include "test_support.h"

namespace shotchain::testing {

// A shot the tiny models render quickly: 9 frames (3 latent frames), `size`×`size`, the demo's first prompt.
inline Shot tinyShot(const std::string& id, std::uint64_t seed, ContinuityMode mode = ContinuityMode::None,
                     int size = 32) {
  Shot shot;
  shot.id = id;
  shot.prompt = "a red circle moving right on a black background";
  shot.frames = 9;
  shot.width = shot.height = size;
  shot.seed = seed;
  shot.continuity.mode = mode;
  return shot;
}

struct TinyModelSet {
  std::filesystem::path dit, vae, textEncoder, tokenizer;

  // Explicit files for a sequence document (absolute paths).
  ModelSet modelSet() const {
    ModelSet model;
    model.builtin.clear();
    model.dit = dit.string();
    model.vae = vae.string();
    model.textEncoder = textEncoder.string();
    model.tokenizer = tokenizer.string();
    return model;
  }
};

// Two tiny shots with prompts of their own, the second handing off from the first in latent space.
inline Sequence twoTinyShots(const TinyModelSet& models) {
  Sequence s;
  s.settings.model = models.modelSet();
  s.settings.sampler.steps = 3;
  s.settings.policy = ResidencyPolicy::Pinned;
  s.shots = {tinyShot("a", 1), tinyShot("b", 2, ContinuityMode::Latent)};
  s.shots[1].prompt = "a blue square moving left on a black background";
  return s;
}

// diffusionForcing: a SkyReels-V2 DF style DiT (fps embedding, per-frame timesteps). causalBlockSize > 0:
// a block-causal DiT with per-frame timesteps that streams with a KV cache, chunks of that many frames.
// ti2v: a Wan 2.2 TI2V DiT (48 channels) with the tiny Wan 2.2 VAE.
// What the renderer tests render with: into root/out, the document's relative paths against root, frames kept
// in memory, no previews.
inline render::RenderOptions tinyRenderOptions(const std::filesystem::path& root, const std::string& out) {
  render::RenderOptions o;
  o.outputDirectory = root / out;
  o.sequenceDirectory = root;
  o.framesOnDisk = false;
  o.previews = false;
  return o;
}

inline TinyModelSet writeTinyModelSet(const std::filesystem::path& dir, std::uint64_t seed = 11,
                                      bool diffusionForcing = false, std::int64_t causalBlockSize = 0,
                                      bool ti2v = false) {
  std::filesystem::create_directories(dir);
  std::string corpus;
  for (const char* colour : {"red", "green", "blue", "yellow", "white", "magenta"})
    for (const char* shape : {"circle", "square", "triangle"})
      for (const char* direction : {"left", "right", "up", "down"})
        corpus += std::string("a ") + colour + " " + shape + " moving " + direction + " on a black background\n";
  writeFile(dir / "prompts.txt", corpus);
  QProcess train;
  train.setWorkingDirectory(QString::fromStdString(dir.string()));
  train.start("spm_train",
              {"--input=prompts.txt", "--model_prefix=tokenizer", "--vocab_size=40", "--model_type=unigram",
               "--eos_id=1", "--unk_id=2", "--pad_id=0", "--bos_id=-1", "--minloglevel=2"});
  if (!train.waitForFinished(60000) || train.exitCode() != 0)
    throw std::runtime_error("spm_train failed: " + train.readAllStandardError().toStdString());

  TinyModelSet set{dir / "dit.safetensors", dir / "vae.safetensors", dir / "text_encoder.safetensors",
                   dir / "tokenizer.model"};
  models::WanConfig dit = models::WanConfig::preset(ti2v ? "tiny-ti2v" : "tiny");
  dit.textLen = 64;
  dit.injectSampleInfo = diffusionForcing;
  dit.causalBlockSize = causalBlockSize;
  dit.diffusionForcing = causalBlockSize > 0;
  io::saveSafetensors(set.dit, models::WanModel::random(dit, seed).namedParameters(), {{"config", dit.toJson()}});
  const models::WanVaeConfig vae = models::WanVaeConfig::preset(ti2v ? "tiny22" : "tiny");
  io::saveSafetensors(set.vae, models::WanVae::random(vae, seed + 1).namedParameters(), {{"config", vae.toJson()}});
  models::Umt5Config text = models::Umt5Config::preset("tiny");
  text.vocab = 40;
  text.dim = dit.textDim;
  io::saveSafetensors(set.textEncoder, models::Umt5Encoder::random(text, seed + 2).namedParameters());
  return set;
}

}  // namespace shotchain::testing
