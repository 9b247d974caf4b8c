#include "model_library/prompt_cache_box.h"

#include <QDir>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include <cmath>

#include "util/byte_size.h"

namespace shotchain::ui {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

}  // namespace

PromptCacheBox::PromptCacheBox(std::filesystem::path folder, std::uint64_t maxBytes, QWidget* parent)
    : QWidget(parent),
      folder_(std::move(folder)),
      folderLabel_(new QLabel(this)),
      usage_(new QLabel(tr("Counting…"), this)),
      max_(new QDoubleSpinBox(this)),
      clear_(new QPushButton(tr("Clear…"), this)) {
  setObjectName(QStringLiteral("PromptCache"));
  auto* explain = new QLabel(tr("<b>Prompt embeddings</b><br>What the text encoder made of each prompt, kept so "
                                "that a render of prompts encoded before starts without loading the encoder."),
                             this);
  explain->setWordWrap(true);
  folderLabel_->setText(folder_.empty() ? tr("None (no cache folder: nothing is kept)")
                                        : QDir::toNativeSeparators(QString::fromStdString(folder_.string())));
  folderLabel_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  folderLabel_->setWordWrap(true);
  max_->setObjectName(QStringLiteral("PromptCacheMax"));
  max_->setDecimals(2);
  max_->setRange(0.01, 1024);
  max_->setSingleStep(0.25);
  max_->setSuffix(tr(" GiB"));
  max_->setValue(static_cast<double>(maxBytes) / kGiB);
  max_->setMaximumWidth(max_->fontMetrics().horizontalAdvance(QStringLiteral("0000.00 GiB")) + 40);
  max_->setToolTip(tr("The least recently used embeddings are removed once the folder holds more."));
  usage_->setObjectName(QStringLiteral("PromptCacheUsage"));
  clear_->setObjectName(QStringLiteral("PromptCacheClear"));
  clear_->setEnabled(false);

  auto* usageRow = new QHBoxLayout;
  usageRow->addWidget(usage_, 1);
  usageRow->addWidget(clear_);
  auto* form = new QFormLayout;
  form->addRow(tr("Folder:"), folderLabel_);
  form->addRow(tr("Holds:"), usageRow);
  form->addRow(tr("Maximum size:"), max_);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(explain);
  layout->addLayout(form);

  connect(clear_, &QPushButton::clicked, this, &PromptCacheBox::clearKept);
  connect(&watcher_, &QFutureWatcher<render::FolderUsage>::finished, this, [this] { showUsage(watcher_.result()); });
  count(false);
}

std::uint64_t PromptCacheBox::maxBytes() const {
  return static_cast<std::uint64_t>(std::llround(max_->value() * kGiB));
}

QString PromptCacheBox::usageText() const { return usage_->text(); }
QString PromptCacheBox::folderText() const { return folderLabel_->text(); }

void PromptCacheBox::clearKept() {
  const bool yes = confirm_ ? confirm_()
                            : QMessageBox::question(this, tr("Clear prompt embeddings"),
                                                    tr("Remove every prompt embedding kept on disk? Renders encode "
                                                       "their prompts again (the text encoder is loaded again).")) ==
                                  QMessageBox::Yes;
  if (yes) count(true);
}

void PromptCacheBox::count(bool clearFirst) {
  clearing_ = clearFirst;
  clear_->setEnabled(false);
  usage_->setText(clearFirst ? tr("Clearing…") : tr("Counting…"));
  watcher_.setFuture(QtConcurrent::run([folder = folder_, clearFirst] {
    if (clearFirst) render::clearPromptEmbeddings(folder);
    return render::promptEmbeddingUsage(folder);
  }));
}

void PromptCacheBox::showUsage(const render::FolderUsage& usage) {
  const QString bytes = QString::fromStdString(util::formatByteSize(usage.bytes));
  usage_->setText(usage.files == 0   ? tr("Nothing yet")
                  : usage.files == 1 ? tr("1 embedding, %1").arg(bytes)
                                     : tr("%1 embeddings, %2").arg(usage.files).arg(bytes));
  clear_->setEnabled(usage.files > 0);
  Q_EMIT usageShown();
  if (clearing_) {
    clearing_ = false;
    Q_EMIT cleared();
  }
}

}  // namespace shotchain::ui
