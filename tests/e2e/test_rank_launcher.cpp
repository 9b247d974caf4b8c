// `render --ranks 2`'s launcher and the torchrun variables: ranks die with a launcher killed
// by KILL, a TERM sent to it reaches them; garbage variables are usage errors; a rendezvous port
// another program holds is refused at once with exit 4.
#include <QElapsedTimer>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <vector>

#include "cli_run.h"
#include "sequence/sequence_io.h"
#include "test_registry.h"
#include "test_support.h"

using namespace shotchain;
using namespace shotchain::testing;

namespace {

// The launcher's child processes, read from /proc (every thread's list).
std::vector<pid_t> childrenOf(qint64 pid) {
  std::vector<pid_t> out;
  std::error_code error;
  for (const auto& task : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", error)) {
    std::ifstream in(task.path() / "children");
    for (pid_t child; in >> child;) out.push_back(child);
  }
  return out;
}

// Gone, or a zombie nobody has reaped yet (in a container the reaper may be slow or absent).
bool ended(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!std::getline(in, stat)) return true;
  const auto close = stat.rfind(')');
  return close != std::string::npos && close + 2 < stat.size() && (stat[close + 2] == 'Z' || stat[close + 2] == 'X');
}

bool allEndedWithin(const std::vector<pid_t>& pids, int ms) {
  QElapsedTimer timer;
  timer.start();
  for (;;) {
    bool all = true;
    for (pid_t pid : pids) all = all && ended(pid);
    if (all) return true;
    if (timer.elapsed() > ms) return false;
    QTest::qWait(50);
  }
}

CliRun runWith(const QStringList& args, const QProcessEnvironment& env) {
  QProcess process;
  process.setProcessEnvironment(env);
  process.start(SHOTCHAIN_CLI, args);
  const bool finished = process.waitForFinished(120000);
  const QString out = QString::fromUtf8(process.readAllStandardOutput());
  const QString err = QString::fromUtf8(process.readAllStandardError());
  return {finished && process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1, out + err, err};
}

QProcessEnvironment rankZeroOfTwo(int port) {
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  env.insert("RANK", "0");
  env.insert("WORLD_SIZE", "2");
  env.insert("MASTER_ADDR", "127.0.0.1");
  env.insert("MASTER_PORT", QString::number(port));
  return env;
}

// Another program's listening socket on a loopback port the kernel picks.
struct TakenPort {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  int port = 0;
  TakenPort() {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 && ::listen(fd, 4) == 0 &&
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0)
      port = ntohs(address.sin_port);
  }
  ~TakenPort() { ::close(fd); }
};

}  // namespace

class RankLauncher : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;
  std::filesystem::path long_;

  // A render over two ranks, started and joined; its ranks' pids.
  std::vector<pid_t> startRanks(QProcess& launcher, const QString& out) {
    launcher.setProcessChannelMode(QProcess::MergedChannels);
    launcher.start(SHOTCHAIN_CLI,
                   {"render", q(long_.string()), "--out", out, "--ranks", "2", "--no-preview", "--timeout", "20"});
    if (!launcher.waitForStarted(10000)) return {};
    QByteArray log;
    QElapsedTimer timer;
    timer.start();
    while (!log.contains("[rank 1] rank 1: joined") && timer.elapsed() < 60000 &&
           launcher.state() == QProcess::Running) {
      launcher.waitForReadyRead(200);
      log += launcher.readAll();
    }
    std::vector<pid_t> ranks = childrenOf(launcher.processId());
    if (ranks.size() != 2) qWarning("launcher log so far:\n%s", log.constData());
    return ranks;
  }

 private Q_SLOTS:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    LoadResult demo = loadSequenceFile(workflow("demo.json"));
    QVERIFY(demo.ok());
    demo.sequence->settings.sampler.steps = 400;  // long enough to be killed in the middle
    long_ = std::filesystem::path(dir_.path().toStdString()) / "long.json";
    saveSequenceFile(*demo.sequence, long_);
  }

  void ranksDieWithAKilledLauncher() {
    QProcess launcher;
    const std::vector<pid_t> ranks = startRanks(launcher, dir_.filePath("killed"));
    QCOMPARE(ranks.size(), std::size_t{2});
    ::kill(static_cast<pid_t>(launcher.processId()), SIGKILL);
    QVERIFY2(allEndedWithin(ranks, 2000), "a rank outlived its launcher by 2 s");
    launcher.waitForFinished(5000);
  }

  void aTermSentToTheLauncherReachesTheRanks() {
    QProcess launcher;
    const std::vector<pid_t> ranks = startRanks(launcher, dir_.filePath("term"));
    QCOMPARE(ranks.size(), std::size_t{2});
    ::kill(static_cast<pid_t>(launcher.processId()), SIGTERM);
    QVERIFY(launcher.waitForFinished(15000));
    QVERIFY2(allEndedWithin(ranks, 2000), "a rank outlived the TERM its launcher got");
    QCOMPARE(launcher.exitStatus(), QProcess::NormalExit);
    QCOMPARE(launcher.exitCode(), 128 + SIGTERM);
    QVERIFY(launcher.readAll().contains("passing it on to the ranks"));
  }

  void garbageTorchrunVariablesAreUsageErrors() {
    for (const auto& [name, value] : std::vector<std::pair<const char*, const char*>>{
             {"RANK", "x"}, {"WORLD_SIZE", "-3"}, {"MASTER_PORT", "99999"}, {"SHOTCHAIN_COLLECTIVE_TIMEOUT", "soon"}}) {
      QProcessEnvironment env = rankZeroOfTwo(29999);
      env.insert(name, value);
      const CliRun run = runWith({"render", q(long_.string()), "--out", dir_.filePath("garbage")}, env);
      QVERIFY2(run.exitCode == 2,
               qPrintable(QString("%1=%2: exit %3: %4").arg(name, value).arg(run.exitCode).arg(run.err)));
      QVERIFY2(run.err.contains(QString("%1=\"%2\"").arg(name, value)) && run.err.contains("usage: shotchain render"),
               qPrintable(run.err));
    }
    const CliRun mismatch = runWith({"render", q(long_.string()), "--ranks", "3"}, rankZeroOfTwo(29999));
    QVERIFY2(mismatch.exitCode == 2 && mismatch.err.contains("--ranks 3 but WORLD_SIZE=2"), qPrintable(mismatch.err));
  }

  void aTakenRendezvousPortIsRefusedAtOnce() {
    const TakenPort other;
    QVERIFY(other.port > 0);
    QElapsedTimer timer;
    timer.start();
    const CliRun run = runWith({"render", q(long_.string()), "--out", dir_.filePath("port"), "--timeout", "60"},
                               rankZeroOfTwo(other.port));
    QVERIFY2(run.exitCode == 4, qPrintable(QString("exit %1: %2").arg(run.exitCode).arg(run.err)));
    QVERIFY2(run.err.contains(QString("MASTER_PORT %1 is already in use by another program").arg(other.port)),
             qPrintable(run.err));
    QVERIFY2(timer.elapsed() < 30000, "it waited for the collective timeout");
    QVERIFY(!std::filesystem::exists(dir_.filePath("port").toStdString() + "/shots"));
  }
};

SHOTCHAIN_TEST(RankLauncher, Gui)
#include "test_rank_launcher.moc"
