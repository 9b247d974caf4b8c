#include "continuity/image_condition.h"

#include <stdexcept>
#include <string>

#include <ATen/ATen.h>

#include "models/video_vae.h"

namespace shotchain::continuity {
namespace {

void checkImage(const at::Tensor& image, const char* what) {
  if (image.defined() && (image.dim() != 3 || image.size(0) != 3))
    throw std::invalid_argument(std::string("image-to-video condition: the ") + what + " must be [3, H, W]");
}

// [3, frames, H, W]: the given pictures at both ends, grey (0) between.
at::Tensor keyframeClip(const at::Tensor& first, const at::Tensor& last, std::int64_t frames, std::int64_t height,
                        std::int64_t width, c10::Device device) {
  at::Tensor clip = at::zeros({3, frames, height, width}, at::TensorOptions().device(device));
  if (first.defined()) clip.select(1, 0).copy_(first);
  if (last.defined()) clip.select(1, frames - 1).copy_(last);
  return clip;
}

}  // namespace

at::Tensor imageToVideoMask(std::int64_t frames, std::int64_t latentHeight, std::int64_t latentWidth,
                            std::int64_t temporal, bool firstGiven, bool lastGiven) {
  if (frames < 1 || (frames - 1) % temporal != 0)
    throw std::invalid_argument("image-to-video mask: " + std::to_string(frames) + " frames is not 1 + " +
                                std::to_string(temporal) + "·k");
  const std::int64_t latentFrames = (frames - 1) / temporal + 1;
  at::Tensor mask = at::zeros({1, frames + temporal - 1, latentHeight, latentWidth}, at::kFloat);
  if (firstGiven) mask.narrow(1, 0, temporal).fill_(1.0);  // frame 0, repeated `temporal` times
  if (lastGiven) mask.narrow(1, frames + temporal - 2, 1).fill_(1.0);
  return mask.view({1, latentFrames, temporal, latentHeight, latentWidth}).transpose(1, 2)[0].contiguous();
}

at::Tensor imageToVideoCondition(const models::VideoVae& vae, const at::Tensor& first, const at::Tensor& last,
                                 std::int64_t frames) {
  checkImage(first, "start image");
  checkImage(last, "end image");
  if (!first.defined() && !last.defined())
    throw std::invalid_argument("image-to-video condition: neither a start nor an end image");
  const at::Tensor& any = first.defined() ? first : last;
  if (first.defined() && last.defined() && first.sizes() != last.sizes())
    throw std::invalid_argument("image-to-video condition: the start and end images differ in size");
  if (frames < 2 && first.defined() && last.defined())
    throw std::invalid_argument("image-to-video condition: a one-frame clip cannot start and end on two images");
  const models::VaeGeometry geometry = vae.geometry();
  const std::int64_t spatial = geometry.spatialFactor;
  if (any.size(1) % spatial != 0 || any.size(2) % spatial != 0)
    throw std::invalid_argument("image-to-video condition: the image's size is not a multiple of the VAE's " +
                                std::to_string(spatial));
  const at::Tensor latent = vae.encode(keyframeClip(first.defined() ? first.to(vae.device(), at::kFloat) : first,
                                                    last.defined() ? last.to(vae.device(), at::kFloat) : last, frames,
                                                    any.size(1), any.size(2), vae.device()));
  const at::Tensor mask = imageToVideoMask(frames, any.size(1) / spatial, any.size(2) / spatial,
                                           geometry.temporalFactor, first.defined(), last.defined())
                              .to(latent.device());
  return at::cat({mask, latent}, 0);
}

at::Tensor imageToVideoConditionFromLatent(const models::VideoVae& vae, const at::Tensor& first, const at::Tensor& last,
                                           std::int64_t frames) {
  if (first.dim() != 4 || first.size(1) != 1)
    throw std::invalid_argument("image-to-video condition: the handed latent must be one frame [z, 1, h, w]");
  checkImage(last, "end image");
  const models::VaeGeometry geometry = vae.geometry();
  const std::int64_t spatial = geometry.spatialFactor;
  const std::int64_t height = first.size(2) * spatial, width = first.size(3) * spatial;
  if (last.defined() && (last.size(1) != height || last.size(2) != width))
    throw std::invalid_argument("image-to-video condition: the end image is not the handed latent's size");
  at::Tensor latent = vae.encode(
      keyframeClip({}, last.defined() ? last.to(vae.device(), at::kFloat) : last, frames, height, width, vae.device()));
  latent.narrow(1, 0, 1).copy_(first.to(latent.device(), latent.scalar_type()));
  const at::Tensor mask =
      imageToVideoMask(frames, first.size(2), first.size(3), geometry.temporalFactor, true, last.defined())
          .to(latent.device());
  return at::cat({mask, latent}, 0);
}

at::Tensor sviCondition(const at::Tensor& anchor, const at::Tensor& motion, std::int64_t latentFrames,
                        std::int64_t temporal) {
  if (anchor.dim() != 4 || anchor.size(1) != 1)
    throw std::invalid_argument("svi condition: the anchor latent must be one frame [z, 1, h, w]");
  const std::int64_t k = motion.defined() ? motion.size(1) : 0;
  if (motion.defined() && (motion.dim() != 4 || motion.size(0) != anchor.size(0) || motion.size(2) != anchor.size(2) ||
                           motion.size(3) != anchor.size(3)))
    throw std::invalid_argument("svi condition: the motion latents are not the anchor's size");
  if (1 + k > latentFrames)
    throw std::invalid_argument("svi condition: the anchor and " + std::to_string(k) + " motion latents do not fit " +
                                std::to_string(latentFrames) + " latent frames");
  at::Tensor latent =
      at::zeros({anchor.size(0), latentFrames, anchor.size(2), anchor.size(3)}, anchor.options().dtype(at::kFloat));
  latent.narrow(1, 0, 1).copy_(anchor);
  if (k > 0) latent.narrow(1, 1, k).copy_(motion.to(latent.device(), at::kFloat));
  const at::Tensor mask =
      imageToVideoMask(1 + temporal * (latentFrames - 1), anchor.size(2), anchor.size(3), temporal).to(latent.device());
  return at::cat({mask, latent}, 0);
}

}  // namespace shotchain::continuity
