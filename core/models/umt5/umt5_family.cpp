#include "models/umt5/umt5_family.h"

#include <algorithm>

#include "io/strict_weight_loader.h"
#include "io/weight_set.h"
#include "models/umt5/umt5.h"
#include "models/umt5/umt5_text_encoder.h"
#include "models/umt5/umt5_tokenizer.h"

namespace shotchain::models {
namespace {

std::uint64_t nonNegative(std::int64_t v) { return static_cast<std::uint64_t>(std::max<std::int64_t>(v, 0)); }

std::optional<IdentifiedModel> identifyUmt5(const io::WeightSet& weights) {
  const Umt5Detection umt5 = detectUmt5Config(weights);
  if (!umt5.isUmt5) return std::nullopt;
  return IdentifiedModel{"umt5", ModelRole::TextEncoder, "UMT5 encoder",
                         umt5.problems.empty() ? "" : umt5.problems.front()};
}

std::unique_ptr<TextEncoder> loadUmt5(const std::filesystem::path& file, const std::filesystem::path& tokenizer,
                                      c10::Device device, std::size_t maxTokens) {
  Umt5TextEncoderOptions options;
  options.model.device = device;
  options.textLen = maxTokens;
  options.tokenizer = tokenizer;
  return std::make_unique<Umt5TextEncoder>(Umt5TextEncoder::load(file, options));
}

// Weights at their load dtype (matmuls at the stored precision, norms and position-bias tables in
// float32) and the activations of one prompt at the full text length.
EncoderMemory umt5MemoryOf(const io::WeightSet& weights) {
  const Umt5Detection d = detectUmt5Config(weights);
  const Umt5Config& c = d.config;
  const c10::ScalarType matmulDtype =
      io::matmulLoadDtype(weights.find(umt5StoredName("blocks.0.ffn.fc1.weight", d.naming)), false);
  const std::uint64_t s = c10::elementSize(matmulDtype);
  const std::uint64_t dim = nonNegative(c.dim), ffn = nonNegative(c.dimFfn), heads = nonNegative(c.numHeads),
                      layers = nonNegative(c.numLayers);
  const std::uint64_t f32 = layers * (2 * dim + nonNegative(c.numBuckets) * heads) + dim;
  EncoderMemory m;
  m.weightBytes = (c.parameterCount() - f32) * s + f32 * 4;
  const std::uint64_t len = 512;
  m.activationBytes = len * (6 * 4 * dim + 3 * s * ffn) + 3 * 4 * heads * len * len;
  return m;
}

TextEncoderFacts umt5Facts(const io::WeightSet& weights) {
  TextEncoderFacts facts;
  facts.embeddedTokenizer = models::Umt5Tokenizer::hasEmbedded(weights);
  return facts;
}

const FamilyKnowledge& umt5Knowledge() {
  static const FamilyKnowledge knowledge{
      .name = "UMT5 text encoder", .comfy = {.file = "umt5_xxl_fp8_e4m3fn_scaled.safetensors", .clipType = "wan"}};
  return knowledge;
}

}  // namespace

const ModelFamilyRow& umt5Family() {
  static const ModelFamilyRow row{.name = "umt5",
                                  .role = ModelRole::TextEncoder,
                                  .identify = identifyUmt5,
                                  .loadTextEncoder = loadUmt5,
                                  .textEncoderMemory = umt5MemoryOf,
                                  .knowledge = &umt5Knowledge(),
                                  .textEncoderFacts = umt5Facts};
  return row;
}

}  // namespace shotchain::models
