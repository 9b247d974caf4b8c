#include "training/diffusion_forcing_batch.h"

#include <stdexcept>
#include <vector>

#include <ATen/ATen.h>

#include "training/flow_matching.h"

namespace shotchain::training {

DiffusionForcingBatch makeDiffusionForcingBatch(const at::Tensor& latents, const at::Tensor& index,
                                                const at::Tensor& firstPrompt, const at::Tensor& secondPrompt,
                                                const DiffusionForcingRecipe& r, double shift, at::Generator& g) {
  const std::int64_t batch = index.numel(), frames = latents.size(2);
  if (frames < r.window) throw std::invalid_argument("makeDiffusionForcingBatch: fewer latent frames than the window");
  const bool chains = frames > r.window && secondPrompt.defined();
  const auto f64 = at::TensorOptions().dtype(at::kDouble);
  const at::Tensor u = at::rand({batch, 5}, g, f64);
  const at::Tensor prefixDraw = at::randint(1, r.maxPrefix + 1, {batch}, g, at::TensorOptions().dtype(at::kLong));
  const at::Tensor perFrame = sampleShiftedSigmas(batch * r.window, shift, g).view({batch, r.window});
  const at::Tensor shared = sampleShiftedSigmas(batch, shift, g);
  std::vector<at::Tensor> windows;
  std::vector<std::int64_t> rows;
  at::Tensor sigma = at::empty({batch, r.window}, at::TensorOptions().dtype(at::kFloat));
  at::Tensor mask = at::ones({batch, 1, r.window, 1, 1}, at::TensorOptions().dtype(at::kFloat));
  for (std::int64_t b = 0; b < batch; ++b) {
    const std::int64_t i = index[b].item<std::int64_t>();
    const bool chain = chains && u[b][0].item<double>() < r.chainShare;
    const std::int64_t drawn = std::min<std::int64_t>(prefixDraw[b].item<std::int64_t>(), frames - r.window);
    std::int64_t prefix = 0, start = 0;
    if (chain) {
      prefix = std::max<std::int64_t>(1, drawn);
      start = r.window - prefix;  // the first clip's last `prefix` latents, then the second clip's
    } else if (u[b][1].item<double>() < r.prefixShare) {
      prefix = prefixDraw[b].item<std::int64_t>();
    }
    windows.push_back(latents[i].narrow(1, start, r.window));
    rows.push_back((chain ? secondPrompt : firstPrompt)[i].item<std::int64_t>());
    at::Tensor row = u[b][2].item<double>() < r.sharedSigmaShare ? shared[b].expand({r.window}) : perFrame[b];
    row = row.clone();
    if (prefix > 0) {
      const bool noised = u[b][3].item<double>() < r.prefixNoiseShare;
      row.narrow(0, 0, prefix).fill_(noised ? u[b][4].item<double>() * r.prefixNoise : 0.0);
      mask[b].narrow(1, 0, prefix).zero_();
    }
    sigma[b].copy_(row);
  }
  DiffusionForcingBatch out;
  out.x0 = at::stack(windows);
  const at::Tensor noise = at::randn(out.x0.sizes(), g, out.x0.options());
  const at::Tensor s = sigma.view({batch, 1, r.window, 1, 1});
  out.noisy = (1 - s) * out.x0 + s * noise;
  out.target = noise - out.x0;
  out.timestep = sigma * 1000.0;
  out.lossMask = mask;
  out.promptRow = at::tensor(rows, at::TensorOptions().dtype(at::kLong));
  return out;
}

}  // namespace shotchain::training
