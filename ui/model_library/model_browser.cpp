#include "model_library/model_browser.h"

#include <QFutureWatcher>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QTableWidget>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include "document/sequence_document.h"
#include "models/model_files.h"
#include "models/model_set_facts.h"
#include "sequence/edits.h"
#include "studio_settings.h"
#include "util/byte_size.h"

namespace shotchain::ui {
namespace {

// The file first: in a docked column at 1280×720 the rest may scroll off, but each row says which file it is.
enum Column { File, Role, Model, Size, Dtype, Problem, ColumnCount };

std::vector<std::filesystem::path> folderPaths(const QStringList& folders) {
  std::vector<std::filesystem::path> out;
  for (const QString& folder : folders) out.emplace_back(folder.toStdString());
  return out;
}

}  // namespace

ModelBrowser::ModelBrowser(SequenceDocument* document, StudioSettings* settings, QWidget* parent)
    : QWidget(parent),
      document_(document),
      settings_(settings),
      use_(new QLabel(this)),
      folders_(new QLabel(this)),
      table_(new QTableWidget(0, ColumnCount, this)),
      details_(new QLabel(this)),
      useButton_(new QPushButton(tr("Use for This Sequence"), this)),
      highNoiseButton_(new QPushButton(tr("Use as High-Noise Expert"), this)),
      singleDitButton_(new QPushButton(tr("One DiT"), this)) {
  use_->setWordWrap(true);
  use_->setTextFormat(Qt::RichText);
  use_->setObjectName(QStringLiteral("ModelUse"));
  folders_->setWordWrap(true);
  table_->setObjectName(QStringLiteral("ModelTable"));
  details_->setObjectName(QStringLiteral("ModelDetails"));
  details_->setWordWrap(true);
  details_->setTextFormat(Qt::RichText);
  details_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  table_->setHorizontalHeaderLabels({tr("File"), tr("Role"), tr("Model"), tr("Size"), tr("Dtype"), tr("Problem")});
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  table_->horizontalHeader()->setStretchLastSection(true);
  table_->verticalHeader()->setVisible(false);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  useButton_->setToolTip(
      tr("The selected file becomes the sequence's DiT, VAE or text encoder (by its role), or joins its "
         "LoRAs; double-click does the same"));
  highNoiseButton_->setObjectName(QStringLiteral("UseHighNoiseExpert"));
  highNoiseButton_->setToolTip(
      tr("A pair of experts: the selected DiT runs the early, high-noise steps; the sequence's DiT runs "
         "the rest (the file name never decides which is which)"));
  singleDitButton_->setObjectName(QStringLiteral("OneDit"));
  singleDitButton_->setToolTip(tr("Take the high-noise expert away: the sequence's DiT runs every step"));
  auto* rescanButton = new QPushButton(tr("Rescan"), this);
  auto* foldersButton = new QPushButton(tr("Model Folders…"), this);
  // The folder buttons sit on the folders' line, so that the list keeps its rows in a 1280×720 window.
  auto* use = new QHBoxLayout;
  use->addWidget(useButton_);
  use->addWidget(highNoiseButton_);
  use->addWidget(singleDitButton_);
  use->addStretch();
  auto* folders = new QHBoxLayout;
  folders->addWidget(folders_, 1);
  folders->addWidget(rescanButton);
  folders->addWidget(foldersButton);
  auto* layout = new QVBoxLayout(this);
  layout->setSpacing(4);
  layout->addWidget(use_);
  layout->addLayout(folders);
  layout->addWidget(table_, 1);
  layout->addWidget(details_);
  layout->addLayout(use);

  connect(rescanButton, &QPushButton::clicked, this, &ModelBrowser::rescan);
  connect(foldersButton, &QPushButton::clicked, this, &ModelBrowser::preferencesRequested);
  connect(useButton_, &QPushButton::clicked, this, [this] { useRow(table_->currentRow()); });
  connect(highNoiseButton_, &QPushButton::clicked, this, [this] { useRowAsHighNoiseExpert(table_->currentRow()); });
  connect(singleDitButton_, &QPushButton::clicked, this, [this] { useRowAsHighNoiseExpert(-1); });
  connect(table_, &QTableWidget::cellDoubleClicked, this, [this](int row, int) { useRow(row); });
  connect(table_, &QTableWidget::currentCellChanged, this, [this](int row) { showDetails(row); });
  connect(document_, &SequenceDocument::replaced, this, &ModelBrowser::updateUse);
  connect(document_, &SequenceDocument::changed, this, &ModelBrowser::updateUse);
  rescan();
}

void ModelBrowser::rescan() {
  if (scanning_) {
    rescanPending_ = true;
    return;
  }
  scanning_ = true;
  const QStringList folders = settings_->modelFolders();
  folders_->setText(folders.isEmpty() ? tr("No model folders yet: add your ComfyUI models folder with Model Folders… "
                                           "(the built-in demo model is always listed).")
                                      : tr("Folders: %1").arg(folders.join(QStringLiteral(", "))));
  std::vector<std::filesystem::path> paths = folderPaths(folders);
  paths.push_back(models::builtinModelDirectory("demo"));
  auto* watcher = new QFutureWatcher<std::vector<models::CataloguedModel>>(this);
  connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher] {
    showFiles(watcher->result());
    watcher->deleteLater();
    document_->modelFilesChanged();  // what the sequence resolves to may have changed with the files
    scanning_ = false;
    if (rescanPending_) {
      rescanPending_ = false;
      rescan();
    }
  });
  watcher->setFuture(QtConcurrent::run([paths] { return models::catalogueModelFolders(paths); }));
}

