#pragma once

// The insides of WanModel, shared by wan_model.cpp (loading, the forward) and wan_model_stream.cpp (the
// KV-cache stream). Included by those two files only.
#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <ATen/ATen.h>

#include "io/ggml_dequant.h"
#include "models/attention.h"
#include "models/block_cache.h"
#include "models/dit_runner.h"
#include "models/kv_cache.h"
#include "models/sequence_parallel.h"
#include "models/wan/rope.h"
#include "models/wan/wan_blocks.h"
#include "models/wan/wan_model.h"

namespace shotchain::models {
namespace wan_detail {

struct Linear {
  at::Tensor weight, bias;
  at::Tensor scale;  // an fp8 weight kept as stored: its float32 scale (its compute dtype is the bias's)
  std::optional<io::GgmlType> ggml;  // a GGUF weight kept as its blocks, [out, bytes per row] (compute: the bias's)
  const std::vector<LayerAdapter>* adapters = nullptr;  // beside the layer (null: none)
  at::Tensor operator()(const at::Tensor& x) const {
    at::Tensor y;
    if (ggml) {
      const std::int64_t in = weight.size(1) / ggmlTraits(*ggml).blockBytes * ggmlTraits(*ggml).blockElements;
      const at::Tensor w = io::dequantiseGgml(weight, *ggml, {weight.size(0), in}, bias.scalar_type());
      y = at::linear(x.to(w.scalar_type()), w, bias);
    } else if (!scale.defined()) {
      y = at::linear(x.to(weight.scalar_type()), weight, bias);
    } else {
      const at::Tensor w = weight.to(at::kFloat).mul_(scale).to(bias.scalar_type());  // as WeightSet::load dequantises
      y = at::linear(x.to(w.scalar_type()), w, bias);
    }
    if (adapters == nullptr) return y;
    const at::ScalarType t = y.scalar_type();
    const at::Tensor in = x.to(t);
    for (const LayerAdapter& a : *adapters)
      y = y + (a.diff.defined() ? at::linear(in, a.diff.to(t)) : at::linear(at::linear(in, a.down.to(t)), a.up.to(t))) *
                  a.factor;
    return y;
  }
};

struct Attention {
  Linear q, k, v, o;
  at::Tensor normQ, normK;  // undefined when qk_norm is off
  Linear kImg, vImg;        // Wan 2.1 I2V / FLF2V cross-attention: keys and values of the image tokens
  at::Tensor normKImg;
};

// Wan 2.1 I2V / FLF2V img_emb: LayerNorm, Linear, GELU, Linear, LayerNorm over the CLIP features.
struct ImageEmbedding {
  at::Tensor norm0Weight, norm0Bias, norm4Weight, norm4Bias;
  Linear proj1, proj3;
  at::Tensor position;  // FLF2V emb_pos [1, 514, imageDim]; undefined for I2V
};

struct Block {
  at::Tensor modulation;
  Attention self, cross;
  at::Tensor norm3Weight, norm3Bias;
  Linear ffn0, ffn2;
};

// RoPE of a stream chunk's call: frames 0…n−1 are the cached ones (in stream order), n…n+f−1 the chunk.
struct StreamRope {
  at::Tensor cos, sin;  // the chunk's: [1, f·tokensPerFrame, d/2] float64
  std::int64_t cachedTokens = 0;
};

}  // namespace wan_detail

using wan_detail::Attention;
using wan_detail::Block;
using wan_detail::ImageEmbedding;
using wan_detail::Linear;
using wan_detail::StreamRope;

struct WanModel::Impl {
  WanConfig config;
  at::ScalarType compute = at::kFloat;
  at::Device device = at::kCPU;
  AttentionImpl attention = AttentionImpl::Auto;
  std::int64_t causalBlockSize = 0;  // patched latent frames per causal block; 0: full attention
  bool trainable = false;            // forward builds the autograd graph (differentiable attention, no NoGradGuard)
  std::shared_ptr<DitParallel> parallel = defaultDitParallel();
  mutable BlockCache* blockCache = nullptr;  // WanModel::setBlockCache
  mutable at::Tensor imageFeatures;          // WanModel::setImageEmbedding: [1, tokens, imageDim] float32
  std::map<std::string, at::Tensor> params;
  std::map<std::string, std::vector<LayerAdapter>> adapters;  // weight name → beside its layer (setLayerAdapters)
  // Resolved references into params:
  at::Tensor patchWeight, patchBias;
  Linear text0, text2, time0, time2, timeProjection, head;
  at::Tensor headModulation;
  at::Tensor fpsEmbedding;  // undefined without inject_sample_info
  Linear fps0, fps2;
  ImageEmbedding imageEmbedding;  // weights undefined without one
  std::vector<Block> blocks;

