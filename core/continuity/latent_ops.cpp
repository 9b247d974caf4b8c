#include "continuity/latent_ops.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include <ATen/ATen.h>

namespace shotchain::continuity {

namespace {

void checkLatent(const at::Tensor& latent, const char* what) {
  if (!latent.defined() || latent.dim() != 4)
    throw std::invalid_argument(std::string(what) + ": expected a latent [C, F, h, w]");
}

}  // namespace

at::Tensor resampleLatent(const at::Tensor& latent, std::int64_t height, std::int64_t width) {
  checkLatent(latent, "resampleLatent");
  if (height <= 0 || width <= 0) throw std::invalid_argument("resampleLatent: target size must be positive");
  if (latent.size(2) == height && latent.size(3) == width) return latent;
  // Frames become the batch: [F, C, h, w]. The (Tensor, IntArrayRef, bool) overload exists in 1.13 and 2.x.
  const at::Tensor frames = latent.to(at::kFloat).permute({1, 0, 2, 3});
  const std::vector<std::int64_t> size{height, width};
  const at::Tensor out = at::upsample_bicubic2d(frames, at::IntArrayRef(size), false);
  return out.permute({1, 0, 2, 3}).contiguous();
}

ChannelStats latentChannelStats(const at::Tensor& latent) {
  checkLatent(latent, "latentChannelStats");
  const at::Tensor flat = latent.to(at::kDouble).reshape({latent.size(0), -1});
  const at::Tensor mean = flat.mean(1);
  const at::Tensor std = (flat - mean.unsqueeze(1)).pow(2).mean(1).sqrt();
  const at::Tensor m = mean.cpu().contiguous(), s = std.cpu().contiguous();
  ChannelStats out;
  out.mean.assign(m.data_ptr<double>(), m.data_ptr<double>() + m.numel());
  out.std.assign(s.data_ptr<double>(), s.data_ptr<double>() + s.numel());
  return out;
}

at::Tensor anchorChannelStats(const at::Tensor& latent, const ChannelStats& reference, std::int64_t fromFrame) {
  checkLatent(latent, "anchorChannelStats");
  const std::int64_t channels = latent.size(0), frames = latent.size(1);
  if (static_cast<std::int64_t>(reference.mean.size()) != channels ||
      static_cast<std::int64_t>(reference.std.size()) != channels)
    throw std::invalid_argument("anchorChannelStats: reference has " + std::to_string(reference.mean.size()) +
                                " channels, the latent " + std::to_string(channels));
  if (fromFrame < 0 || fromFrame >= frames) return latent.clone();
  const at::Tensor part = latent.narrow(1, fromFrame, frames - fromFrame).to(at::kDouble);
  const ChannelStats own = latentChannelStats(part);
  std::vector<double> scale(static_cast<std::size_t>(channels)), shift(static_cast<std::size_t>(channels));
  for (std::size_t c = 0; c < scale.size(); ++c) {
    scale[c] = reference.std[c] / std::max(own.std[c], 1e-12);
    shift[c] = reference.mean[c] - own.mean[c] * scale[c];
  }
  const auto options = at::TensorOptions().dtype(at::kDouble);
  const at::Tensor s = at::tensor(scale, options).to(latent.device()).view({channels, 1, 1, 1});
  const at::Tensor b = at::tensor(shift, options).to(latent.device()).view({channels, 1, 1, 1});
  at::Tensor out = latent.clone();
  out.narrow(1, fromFrame, frames - fromFrame).copy_(part * s + b);
  return out;
}

double rmsDifference(const at::Tensor& a, const at::Tensor& b) {
  if (a.sizes() != b.sizes()) throw std::invalid_argument("rmsDifference: shapes differ");
  return (a.to(at::kDouble) - b.to(at::kDouble)).pow(2).mean().sqrt().item<double>();
}

}  // namespace shotchain::continuity
