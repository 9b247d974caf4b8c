#include "render/prompt_encoder.h"

#include "models/model_loading.h"
#include "models/text_encoder.h"

namespace shotchain::render {

std::set<std::string> promptsToEncode(const resolve::ResolvedSequence& resolved, int first, int last,
                                      const std::set<int>& skip) {
  std::set<std::string> prompts;
  auto add = [&](const resolve::ResolvedShot& shot) {
    prompts.insert(shot.prompt);
    prompts.insert(shot.uncondPrompt);
  };
  for (int i = first; i <= last; ++i) {
    const resolve::ResolvedShot& shot = resolved.shots[static_cast<std::size_t>(i)];
    if (!shot.enabled || skip.count(i)) continue;
    add(shot);
    for (const int j : shot.streamChain) add(resolved.shots[static_cast<std::size_t>(j)]);
  }
  return prompts;
}

PromptEmbeddings promptEmbeddingsFor(const RenderOptions& options, const models::ModelSetFacts& models,
                                     c10::Device device) {
  return PromptEmbeddings(options.promptEmbeddings ? defaultPromptEmbeddingFolder() : std::filesystem::path(), models,
                          device);
}

PromptEncoder::PromptEncoder(models::ModelFiles files, c10::Device device)
    : files_(std::move(files)), device_(device), stamps_(stampsOf(files_)) {}

PromptEncoder::~PromptEncoder() { release(); }

void PromptEncoder::load() {
  if (encoder_) return;
  try {
    encoder_ = models::loadTextEncoder(files_, device_);
  } catch (const std::exception& e) {
    throw RenderError("model.text_encoder", e.what());
  }
  ++loads_;
}

at::Tensor PromptEncoder::encode(const std::string& prompt) {
  load();
  return encoder_->encode(prompt);
}

void PromptEncoder::release() {
  if (!encoder_) return;
  encoder_->unload();
  encoder_.reset();
}

// The DiT's header gives the tokens a prompt is cut to.
std::vector<std::optional<io::FileStamp>> PromptEncoder::stampsOf(const models::ModelFiles& files) const {
  return {io::fileStamp(files.textEncoder), io::fileStamp(files.tokenizer), io::fileStamp(files.dit)};
}

bool PromptEncoder::encodesFor(const models::ModelFiles& files, c10::Device device) const {
  return device == device_ && files.textEncoder == files_.textEncoder && files.tokenizer == files_.tokenizer &&
         files.dit == files_.dit && stampsOf(files) == stamps_;
}

}  // namespace shotchain::render
