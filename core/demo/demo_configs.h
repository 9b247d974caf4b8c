#pragma once

#include <cstdint>
#include <filesystem>

#include "models/umt5/umt5.h"
#include "models/wan/wan_config.h"
#include "models/wan/wan_vae_config.h"

namespace shotchain::demo {

// The shipped files of builtin:demo, inside resources/demo/.
inline constexpr const char* kDitFile = "dit.safetensors";
inline constexpr const char* kVaeFile = "vae.safetensors";
inline constexpr const char* kTextEncoderFile = "text_encoder.safetensors";
inline constexpr const char* kTokenizerFile = "tokenizer.model";
inline constexpr const char* kLatentRgbFile = "latent_rgb.safetensors";

// Sizes of the demo family (see resources/README.md).
models::WanVaeConfig demoVaeConfig();
models::Umt5Config demoUmt5Config();
models::WanConfig demoDitConfig();  // text_dim = demoUmt5Config().dim
// A keyframe model (`train-demo --keyframes`): `base` as a first–last-frame image-to-video DiT on `vae`'s latents.
models::WanConfig keyframeDitConfig(const models::WanConfig& base, const models::WanVaeConfig& vae);

// The render format the demo model is trained for.
inline constexpr int kDemoWidth = 64;
inline constexpr int kDemoHeight = 64;
inline constexpr int kDemoFrames = 17;
inline constexpr int kDemoFps = 16;

// Recommended sampler settings for the demo model.
inline constexpr int kDemoSteps = 20;
inline constexpr double kDemoShift = 3.0;
inline constexpr double kDemoGuidance = 4.0;
// The timestep a handed prefix is fed at (continuity.condition_noise of workflows/demo*.json): within
// the prefix noise the DiT is trained with (DiffusionForcingRecipe::prefixNoise).
inline constexpr int kDemoConditionNoise = 0;
// The σ shift of the training distribution (shifted uniform).
inline constexpr double kDemoTrainShift = 3.0;

// resources/demo of the source tree (SHOTCHAIN_SOURCE_DIR style callers pass their root).
std::filesystem::path demoResourceDir(const std::filesystem::path& sourceRoot);
bool demoWeightsPresent(const std::filesystem::path& dir);

}  // namespace shotchain::demo
