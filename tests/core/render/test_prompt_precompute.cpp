// Prompts encoded ahead of a render: the render then never loads the text encoder and gives what a render without
// kept embeddings gives; a job stops between prompts when asked; the encoder a job loaded serves the next job;
// the folder's size and count, Clear, and the size the renderer prunes to.
#include <QTemporaryDir>
#include <QTest>

#include <cstdlib>
#include <filesystem>

#include <ATen/ATen.h>

#include "quiet_render.h"
#include "render/prompt_encoder.h"
#include "render/prompt_precompute.h"
#include "runtime/torch_runtime.h"
#include "test_registry.h"
#include "test_support.h"
#include "tiny_model_set.h"

using namespace shotchain;
using namespace shotchain::testing;

class PromptPrecomputeTest : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;
  std::optional<TinyModelSet> models_;

  std::filesystem::path root() const { return dir_.path().toStdString(); }

  // A folder of its own for each test's embeddings.
  std::filesystem::path useCache(const std::string& name) const {
    ::setenv("SHOTCHAIN_CACHE_DIR", (root() / name).c_str(), 1);
    return render::defaultPromptEmbeddingFolder();
  }

  Sequence twoShots() const { return twoTinyShots(*models_); }

  render::RenderSummary render(const Sequence& s, const std::string& out, bool kept = true,
                               std::uint64_t keptBytes = render::kDefaultPromptEmbeddingBytes) const {
    render::RenderOptions o = tinyRenderOptions(root(), out);
    o.promptEmbeddings = kept;
    o.promptEmbeddingBytes = keptBytes;
    return renderQuietly(s, o);
  }

  at::Tensor tail(const std::string& out, int index, const std::string& id) const {
    return shotTailLatent(root() / out, index, id);
  }

 private Q_SLOTS:
  void initTestCase() {
    runtime::initTorchRuntime();
    models_ = writeTinyModelSet(root() / "models", 41, false);
  }

  void aRenderAfterPrecomputingLoadsNoEncoderAndGivesTheSameFrames() {
    useCache("ahead");
    const Sequence s = twoShots();
    render::KeptPromptEncoder encoder;
    const render::PromptPrecompute ahead = render::precomputePrompts(s, tinyRenderOptions(root(), "x"), encoder, {});
    QCOMPARE(static_cast<int>(ahead.encoded.size()), 3);  // two prompts and the negative one
    QCOMPARE(ahead.loads, 1);
    int negatives = 0, shots = 0;
    for (const render::PrecomputedPrompt& p : ahead.encoded) p.negative ? ++negatives : shots += 1 << p.shot;
    QCOMPARE(negatives, 1);
    QCOMPARE(shots, 0b11);                  // shot a's and shot b's
    QVERIFY(encoder && encoder->loaded());  // kept for the next edit

    const render::RenderSummary rendered = render(s, "ahead.render");
    QCOMPARE(rendered.textEncoderLoads, 0);
    QCOMPARE(rendered.promptsFromCache, 3);
    QCOMPARE(rendered.promptsEncoded, 0);
    const render::RenderSummary cold = render(s, "cold.render", false);
    QCOMPARE(cold.textEncoderLoads, 1);
    QVERIFY(at::equal(tail("ahead.render", 0, "a"), tail("cold.render", 0, "a")));
    QVERIFY(at::equal(tail("ahead.render", 1, "b"), tail("cold.render", 1, "b")));
  }

  // An edit after the first job: only the new prompt is encoded, by the encoder the first job loaded.
  void theKeptEncoderServesTheNextEdit() {
    useCache("kept");
    Sequence s = twoShots();
    render::KeptPromptEncoder encoder;
    const render::RenderOptions o = tinyRenderOptions(root(), "x");
    QCOMPARE(render::precomputePrompts(s, o, encoder, {}).loads, 1);
    s.shots[1].prompt = "a green triangle";
    const render::PromptPrecompute edited = render::precomputePrompts(s, o, encoder, {});
    QCOMPARE(static_cast<int>(edited.encoded.size()), 1);
    QCOMPARE(edited.encoded[0].shot, 1);
    QVERIFY(!edited.encoded[0].negative);
    QCOMPARE(edited.fromCache, 2);
    QCOMPARE(edited.loads, 0);
    const render::PromptPrecompute again = render::precomputePrompts(s, o, encoder, {});
    QVERIFY(again.encoded.empty());
    QCOMPARE(again.fromCache, 3);
  }

  void aJobStopsBetweenPromptsWhenAsked() {
    useCache("stop");
    render::KeptPromptEncoder encoder;
    int asked = 0;
    const render::PromptPrecompute stopped = render::precomputePrompts(twoShots(), tinyRenderOptions(root(), "x"),
                                                                       encoder, [&asked] { return ++asked > 1; });
    QVERIFY(stopped.stopped);
    QCOMPARE(static_cast<int>(stopped.encoded.size()), 1);
    QCOMPARE(render(twoShots(), "stop.render").promptsFromCache, 1);
  }

  void aModelSetThatCannotBeReadIsARenderError() {
    useCache("broken");
    Sequence s = twoShots();
    s.settings.model.textEncoder = (root() / "missing.safetensors").string();
    render::KeptPromptEncoder encoder;
    QVERIFY_THROWS_EXCEPTION(render::RenderError,
                             render::precomputePrompts(s, tinyRenderOptions(root(), "x"), encoder, {}));
    QVERIFY(!encoder);
  }

  void theFolderIsCountedAndClearedAndPrunedToTheRendersLimit() {
    const std::filesystem::path folder = useCache("usage");
    render(twoShots(), "usage.render");
    const render::FolderUsage usage = render::promptEmbeddingUsage(folder);
    QCOMPARE(usage.files, 3);
    QVERIFY(usage.bytes > 0);
    writeFile(folder / "notes.txt", "not an embedding");
    QCOMPARE(render::clearPromptEmbeddings(folder), 3);
    QCOMPARE(render::promptEmbeddingUsage(folder).files, 0);
    QVERIFY(std::filesystem::exists(folder / "notes.txt"));
    QCOMPARE(render::promptEmbeddingUsage(root() / "nowhere").files, 0);

    render(twoShots(), "pruned.render", true, 1);
    QCOMPARE(render::promptEmbeddingUsage(folder).files, 0);
  }
};

SHOTCHAIN_TEST(PromptPrecomputeTest, Appless)
#include "test_prompt_precompute.moc"
