#pragma once

#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace shotchain::text {

class TokenizerError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A sentencepiece model (a spiece.model file, or the bytes of one embedded in a checkpoint),
// reached through the shotchain_sentencepiece plugin (see sentencepiece_plugin_api.h for why).
class SentencePieceTokenizer {
 public:
  static SentencePieceTokenizer fromFile(const std::filesystem::path& path);
  // `origin` names where the bytes came from in errors ("umt5.safetensors: spiece_model").
  static SentencePieceTokenizer fromBytes(std::string_view bytes, const std::string& origin);

  std::vector<int> encode(const std::string& text) const;
  std::string decode(const std::vector<int>& ids) const;
  int vocabSize() const;
  int eosId() const;
  int padId() const;

 private:
  struct Model;
  explicit SentencePieceTokenizer(std::shared_ptr<Model> model) : model_(std::move(model)) {}
  std::shared_ptr<Model> model_;
};

// Where the plugin was found, or an error naming every place looked at.
std::filesystem::path sentencePiecePluginPath();

}  // namespace shotchain::text
