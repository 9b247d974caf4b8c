#include "document/autosave.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSaveFile>
#include <QStandardPaths>

#include "document/sequence_document.h"
#include "sequence/sequence_io.h"

namespace shotchain::ui {

Autosave::Autosave(SequenceDocument* document, int intervalMs, QObject* parent) : QObject(parent), document_(document) {
  timer_.setInterval(intervalMs);
  connect(&timer_, &QTimer::timeout, this, &Autosave::saveNow);
  timer_.start();
  connect(document_->undoStack(), &QUndoStack::indexChanged, this, [this] { pending_ = true; });
  connect(document_->undoStack(), &QUndoStack::cleanChanged, this, [this](bool clean) {
    if (clean) discard();
  });
  connect(document_, &SequenceDocument::filePathChanged, this, [this] { pending_ = document_->isModified(); });
}

QString Autosave::recoveryPathFor(const QString& sequencePath) {
  const QString folder =
      QStandardPaths::writableLocation(QStandardPaths::AppLocalDataLocation) + QStringLiteral("/recovery");
  if (sequencePath.isEmpty()) return folder + QStringLiteral("/untitled.json");
  const QString absolute = QFileInfo(sequencePath).absoluteFilePath();
  const QByteArray hash = QCryptographicHash::hash(absolute.toUtf8(), QCryptographicHash::Sha1).toHex().left(12);
  return folder + QLatin1Char('/') + QFileInfo(absolute).completeBaseName() + QLatin1Char('-') +
         QString::fromLatin1(hash) + QStringLiteral(".json");
}

std::optional<QString> Autosave::pendingRecovery(const QString& sequencePath) {
  const QFileInfo recovery(recoveryPathFor(sequencePath));
  if (!recovery.exists()) return std::nullopt;
  if (!sequencePath.isEmpty()) {
    const QFileInfo original(sequencePath);
    if (original.exists() && original.lastModified() >= recovery.lastModified()) return std::nullopt;
  }
  return recovery.absoluteFilePath();
}

bool Autosave::saveNow() {
  if (!pending_ || !document_->isModified()) return false;
  const QString path = recoveryPathFor(document_->filePath());
  QDir().mkpath(QFileInfo(path).absolutePath());
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly)) return false;
  file.write(QByteArray::fromStdString(serializeSequence(document_->sequence())));
  if (!file.commit()) return false;
  pending_ = false;
  return true;
}

void Autosave::discard() {
  QFile::remove(recoveryPathFor(document_->filePath()));
  pending_ = false;
}

}  // namespace shotchain::ui
