#include "text/sentencepiece_tokenizer.h"

#include <mutex>

#include <dlfcn.h>

#include "text/sentencepiece_plugin_api.h"
#include "util/plugin_path.h"

namespace shotchain::text {
namespace {

constexpr const char* kPluginName = "libshotchain_sentencepiece.so";

struct Plugin {
  decltype(&shotchain_spm_open_file) openFile = nullptr;
  decltype(&shotchain_spm_open_bytes) openBytes = nullptr;
  decltype(&shotchain_spm_close) close = nullptr;
  decltype(&shotchain_spm_vocab_size) vocabSize = nullptr;
  decltype(&shotchain_spm_eos_id) eosId = nullptr;
  decltype(&shotchain_spm_pad_id) padId = nullptr;
  decltype(&shotchain_spm_encode) encode = nullptr;
  decltype(&shotchain_spm_decode) decode = nullptr;
};

// RTLD_DEEPBIND keeps the plugin's protobuf apart from libtorch's (sentencepiece_plugin_api.h).
// AddressSanitizer's dlopen refuses that flag, since a deep-bound library could bind malloc past
// its interceptors; a sanitized plugin lists libasan before libc, so it binds to ASan's allocator
// all the same, and a sanitized build (scripts/test --sanitize) calls libc's own dlopen. Under
// ThreadSanitizer (scripts/check-threads) the plugin is not instrumented and keeps its own memory
// behind its C interface.
void* openIsolated(const std::filesystem::path& path) {
  constexpr int kFlags = RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND;
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  if (void* libc = ::dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD))
    if (auto libcOpen = reinterpret_cast<void* (*)(const char*, int)>(::dlsym(libc, "dlopen")))
      return libcOpen(path.c_str(), kFlags);
#endif
  return ::dlopen(path.c_str(), kFlags);
}

template <typename F>
void bind(void* library, const char* name, F& target) {
  target = reinterpret_cast<F>(::dlsym(library, name));
  if (!target) throw TokenizerError(std::string("the sentencepiece plugin lacks ") + name);
}

const Plugin& plugin() {
  static std::once_flag once;
  static Plugin loaded;
  static std::string failure;
  std::call_once(once, [] {
    std::filesystem::path path;
    try {
      path = sentencePiecePluginPath();
    } catch (const TokenizerError& error) {
      failure = error.what();
      return;
    }
    void* library = openIsolated(path);
    if (!library) {
      failure = "cannot load " + path.string() + ": " + ::dlerror();
      return;
    }
    try {
      bind(library, "shotchain_spm_open_file", loaded.openFile);
      bind(library, "shotchain_spm_open_bytes", loaded.openBytes);
      bind(library, "shotchain_spm_close", loaded.close);
      bind(library, "shotchain_spm_vocab_size", loaded.vocabSize);
      bind(library, "shotchain_spm_eos_id", loaded.eosId);
      bind(library, "shotchain_spm_pad_id", loaded.padId);
      bind(library, "shotchain_spm_encode", loaded.encode);
      bind(library, "shotchain_spm_decode", loaded.decode);
    } catch (const TokenizerError& error) {
      failure = error.what();
    }
  });
  if (!failure.empty()) throw TokenizerError(failure);
  return loaded;
}

}  // namespace

struct SentencePieceTokenizer::Model {
  shotchain_spm* handle = nullptr;
  ~Model() {
    if (handle) plugin().close(handle);
  }
};

std::filesystem::path sentencePiecePluginPath() {
  std::string looked;
  std::filesystem::path path = util::findPlugin(kPluginName, looked);
  if (path.empty())
    throw TokenizerError(std::string("the sentencepiece plugin ") + kPluginName +
                         " was not found (set SHOTCHAIN_PLUGIN_DIR); looked at:" + looked);
  return path;
}

SentencePieceTokenizer SentencePieceTokenizer::fromFile(const std::filesystem::path& path) {
  char error[512] = {};
  auto model = std::make_shared<Model>();
  model->handle = plugin().openFile(path.c_str(), error, sizeof error);
  if (!model->handle) throw TokenizerError(path.string() + ": not a sentencepiece model: " + error);
  return SentencePieceTokenizer(std::move(model));
}

SentencePieceTokenizer SentencePieceTokenizer::fromBytes(std::string_view bytes, const std::string& origin) {
  char error[512] = {};
  auto model = std::make_shared<Model>();
  model->handle = plugin().openBytes(bytes.data(), static_cast<long>(bytes.size()), error, sizeof error);
  if (!model->handle) throw TokenizerError(origin + ": not a sentencepiece model: " + error);
  return SentencePieceTokenizer(std::move(model));
}

std::vector<int> SentencePieceTokenizer::encode(const std::string& text) const {
  std::vector<int> ids(text.size() + 8);
  int needed = plugin().encode(model_->handle, text.c_str(), ids.data(), static_cast<int>(ids.size()));
  if (needed < 0) throw TokenizerError("sentencepiece could not encode the text");
  if (static_cast<std::size_t>(needed) > ids.size()) {
    ids.resize(static_cast<std::size_t>(needed));
    needed = plugin().encode(model_->handle, text.c_str(), ids.data(), needed);
  }
  ids.resize(static_cast<std::size_t>(needed));
  return ids;
}

std::string SentencePieceTokenizer::decode(const std::vector<int>& ids) const {
  std::string text(ids.size() * 16 + 16, '\0');
  int length = plugin().decode(model_->handle, ids.data(), static_cast<int>(ids.size()), text.data(),
                               static_cast<int>(text.size()));
  if (length < 0) throw TokenizerError("sentencepiece could not decode the ids (out of range?)");
  if (static_cast<std::size_t>(length) >= text.size()) {
    text.assign(static_cast<std::size_t>(length) + 1, '\0');
    plugin().decode(model_->handle, ids.data(), static_cast<int>(ids.size()), text.data(), length + 1);
  }
  text.resize(static_cast<std::size_t>(length));
  return text;
}

int SentencePieceTokenizer::vocabSize() const { return plugin().vocabSize(model_->handle); }
int SentencePieceTokenizer::eosId() const { return plugin().eosId(model_->handle); }
int SentencePieceTokenizer::padId() const { return plugin().padId(model_->handle); }

}  // namespace shotchain::text
