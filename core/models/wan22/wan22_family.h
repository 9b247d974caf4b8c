#pragma once

#include "models/model_registry.h"

namespace shotchain::models {

// Wan 2.2's rows of the registry (wan22.md): the TI2V DiT (48 latent channels, clean first frames) and
// the Wan 2.2 VAE (16× spatial, 48 channels). Their classes are Wan's (WanModel, WanVae): the official
// Wan 2.2 code runs Wan 2.1's DiT with per-token timesteps and a new VAE layout.
const ModelFamilyRow& wan22Ti2vFamily();
// The I2V-A14B experts (36 input channels: the latent, the frame mask and the start image's latent).
const ModelFamilyRow& wan22I2vFamily();
const ModelFamilyRow& wan22VaeFamily();

}  // namespace shotchain::models
