// Image-to-video shots (Wan 2.2 I2V): the start image as the conditioning y.
#include <string>

#include <ATen/ATen.h>

#include "continuity/image_condition.h"
#include "models/video_vae.h"
#include "render/shot_pass.h"
#include "sequence/validation.h"

namespace shotchain::render {

void ShotPass::prepareImageCondition(PreparedShot& out, const Shot& shot, const models::VideoVae& vae) const {
  at::Tensor image = startImage(shot, false);
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
  out.imageCondition = continuity::imageToVideoCondition(vae, image, vae.geometry().pixelFrames(out.conditioning.sampleShape[1])).to(models_.device);
  out.conditioning.source = out.imageConditionSource;
  out.conditioning.framesEncoded += 1;
}

}  // namespace shotchain::render
