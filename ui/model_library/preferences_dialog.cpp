#include "model_library/preferences_dialog.h"

#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QVBoxLayout>

#include "model_library/prompt_cache_box.h"

namespace shotchain::ui {

PreferencesDialog::PreferencesDialog(const QStringList& modelFolders, std::uint64_t promptEmbeddingBytes,
                                     QWidget* parent)
    : QDialog(parent),
      folders_(new QListWidget(this)),
      promptCache_(new PromptCacheBox(render::defaultPromptEmbeddingFolder(), promptEmbeddingBytes, this)) {
  setWindowTitle(tr("Preferences"));
  setObjectName(QStringLiteral("PreferencesDialog"));
  folders_->setObjectName(QStringLiteral("ModelFolders"));
  for (const QString& folder : modelFolders) addFolder(folder);
  auto* explain = new QLabel(
      tr("<b>Model folders</b><br>Your ComfyUI <tt>models</tt> folder (with "
         "<tt>diffusion_models/</tt>, <tt>text_encoders/</tt>, <tt>vae/</tt>) or any folder of "
         ".safetensors (or PyTorch .pt/.pth) files. The model browser lists what they hold; imported ComfyUI workflows "
         "find their files there."),
      this);
  explain->setWordWrap(true);
  auto* add = new QPushButton(tr("Add Folder…"), this);
  auto* remove = new QPushButton(tr("Remove"), this);
  auto* row = new QHBoxLayout;
  row->addWidget(add);
  row->addWidget(remove);
  row->addStretch();
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(explain);
  layout->addWidget(folders_, 1);
  layout->addLayout(row);
  layout->addSpacing(8);
  layout->addWidget(promptCache_);
  layout->addWidget(buttons);
  connect(add, &QPushButton::clicked, this, [this] {
    const QString dir = QFileDialog::getExistingDirectory(this, tr("Model folder"));
    if (!dir.isEmpty()) addFolder(dir);
  });
  connect(remove, &QPushButton::clicked, this, [this] { delete folders_->currentItem(); });
  connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  resize(600, 480);
}

QStringList PreferencesDialog::modelFolders() const {
  QStringList out;
  for (int i = 0; i < folders_->count(); ++i) out << folders_->item(i)->text();
  return out;
}

void PreferencesDialog::addFolder(const QString& folder) {
  const QString clean = QDir::cleanPath(folder);
  if (clean.isEmpty() || !folders_->findItems(clean, Qt::MatchExactly).isEmpty()) return;
  folders_->addItem(clean);
}

}  // namespace shotchain::ui