  const at::Tensor& get(const std::string& name) const { return params.at(name); }
  Linear linear(const std::string& name) const {
    const auto scale = params.find(name + ".weight_scale");
    const auto ggml = params.find(name + ".weight_ggml");
    const auto adapted = adapters.find(name + ".weight");
    return {get(name + ".weight"), get(name + ".bias"), scale == params.end() ? at::Tensor() : scale->second,
            ggml == params.end() ? std::nullopt
                                 : io::ggmlTypeFromId(static_cast<std::uint32_t>(ggml->second.item<std::int64_t>())),
            adapted == adapters.end() ? nullptr : &adapted->second};
  }

  void resolve() {
    patchWeight = get("patch_embedding.weight");
    patchBias = get("patch_embedding.bias");
    text0 = linear("text_embedding.0");
    text2 = linear("text_embedding.2");
    time0 = linear("time_embedding.0");
    time2 = linear("time_embedding.2");
    timeProjection = linear("time_projection.1");
    head = linear("head.head");
    headModulation = get("head.modulation");
    if (config.injectSampleInfo) {
      fpsEmbedding = get("fps_embedding.weight");
      fps0 = linear("fps_projection.0");
      fps2 = linear("fps_projection.2");
    }
    if (config.hasImageEmbedding()) {
      imageEmbedding = {get("img_emb.proj.0.weight"),
                        get("img_emb.proj.0.bias"),
                        get("img_emb.proj.4.weight"),
                        get("img_emb.proj.4.bias"),
                        linear("img_emb.proj.1"),
                        linear("img_emb.proj.3"),
                        config.imagePositionTokens > 0 ? get("img_emb.emb_pos") : at::Tensor()};
    }
    blocks.clear();
    for (std::int64_t i = 0; i < config.numLayers; ++i) {
      const std::string p = "blocks." + std::to_string(i) + ".";
      Block block;
      block.modulation = get(p + "modulation");
      auto attn = [&](const std::string& a) {
        Attention result{
            linear(p + a + ".q"), linear(p + a + ".k"), linear(p + a + ".v"), linear(p + a + ".o"), {}, {}, {}, {}, {}};
        if (config.qkNorm) {
          result.normQ = get(p + a + ".norm_q.weight");
          result.normK = get(p + a + ".norm_k.weight");
        }
        if (a == "cross_attn" && config.hasImageEmbedding()) {
          result.kImg = linear(p + a + ".k_img");
          result.vImg = linear(p + a + ".v_img");
          if (config.qkNorm) result.normKImg = get(p + a + ".norm_k_img.weight");
        }
        return result;
      };
      block.self = attn("self_attn");
      block.cross = attn("cross_attn");
      if (config.crossAttnNorm) {
        block.norm3Weight = get(p + "norm3.weight");
        block.norm3Bias = get(p + "norm3.bias");
      }
      block.ffn0 = linear(p + "ffn.0");
      block.ffn2 = linear(p + "ffn.2");
      blocks.push_back(std::move(block));
    }
  }

  at::Tensor rmsNorm(const at::Tensor& x, const at::Tensor& weight) const { return wanRmsNorm(x, weight, config.eps); }

  // img_emb of the features setImageEmbedding holds (FLF2V adds emb_pos to as many rows as there are tokens,
  // as ComfyUI does for a start image alone): [1, tokens, dim] float32.
  at::Tensor imageContext() const {
    if (!imageFeatures.defined())
      throw std::invalid_argument("WanModel::forward: " + config.family() +
                                  " needs the CLIP features of its image (setImageEmbedding)");
    const ImageEmbedding& e = imageEmbedding;
    at::Tensor f = imageFeatures.to(device);
    if (e.position.defined()) f = f + e.position.narrow(1, 0, f.size(1));
    f = at::layer_norm(f, {config.imageDim}, e.norm0Weight, e.norm0Bias, kImageNormEps);
    f = e.proj3(at::gelu(e.proj1(f)));
    return at::layer_norm(f.to(at::kFloat), {config.dim}, e.norm4Weight, e.norm4Bias, kImageNormEps);
  }
  static constexpr double kImageNormEps = 1e-5;  // MLPProj's nn.LayerNorm default

