#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <filesystem>

#include <ATen/ATen.h>

#include "io/safetensors_writer.h"
#include "io/weight_set.h"
#include "models/umt5/prompt_cleaning.h"
#include "models/umt5/umt5.h"
#include "models/umt5/umt5_text_encoder.h"
#include "models/umt5/umt5_tokenizer.h"
#include "test_registry.h"
#include "test_support.h"

using namespace shotchain;
using namespace shotchain::testing;
using shotchain::models::Umt5Tokenizer;
using shotchain::models::wanCleanPrompt;

namespace {

std::vector<std::int64_t> asIds(const std::vector<int>& pieces) { return {pieces.begin(), pieces.end()}; }

}  // namespace

// A small SentencePiece model trained at run time with Debian's spm_train (UMT5's special ids:
// pad 0, eos 1, unk 2, no BOS), then the Wan front end on top of it.
class TestUmt5Tokenizer : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;
  std::filesystem::path model_;

  std::filesystem::path goldenWeights() const { return shotchain::testing::golden("umt5_tiny.safetensors"); }

 private Q_SLOTS:
  void initTestCase() {
    const QString corpus = dir_.filePath("prompts.txt");
    std::string text;
    for (const char* colour : {"red", "green", "blue", "yellow", "white", "magenta", "café"})
      for (const char* shape : {"circle", "square", "triangle", "fish"})
        for (const char* direction : {"left", "right", "up", "down"})
          text += std::string("a ") + colour + " " + shape + " moving " + direction +
                  " on a black background, \"slowly\" & 'smoothly' <b>\n";
    writeFile(corpus.toStdString(), text);
    QProcess train;
    train.setWorkingDirectory(dir_.path());
    train.start("spm_train", {"--input=" + corpus, "--model_prefix=spm", "--vocab_size=48", "--hard_vocab_limit=false",
                              "--model_type=unigram", "--eos_id=1", "--unk_id=2", "--pad_id=0", "--bos_id=-1",
                              "--character_coverage=1.0"});
    QVERIFY2(train.waitForFinished(60000), "spm_train did not finish");
    QVERIFY2(train.exitCode() == 0, train.readAllStandardError().constData());
    model_ = dir_.filePath("spm.model").toStdString();
  }

  void cleaningCollapsesWhitespace() {
    QCOMPARE(wanCleanPrompt("  a \t\n  b  "), std::string("a b"));
    QCOMPARE(wanCleanPrompt("a\r\nb\tc\fd"), std::string("a b c d"));
    // ftfy removes U+000B (vertical tab) as a control character before the collapse.
    QCOMPARE(wanCleanPrompt("b\vc"), std::string("bc"));
    // Unicode whitespace as Python's \s: NBSP, thin space, ideographic space, line separator.
    QCOMPARE(wanCleanPrompt("a\u00A0b\u2009c\u3000d\u2028e\u0085f"), std::string("a b c d e f"));
    // U+200B (zero-width space) is not whitespace for Python: kept.
    QCOMPARE(wanCleanPrompt("a\u200Bb"), std::string("a\u200Bb"));
    QCOMPARE(wanCleanPrompt(" \t "), std::string());
    QCOMPARE(models::collapseWhitespace("  x   y "), std::string("x y"));
  }

  void cleaningUnescapesHtmlTwice() {
    QCOMPARE(wanCleanPrompt("Tom &amp; Jerry"), std::string("Tom & Jerry"));
    QCOMPARE(wanCleanPrompt("&quot;hi&quot; &lt;3"), std::string("\"hi\" <3"));
    QCOMPARE(wanCleanPrompt("caf&eacute; caf&#233; caf&#xE9;"), std::string("café café café"));
    QCOMPARE(wanCleanPrompt("&amp;lt;b&amp;gt;"), std::string("<b>"));            // twice
    QCOMPARE(wanCleanPrompt("a&nbsp;&nbsp;b"), std::string("a b"));               // NBSP then collapsed
    QCOMPARE(wanCleanPrompt("&copy2024 &amp &ampx"), std::string("©2024 & &x"));  // legacy names without ';'
    QCOMPARE(wanCleanPrompt("&unknown; a&b &#128; &#0;"), std::string("&unknown; a&b € \uFFFD"));
    QCOMPARE(wanCleanPrompt("&Alpha;&omega;&hellip;&mdash;"), std::string("Αω…—"));
    // ftfy unescapes once more when the text has no '<' (three passes in all) …
    QCOMPARE(wanCleanPrompt("&amp;amp;amp;"), std::string("&"));
    // … but not when it looks like HTML.
    QCOMPARE(wanCleanPrompt("<&amp;amp;amp;"), std::string("<&amp;"));
    QCOMPARE(models::htmlUnescape("&amp;amp;"), std::string("&amp;"));
  }

  void cleaningApproximatesFtfy() {
    QCOMPARE(wanCleanPrompt("\u201Chello\u201D \u2018x\u2019"), std::string("\"hello\" 'x'"));
    QCOMPARE(wanCleanPrompt("\uFB01sh \uFB02ow"), std::string("fish flow"));
    QCOMPARE(wanCleanPrompt("\uFF21\uFF22\uFF23\uFF11"), std::string("ABC1"));
    QCOMPARE(wanCleanPrompt(std::string("a\x01"
                                        "b\x7F"
                                        "c\uFEFF"
                                        "d")),
             std::string("abcd"));
    QCOMPARE(wanCleanPrompt("\x1b[31mred\x1b[0m"), std::string("red"));
    QCOMPARE(wanCleanPrompt("bad \xFF byte"), std::string("bad \uFFFD byte"));
  }

  void idsEndWithEos() {
    const Umt5Tokenizer tokenizer = Umt5Tokenizer::fromFile(model_);
    QCOMPARE(tokenizer.eosId(), std::int64_t{1});
    QCOMPARE(tokenizer.padId(), std::int64_t{0});
    QCOMPARE(tokenizer.maxLength(), std::size_t{512});
    const std::string prompt = "a magenta triangle moving up on a black background";
    const auto tokens = tokenizer.tokenize(prompt);
    std::vector<std::int64_t> expected = asIds(tokenizer.pieces().encode(prompt));
    QVERIFY(expected.size() > 3);
    QCOMPARE(tokens.pieceCount, expected.size());
    expected.push_back(1);
    QCOMPARE(tokens.ids, expected);
    QVERIFY(!tokens.truncated);
    for (std::size_t i = 0; i + 1 < tokens.ids.size(); ++i) QVERIFY(tokens.ids[i] != 1 && tokens.ids[i] != 0);
    QCOMPARE(tokenizer.pieces().decode({tokens.ids.begin(), tokens.ids.end() - 1}), prompt);
    // Cleaning happens before the pieces.
    QCOMPARE(tokenizer.tokenize("  a magenta\ttriangle   moving up on a black background &amp; ").ids,
             tokenizer.tokenizeCleaned("a magenta triangle moving up on a black background &").ids);
    QCOMPARE(tokenizer.tokenize("\u201Cslowly\u201D").ids, tokenizer.tokenizeCleaned("\"slowly\"").ids);
    // An empty prompt is just EOS.
    QCOMPARE(tokenizer.tokenize(" \n ").ids, std::vector<std::int64_t>{1});
    // Padded form as the reference builds it.
    QCOMPARE(tokens.paddedIds(tokens.ids.size() + 2), [&] {
      auto v = tokens.ids;
      v.push_back(0);
      v.push_back(0);
      return v;
    }());
    const auto mask = tokens.mask(tokens.ids.size() + 2);
    QCOMPARE(std::count(mask.begin(), mask.end(), 1), static_cast<std::ptrdiff_t>(tokens.ids.size()));
    QCOMPARE(mask.back(), std::int64_t{0});
  }

  void truncatesTo512IncludingEos() {
    Umt5Tokenizer tokenizer = Umt5Tokenizer::fromFile(model_);
    std::string prompt;
    for (int i = 0; i < 200; ++i) prompt += "a green square moving down on a black background ";
    const std::vector<std::int64_t> pieces = asIds(tokenizer.pieces().encode(wanCleanPrompt(prompt)));
    QVERIFY2(pieces.size() > 600, qPrintable(QString::number(pieces.size())));
    const auto tokens = tokenizer.tokenize(prompt);
    QCOMPARE(tokens.ids.size(), std::size_t{512});
    QCOMPARE(tokens.ids.back(), std::int64_t{1});
    QVERIFY(tokens.truncated);
    QCOMPARE(tokens.pieceCount, pieces.size());
    QVERIFY(std::equal(tokens.ids.begin(), tokens.ids.end() - 1, pieces.begin()));
    // Boundary: n pieces fit exactly when maxLength = n + 1.
    const std::string shortPrompt = "a red fish moving left";
    const std::size_t n = tokenizer.pieces().encode(shortPrompt).size();
    tokenizer.setMaxLength(n + 1);
    QVERIFY(!tokenizer.tokenize(shortPrompt).truncated);
    QCOMPARE(tokenizer.tokenize(shortPrompt).ids.size(), n + 1);
    tokenizer.setMaxLength(n);
    QVERIFY(tokenizer.tokenize(shortPrompt).truncated);
    QCOMPARE(tokenizer.tokenize(shortPrompt).ids.size(), n);
    QCOMPARE(tokenizer.tokenize(shortPrompt).ids.back(), std::int64_t{1});
    tokenizer.setMaxLength(1);
    QCOMPARE(tokenizer.tokenize(shortPrompt).ids, std::vector<std::int64_t>{1});
    QVERIFY(!errorOf([&] { tokenizer.setMaxLength(0); }).isEmpty());
  }

  // ComfyUI text-encoder files embed the tokenizer as a uint8 tensor `spiece_model`.
  void embeddedTokenizerAndTextEncoder() {
    if (!std::filesystem::is_regular_file(goldenWeights()))
      QFAIL(qPrintable(QString("golden file missing: %1").arg(q(goldenWeights().string()))));
    const std::string bytes = readFile(model_);
    io::NamedTensors tensors;
    {
      const io::WeightSet golden = io::WeightSet::open(goldenWeights());
      for (const io::WeightInfo& info : golden.weights())
        tensors.emplace_back(info.name, golden.load(info.name, at::kFloat));
    }
    const std::filesystem::path plain = dir_.filePath("umt5_plain.safetensors").toStdString();
    io::saveSafetensors(plain, tensors);
    tensors.emplace_back(
        "spiece_model",
        at::from_blob(const_cast<char*>(bytes.data()), {static_cast<std::int64_t>(bytes.size())}, at::kByte).clone());
    const std::filesystem::path path = dir_.filePath("umt5_with_tokenizer.safetensors").toStdString();
    io::saveSafetensors(path, tensors);

    const io::WeightSet weights = io::WeightSet::open(path);
    QVERIFY(Umt5Tokenizer::hasEmbedded(weights));
    const Umt5Tokenizer embedded = Umt5Tokenizer::fromWeights(weights);
    const Umt5Tokenizer file = Umt5Tokenizer::fromFile(model_);
    const std::string prompt = "a white circle moving right, \u201Cslowly\u201D";
    QCOMPARE(embedded.tokenize(prompt).ids, file.tokenize(prompt).ids);
    QVERIFY(!Umt5Tokenizer::hasEmbedded(io::WeightSet::open(plain)));
    const QString missing = errorOf([&] { Umt5Tokenizer::fromWeights(io::WeightSet::open(plain)); });
    QVERIFY2(missing.contains("umt5_plain.safetensors") && missing.contains("spiece_model"), qPrintable(missing));

    // Load once, encode every prompt of a sequence, unload.
    models::Umt5TextEncoderOptions options;
    options.model.computeDtype = at::kFloat;
    models::Umt5TextEncoder encoder = models::Umt5TextEncoder::load(path, options);
    const models::Umt5Encoder reference =
        models::Umt5Encoder::load(io::WeightSet::open(goldenWeights()), options.model);
    const std::vector<std::string> prompts = {prompt, "a blue fish moving up", "",
                                              "a red square  &amp; a green triangle"};
    const std::vector<at::Tensor> contexts = encoder.encode(prompts);
    QCOMPARE(contexts.size(), prompts.size());
    for (std::size_t i = 0; i < prompts.size(); ++i) {
      const auto ids = file.tokenize(prompts[i]).ids;
      QCOMPARE(contexts[i].sizes().vec(), (std::vector<std::int64_t>{static_cast<std::int64_t>(ids.size()), 32}));
      QVERIFY(at::equal(contexts[i], reference.encode(ids)));
    }
    QCOMPARE(encoder.tokenizer().maxLength(), std::size_t{512});
    encoder.unload();
    QVERIFY(!encoder.isLoaded());
    QVERIFY(errorOf([&] { encoder.encode(prompt); }).contains("unload"));

    // An external spiece.model when the file has none.
    options.tokenizer = model_;
    const models::Umt5TextEncoder external = models::Umt5TextEncoder::load(plain, options);
    QVERIFY(at::equal(external.encode(prompt), contexts[0]));
    options.tokenizer.clear();
    const QString noTokenizer = errorOf([&] { models::Umt5TextEncoder::load(plain, options); });
    QVERIFY2(noTokenizer.contains("spiece_model"), qPrintable(noTokenizer));
  }
};

SHOTCHAIN_TEST(TestUmt5Tokenizer, Appless)
#include "test_umt5_tokenizer.moc"
