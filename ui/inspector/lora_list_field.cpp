#include "inspector/lora_list_field.h"

#include <QCheckBox>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QPushButton>
#include <QSignalBlocker>
#include <QTableWidget>
#include <QVBoxLayout>

#include "sequence/shot_rules.h"

namespace shotchain::ui {

LoraListField::LoraListField(bool inheritable, QWidget* parent)
    : QWidget(parent), table_(new QTableWidget(0, 2, this)) {
  auto* column = new QVBoxLayout(this);
  column->setContentsMargins(0, 0, 0, 0);
  if (inheritable) {
    inherit_ = new QCheckBox(tr("As the sequence"), this);
    inherit_->setToolTip(
        tr("Checked: the shot takes the sequence's LoRAs. Unchecked: its own list replaces them ([] is none)."));
    column->addWidget(inherit_);
    connect(inherit_, &QCheckBox::toggled, this, [this](bool follow) {
      own_ = !follow;
      if (own_) current_ = rows();  // starts from what it showed: the sequence's list
      table_->setEnabled(own_);
      emitEdited();
    });
  }
  table_->setObjectName(QStringLiteral("LoraTable"));
  table_->setHorizontalHeaderLabels({tr("LoRA file"), tr("Strength")});
  table_->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
  table_->horizontalHeader()->setSectionResizeMode(1, QHeaderView::ResizeToContents);
  table_->verticalHeader()->setVisible(false);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setMaximumHeight(110);
  column->addWidget(table_);
  auto* buttons = new QHBoxLayout;
  auto* add = new QPushButton(tr("Add LoRA…"), this);
  auto* remove = new QPushButton(tr("Remove"), this);
  buttons->addWidget(add);
  buttons->addWidget(remove);
  buttons->addStretch();
  column->addLayout(buttons);
  connect(add, &QPushButton::clicked, this, [this] {
    const QString path =
        QFileDialog::getOpenFileName(this, tr("Add a LoRA"), QString::fromStdString(baseFolder_.string()),
                                     tr("LoRA weights (*.safetensors *.pt *.pth)"));
    if (!path.isEmpty()) addFile(path);
  });
  connect(remove, &QPushButton::clicked, this, [this] {
    const int row = table_->currentRow();
    if (!own_ || row < 0 || row >= static_cast<int>(current_.size())) return;
    current_.erase(current_.begin() + row);
    emitEdited();
  });
  connect(table_, &QTableWidget::itemChanged, this, [this](QTableWidgetItem* item) {
    const auto row = static_cast<std::size_t>(item->row());
    if (item->column() != 1 || row >= current_.size()) return;
    bool ok = false;
    const double strength = item->text().trimmed().toDouble(&ok);
    if (ok) current_[row].strength = strength;
    emitEdited();  // a refused strength comes back as the document's value
  });
}

void LoraListField::addFile(const QString& path) {
  if (!own_) {  // a shot's first own LoRA starts from the sequence's list: one edit, not two
    own_ = true;
    if (inherit_) {
      const QSignalBlocker quiet(inherit_);
      inherit_->setChecked(false);
    }
    table_->setEnabled(true);
  }
  LoraRef lora;
  lora.file = documentPath(baseFolder_, path.toStdString());
  current_.push_back(lora);
  emitEdited();
}

void LoraListField::emitEdited() {
  if (edited_) edited_(own_ ? std::optional<std::vector<LoraRef>>(current_) : std::nullopt);
}

std::vector<LoraRef> LoraListField::rows() const { return current_; }

void LoraListField::setLoras(const std::vector<LoraRef>& shown, bool own) {
  own_ = !inherit_ || own;
  current_ = shown;
  if (inherit_) {
    const QSignalBlocker quiet(inherit_);
    inherit_->setChecked(!own_);
  }
  table_->setEnabled(own_);
  showRows(current_);
}

void LoraListField::showRows(const std::vector<LoraRef>& loras) {
  const QSignalBlocker quiet(table_);
  table_->setRowCount(static_cast<int>(loras.size()));
  for (int row = 0; row < static_cast<int>(loras.size()); ++row) {
    const LoraRef& lora = loras[static_cast<std::size_t>(row)];
    auto* file = new QTableWidgetItem(QString::fromStdString(lora.file));
    file->setFlags(file->flags() & ~Qt::ItemIsEditable);
    file->setToolTip(QString::fromStdString(lora.file));
    table_->setItem(row, 0, file);
    table_->setItem(row, 1, new QTableWidgetItem(QString::number(lora.strength)));
  }
}

}  // namespace shotchain::ui
