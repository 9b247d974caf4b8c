#pragma once

// Runs the real `shotchain` binary the way a user does.
#include <QProcess>
#include <QString>
#include <QStringList>

namespace shotchain::testing {

struct CliRun {
  int exitCode = -1;  // −1 when it crashed or did not finish
  QString out;        // stdout then stderr
  QString err;        // stderr alone
};

inline CliRun runCli(const QStringList& args, int timeoutMs = 240000) {
  QProcess process;
  process.start(SHOTCHAIN_CLI, args);
  const bool finished = process.waitForFinished(timeoutMs);
  const QString out = QString::fromUtf8(process.readAllStandardOutput());
  const QString err = QString::fromUtf8(process.readAllStandardError());
  return {finished && process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1, out + err, err};
}

}  // namespace shotchain::testing
