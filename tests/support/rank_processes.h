#pragma once

// Starts N processes of a program as the ranks of one group over loopback, with the torchrun
// variables set (a free port each time), and collects what each printed and how it ended.
#include <QCoreApplication>
#include <QElapsedTimer>
#include <QProcess>
#include <QProcessEnvironment>
#include <QString>
#include <QStringList>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <memory>
#include <vector>

namespace shotchain::testing {

inline int freeLoopbackPort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  ::close(fd);
  return ntohs(address.sin_port);
}

struct RankRun {
  int exitCode = -1;  // −1: crashed, killed or did not finish in time
  QString output;     // stdout then stderr
  double seconds = 0;
};

// The ranks as running processes; `extra` environment variables for every rank.
class RankProcesses {
 public:
  RankProcesses(const QString& program, const QStringList& args, int ranks,
                const std::map<QString, QString>& extra = {}) {
    const int port = freeLoopbackPort();
    for (int r = 0; r < ranks; ++r) {
      auto process = std::make_unique<QProcess>();
      QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
      env.insert("RANK", QString::number(r));
      env.insert("LOCAL_RANK", QString::number(r));
      env.insert("WORLD_SIZE", QString::number(ranks));
      env.insert("LOCAL_WORLD_SIZE", QString::number(ranks));
      env.insert("MASTER_ADDR", "127.0.0.1");
      env.insert("MASTER_PORT", QString::number(port));
      for (const auto& [name, value] : extra) env.insert(name, value);
      process->setProcessEnvironment(env);
      process->start(program, args);
      processes_.push_back(std::move(process));
    }
    timer_.start();
  }

  QProcess& operator[](int rank) { return *processes_[static_cast<std::size_t>(rank)]; }

  // Waits for every rank (at most timeoutMs in all) and returns how each ended.
  std::vector<RankRun> finish(int timeoutMs) {
    std::vector<RankRun> runs;
    for (auto& process : processes_) {
      const qint64 left = std::max<qint64>(1, timeoutMs - timer_.elapsed());
      const bool finished = process->waitForFinished(static_cast<int>(left));
      if (!finished) {
        process->kill();
        process->waitForFinished(5000);
      }
      RankRun run;
      run.exitCode = finished && process->exitStatus() == QProcess::NormalExit ? process->exitCode() : -1;
      run.output =
          QString::fromUtf8(process->readAllStandardOutput()) + QString::fromUtf8(process->readAllStandardError());
      run.seconds = timer_.elapsed() / 1000.0;
      runs.push_back(run);
    }
    return runs;
  }

 private:
  std::vector<std::unique_ptr<QProcess>> processes_;
  QElapsedTimer timer_;
};

}  // namespace shotchain::testing
