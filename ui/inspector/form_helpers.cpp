#include "inspector/form_helpers.h"

#include <QFormLayout>
#include <QVBoxLayout>

namespace shotchain::ui {

FieldError::FieldError(QWidget* parent) : QLabel(parent) {
  setObjectName(QStringLiteral("FieldError"));
  setWordWrap(true);
  setStyleSheet(QStringLiteral("color: #ff7b72; font-size: 90%;"));
  setVisible(false);
}

void FieldError::show(const QString& message) {
  setText(message);
  setVisible(!message.isEmpty());
}

void FieldError::clear() { show({}); }

FieldError* addField(QFormLayout* form, const QString& label, QWidget* field) {
  auto* holder = new QWidget(form->parentWidget());
  auto* column = new QVBoxLayout(holder);
  column->setContentsMargins(0, 0, 0, 0);
  column->setSpacing(2);
  column->addWidget(field);
  auto* error = new FieldError(holder);
  column->addWidget(error);
  form->addRow(label, holder);
  return error;
}

void addSection(QFormLayout* form, const QString& title) {
  auto* heading = new QLabel(title, form->parentWidget());
  heading->setStyleSheet(QStringLiteral("font-weight: bold; color: #9cc4ff; padding-top: 8px;"));
  form->addRow(heading);
}

}  // namespace shotchain::ui
