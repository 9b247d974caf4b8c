#pragma once

// The Wan VAE's encoder/decoder stacks as resolved tensors, and the chunked causal pass over them
// (wan21.md §2.5). Internal to core/models: wan_vae.cpp builds a Coder from the state dict.
#include <cstdint>
#include <vector>

#include <ATen/core/Tensor.h>

#include "models/wan/wan_vae_config.h"

namespace shotchain::models::vae_detail {

using Kind = WanVaeBlock::Kind;

struct Conv {
  at::Tensor weight, bias;
};

struct Norm {
  at::Tensor gamma;  // [1, C, 1, 1, 1] (or [1, C, 1, 1] inside attention)
  double scale = 1;  // √C
};

struct Block {
  Kind kind = Kind::Residual;
  // Residual
  Norm norm1, norm2;
  Conv conv1, conv2, shortcut;
  int slot1 = -1, slot2 = -1;
  // Attention
  Norm attnNorm;
  Conv qkv, proj;
  // Resample
  Conv spatial, time;
  int timeSlot = -1;  // causal cache of upsample3d's time_conv / last frame of downsample3d
  int flag = -1;      // "first chunk done" of a temporal resample or a DupUpShortcut
  // AvgDownShortcut / DupUpShortcut (Wan 2.2)
  std::int64_t in = 0, out = 0, factorT = 1, factorS = 1;
};

struct Coder {
  Conv conv1;
  int conv1Slot = -1;
  std::vector<Block> blocks;
  Norm headNorm;
  Conv head;
  int headSlot = -1;
  int slots = 0;
  int flags = 0;
};

// Everything carried from one chunk to the next (wan21.md §2.5): the last two input frames of
// every k3 causal conv (zero frames where the clip has fewer), and the first-chunk flags.
struct Caches {
  std::vector<at::Tensor> frames;
  std::vector<char> firstDone;
  // Differentiable pass (training): out-of-place operations only, any batch size.
  bool grad = false;
  explicit Caches(const Coder& coder, bool differentiable = false)
      : frames(static_cast<std::size_t>(coder.slots)),
        firstDone(static_cast<std::size_t>(coder.flags), 0),
        grad(differentiable) {}
  at::Tensor& slot(int i) { return frames[static_cast<std::size_t>(i)]; }
  bool first(int i) {
    char& done = firstDone[static_cast<std::size_t>(i)];
    const bool wasFirst = done == 0;
    done = 1;
    return wasFirst;
  }
};

// One chunk of frames through the stack; the causal caches carry over to the next chunk. With
// caches.grad the pass is differentiable (training), out of place.
at::Tensor runCoder(const Coder& coder, at::Tensor x, Caches& caches);

}  // namespace shotchain::models::vae_detail
