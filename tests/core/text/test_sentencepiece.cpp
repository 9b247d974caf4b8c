#include <QProcess>
#include <QTest>

#include <ATen/ATen.h>
#include <torch/version.h>

#include "test_registry.h"
#include "test_support.h"
#include "text/sentencepiece_tokenizer.h"

using namespace shotchain;
using namespace shotchain::testing;

// Trains a small model with Debian's spm_train, then uses it through the plugin in a process
// that also runs libtorch (the two carry clashing protobuf copies; the plugin keeps them apart).
class SentencePiece : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;
  std::filesystem::path model_;

 private Q_SLOTS:
  void initTestCase() {
    const QString corpus = dir_.filePath("prompts.txt");
    std::string text;
    for (const char* colour : {"red", "green", "blue", "yellow", "white", "magenta"})
      for (const char* shape : {"circle", "square", "triangle"})
        for (const char* direction : {"left", "right", "up", "down"})
          text += std::string("a ") + colour + " " + shape + " moving " + direction + " on a black background\n";
    writeFile(corpus.toStdString(), text);
    QProcess train;
    train.setWorkingDirectory(dir_.path());
    train.start("spm_train", {"--input=" + corpus, "--model_prefix=spm", "--vocab_size=40", "--model_type=unigram",
                              "--eos_id=1", "--unk_id=2", "--pad_id=0", "--bos_id=-1"});
    QVERIFY2(train.waitForFinished(60000), "spm_train did not finish");
    QVERIFY2(train.exitCode() == 0, train.readAllStandardError().constData());
    model_ = dir_.filePath("spm.model").toStdString();
  }

  void encodesAndDecodesBesideLibtorch() {
    const at::Tensor t = at::ones({4});  // libtorch (and its protobuf) is live in this process
    QCOMPARE(t.sum().item<float>(), 4.0f);
    const text::SentencePieceTokenizer tokenizer = text::SentencePieceTokenizer::fromFile(model_);
    QCOMPARE(tokenizer.vocabSize(), 40);
    QCOMPARE(tokenizer.eosId(), 1);
    QCOMPARE(tokenizer.padId(), 0);
    const std::string prompt = "a magenta triangle moving up on a black background";
    const std::vector<int> ids = tokenizer.encode(prompt);
    QVERIFY(!ids.empty());
    for (int id : ids) QVERIFY(id >= 0 && id < 40);
    QCOMPARE(tokenizer.decode(ids), prompt);
  }

  void loadsFromEmbeddedBytes() {
    const std::string bytes = readFile(model_);
    const text::SentencePieceTokenizer a =
        text::SentencePieceTokenizer::fromBytes(bytes, "umt5.safetensors: spiece_model");
    const text::SentencePieceTokenizer b = text::SentencePieceTokenizer::fromFile(model_);
    QCOMPARE(a.encode("a red square moving left"), b.encode("a red square moving left"));
  }

  void corruptModelIsNamed() {
    const std::string path = dir_.filePath("broken.model").toStdString();
    writeFile(path, "this is not a protobuf");
    try {
      text::SentencePieceTokenizer::fromFile(path);
      QFAIL("a corrupt model loaded");
    } catch (const text::TokenizerError& error) {
      QVERIFY2(q(error.what()).startsWith(q(path) + ": not a sentencepiece model"), error.what());
    }
    try {
      text::SentencePieceTokenizer::fromBytes("\x01\x02garbage", "text.safetensors: spiece_model");
      QFAIL("corrupt bytes loaded");
    } catch (const text::TokenizerError& error) {
      QVERIFY2(q(error.what()).startsWith("text.safetensors: spiece_model: "), error.what());
    }
  }
};

SHOTCHAIN_TEST(SentencePiece, Appless)
#include "test_sentencepiece.moc"
