// Paths that are not regular files, as a user (or an attacker) hands them
// over. Nothing blocks, nothing but a regular file is ever replaced, and one bad entry in a models
// folder hides nothing beside it.
#include <QTemporaryDir>
#include <QTest>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

#include <nlohmann/json.hpp>

#include "cli_run.h"
#include "model_folder.h"
#include "test_registry.h"
#include "test_support.h"

using namespace shotchain::testing;
namespace fs = std::filesystem;

namespace {

// 20 s: a run that would block on a FIFO is killed and fails the test instead of hanging ctest.
CliRun cli(const QStringList& args) { return runCli(args, 20000); }

QString q(const fs::path& p) { return QString::fromStdString(p.string()); }

}  // namespace

class CliNotFiles : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;
  fs::path root_;

  fs::path fifo(const char* name) {
    const fs::path path = root_ / name;
    if (!fs::exists(fs::symlink_status(path))) ::mkfifo(path.c_str(), 0600);
    return path;
  }

 private Q_SLOTS:
  void initTestCase() {
    root_ = dir_.path().toStdString();
    makeModelFolder(root_);
    writeFile(root_ / "seq.json", sequenceJson(R"({ "folder": "models" })"));
  }

  void aDocumentThatIsAFifoIsRefusedAtOnce() {
    const fs::path doc = fifo("pipe.json");
    for (const char* verb : {"validate", "info", "plan", "render"}) {
      const CliRun run = cli({verb, q(doc)});
      QVERIFY2(run.exitCode != 0 && run.exitCode != -1, verb);
      QVERIFY2(run.out.contains("pipe.json: is a FIFO (named pipe), not a file"), qPrintable(run.out));
    }
  }

  void weightsThatAreAFifoAreRefusedAtOnce() {
    const CliRun run = cli({"inspect", q(fifo("pipe.safetensors"))});
    QCOMPARE(run.exitCode, 1);
    QVERIFY2(run.out.contains("pipe.safetensors: is a FIFO (named pipe), not a file"), qPrintable(run.out));
  }

  void aShardIndexNamingAFifoIsRefusedByEveryVerb() {
    const fs::path folder = root_ / "sharded";
    fs::create_directories(folder / "models" / "diffusion_models");
    fs::copy(root_ / "models" / "vae", folder / "models" / "vae", fs::copy_options::recursive);
    fs::copy(root_ / "models" / "text_encoders", folder / "models" / "text_encoders", fs::copy_options::recursive);
    const fs::path shards = folder / "models" / "diffusion_models";
    ::mkfifo((shards / "dit-00001-of-00001.safetensors").c_str(), 0600);
    writeFile(shards / "dit.safetensors.index.json",
              R"({ "metadata": {}, "weight_map": { "patch_embedding.weight": "dit-00001-of-00001.safetensors" } })");
    writeFile(folder / "seq.json",
              sequenceJson(R"({ "folder": "models", "dit": "diffusion_models/dit.safetensors.index.json" })"));
    const CliRun inspect = cli({"inspect", q(shards / "dit.safetensors.index.json")});
    QCOMPARE(inspect.exitCode, 1);
    QVERIFY2(inspect.out.contains("is a FIFO (named pipe), not a file"), qPrintable(inspect.out));
    const CliRun models = cli({"models", q(folder / "models")});
    QVERIFY2(models.exitCode == 0 && models.out.contains("is a FIFO (named pipe), not a file"), qPrintable(models.out));
    for (const char* verb : {"plan", "render"}) {
      const CliRun run = cli({verb, q(folder / "seq.json"), "--device", "cpu"});
      QVERIFY2(run.exitCode == 1 || run.exitCode == 4, qPrintable(QString(verb) + ": " + run.out));
      QVERIFY2(run.out.contains("FIFO"), qPrintable(run.out));
    }
  }

  void aLoopingLinkHidesNothingBesideIt() {
    const fs::path folder = root_ / "looped";
    fs::create_directories(folder);
    fs::copy(root_ / "models", folder / "models", fs::copy_options::recursive);
    fs::create_symlink("loop.safetensors", folder / "models" / "diffusion_models" / "loop.safetensors");
    fs::create_directory_symlink("..", folder / "models" / "vae" / "up");  // a folder loop: not followed
    writeFile(folder / "seq.json", sequenceJson(R"({ "folder": "models" })"));
    const CliRun models = cli({"models", q(folder / "models")});
    QCOMPARE(models.exitCode, 0);
    QVERIFY2(models.out.contains("wan_tiny.safetensors") && models.out.contains("Too many levels of symbolic links"),
             qPrintable(models.out));
    QVERIFY2(!models.out.contains("filesystem error"), qPrintable(models.out));
    const CliRun plan = cli({"plan", q(folder / "seq.json"), "--device", "cpu"});
    QVERIFY2(plan.exitCode == 0, qPrintable(plan.out));
  }

  void aFileNameThatIsNotUtf8IsListedAsJson() {
    const fs::path folder = root_ / "names";
    fs::create_directories(folder);
    fs::copy_file(golden("wan_vae_tiny.safetensors"), folder / "\xff\xfe-vae.safetensors");
    const CliRun run = cli({"models", q(folder), "--json"});
    QVERIFY2(run.exitCode == 0, qPrintable(run.err));
    const nlohmann::json listed = nlohmann::json::parse(run.out.toStdString());
    QCOMPARE(listed.size(), std::size_t(1));
    QCOMPARE(listed[0]["role"].get<std::string>(), std::string("vae"));
    QVERIFY(listed[0]["file"].get<std::string>().find("\xEF\xBF\xBD\xEF\xBF\xBD-vae.safetensors") != std::string::npos);
    fs::remove(folder / "\xff\xfe-vae.safetensors");  // QTemporaryDir cannot name it
  }

  // Weights deeper than the system's path limit cannot be opened by name: the folder where the limit is passed
  // is listed with that problem, beside the files above it, never left out without a word.
  void weightsPastThePathLimitAreNamed() {
    const fs::path folder = root_ / "deep";
    fs::create_directories(folder);
    fs::copy_file(golden("wan_vae_tiny.safetensors"), folder / "shallow.safetensors");
    const std::string level(200, 'd');
    int fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY);
    for (int i = 0; i < 24; ++i) {  // 24 × 201 bytes: past 4096
      QVERIFY(::mkdirat(fd, level.c_str(), 0700) == 0);
      const int next = ::openat(fd, level.c_str(), O_RDONLY | O_DIRECTORY);
      ::close(fd);
      fd = next;
    }
    const int file = ::openat(fd, "deep.safetensors", O_WRONLY | O_CREAT, 0600);
    QVERIFY(file >= 0);
    const std::string bytes = readFile(golden("wan_vae_tiny.safetensors"));
    QCOMPARE(::write(file, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
    ::close(file);
    ::close(fd);
    const CliRun run = cli({"models", q(folder)});
    QVERIFY2(run.exitCode == 0, qPrintable(run.out));
    QVERIFY2(run.out.contains("shallow.safetensors") && run.out.contains("past the system's limit of 4095"),
             qPrintable(run.out));
    QVERIFY2(!run.err.contains("filesystem error"), qPrintable(run.err));
    QVERIFY(::system(("rm -rf '" + folder.string() + "'").c_str()) == 0);  // QTemporaryDir cannot remove it
  }

  void aFolderWithUnreadableEntriesIsScannedToTheEnd() {
    const CliRun run = cli({"models", "/proc"});
    QVERIFY2(run.exitCode == 0 && !run.err.contains("filesystem error"), qPrintable(run.out));
  }

  void outputsThatAreNotFilesAreNeverReplaced() {
    const fs::path pipe = fifo("out.json");
    const fs::path exported = root_ / "exported";
    QCOMPARE(cli({"export-comfy", q(workflow("demo.json")), "-o", q(exported)}).exitCode, 0);
    const fs::path comfy = exported / "01-enter.json";
    QVERIFY(fs::is_regular_file(comfy));
    const CliRun toFifo0 = cli({"import-comfy", q(comfy), "-o", q(pipe), "--force"});
    QVERIFY2(toFifo0.exitCode != 0 && toFifo0.err.contains("is a FIFO (named pipe), not a file"),
             qPrintable(toFifo0.err));
    QVERIFY(fs::is_fifo(pipe));
    fs::create_directories(root_ / "folder.json");
    const CliRun toFolder = cli({"import-comfy", q(comfy), "-o", q(root_ / "folder.json"), "--force"});
    QVERIFY2(toFolder.exitCode != 0 && toFolder.err.contains("is a directory, not a file"), qPrintable(toFolder.err));
    fs::create_symlink("/dev/null", root_ / "null.safetensors");
    const CliRun convert =
        cli({"convert", q(golden("wan_dit_tiny_state.pt")), q(root_ / "null.safetensors"), "--force"});
    QVERIFY2(convert.exitCode != 0 && convert.err.contains("/dev/null is a device, not a file"),
             qPrintable(convert.err));
    QVERIFY(fs::is_symlink(root_ / "null.safetensors"));
    const fs::path pipeOut = fifo("pipe-out.safetensors");
    const CliRun toFifo = cli({"convert", q(golden("wan_dit_tiny_state.pt")), q(pipeOut), "--force"});
    QVERIFY2(toFifo.exitCode != 0 && toFifo.err.contains("is a FIFO (named pipe), not a file"), qPrintable(toFifo.err));
    QVERIFY(fs::is_fifo(pipeOut));

    // A link to a real document is followed: the document is updated, the link stays.
    fs::create_directories(root_ / "real");
    const fs::path link = root_ / "linked.safetensors";
    fs::create_symlink("real/converted.safetensors", link);
    const CliRun followed = cli({"convert", q(golden("wan_dit_tiny_state.pt")), q(link)});
    QVERIFY2(followed.exitCode == 0, qPrintable(followed.err));
    QVERIFY(fs::is_symlink(link));
    QVERIFY(fs::is_regular_file(root_ / "real" / "converted.safetensors"));
  }
};

SHOTCHAIN_TEST(CliNotFiles, Core)
#include "test_cli_not_files.moc"
