#include "demo/prompt_reliance.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include "demo/demo_generation.h"
#include "demo/procedural_clip.h"
#include "models/umt5/umt5_text_encoder.h"
#include "models/wan/wan_model.h"
#include "models/wan/wan_vae.h"
#include "sampling/sampler.h"

namespace shotchain::demo {

std::vector<PromptReliance> measurePromptReliance(const DemoModels& m, int clips, const std::vector<double>& sigmas) {
  const at::NoGradGuard noGrad;
  const std::int64_t textLen = m.dit->config().textLen;
  auto context = [&](const ClipParams& p) { return sampling::padContext(m.text->encode(clipPrompt(p)), textLen); };
  std::vector<at::Tensor> latents, contexts;
  for (int i = 0; i < clips; ++i) {
    const ClipParams p = randomClipParams(kHeldOutSeedStart + 2000 + static_cast<std::uint64_t>(i));
    latents.push_back(m.vae->encode(renderClip(p)));
    ClipParams colour = p, shape = p, direction = p;  // each with one attribute changed, cycling through the others
    colour.colour = (p.colour + 1 + i % 5) % 6;
    shape.shape = static_cast<Shape>((static_cast<int>(p.shape) + 1 + i % 2) % kShapeCount);
    direction.direction = static_cast<Direction>((static_cast<int>(p.direction) + 1 + i % 4) % kDirectionCount);
    contexts.push_back(at::stack({context(p), context(colour), context(shape), context(direction)}));
  }
  at::Generator generator = at::detail::createCPUGenerator(9);
  std::vector<PromptReliance> out;
  for (const double sigma : sigmas) {
    PromptReliance r;
    r.sigma = sigma;
    for (int i = 0; i < clips; ++i) {
      const at::Tensor x = latents[static_cast<std::size_t>(i)].unsqueeze(0);
      const at::Tensor noise = at::randn(x.sizes(), generator);
      const at::Tensor noisy = ((1 - sigma) * x + sigma * noise).expand({4, -1, -1, -1, -1}).contiguous();
      const at::Tensor velocity =
          m.dit->forwardBatch(noisy, at::full({4}, sigma * 1000.0), contexts[static_cast<std::size_t>(i)]);
      const at::Tensor loss = (velocity - (noise - x)).pow(2).mean({1, 2, 3, 4}).to(at::kDouble);
      const double* l = loss.data_ptr<double>();
      r.loss += l[0] / clips;
      r.colourGap += (l[1] - l[0]) / clips;
      r.shapeGap += (l[2] - l[0]) / clips;
      r.directionGap += (l[3] - l[0]) / clips;
    }
    out.push_back(r);
  }
  return out;
}

}  // namespace shotchain::demo
