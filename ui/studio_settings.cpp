#include "studio_settings.h"

#include <QFileInfo>
#include <QSettings>
#include <QStandardPaths>

#include "render/prompt_embedding_folder.h"

namespace shotchain::ui {

StudioSettings::StudioSettings()
    : settings_(std::make_unique<QSettings>(
          QStandardPaths::writableLocation(QStandardPaths::AppConfigLocation) + QStringLiteral("/studio.ini"),
          QSettings::IniFormat)) {}

StudioSettings::~StudioSettings() = default;

QStringList StudioSettings::recentFiles() const {
  return settings_->value(QStringLiteral("recentFiles")).toStringList();
}

void StudioSettings::addRecentFile(const QString& path) {
  const QString absolute = QFileInfo(path).absoluteFilePath();
  QStringList files = recentFiles();
  files.removeAll(absolute);
  files.prepend(absolute);
  while (files.size() > kMaxRecentFiles) files.removeLast();
  settings_->setValue(QStringLiteral("recentFiles"), files);
}

void StudioSettings::removeRecentFile(const QString& path) {
  QStringList files = recentFiles();
  files.removeAll(path);
  settings_->setValue(QStringLiteral("recentFiles"), files);
}

QByteArray StudioSettings::windowGeometry() const {
  return settings_->value(QStringLiteral("window/geometry")).toByteArray();
}
QByteArray StudioSettings::windowState() const {
  return settings_->value(QStringLiteral("window/state")).toByteArray();
}

void StudioSettings::setWindowLayout(const QByteArray& geometry, const QByteArray& state) {
  settings_->setValue(QStringLiteral("window/geometry"), geometry);
  settings_->setValue(QStringLiteral("window/state"), state);
}

QStringList StudioSettings::modelFolders() const {
  return settings_->value(QStringLiteral("models/folders")).toStringList();
}
void StudioSettings::setModelFolders(const QStringList& folders) {
  settings_->setValue(QStringLiteral("models/folders"), folders);
}
bool StudioSettings::modelFoldersAsked() const { return settings_->value(QStringLiteral("models/asked")).toBool(); }
void StudioSettings::setModelFoldersAsked() { settings_->setValue(QStringLiteral("models/asked"), true); }

QString StudioSettings::device() const { return settings_->value(QStringLiteral("render/device")).toString(); }
void StudioSettings::setDevice(const QString& device) { settings_->setValue(QStringLiteral("render/device"), device); }

std::uint64_t StudioSettings::promptEmbeddingBytes() const {
  bool ok = false;
  const qulonglong bytes = settings_->value(QStringLiteral("render/promptEmbeddingBytes")).toULongLong(&ok);
  return ok && bytes > 0 ? bytes : render::kDefaultPromptEmbeddingBytes;
}
void StudioSettings::setPromptEmbeddingBytes(std::uint64_t bytes) {
  settings_->setValue(QStringLiteral("render/promptEmbeddingBytes"), static_cast<qulonglong>(bytes));
}

bool StudioSettings::advancedFigures() const { return settings_->value(QStringLiteral("view/advanced")).toBool(); }
void StudioSettings::setAdvancedFigures(bool on) { settings_->setValue(QStringLiteral("view/advanced"), on); }

}  // namespace shotchain::ui
