#include "models/umt5/umt5_tokenizer.h"

#include <algorithm>
#include <stdexcept>

#include <ATen/ATen.h>

#include "io/weight_set.h"
#include "models/umt5/prompt_cleaning.h"

namespace shotchain::models {
namespace {

constexpr const char* kEmbeddedName = "spiece_model";

}  // namespace

std::vector<std::int64_t> Umt5Tokens::paddedIds(std::size_t length, std::int64_t padId) const {
  std::vector<std::int64_t> out(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(std::min(length, ids.size())));
  out.resize(length, padId);
  return out;
}

std::vector<std::int64_t> Umt5Tokens::mask(std::size_t length) const {
  std::vector<std::int64_t> out(length, 0);
  std::fill(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(std::min(length, ids.size())), 1);
  return out;
}

Umt5Tokenizer::Umt5Tokenizer(text::SentencePieceTokenizer pieces, const std::string& origin)
    : pieces_(std::move(pieces)) {
  eos_ = pieces_.eosId();
  pad_ = pieces_.padId();
  if (eos_ < 0) throw text::TokenizerError(origin + ": the sentencepiece model has no EOS piece (UMT5 needs </s>)");
  if (pad_ < 0) pad_ = 0;  // UMT5 pads with 0 (<pad>); a model without a pad piece still pads with 0
}

Umt5Tokenizer Umt5Tokenizer::fromFile(const std::filesystem::path& path) {
  return Umt5Tokenizer(text::SentencePieceTokenizer::fromFile(path), path.string());
}

Umt5Tokenizer Umt5Tokenizer::fromBytes(std::string_view bytes, const std::string& origin) {
  return Umt5Tokenizer(text::SentencePieceTokenizer::fromBytes(bytes, origin), origin);
}

bool Umt5Tokenizer::hasEmbedded(const io::WeightSet& weights) { return weights.find(kEmbeddedName) != nullptr; }

Umt5Tokenizer Umt5Tokenizer::fromWeights(const io::WeightSet& weights) {
  const std::string origin = weights.label() + ": " + kEmbeddedName;
  const io::WeightInfo* info = weights.find(kEmbeddedName);
  if (!info)
    throw text::TokenizerError(weights.label() +
                               ": no embedded tokenizer (tensor \"spiece_model\"); give a spiece.model file");
  if (info->dtype != io::DType::U8 && info->dtype != io::DType::I8)
    throw text::TokenizerError(origin + ": expected a uint8 tensor, found " + std::string(io::dtypeName(info->dtype)));
  const at::Tensor bytes = weights.load(kEmbeddedName, at::kByte).contiguous().cpu();
  return fromBytes({static_cast<const char*>(bytes.data_ptr()), bytes.nbytes()}, origin);
}

void Umt5Tokenizer::setMaxLength(std::size_t length) {
  if (length < 1) throw std::invalid_argument("Umt5Tokenizer: the maximum length must leave room for EOS");
  maxLength_ = length;
}

Umt5Tokens Umt5Tokenizer::tokenize(std::string_view prompt) const { return tokenizeCleaned(wanCleanPrompt(prompt)); }

Umt5Tokens Umt5Tokenizer::tokenizeCleaned(std::string_view cleaned) const {
  Umt5Tokens out;
  out.cleaned = std::string(cleaned);
  const std::vector<int> pieces = pieces_.encode(out.cleaned);
  out.pieceCount = pieces.size();
  // HF truncation (max_length, add_special_tokens) keeps room for EOS: 511 pieces + EOS.
  const std::size_t keep = std::min(pieces.size(), maxLength_ - 1);
  out.truncated = keep < pieces.size();
  out.ids.assign(pieces.begin(), pieces.begin() + static_cast<std::ptrdiff_t>(keep));
  out.ids.push_back(eos_);
  return out;
}

}  // namespace shotchain::models
