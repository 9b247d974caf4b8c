#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "text/sentencepiece_tokenizer.h"

namespace shotchain::io {
class WeightSet;
}

namespace shotchain::models {

// One prompt ready for the UMT5 encoder.
struct Umt5Tokens {
  std::vector<std::int64_t> ids;  // pieces then EOS, at most maxLength (incl. EOS)
  std::size_t pieceCount = 0;     // pieces of the cleaned prompt before truncation
  bool truncated = false;
  std::string cleaned;  // the text that was tokenised

  // The reference's padding='max_length' form: ids padded with `padId` to `length`, and the mask
  // (1 for real tokens incl. EOS).
  std::vector<std::int64_t> paddedIds(std::size_t length, std::int64_t padId = 0) const;
  std::vector<std::int64_t> mask(std::size_t length) const;
};

// The UMT5 tokenizer front end of Wan (wan21.md §3.5): Wan's text cleaning, SentencePiece
// pieces, truncation to maxLength tokens including EOS, EOS appended (no BOS).
// Differences from HF's T5TokenizerFast that the reference uses: special-token strings typed in
// a prompt ("</s>", "<extra_id_0>") are encoded as plain text here, not as their ids.
class Umt5Tokenizer {
 public:
  static constexpr std::size_t kTextLen = 512;

  // A spiece.model file.
  static Umt5Tokenizer fromFile(const std::filesystem::path& path);
  // Serialized model bytes; `origin` names them in errors.
  static Umt5Tokenizer fromBytes(std::string_view bytes, const std::string& origin);
  // The `spiece_model` uint8 tensor that ComfyUI text-encoder files embed (wan21.md §3.6).
  // Throws TokenizerError naming the file when there is none.
  static Umt5Tokenizer fromWeights(const io::WeightSet& weights);
  static bool hasEmbedded(const io::WeightSet& weights);

  // Cleans (wanCleanPrompt), encodes, truncates, appends EOS.
  Umt5Tokens tokenize(std::string_view prompt) const;
  // The same without cleaning.
  Umt5Tokens tokenizeCleaned(std::string_view cleaned) const;

  std::size_t maxLength() const { return maxLength_; }
  void setMaxLength(std::size_t length);  // ≥ 1 (room for EOS)
  std::int64_t eosId() const { return eos_; }
  std::int64_t padId() const { return pad_; }
  int vocabSize() const { return pieces_.vocabSize(); }
  const text::SentencePieceTokenizer& pieces() const { return pieces_; }

 private:
  explicit Umt5Tokenizer(text::SentencePieceTokenizer pieces, const std::string& origin);
  text::SentencePieceTokenizer pieces_;
  std::size_t maxLength_ = kTextLen;
  std::int64_t eos_ = 1;
  std::int64_t pad_ = 0;
};

}  // namespace shotchain::models
