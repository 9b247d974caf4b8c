#include "inspector/image_field.h"

#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFutureWatcher>
#include <QHBoxLayout>
#include <QImageReader>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include "sequence/shot_rules.h"
#include "util/image_file_check.h"

namespace shotchain::ui {

ImageField::ImageField(const QString& dialogTitle, const QString& placeholder, QWidget* parent)
    : QWidget(parent), dialogTitle_(dialogTitle), edit_(new QLineEdit(this)), thumb_(new QLabel(this)) {
  auto* column = new QVBoxLayout(this);
  column->setContentsMargins(0, 0, 0, 0);
  auto* row = new QHBoxLayout;
  auto* browse = new QPushButton(tr("…"), this);
  browse->setToolTip(tr("Choose an image"));
  browse->setFixedWidth(28);
  edit_->setPlaceholderText(placeholder);
  row->addWidget(edit_, 1);
  row->addWidget(browse);
  column->addLayout(row);
  thumb_->setFixedHeight(64);
  thumb_->setVisible(false);
  column->addWidget(thumb_);
  connect(edit_, &QLineEdit::editingFinished, this, [this] { Q_EMIT chosen(edit_->text().trimmed()); });
  connect(browse, &QPushButton::clicked, this, [this] {
    const QString path = QFileDialog::getOpenFileName(this, dialogTitle_, QString::fromStdString(baseFolder_.string()),
                                                      tr("Images (*.png *.jpg *.jpeg *.webp *.bmp)"));
    if (path.isEmpty()) return;
    Q_EMIT chosen(QString::fromStdString(documentPath(baseFolder_, path.toStdString())));
  });
}

void ImageField::setPath(const QString& path) {
  if (!edit_->hasFocus() || !edit_->isModified()) {
    const QSignalBlocker quiet(edit_);
    edit_->setText(path);
  }
  showThumbnail(path);
}

// Decoded and scaled on the thread pool; a stale result (the path changed meanwhile) is dropped.
void ImageField::showThumbnail(const QString& path) {
  if (path.isEmpty()) {
    thumb_->clear();
    thumb_->setVisible(false);
    return;
  }
  const QString absolute =
      QFileInfo(path).isAbsolute() ? path : QDir(QString::fromStdString(baseFolder_.string())).filePath(path);
  struct Decoded {
    QImage image;
    QString problem;
  };
  auto* watcher = new QFutureWatcher<Decoded>(this);
  connect(watcher, &QFutureWatcher<Decoded>::finished, this, [this, watcher, path] {
    watcher->deleteLater();
    if (edit_->text() != path) return;
    const Decoded decoded = watcher->result();
    thumb_->setVisible(true);
    if (decoded.image.isNull())
      thumb_->setText(decoded.problem.isEmpty() ? tr("(cannot read the image)") : decoded.problem);
    else
      thumb_->setPixmap(QPixmap::fromImage(decoded.image));
  });
  watcher->setFuture(QtConcurrent::run([absolute]() -> Decoded {
    // The same check a render makes, so a FIFO or a device never blocks the pool.
    if (const std::string problem = util::imageFileProblem(absolute.toStdString()); !problem.empty())
      return {QImage(), QString::fromStdString(problem)};
    QImageReader reader(absolute);
    reader.setAllocationLimit(util::kMaxImageDecodeMiB);
    const QImage image = reader.read();
    return {image.isNull() ? image : image.scaledToHeight(64, Qt::SmoothTransformation), QString()};
  }));
}

}  // namespace shotchain::ui
