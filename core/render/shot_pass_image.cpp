// Image-to-video shots (Wan 2.2 I2V): the start image as the conditioning y.
#include <string>

#include <ATen/ATen.h>

#include "continuity/image_condition.h"
#include "models/video_vae.h"
#include "render/shot_pass.h"
#include "sequence/continuity_modes.h"
#include "sequence/validation.h"

namespace shotchain::render {

void ShotPass::prepareImageCondition(PreparedShot& out, const Shot& shot, const models::VideoVae& vae) const {
  at::Tensor image = startImage(shot, false);
  const std::int64_t frames = vae.geometry().pixelFrames(out.conditioning.sampleShape[1]);
  // `latent` continuity: the previous shot's last latent frame stands for the image's encoding (zero copy, no
  // round trip), when it is of this shot's size.
  const at::Tensor& tail = out.previousTail;
  if (!image.defined() && tail.defined() && shot.continuity.mode == ContinuityMode::Latent &&
      tail.size(2) == out.conditioning.sampleShape[2] && tail.size(3) == out.conditioning.sampleShape[3]) {
    out.imageConditionSource = "handed_latent";
    out.imageCondition = continuity::imageToVideoConditionFromLatent(vae, tail, frames).to(models_.device);
    out.conditioning.source = out.imageConditionSource;
    return;
  }
  out.imageConditionSource = "start_image";
  if (!image.defined() && out.previous && out.previous->lastFrame.defined()) {
    image = out.previous->lastFrame;
    if (image.size(1) != shot.height || image.size(2) != shot.width)
      image = at::upsample_bicubic2d(image.unsqueeze(0), {shot.height, shot.width}, false)[0].clamp(-1, 1);
    out.imageConditionSource = "previous_last_frame";
  }
  if (!image.defined())
    throw std::runtime_error("shot " + std::to_string(out.index + 1) + " (" + shot.id + "): " + residency_.dit().family() +
                             " is an image-to-video model: give the shot a start image (" +
                             shotPath(static_cast<std::size_t>(out.index), "start_image") + ") or continue it from the shot before");
  out.imageCondition = continuity::imageToVideoCondition(vae, image, frames).to(models_.device);
  out.conditioning.source = out.imageConditionSource;
  out.conditioning.framesEncoded += 1;
}

}  // namespace shotchain::render
