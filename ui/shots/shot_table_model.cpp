#include "shots/shot_table_model.h"

#include <QColor>

#include "document/sequence_document.h"

namespace shotchain::ui {

ShotTableModel::ShotTableModel(SequenceDocument* document, QObject* parent)
    : QAbstractTableModel(parent), document_(document) {
  connect(document_, &SequenceDocument::changed, this, [this] {
    beginResetModel();
    endResetModel();
  });
}

int ShotTableModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(document_->sequence().shots.size());
}

int ShotTableModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant ShotTableModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid)) return {};
  const Shot& shot = document_->sequence().shots[static_cast<std::size_t>(index.row())];
  if (role == Qt::DisplayRole || role == Qt::EditRole) {
    switch (index.column()) {
      case Name:
        return QString::fromStdString(shot.displayName());
      case Frames:
        return shot.frames;
      case Size:
        return QStringLiteral("%1×%2").arg(shot.width).arg(shot.height);
      case Seed:
        return QString::number(shot.seed);
      case Continuity:
        return QString::fromLatin1(toString(shot.continuity.mode));
      case Prompt:
        return QString::fromStdString(shot.prompt);
      default:
        return {};
    }
  }
  if (role == Qt::ToolTipRole && index.column() == Prompt) return QString::fromStdString(shot.prompt);
  if (role == Qt::ForegroundRole && !shot.enabled) return QColor(Qt::gray);
  return {};
}

QVariant ShotTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (role != Qt::DisplayRole) return {};
  if (orientation == Qt::Vertical) return section + 1;
  switch (section) {
    case Name:
      return tr("Shot");
    case Frames:
      return tr("Frames");
    case Size:
      return tr("Size");
    case Seed:
      return tr("Seed");
    case Continuity:
      return tr("Continuity");
    case Prompt:
      return tr("Prompt");
    default:
      return {};
  }
}

Qt::ItemFlags ShotTableModel::flags(const QModelIndex& index) const {
  Qt::ItemFlags base = QAbstractTableModel::flags(index);
  if (index.isValid() &&
      (index.column() == Name || index.column() == Frames || index.column() == Seed || index.column() == Prompt))
    base |= Qt::ItemIsEditable;
  return base;
}

bool ShotTableModel::setData(const QModelIndex& index, const QVariant& value, int role) {
  if (role != Qt::EditRole || !checkIndex(index, CheckIndexOption::IndexIsValid)) return false;
  const auto row = static_cast<std::size_t>(index.row());
  Shot shot = document_->sequence().shots[row];
  Edit edit = SetShot{row, shot};
  switch (index.column()) {
    case Name:
      shot.name = value.toString().toStdString();
      break;
    case Prompt:
      shot.prompt = value.toString().toStdString();
      break;
    case Frames: {
      bool ok = false;
      const int frames = value.toInt(&ok);
      if (!ok) {
        Q_EMIT editRejected(tr("Frames must be a whole number"));
        return false;
      }
      edit = SetShotLength{row, frames};
      break;
    }
    case Seed: {
      bool ok = false;
      shot.seed = value.toString().toULongLong(&ok);
      if (!ok) {
        Q_EMIT editRejected(tr("A seed is a whole number from 0 to 18446744073709551615"));
        return false;
      }
      break;
    }
    default:
      return false;
  }
  if (auto* set = std::get_if<SetShot>(&edit)) {
    if (shot == document_->sequence().shots[row]) return true;
    set->shot = shot;
  }
  const Diagnostics errors = document_->edit(edit);
  if (!errors.empty()) {
    Q_EMIT editRejected(QString::fromStdString(errors.front().format()));
    return false;
  }
  return true;
}

}  // namespace shotchain::ui
