#pragma once

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include "io/content_digest.h"
#include "models/model_files.h"
#include "render/prompt_embeddings.h"
#include "render/render_options.h"
#include "resolve/resolved_shot.h"

namespace shotchain::models {
class TextEncoder;
}

namespace shotchain::render {

// What a render of shots [first, last] conditions on: each enabled shot's prompt and negative prompt, and those
// of the stream shots a rebuilt cache replays; the shots in `skip` (re-used from disk) need none.
std::set<std::string> promptsToEncode(const resolve::ResolvedSequence& resolved, int first, int last,
                                      const std::set<int>& skip = {});

// The embeddings kept for renders with `options` (none when options.promptEmbeddings is off).
PromptEmbeddings promptEmbeddingsFor(const RenderOptions& options, const models::ModelSetFacts& models,
                                     c10::Device device);

// A model set's text encoder, loaded when first needed and kept until release().
class PromptEncoder {
 public:
  PromptEncoder(models::ModelFiles files, c10::Device device);
  ~PromptEncoder();

  // Throws RenderError("model.text_encoder", …) when the encoder cannot be loaded.
  void load();
  at::Tensor encode(const std::string& prompt);
  void release();

  bool loaded() const { return encoder_ != nullptr; }
  int loads() const { return loads_; }
  // Whether it encodes as one made now for these files (their bytes unchanged since) on `device` would.
  bool encodesFor(const models::ModelFiles& files, c10::Device device) const;

 private:
  std::vector<std::optional<io::FileStamp>> stampsOf(const models::ModelFiles& files) const;

  models::ModelFiles files_;
  c10::Device device_;
  std::vector<std::optional<io::FileStamp>> stamps_;
  std::unique_ptr<models::TextEncoder> encoder_;
  int loads_ = 0;
};

}  // namespace shotchain::render
