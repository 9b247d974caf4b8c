#pragma once

#include <QByteArray>
#include <QString>
#include <QStringList>

#include <cstdint>
#include <memory>

class QSettings;

namespace shotchain::ui {

// The studio's own preferences (not the document's): recent files, window layout, render device.
// One typed wrapper over QSettings; the file lives in AppConfigLocation (tests enable
// QStandardPaths' test mode to keep it out of the user's home).
class StudioSettings {
 public:
  static constexpr int kMaxRecentFiles = 8;

  StudioSettings();
  ~StudioSettings();

  QStringList recentFiles() const;
  void addRecentFile(const QString& path);
  void removeRecentFile(const QString& path);

  QByteArray windowGeometry() const;
  QByteArray windowState() const;
  void setWindowLayout(const QByteArray& geometry, const QByteArray& state);

  // The model folders of Edit › Preferences (ComfyUI models folders or flat ones).
  QStringList modelFolders() const;
  void setModelFolders(const QStringList& folders);
  // Whether the first-run question about model folders was asked.
  bool modelFoldersAsked() const;
  void setModelFoldersAsked();

  // "cpu", "cuda", "cuda:N"; empty until the user picked one.
  QString device() const;
  void setDevice(const QString& device);

  // What the prompt embeddings kept on disk may hold (render::RenderOptions::promptEmbeddingBytes).
  std::uint64_t promptEmbeddingBytes() const;
  void setPromptEmbeddingBytes(std::uint64_t bytes);

  // View › Advanced Figures: the allocator's and the cut table's engineering figures.
  bool advancedFigures() const;
  void setAdvancedFigures(bool on);

 private:
  std::unique_ptr<QSettings> settings_;
};

}  // namespace shotchain::ui
