#include <cstdio>

#include "cli/verify/verify_report.h"
#include "io/safetensors_reader.h"
#include "io/weight_set.h"
#include "models/wan/wan_vae.h"

namespace shotchain::cli {

bool matchesWanVae(const io::WeightSet& weights, const std::string& source) {
  return source.find("vae.py") != std::string::npos || models::detectWanVaeConfig(weights).isWanVae;
}

// VAE io files (golden README §2): `video` → `latent` (normalised) and `mu_raw` (identity
// normalisation) by encode; `latent` → `decoded_unclamped` (and `decoded`, clamped, when present).
void verifyWanVae(const io::WeightSet& weights, const io::SafetensorsFile& file, Report& report) {
  const auto& meta = file.header().metadata;
  const auto config = meta.find("config");
  const models::WanVae vae = config != meta.end() && !weights.metadata().contains("config")
                                 ? models::WanVae::load(weights, models::WanVaeConfig::fromJson(config->second))
                                 : models::WanVae::load(weights);
  std::printf("config: %s (%s)\n", vae.config().toJson().c_str(), vae.config().variant().c_str());
  if (file.find("scale_inv_std"))
    report.compare("scale_inv_std", at::reciprocal(at::tensor(vae.latentStd()).to(at::kFloat)),
                   file.tensor("scale_inv_std"));
  if (file.find("video")) {
    const at::Tensor video = file.tensor("video");
    if (file.find("latent")) report.compare("latent", vae.encode(video), file.tensor("latent"));
    if (file.find("mu_raw")) report.compare("mu_raw", vae.encode(video, false), file.tensor("mu_raw"));
  }
  if (file.find("latent")) {
    models::VaeDecodeOptions options;
    options.clamp = false;
    if (file.find("decoded_unclamped"))
      report.compare("decoded_unclamped", vae.decode(file.tensor("latent"), options), file.tensor("decoded_unclamped"));
    options.clamp = true;
    if (file.find("decoded"))
      report.compare("decoded", vae.decode(file.tensor("latent"), options), file.tensor("decoded"));
  }
  // Wan 2.2's one-frame image path (§9.2).
  if (file.find("image") && file.find("image_latent")) {
    report.compare("image_latent", vae.encode(file.tensor("image")), file.tensor("image_latent"));
    models::VaeDecodeOptions options;
    options.clamp = false;
    if (file.find("image_decoded_unclamped"))
      report.compare("image_decoded_unclamped", vae.decode(file.tensor("image_latent"), options),
                     file.tensor("image_decoded_unclamped"));
    if (file.find("image_decoded"))
      report.compare("image_decoded", vae.decode(file.tensor("image_latent")), file.tensor("image_decoded"));
  }
}

}  // namespace shotchain::cli
