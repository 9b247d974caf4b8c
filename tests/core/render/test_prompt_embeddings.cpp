// Prompt embeddings kept on disk: a re-render after a seed edit never loads the text encoder (the report says
// so) and gives what a cold render gives; the key follows the encoder's bytes; a damaged file is encoded again;
// the folder is pruned least recently used first.
#include <QTemporaryDir>
#include <QTest>

#include <cstdlib>
#include <filesystem>

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include "quiet_render.h"
#include "render/prompt_embeddings.h"
#include "runtime/torch_runtime.h"
#include "test_registry.h"
#include "test_support.h"
#include "tiny_model_set.h"

using namespace shotchain;
using namespace shotchain::testing;

class PromptEmbeddingsTest : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;
  std::optional<TinyModelSet> models_;

  std::filesystem::path root() const { return dir_.path().toStdString(); }
  std::filesystem::path kept() const { return root() / "cache" / "prompt-embeddings"; }

  Sequence twoShots(const TinyModelSet& models) const { return twoTinyShots(models); }

  render::RenderSummary render(const Sequence& s, const std::string& out, bool reuse = true, bool kept = true) const {
    render::RenderOptions o = tinyRenderOptions(root(), out);
    o.reuse = reuse;
    o.promptEmbeddings = kept;
    return renderQuietly(s, o);
  }

  at::Tensor tail(const std::string& out, int index, const std::string& id) const {
    return shotTailLatent(root() / out, index, id);
  }

 private Q_SLOTS:
  void initTestCase() {
    ::setenv("SHOTCHAIN_CACHE_DIR", (root() / "cache").c_str(), 1);
    runtime::initTorchRuntime();
    models_ = writeTinyModelSet(root() / "models", 41, false);
  }

  void aSeedEditRendersWithoutTheTextEncoder() {
    Sequence s = twoShots(*models_);
    const render::RenderSummary first = render(s, "edit.render");
    QCOMPARE(first.textEncoderLoads, 1);
    QCOMPARE(first.promptsEncoded, 3);  // two prompts and the negative one
    QCOMPARE(first.promptsFromCache, 0);

    s.shots[1].seed = 77;
    const render::RenderSummary again = render(s, "edit.render");
    QCOMPARE(again.finished.shotsReused, 1);
    QCOMPARE(again.textEncoderLoads, 0);
    QCOMPARE(again.promptsEncoded, 0);
    QCOMPARE(again.promptsFromCache, 2);
    const nlohmann::json report = nlohmann::json::parse(readFile(root() / "edit.render" / "report.json"));
    QCOMPARE(report["text_encoder"]["loads"].get<int>(), 0);
    QCOMPARE(report["text_encoder"]["prompts_from_cache"].get<int>(), 2);

    const render::RenderSummary cold = render(s, "cold.render", false, false);
    QCOMPARE(cold.textEncoderLoads, 1);
    QCOMPARE(cold.promptsFromCache, 0);
    QVERIFY(at::equal(tail("edit.render", 1, "b"), tail("cold.render", 1, "b")));
    QVERIFY(at::equal(tail("edit.render", 0, "a"), tail("cold.render", 0, "a")));
  }

  // Another text encoder (other bytes) never gets this one's embeddings; a damaged embedding is encoded again.
  void theKeyFollowsTheEncoderAndADamagedFileIsEncodedAgain() {
    const TinyModelSet other = writeTinyModelSet(root() / "other-models", 42, false);
    Sequence s = twoShots(*models_);
    s.settings.model.textEncoder = other.textEncoder.string();
    QCOMPARE(render(s, "other.render", false).promptsFromCache, 0);
    QCOMPARE(render(s, "other.render", false).promptsFromCache, 3);

    for (const auto& entry : std::filesystem::directory_iterator(kept()))
      std::filesystem::resize_file(entry.path(), std::filesystem::file_size(entry.path()) / 2);
    const render::RenderSummary damaged = render(twoShots(*models_), "damaged.render", false);
    QCOMPARE(damaged.promptsFromCache, 0);
    QCOMPARE(damaged.promptsEncoded, 3);
    QCOMPARE(render(twoShots(*models_), "damaged.render", false).promptsFromCache, 3);
  }

  void theFolderIsPrunedLeastRecentlyUsedFirst() {
    const models::ModelSetFacts facts =
        models::readModelSetFacts(models::resolveModelFiles(models_->modelSet(), root()));
    const render::PromptEmbeddings cache(root() / "prune", facts, at::kCPU);
    for (const char* prompt : {"one", "two", "three"}) cache.store(prompt, at::ones({4, 8}));
    QVERIFY(cache.find("one").has_value());  // used last
    std::uintmax_t each = 0;
    for (const auto& entry : std::filesystem::directory_iterator(root() / "prune")) each = entry.file_size();
    cache.prune(2 * each);
    QVERIFY(cache.find("one").has_value());
    QCOMPARE(static_cast<int>(std::distance(std::filesystem::directory_iterator(root() / "prune"),
                                            std::filesystem::directory_iterator())),
             2);
    QVERIFY(at::equal(*cache.find("one"), at::ones({4, 8})));
  }
};

SHOTCHAIN_TEST(PromptEmbeddingsTest, Appless)
#include "test_prompt_embeddings.moc"