void ModelBrowser::showFiles(std::vector<models::CataloguedModel> files) {
  // The built-in model's folder also holds its preview factors: not a model, not worth a row.
  const std::filesystem::path builtin = models::builtinModelDirectory("demo");
  std::erase_if(files, [&](const models::CataloguedModel& m) {
    return m.id.role == models::ModelRole::None && m.file.parent_path() == builtin;
  });
  files_ = std::move(files);
  // A LoRA's share of the sequence's DiT (by parameters), when the DiT resolves here.
  const std::uint64_t ditParameters = currentUse().ditParameters;
  table_->setRowCount(static_cast<int>(files_.size()));
  for (int row = 0; row < static_cast<int>(files_.size()); ++row) {
    const models::CataloguedModel& m = files_[static_cast<std::size_t>(row)];
    const QString role = m.lora                                 ? QStringLiteral("lora")
                         : m.id.role == models::ModelRole::None ? QStringLiteral("—")
                                                                : QString::fromLatin1(models::roleName(m.id.role));
    QString description = QString::fromStdString(m.id.description.empty() ? "—" : m.id.description);
    if (m.lora) {
      description = QString::fromStdString(models::describeLora(*m.lora, m.file));
      if (ditParameters > 0)
        description +=
            tr(", touches %1 % of the DiT")
                .arg(100.0 * static_cast<double>(m.lora->patchedElements) / static_cast<double>(ditParameters), 0, 'f',
                     1);
    }
    const QString cells[ColumnCount] = {QString::fromStdString(m.file.filename().string()),
                                        role,
                                        description,
                                        QString::fromStdString(util::formatByteSize(m.bytes)),
                                        QString::fromStdString(m.dtype),
                                        QString::fromStdString(m.problem)};
    for (int column = 0; column < ColumnCount; ++column) {
      auto* item = new QTableWidgetItem(cells[column]);
      item->setToolTip(column == File ? QString::fromStdString(m.file.string()) : cells[column]);
      if (!m.problem.empty()) item->setForeground(QColor(0xf0, 0xc0, 0x40));
      table_->setItem(row, column, item);
    }
  }
  showDetails(table_->currentRow());
  updateUse();
}

QString ModelBrowser::detailsText() const { return details_->text(); }

