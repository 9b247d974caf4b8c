#include "sampling/latent_preview.h"

#include <stdexcept>

#include <ATen/ATen.h>

#include "io/safetensors_reader.h"
#include "io/safetensors_writer.h"

namespace shotchain::sampling {

LatentRgbFactors latentRgbFactors(const models::LatentRgbTable& table) {
  LatentRgbFactors f;
  f.weights.assign(table.weights.begin(), table.weights.end());
  f.bias = table.bias;
  f.source = table.source;
  return f;
}

namespace {

at::Tensor weightTensor(const LatentRgbFactors& f) {
  at::Tensor w = at::empty({f.channels(), 3}, at::kFloat);
  auto acc = w.accessor<float, 2>();
  for (int c = 0; c < f.channels(); ++c)
    for (int k = 0; k < 3; ++k) acc[c][k] = f.weights[static_cast<std::size_t>(c)][static_cast<std::size_t>(k)];
  return w;
}

at::Tensor biasTensor(const LatentRgbFactors& f) {
  return at::tensor(std::vector<float>(f.bias.begin(), f.bias.end()));
}

}  // namespace

at::Tensor latentToRgb(const at::Tensor& latent, const LatentRgbFactors& factors) {
  if (latent.dim() != 4 && latent.dim() != 5)
    throw std::invalid_argument("latent must be [C, F, H, W] or [B, C, F, H, W]");
  const std::int64_t channelDim = latent.dim() - 4;
  if (latent.size(channelDim) != factors.channels())
    throw std::invalid_argument("latent has " + std::to_string(latent.size(channelDim)) + " channels, factors have " +
                                std::to_string(factors.channels()));
  const at::Tensor w = weightTensor(factors).to(latent.device());
  const at::Tensor b = biasTensor(factors).to(latent.device());
  // Channels last, then one matmul: [..., F, H, W, C] · [C, 3] + bias.
  const at::Tensor moved = latent.to(at::kFloat).movedim(channelDim, -1);
  return at::matmul(moved, w) + b;
}

at::Tensor latentToRgb8(const at::Tensor& latent, const LatentRgbFactors& factors) {
  const at::Tensor rgb = latentToRgb(latent, factors);
  return ((rgb + 1.0) * 0.5).clamp(0.0, 1.0).mul(255.0).round().to(at::kByte).cpu().contiguous();
}

at::Tensor poolVideoToLatentGrid(const at::Tensor& video, int temporalFactor, int spatialFactor) {
  const bool batched = video.dim() == 5;
  if (video.dim() != 4 && !batched) throw std::invalid_argument("video must be [3, T, H, W] or [B, 3, T, H, W]");
  const at::Tensor v = batched ? video : video.unsqueeze(0);
  const std::int64_t frames = v.size(2), height = v.size(3), width = v.size(4);
  if (temporalFactor < 1 || spatialFactor < 1 || (frames - 1) % temporalFactor != 0 || height % spatialFactor != 0 ||
      width % spatialFactor != 0)
    throw std::invalid_argument("video size does not fit the latent grid (T = 1 + n·tf, H and W multiples of sf)");
  std::vector<at::Tensor> parts{v.narrow(2, 0, 1)};
  if (frames > 1) {
    const at::Tensor rest = v.narrow(2, 1, frames - 1);
    parts.push_back(
        rest.reshape({v.size(0), v.size(1), (frames - 1) / temporalFactor, temporalFactor, height, width}).mean(3));
  }
  const at::Tensor temporal = at::cat(parts, 2).to(at::kFloat);
  const at::Tensor pooled = temporal
                                .reshape({v.size(0), v.size(1), temporal.size(2), height / spatialFactor, spatialFactor,
                                          width / spatialFactor, spatialFactor})
                                .mean({4, 6});
  return batched ? pooled : pooled.squeeze(0);
}

LatentRgbFactors fitLatentRgbFactors(const at::Tensor& latents, const at::Tensor& rgb) {
  if (latents.dim() < 4 || rgb.dim() != latents.dim())
    throw std::invalid_argument("latents and rgb must both be [.., C, F, H, W]");
  const std::int64_t cd = latents.dim() - 4;
  for (std::int64_t d = 0; d < latents.dim(); ++d) {
    if (d != cd && latents.size(d) != rgb.size(d))
      throw std::invalid_argument("latents and rgb differ in shape outside the channel dimension");
  }
  if (rgb.size(cd) != 3) throw std::invalid_argument("rgb must have 3 channels");
  const std::int64_t channels = latents.size(cd);
  const at::Tensor x = latents.to(at::kCPU, at::kDouble).movedim(cd, -1).reshape({-1, channels});
  const at::Tensor y = rgb.to(at::kCPU, at::kDouble).movedim(cd, -1).reshape({-1, 3});
  if (x.size(0) <= channels) throw std::invalid_argument("too few latent pixels to fit the preview factors");
  // Centre, solve the normal equations by Cholesky (well conditioned for real latents), derive the bias.
  const at::Tensor xMean = x.mean(0, true), yMean = y.mean(0, true);
  const at::Tensor xc = x - xMean, yc = y - yMean;
  const at::Tensor gram = xc.t().mm(xc) + 1e-12 * at::eye(channels, at::kDouble);
  const at::Tensor w = at::linalg_solve(gram, xc.t().mm(yc));  // [C, 3]
  const at::Tensor b = (yMean - xMean.mm(w)).squeeze(0);       // [3]
  LatentRgbFactors f;
  f.weights.resize(static_cast<std::size_t>(channels));
  auto wa = w.accessor<double, 2>();
  for (std::int64_t c = 0; c < channels; ++c)
    for (int k = 0; k < 3; ++k)
      f.weights[static_cast<std::size_t>(c)][static_cast<std::size_t>(k)] = static_cast<float>(wa[c][k]);
  for (int k = 0; k < 3; ++k) f.bias[static_cast<std::size_t>(k)] = static_cast<float>(b[k].item<double>());
  f.source = "least-squares fit";
  return f;
}

void saveLatentRgbFactors(const std::filesystem::path& path, const LatentRgbFactors& factors) {
  io::saveSafetensors(path,
                      {{"latent_rgb_factors", weightTensor(factors)}, {"latent_rgb_factors_bias", biasTensor(factors)}},
                      {{"format", "shotchain-latent-rgb-v1"}, {"source", factors.source}});
}

LatentRgbFactors loadLatentRgbFactors(const std::filesystem::path& path) {
  const auto file = io::SafetensorsFile::open(path);
  const auto* w = file->find("latent_rgb_factors");
  const auto* b = file->find("latent_rgb_factors_bias");
  if (w == nullptr || b == nullptr)
    throw std::runtime_error(file->label() + ": latent_rgb_factors and latent_rgb_factors_bias are required");
  if (w->shape.size() != 2 || w->shape[1] != 3 || w->shape[0] == 0 || b->shape != std::vector<std::uint64_t>{3})
    throw std::runtime_error(file->label() + ": latent_rgb_factors must be [C, 3] and the bias [3]");
  const at::Tensor wt = file->tensor(*w, at::kFloat).contiguous();
  const at::Tensor bt = file->tensor(*b, at::kFloat).contiguous();
  LatentRgbFactors f;
  f.weights.resize(static_cast<std::size_t>(wt.size(0)));
  auto wa = wt.accessor<float, 2>();
  for (std::int64_t c = 0; c < wt.size(0); ++c)
    for (int k = 0; k < 3; ++k) f.weights[static_cast<std::size_t>(c)][static_cast<std::size_t>(k)] = wa[c][k];
  for (int k = 0; k < 3; ++k) f.bias[static_cast<std::size_t>(k)] = bt[k].item<float>();
  const auto& meta = file->header().metadata;
  const auto it = meta.find("source");
  f.source = it != meta.end() ? it->second : file->label();
  return f;
}

}  // namespace shotchain::sampling