  at::Tensor layerNorm(const at::Tensor& x) const {
    return at::layer_norm(x.to(at::kFloat), {config.dim}, {}, {}, config.eps);
  }

  // [B, L, dim] → [B, L, H, d]
  at::Tensor heads(const at::Tensor& x) const {
    return x.view({x.size(0), x.size(1), config.numHeads, config.headDim()});
  }

  // causalTokens > 0: block-causal, a query sees the keys up to the end of its block of that many tokens.
  at::Tensor selfAttention(const Attention& a, const at::Tensor& z, const at::Tensor& cos, const at::Tensor& sin,
                           const std::vector<std::int64_t>& keyLengths, std::int64_t causalTokens,
                           const UlyssesSplit* split = nullptr) const {
    const at::Tensor q = ropeApply(heads(rmsNorm(a.q(z), a.normQ)), cos, sin).to(compute);
    const at::Tensor k = ropeApply(heads(rmsNorm(a.k(z), a.normK)), cos, sin).to(compute);
    const at::Tensor v = heads(a.v(z));
    auto attend = [&](const at::Tensor& qs, const at::Tensor& ks, const at::Tensor& vs) {
      return trainable && keyLengths.empty() ? differentiableAttention(qs, ks, vs)
                                             : models::attention(qs, ks, vs, keyLengths, attention);
    };
    auto full = [&](const at::Tensor& qs, const at::Tensor& ks, const at::Tensor& vs) {
      if (causalTokens <= 0 || causalTokens >= qs.size(1)) return attend(qs, ks, vs);
      return blockCausalAttention(qs, ks, vs, causalTokens, attend);
    };
    return a.o((split ? split->attention(q, k, v, full) : full(q, k, v)).flatten(2));
  }

  // Self-attention of a stream chunk z [B, c, dim]: its queries see the cached keys and values of their
  // branch and the chunk's own (block-causally, when the chunk spans several blocks); the chunk's keys and
  // values wait in the cache for forwardCached to commit them (wan_model_stream.cpp).
  at::Tensor cachedSelfAttention(const Attention& a, const at::Tensor& z, const StreamRope& rope, KvCache& cache,
                                 std::int64_t layer, std::int64_t firstBranch, std::int64_t causalTokens) const;

  // Plain softmax attention from out-of-place operations (training), q [B, Lq, H, d], k, v [B, Lk, H, d].
  static at::Tensor differentiableAttention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
    const double scale = 1.0 / std::sqrt(static_cast<double>(q.size(3)));
    const at::Tensor logits = at::matmul(q.transpose(1, 2), k.permute({0, 2, 3, 1})) * scale;  // [B, H, Lq, Lk]
    return at::matmul(at::softmax(logits, -1), v.transpose(1, 2)).transpose(1, 2);             // [B, Lq, H, d]
  }

  // With an image embedding the context is [image tokens, text_len text tokens]: the queries attend to each part
  // in its own softmax, and the two results are summed before `o`.
  at::Tensor crossAttention(const Attention& a, const at::Tensor& z, const at::Tensor& context) const {
    const std::int64_t imageTokens = a.kImg.weight.defined() ? context.size(1) - config.textLen : 0;
    const at::Tensor text = context.narrow(1, imageTokens, context.size(1) - imageTokens);
    const at::Tensor q = heads(rmsNorm(a.q(z), a.normQ));
    const at::Tensor k = heads(rmsNorm(a.k(text), a.normK));
    const at::Tensor v = heads(a.v(text));
    auto attend = [&](const at::Tensor& keys, const at::Tensor& values) {
      return trainable ? differentiableAttention(q, keys, values) : models::attention(q, keys, values, {}, attention);
    };
    at::Tensor out = attend(k, v);
    if (imageTokens > 0) {
      const at::Tensor image = context.narrow(1, 0, imageTokens);
      out = out + attend(heads(rmsNorm(a.kImg(image), a.normKImg)), heads(a.vImg(image)));
    }
    return a.o(out.flatten(2));
  }
};

// A chunk of a stream: its batch rows are branches [firstBranch, firstBranch + B) of the cache.
struct WanModel::StreamCall {
  KvCache* cache = nullptr;
  std::int64_t firstBranch = 0;
};

// The RoPE of a chunk of `frames` frames of h × w tokens after the frames the cache holds for firstBranch….
StreamRope streamRopeFor(const KvCache& cache, std::int64_t firstBranch, std::int64_t batch, std::int64_t headDim,
                         std::int64_t frames, std::int64_t height, std::int64_t width, const at::Device& device);

}  // namespace shotchain::models