// The selected file in full, so that nothing is readable only in a tooltip or an elided cell.
void ModelBrowser::showDetails(int row) {
  const bool selected = row >= 0 && row < static_cast<int>(files_.size());
  const models::CataloguedModel* file = selected ? &files_[static_cast<std::size_t>(row)] : nullptr;
  // Only what the file can be: a usable model or LoRA joins the sequence; a DiT of a family that comes as a pair of
  // experts can be the high-noise one.
  // A preview decoder is found in the models folder's vae_approx/ by itself; no field of the document names one.
  useButton_->setEnabled(
      file && file->problem.empty() &&
      (file->lora || (file->id.role != models::ModelRole::None && file->id.role != models::ModelRole::PreviewDecoder)));
  const models::FamilyKnowledge* family = file && file->problem.empty() && file->id.role == models::ModelRole::Dit
                                              ? models::familyKnowledge(file->id.family)
                                              : nullptr;
  highNoiseButton_->setEnabled(family && family->expertBoundary > 0);
  if (!selected) {
    details_->setText(tr("<i>Select a file to see what it is and whether this sequence can use it.</i>"));
    return;
  }
  const models::CataloguedModel& m = *file;
  QString what = m.lora ? tr("a LoRA") : QString::fromStdString(m.id.description);
  if (!m.lora && m.id.role != models::ModelRole::None)
    what += tr(", used as the %1").arg(QString::fromLatin1(models::roleName(m.id.role)));
  if (what.isEmpty()) {
    // Nothing in its header names a family (or the header cannot be read, as in a download cut short): its name may.
    const std::string byName = models::familyFromFileName(m.file.filename().string());
    what = m.problem.rfind("not a model", 0) == 0 ? tr("not a model of a family ShotChain knows")
                                                  : tr("a file whose header cannot be read");
    if (!byName.empty()) what += tr(" (by its name, %1)").arg(QString::fromStdString(byName));
  }
  QString text = tr("<b>%1</b>: %2 · %3, %4<br><small>%5</small>")
                     .arg(QString::fromStdString(m.file.filename().string()).toHtmlEscaped(), what.toHtmlEscaped(),
                          QString::fromStdString(util::formatByteSize(m.bytes)),
                          QString::fromStdString(m.dtype.empty() ? "—" : m.dtype),
                          QString::fromStdString(m.file.string()).toHtmlEscaped());
  if (!m.problem.empty())
    text += tr("<br><span style=\"color:#f0c040\"><b>Cannot be used:</b> %1</span>")
                .arg(QString::fromStdString(m.problem).toHtmlEscaped());
  details_->setText(text);
}

QString ModelBrowser::useText() const { return use_->text(); }

void ModelBrowser::updateUse() {
  const ModelSet& model = document_->sequence().settings.model;
  const models::ModelSetUse& use = currentUse();
  const QString source = model.isBuiltin() ? tr("builtin:%1").arg(QString::fromStdString(model.builtin))
                         : !model.folder.empty()
                             ? tr("models folder %1").arg(QString::fromStdString(model.folder).toHtmlEscaped())
                             : tr("separate files");
  if (!use.problem.empty()) {
    use_->setText(tr("<b>This sequence</b> (%1): <span style=\"color:#ff6b6b\">%2</span>")
                      .arg(source, QString::fromStdString(use.problem).toHtmlEscaped()));
    return;
  }
  auto name = [](const std::filesystem::path& p) {
    return QString::fromStdString(p.filename().string()).toHtmlEscaped();
  };
  singleDitButton_->setEnabled(!model.ditHighNoise.empty());
  if (!use.ditHighNoise.empty()) {
    use_->setText(
        tr("<b>This sequence</b> (%1) loads the high-noise expert <b>%2</b> and the low-noise expert <b>%3</b>, "
           "VAE <b>%4</b>, text encoder <b>%5</b>")
            .arg(source, name(use.ditHighNoise), name(use.dit), name(use.vae), name(use.textEncoder)));
    return;
  }
  use_->setText(tr("<b>This sequence</b> (%1) loads DiT <b>%2</b>, VAE <b>%3</b>, text encoder <b>%4</b>")
                    .arg(source, name(use.dit), name(use.vae), name(use.textEncoder)));
}

