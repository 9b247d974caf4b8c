#include "continuity/handoff.h"

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string>

#include <ATen/ATen.h>

#include "continuity/latent_ops.h"
#include "models/video_vae.h"
#include "sequence/continuity_modes.h"

namespace shotchain::continuity {

namespace {

std::string shapeText(at::IntArrayRef sizes) {
  std::string s = "[";
  for (std::size_t i = 0; i < sizes.size(); ++i) s += (i ? ", " : "") + std::to_string(sizes[i]);
  return s + "]";
}

// A frame [3, H, W] in [−1, 1] encoded alone: [C, 1, height/8, width/8] on `device`.
at::Tensor encodeFrame(const models::VideoVae& vae, const at::Tensor& frame, std::int64_t height, std::int64_t width,
                       c10::Device device, const char* what) {
  if (!frame.defined() || frame.dim() != 3 || frame.size(0) != 3)
    throw std::invalid_argument(std::string(what) + ": expected a frame [3, H, W], got " +
                                (frame.defined() ? shapeText(frame.sizes()) : std::string("nothing")));
  at::Tensor pixels = frame.to(vae.device(), at::kFloat);
  if (pixels.size(1) != height || pixels.size(2) != width) {
    const std::vector<std::int64_t> size{height, width};
    pixels = at::upsample_bicubic2d(pixels.unsqueeze(0), at::IntArrayRef(size), false).squeeze(0).clamp(-1.0, 1.0);
  }
  return vae.encode(pixels.unsqueeze(1)).to(device);
}

bool aliases(const at::Tensor& a, const at::Tensor& b) {
  return a.defined() && b.defined() && a.storage().is_alias_of(b.storage());
}

}  // namespace

std::uint64_t handoffNoiseSeed(std::uint64_t shotSeed) {
  std::uint64_t z = shotSeed + 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

at::Tensor decodeLastFrame(const models::VideoVae& vae, const at::Tensor& latent) {
  if (!latent.defined() || latent.dim() != 4)
    throw std::invalid_argument("previous shot latent: expected [C, F, h, w]");
  const std::unique_ptr<models::VaeDecodeStream> stream = vae.openDecodeStream();
  at::Tensor last;
  const at::Tensor input = latent.to(vae.device(), at::kFloat);
  for (std::int64_t f = 0; f < input.size(1); ++f) last = stream->push(input.narrow(1, f, 1));
  return last.select(1, last.size(1) - 1);
}

Conditioning prepareConditioning(const Continuity& settings, const PreviousShot* previous, const models::VideoVae& vae,
                                 const at::Tensor& fallbackImage, const std::vector<std::int64_t>& latentShape,
                                 std::uint64_t seed, c10::Device device, const ConditioningOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  if (latentShape.size() != 4 || latentShape[1] < 1)
    throw std::invalid_argument("latent shape must be [C, F, h, w] with F ≥ 1");
  at::NoGradGuard noGrad;
  const std::int64_t channels = latentShape[0], frames = latentShape[1], h = latentShape[2], w = latentShape[3];
  const std::int64_t scale = vae.geometry().spatialFactor;

  Conditioning c;
  c.mode = settings.mode;
  c.sampleShape = latentShape;

  const bool hasPrevious = previous != nullptr && previous->latent.defined();
  if (hasPrevious) {
    const at::Tensor& p = previous->latent;
    if (p.dim() != 4 || p.size(0) != channels)
      throw std::invalid_argument("previous shot latent: shape " + shapeText(p.sizes()) + " does not have the " +
                                  std::to_string(channels) + " channels of the shot's latent");
  }
  const auto tailOf = [&](std::int64_t count) {
    const at::Tensor& p = previous->latent;
    count = std::clamp<std::int64_t>(count, 1, p.size(1));
    c.storedTail = p.narrow(1, p.size(1) - count, count);
    at::Tensor tail = resampleLatent(c.storedTail, h, w);
    c.resampled = !aliases(tail, c.storedTail);
    return tail.device() == device ? tail : tail.to(device);
  };
  const auto encode = [&](const at::Tensor& frame, const char* what) {
    ++c.framesEncoded;
    return encodeFrame(vae, frame, h * scale, w * scale, device, what);
  };
  const auto lastFrame = [&] {
    return previous->lastFrame.defined() ? previous->lastFrame : decodeLastFrame(vae, previous->latent);
  };

  switch (settings.mode) {
    case ContinuityMode::None:
      break;
    case ContinuityMode::Latent: {
      if (!hasPrevious) break;
      const ContinuityGeometry geometry = continuityGeometry(settings);
      c.held = tailOf(geometry.handedTailLatents);
      const std::int64_t k = c.held.size(1);
      c.conditionedOn = c.held;
      c.sampleShape[1] = frames + k - 1;
      c.source = "handoff";
      const at::Tensor& p = previous->latent;
      const std::int64_t temporal = vae.geometry().temporalFactor;
      if (options.freshClipDecode) {
        // The new latents follow a 1-frame latent of the shared frame: decode them after one (it is
        // kept, as the held slot's last frame would be: the previous shot's last frame).
        if (options.encodeLastFrameLater && !previous->lastFrame.defined()) {
          c.decodePrefixPending = true;
          c.pendingFrameHeight = h * scale;
          c.pendingFrameWidth = w * scale;
        } else {
          c.decodePrefix = encode(lastFrame(), "previous shot last frame");
        }
        c.decodeSkipLatents = k;
        c.dropPixelFrames = 0;
      } else if (p.size(1) > k) {
        const at::Tensor prefix = resampleLatent(p.narrow(1, p.size(1) - k - 1, 1), h, w);
        c.decodePrefix = prefix.device() == device ? prefix : prefix.to(device);
        c.dropPixelFrames = temporal * k;  // the prefix's 1 frame, the k held slots' but their last frame
      } else {
        c.dropPixelFrames = temporal * (k - 1);  // slot 0 decodes alone as 1 frame: keep the last held frame
      }
      break;
    }
    case ContinuityMode::LatentOverlap: {
      if (!hasPrevious) break;
      const at::Tensor tail = tailOf(continuityGeometry(settings).handedTailLatents);
      const std::int64_t k = tail.size(1);
      const at::Tensor anchor = encode(lastFrame(), "previous shot last frame");
      c.held = at::cat({anchor, tail.to(anchor.scalar_type())}, 1);
      c.conditionedOn = c.held.narrow(1, 1, k);
      c.sampleShape[1] = frames + k;
      c.dropPixelFrames = 1 + vae.geometry().temporalFactor * k;
      if (options.freshClipDecode) {  // the new latents follow the anchor, as in a fresh clip: decode them so
        c.decodePrefix = anchor;
        c.decodeSkipLatents = 1 + k;
        c.dropPixelFrames = 1;
      }
      c.source = "last_frame_encode+handoff";
      break;
    }
    case ContinuityMode::Stream: {
      // The previous frames live in the DiT's KV cache (the stream handoff): nothing is held. The shot
      // generates F − 1 latents, decoded behind the previous shot's tail so that its first frame is that
      // shot's last (as with `latent`).
      if (!hasPrevious) break;
      const at::Tensor& p = previous->latent;
      if (p.size(2) != h || p.size(3) != w)
        throw std::invalid_argument("stream: the previous shot's latent " + shapeText(p.sizes()) +
                                    " is not this shot's size (a stream keeps its resolution)");
      c.storedTail = p.narrow(1, p.size(1) - 1, 1);
      c.conditionedOn = c.storedTail;
      c.sampleShape[1] = frames - 1;
      c.source = "kv_cache";
      if (options.freshClipDecode) {
        c.decodePrefix = encode(lastFrame(), "previous shot last frame");
      } else {
        const std::int64_t k = std::min<std::int64_t>(2, p.size(1));
        c.decodePrefix = p.narrow(1, p.size(1) - k, k).to(device);
        c.dropPixelFrames = vae.geometry().pixelFrames(k) - 1;  // keep the previous shot's last frame
      }
      break;
    }
    case ContinuityMode::Blend: {
      const bool hasImage = fallbackImage.defined();
      const at::Tensor image = hasImage ? encode(fallbackImage, "fallback image") : at::Tensor();
      if (hasPrevious) {
        const at::Tensor tail = tailOf(1);
        const double ratio = settings.blendRatio;
        c.held = hasImage ? ratio * tail + (1.0 - ratio) * image : tail;
        c.conditionedOn = c.held;
        c.source = hasImage ? "handoff+fallback_image" : "handoff";
      } else if (hasImage) {
        c.held = image;
        c.source = "fallback_image";
      }
      break;
    }
    case ContinuityMode::Svi:  // the handed latents enter the image condition (image_condition.h), not the latent
      break;
    case ContinuityMode::VaeRoundtrip:
      if (!hasPrevious) break;
      tailOf(1);
      c.held = encode(lastFrame(), "previous shot last frame");
      c.conditionedOn = c.held;
      c.source = "last_frame_encode";
      break;
  }

  if (!c.held.defined() && options.startImage.defined()) {
    c.held = encode(options.startImage, "start image");
    c.source = "start_image";
  }
  if (c.held.defined()) {
    if (c.held.size(0) != channels || c.held.size(2) != h || c.held.size(3) != w)
      throw std::invalid_argument("conditioning latent " + shapeText(c.held.sizes()) + " does not fit the shot's " +
                                  shapeText(latentShape));
    c.noise = sampling::seededNoise(c.held.sizes().vec(), handoffNoiseSeed(seed), device);
    if (hasPrevious && !aliases(c.held, previous->latent)) c.bytesCopied = c.held.nbytes();
  }
  const std::int64_t prefixFrames = c.decodePrefix.defined() ? c.decodePrefix.size(1) : c.decodePrefixPending ? 1 : 0;
  c.outputPixelFrames =
      vae.geometry().pixelFrames(c.sampleShape[1] - c.decodeSkipLatents + prefixFrames) - c.dropPixelFrames;
  c.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return c;
}

void encodeDecodePrefix(Conditioning& conditioning, const models::VideoVae& vae, const at::Tensor& lastFrame,
                        c10::Device device) {
  if (!conditioning.decodePrefixPending) return;
  conditioning.decodePrefix = encodeFrame(vae, lastFrame, conditioning.pendingFrameHeight,
                                          conditioning.pendingFrameWidth, device, "previous shot last frame");
  conditioning.decodePrefixPending = false;
}

sampling::BeforeStepHook holdSlotsHook(const Conditioning& conditioning) {
  if (!conditioning.held.defined()) return {};
  const at::Tensor held = conditioning.held, noise = conditioning.noise;
  return [held, noise](int, float sigma, at::Tensor& x) {
    const double s = sigma;
    x.narrow(1, 0, held.size(1)).copy_(held * (1.0 - s) + noise * s);
  };
}

void restoreHeldSlots(at::Tensor& latent, const Conditioning& conditioning) {
  if (!conditioning.held.defined()) return;
  latent.narrow(1, 0, conditioning.held.size(1)).copy_(conditioning.held);
}

at::Tensor decodeInput(const at::Tensor& latent, const Conditioning& conditioning) {
  if (!conditioning.decodePrefix.defined()) return latent;
  at::Tensor shot = latent.dim() == 5 ? latent.squeeze(0) : latent;
  if (conditioning.decodeSkipLatents > 0)
    shot = shot.narrow(1, conditioning.decodeSkipLatents, shot.size(1) - conditioning.decodeSkipLatents);
  return at::cat({conditioning.decodePrefix.to(shot.device(), shot.scalar_type()), shot}, 1);
}

at::Tensor keptFrames(const at::Tensor& decoded, const Conditioning& conditioning) {
  if (conditioning.dropPixelFrames == 0) return decoded;
  if (decoded.dim() != 4 || decoded.size(1) <= conditioning.dropPixelFrames)
    throw std::invalid_argument("decoded frames: expected [3, T, H, W] with more than " +
                                std::to_string(conditioning.dropPixelFrames) + " frames");
  return decoded.narrow(1, conditioning.dropPixelFrames, decoded.size(1) - conditioning.dropPixelFrames);
}

std::optional<double> handoffMse(const Conditioning& conditioning) {
  if (!conditioning.storedTail.defined() || !conditioning.conditionedOn.defined()) return std::nullopt;
  const at::Tensor& tail = conditioning.storedTail;
  at::Tensor used = resampleLatent(conditioning.conditionedOn, tail.size(2), tail.size(3));
  return (used.to(tail.device(), at::kDouble) - tail.to(at::kDouble)).pow(2).mean().item<double>();
}

double roundtripMse(const models::VideoVae& vae, const at::Tensor& tail) {
  if (!tail.defined() || tail.dim() != 4) throw std::invalid_argument("roundtripMse: tail must be [C, n, h, w]");
  at::NoGradGuard noGrad;
  const at::Tensor input = tail.to(vae.device(), at::kFloat);
  const at::Tensor again = vae.encode(vae.decode(input));
  return (again.to(at::kDouble) - input.to(at::kDouble)).pow(2).mean().item<double>();
}

}  // namespace shotchain::continuity
