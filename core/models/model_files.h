#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "sequence/sequence.h"

namespace shotchain::models {

// The files of one model set, resolved to paths that exist (except the demo model's, which the
// demo-model helper writes; see builtinModelDirectory).
struct ModelFiles {
  std::filesystem::path dit;
  std::filesystem::path ditHighNoise;  // empty: one DiT; else the high-noise expert (`dit` is the low-noise one)
  std::filesystem::path vae;
  std::filesystem::path textEncoder;
  std::filesystem::path tokenizer;     // empty: the tokenizer embedded in the text encoder file
  std::filesystem::path latentRgb;     // empty: none (the preview falls back to its default factors)
  std::filesystem::path imageEncoder;  // CLIP vision (Wan 2.1 I2V / FLF2V); empty: none
  // A preview decoder for the DiT's latents (a models folder's vae_approx/, as ComfyUI finds one); empty: none.
  // Not part of the model fingerprint: previews change nothing a render writes.
  std::filesystem::path previewDecoder;
  std::string description;  // "builtin:demo (…/share/shotchain/demo)", "models folder …"
};

// Where the files of "builtin:<name>" live: $SHOTCHAIN_RESOURCE_DIR/<name>, else
// <executable dir>/../share/shotchain/<name>, else the source tree's resources/<name>. The first
// that exists as a folder; the last when none does.
std::filesystem::path builtinModelDirectory(const std::string& name);

// Every weights file (.safetensors, .safetensors.index.json, .pt, .pth) under `folder` and its subfolders,
// sorted by path; a shard is left out when its index file is there.
std::vector<std::filesystem::path> weightsFilesIn(const std::filesystem::path& folder);

// Resolves the document's model set. builtin: fixed names in builtinModelDirectory (dit,
// vae, text_encoder .safetensors, tokenizer.model and latent_rgb.safetensors when present).
// folder: a ComfyUI models folder; components not named explicitly are found by reading the
// safetensors headers under diffusion_models/ (or unet/), vae/, text_encoders/ (or clip/).
// Explicit files are relative to the folder when one is given, else to the sequence folder.
// Throws std::runtime_error naming the document field ("model.dit", "model.folder") and the path.
ModelFiles resolveModelFiles(const ModelSet& model, const std::filesystem::path& sequenceDirectory);

}  // namespace shotchain::models