const models::ModelSetUse& ModelBrowser::currentUse() {
  const ModelSet& model = document_->sequence().settings.model;
  const std::filesystem::path base = document_->baseFolder();
  if (!resolved_ || !(model == resolvedModel_) || base != resolvedBase_) {
    resolved_ = models::resolveModelSetUse(model, base);
    resolvedModel_ = model;
    resolvedBase_ = base;
  }
  return *resolved_;
}

bool ModelBrowser::useRow(int row) {
  if (row < 0 || row >= static_cast<int>(files_.size())) return false;
  const models::CataloguedModel& m = files_[static_cast<std::size_t>(row)];
  if (m.lora && m.problem.empty()) {  // a LoRA joins the sequence's list (a shot's own list: the inspector)
    SequenceSettings settings = document_->sequence().settings;
    settings.loras = models::addSequenceLora(settings.loras, m.file, document_->baseFolder());
    const Diagnostics errors = document_->edit(SetSettings{settings});
    if (!errors.empty()) {
      Q_EMIT statusMessage(QString::fromStdString(errors.front().format()));
      return false;
    }
    Q_EMIT statusMessage(tr("%1 now applies to every shot that has no LoRA list of its own")
                             .arg(QString::fromStdString(m.file.filename().string())));
    return true;
  }
  if (m.id.role == models::ModelRole::None || !m.problem.empty()) {
    Q_EMIT statusMessage(tr("%1 cannot be used: %2")
                             .arg(QString::fromStdString(m.file.filename().string()),
                                  QString::fromStdString(m.problem.empty() ? "not a model" : m.problem)));
    return false;
  }
  SequenceSettings settings = document_->sequence().settings;
  settings.model = models::chooseModelFile(settings.model, m.id.role, m.file, folderPaths(settings_->modelFolders()));
  const Diagnostics errors = document_->edit(SetSettings{settings});
  if (!errors.empty()) {
    Q_EMIT statusMessage(QString::fromStdString(errors.front().format()));
    return false;
  }
  Q_EMIT statusMessage(
      tr("The sequence's %1 is now %2")
          .arg(QString::fromLatin1(models::roleName(m.id.role)), QString::fromStdString(m.file.filename().string())));
  return true;
}

bool ModelBrowser::useRowAsHighNoiseExpert(int row) {
  SequenceSettings settings = document_->sequence().settings;
  QString done = tr("The sequence has one DiT again");
  if (row >= 0) {
    if (row >= static_cast<int>(files_.size())) return false;
    const models::CataloguedModel& m = files_[static_cast<std::size_t>(row)];
    if (m.id.role != models::ModelRole::Dit || !m.problem.empty()) {
      Q_EMIT statusMessage(tr("%1 cannot be a high-noise expert: %2")
                               .arg(QString::fromStdString(m.file.filename().string()),
                                    QString::fromStdString(m.problem.empty() ? "not a DiT" : m.problem)));
      return false;
    }
    if (settings.model.isBuiltin()) {
      Q_EMIT statusMessage(
          tr("Choose the low-noise expert first (Use for This Sequence): the built-in demo model has one DiT"));
      return false;
    }
    settings.model = models::chooseHighNoiseExpert(settings.model, m.file);
    done = tr("The sequence's high-noise expert is now %1").arg(QString::fromStdString(m.file.filename().string()));
  } else {
    settings.model = models::chooseHighNoiseExpert(settings.model, {});
  }
  const Diagnostics errors = document_->edit(SetSettings{settings});
  if (!errors.empty()) {
    Q_EMIT statusMessage(QString::fromStdString(errors.front().format()));
    return false;
  }
  Q_EMIT statusMessage(done);
  return true;
}

}  // namespace shotchain::ui
