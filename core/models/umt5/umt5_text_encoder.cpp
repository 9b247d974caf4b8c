#include "models/umt5/umt5_text_encoder.h"

#include <optional>
#include <stdexcept>

#include <ATen/ATen.h>

#include "io/weight_set.h"
#include "models/umt5/umt5_tokenizer.h"

namespace shotchain::models {

struct Umt5TextEncoder::Impl {
  std::optional<models::Umt5Tokenizer> tokenizer;
  std::optional<Umt5Encoder> encoder;

  void requireLoaded() const {
    if (!tokenizer || !encoder || !encoder->isLoaded()) throw std::logic_error("Umt5TextEncoder: used after unload()");
  }
};

Umt5TextEncoder::Umt5TextEncoder(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Umt5TextEncoder::~Umt5TextEncoder() = default;
Umt5TextEncoder::Umt5TextEncoder(Umt5TextEncoder&&) noexcept = default;
Umt5TextEncoder& Umt5TextEncoder::operator=(Umt5TextEncoder&&) noexcept = default;

Umt5TextEncoder Umt5TextEncoder::load(const std::filesystem::path& path, const Umt5TextEncoderOptions& options) {
  auto impl = std::make_unique<Impl>();
  // The WeightSet (and its file mapping) lives only for the load: the encoder keeps its own
  // tensors, so unload() really lets the memory go.
  const io::WeightSet weights = io::WeightSet::open(path);
  impl->tokenizer.emplace(options.tokenizer.empty() ? models::Umt5Tokenizer::fromWeights(weights)
                                                    : models::Umt5Tokenizer::fromFile(options.tokenizer));
  impl->tokenizer->setMaxLength(options.textLen);
  impl->encoder.emplace(Umt5Encoder::load(weights, options.model));
  if (impl->tokenizer->vocabSize() > impl->encoder->config().vocab)
    throw std::runtime_error(weights.label() + ": the tokenizer has " + std::to_string(impl->tokenizer->vocabSize()) +
                             " pieces but the encoder only " + std::to_string(impl->encoder->config().vocab) + " rows");
  return Umt5TextEncoder(std::move(impl));
}

at::Tensor Umt5TextEncoder::encode(const std::string& prompt) const {
  impl_->requireLoaded();
  return impl_->encoder->encode(impl_->tokenizer->tokenize(prompt).ids);
}

std::vector<at::Tensor> Umt5TextEncoder::encode(const std::vector<std::string>& prompts) const {
  std::vector<at::Tensor> out;
  out.reserve(prompts.size());
  for (const std::string& prompt : prompts) out.push_back(encode(prompt));
  return out;
}

const models::Umt5Tokenizer& Umt5TextEncoder::tokenizer() const {
  impl_->requireLoaded();
  return *impl_->tokenizer;
}

const Umt5Encoder& Umt5TextEncoder::encoder() const {
  impl_->requireLoaded();
  return *impl_->encoder;
}

void Umt5TextEncoder::unload() {
  if (impl_->encoder) impl_->encoder->unload();
  impl_->encoder.reset();
  impl_->tokenizer.reset();
}

bool Umt5TextEncoder::isLoaded() const { return impl_->encoder && impl_->encoder->isLoaded(); }

}  // namespace shotchain::models
