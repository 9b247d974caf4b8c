#pragma once

#include <QAbstractTableModel>

namespace shotchain::ui {

class SequenceDocument;

// The shots of the open document as rows; cell edits go through the document's undo stack.
class ShotTableModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column { Name, Frames, Size, Seed, Continuity, Prompt, ColumnCount };

  explicit ShotTableModel(SequenceDocument* document, QObject* parent = nullptr);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;
  Qt::ItemFlags flags(const QModelIndex& index) const override;
  bool setData(const QModelIndex& index, const QVariant& value, int role = Qt::EditRole) override;

 Q_SIGNALS:
  // An edit core refused, with the reason for the status bar.
  void editRejected(const QString& reason);

 private:
  SequenceDocument* document_;
};

}  // namespace shotchain::ui
