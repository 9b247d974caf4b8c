#pragma once

#include <QLabel>
#include <QSignalBlocker>
#include <QString>

class QFormLayout;
class QWidget;

namespace shotchain::ui {

// A form row whose field has an inline error line under it (hidden while there is no error).
class FieldError : public QLabel {
  Q_OBJECT

 public:
  explicit FieldError(QWidget* parent = nullptr);
  void show(const QString& message);
  void clear();
};

// Adds "label: field" and, under the field, its FieldError; returns the error line.
FieldError* addField(QFormLayout* form, const QString& label, QWidget* field);
// A bold section heading inside a form.
void addSection(QFormLayout* form, const QString& title);

// Sets a field's value without its change signals (a value the document already holds).
template <typename Widget, typename Set>
void quietly(Widget* widget, Set&& set) {
  const QSignalBlocker block(widget);
  set();
}

}  // namespace shotchain::ui
