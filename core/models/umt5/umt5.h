#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <ATen/core/Tensor.h>

namespace shotchain::io {
class WeightSet;
}

namespace shotchain::models {

// Constructor arguments of the official T5Encoder as umt5_xxl(encoder_only=True) builds it
// (wan21.md §3.1). Every value but maxDistance and eps can be read from tensor shapes.
struct Umt5Config {
  std::int64_t vocab = 256384;
  std::int64_t dim = 4096;
  std::int64_t dimAttn = 4096;  // num_heads × head_dim
  std::int64_t dimFfn = 10240;
  std::int64_t numHeads = 64;
  std::int64_t numLayers = 24;
  std::int64_t numBuckets = 32;
  std::int64_t maxDistance = 128;
  double eps = 1e-6;

  std::int64_t headDim() const { return dimAttn / numHeads; }
  std::uint64_t parameterCount() const;
  // "umt5-xxl", "tiny" (the golden test size) or "custom".
  std::string variant() const;
  // Throws std::invalid_argument describing the first inconsistency.
  void check() const;
  // "xxl", "tiny"; throws std::invalid_argument for other names.
  static Umt5Config preset(std::string_view name);
};

// The two key namings of the same weights (wan21.md §3.4).
enum class Umt5Naming {
  Wan,          // official Wan .pth names: token_embedding.weight, blocks.N.attn.q.weight, …
  HuggingFace,  // HF UMT5 / ComfyUI: shared.weight, encoder.block.N.layer.0.SelfAttention.q.weight, …
};

struct Umt5Detection {
  bool isUmt5 = false;  // the file holds a T5/UMT5 encoder in one of the namings
  Umt5Config config;
  Umt5Naming naming = Umt5Naming::Wan;
  std::vector<std::string> problems;  // empty ⇒ loadable
};

// Reads the configuration from tensor names and shapes. Classic T5 (one shared position-bias
// table) is reported as a problem: UMT5 has a table in every layer.
Umt5Detection detectUmt5Config(const io::WeightSet& weights);

// The stored name of an official (Wan) parameter name in `naming`.
std::string umt5StoredName(const std::string& officialName, Umt5Naming naming);

// Bidirectional relative-position bucket of rel = key position − query position (wan21.md §3.3):
// numBuckets/2 per direction, keys after the query in the upper half, exact below a quarter of
// numBuckets, logarithmic (float32 maths, truncated) up to maxDistance, clamped to the last bucket.
std::int64_t umt5RelativePositionBucket(std::int64_t rel, std::int64_t numBuckets = 32, std::int64_t maxDistance = 128);
// The same for a tensor of relative positions (any integer dtype) → int64.
at::Tensor umt5RelativePositionBuckets(const at::Tensor& rel, std::int64_t numBuckets = 32,
                                       std::int64_t maxDistance = 128);

// Intermediate activations captured during forward, keyed like the official submodules:
// "blocks.N" (output of T5SelfAttention N, float32 [B, L, dim]) and "blocks.N.pos_bias"
// ([1, heads, L, L], the relative-position bias of layer N before masking).
using Umt5Trace = std::map<std::string, at::Tensor>;

struct Umt5LoadOptions {
  // Dtype of the matmul weights, the token embedding and the matmuls. Norm weights and the
  // position-bias tables stay float32, the residual stream and softmax are float32.
  // nullopt = float32 for F32/F64 files, bfloat16 for BF16/F16/fp8 files (the reference runs
  // the encoder in bf16).
  std::optional<at::ScalarType> computeDtype;
  at::Device device = at::kCPU;
};

// The UMT5-XXL encoder of Wan 2.1 (wan21.md §3), inference only. Loaded once, used for every
// prompt of a sequence, then unload()ed to return its memory before the DiT runs.
class Umt5Encoder {
 public:
  // Strict: every tensor the config needs must be present with the right shape; other tensors
  // are an error except `spiece_model` (the embedded tokenizer), a tied
  // `encoder.embed_tokens.weight`, and decoder / lm_head tensors of full T5 checkpoints.
  // Throws std::runtime_error naming the file and the tensor.
  static Umt5Encoder load(const io::WeightSet& weights, const Umt5LoadOptions& options = {});
  static Umt5Encoder load(const io::WeightSet& weights, const Umt5Config& config, const Umt5LoadOptions& options = {});
  // Random weights (norms 1, linears scaled by 1/√fan-in, embedding N(0, 1)): the demo model's
  // frozen text encoder, and shape tests.
  static Umt5Encoder random(const Umt5Config& config, std::uint64_t seed, const Umt5LoadOptions& options = {});

  const Umt5Config& config() const;
  at::ScalarType computeDtype() const;
  at::Device device() const;
  Umt5Naming naming() const;

  // Drops every weight tensor this encoder holds (its memory returns to the allocator once no
  // caller keeps a copy of a tensor from namedParameters()). Further forward calls throw.
  void unload();
  bool isLoaded() const;
  // Bytes of the weights currently held (0 after unload()).
  std::uint64_t parameterBytes() const;
  // Official (Wan) names → tensors, in their load dtype.
  std::vector<std::pair<std::string, at::Tensor>> namedParameters() const;

  // T5Encoder.forward(ids, mask): ids [B, L] integer, mask [B, L] (non-zero = real token) or
  // undefined (no mask). Returns [B, L, dim] float32; padded rows are computed (not zero), as
  // in the reference.
  at::Tensor forward(const at::Tensor& ids, const at::Tensor& mask = {}, Umt5Trace* trace = nullptr) const;
  // The bias of layer `layer` for lq queries and lk keys: [1, heads, lq, lk] float32.
  at::Tensor positionBias(std::int64_t layer, std::int64_t lq, std::int64_t lk) const;

  // The Wan context of one prompt: the rows of the real tokens (ids incl. EOS, as
  // Umt5Tokenizer gives them) → [n, dim] float32. Identical to the reference's
  // out[0, :seq_len] of the 512-token padded, masked call; see encode() in umt5.cpp for why.
  at::Tensor encode(const std::vector<std::int64_t>& ids) const;
  // encode() followed by zero rows up to textLen → [textLen, dim] (what the DiT pads to).
  at::Tensor encodePadded(const std::vector<std::int64_t>& ids, std::int64_t textLen = 512) const;

  ~Umt5Encoder();
  Umt5Encoder(Umt5Encoder&&) noexcept;
  Umt5Encoder& operator=(Umt5Encoder&&) noexcept;

 private:
  struct Impl;
  explicit Umt5Encoder(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace shotchain::models
