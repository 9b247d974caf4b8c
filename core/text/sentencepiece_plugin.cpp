// Built as the shotchain_sentencepiece module: the only file that includes sentencepiece.
#include "text/sentencepiece_plugin_api.h"

#include <sentencepiece_processor.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

struct shotchain_spm {
  sentencepiece::SentencePieceProcessor processor;
};

namespace {

void copyText(const std::string& text, char* out, int capacity) {
  if (!out || capacity <= 0) return;
  const std::size_t n = std::min<std::size_t>(text.size(), static_cast<std::size_t>(capacity - 1));
  std::memcpy(out, text.data(), n);
  out[n] = '\0';
}

shotchain_spm* finish(shotchain_spm* model, const sentencepiece::util::Status& status, char* error, int capacity) {
  if (status.ok()) return model;
  copyText(status.ToString(), error, capacity);
  delete model;
  return nullptr;
}

}  // namespace

extern "C" {

shotchain_spm* shotchain_spm_open_file(const char* path, char* error, int capacity) {
  auto* model = new shotchain_spm;
  return finish(model, model->processor.Load(path), error, capacity);
}

shotchain_spm* shotchain_spm_open_bytes(const char* data, long size, char* error, int capacity) {
  auto* model = new shotchain_spm;
  return finish(model, model->processor.LoadFromSerializedProto({data, static_cast<std::size_t>(size)}), error,
                capacity);
}

void shotchain_spm_close(shotchain_spm* model) { delete model; }

int shotchain_spm_vocab_size(const shotchain_spm* model) { return model->processor.GetPieceSize(); }
int shotchain_spm_eos_id(const shotchain_spm* model) { return model->processor.eos_id(); }
int shotchain_spm_pad_id(const shotchain_spm* model) { return model->processor.pad_id(); }
int shotchain_spm_unk_id(const shotchain_spm* model) { return model->processor.unk_id(); }

int shotchain_spm_encode(const shotchain_spm* model, const char* text, int* ids, int capacity) {
  std::vector<int> encoded;
  if (!model->processor.Encode(text, &encoded).ok()) return -1;
  std::copy_n(encoded.begin(), std::min<std::size_t>(encoded.size(), static_cast<std::size_t>(std::max(capacity, 0))),
              ids);
  return static_cast<int>(encoded.size());
}

int shotchain_spm_decode(const shotchain_spm* model, const int* ids, int count, char* text, int capacity) {
  std::string decoded;
  if (!model->processor.Decode(std::vector<int>(ids, ids + count), &decoded).ok()) return -1;
  copyText(decoded, text, capacity);
  return static_cast<int>(decoded.size());
}

}  // extern "C"
