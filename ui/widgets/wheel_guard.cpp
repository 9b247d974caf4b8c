#include "widgets/wheel_guard.h"

#include <QAbstractSpinBox>
#include <QComboBox>
#include <QCoreApplication>
#include <QEvent>
#include <QWidget>

namespace shotchain::ui {
namespace {

class WheelGuard final : public QObject {
 public:
  using QObject::QObject;

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override {
    auto* widget = qobject_cast<QWidget*>(watched);
    if (event->type() != QEvent::Wheel || !widget || widget->hasFocus()) return false;
    if (QWidget* parent = widget->parentWidget()) QCoreApplication::sendEvent(parent, event);  // scroll the form
    return true;
  }
};

}  // namespace

void guardWheel(QWidget* root) {
  auto* guard = new WheelGuard(root);
  for (QWidget* field : root->findChildren<QWidget*>()) {
    if (!qobject_cast<QComboBox*>(field) && !qobject_cast<QAbstractSpinBox*>(field)) continue;
    field->setFocusPolicy(Qt::StrongFocus);
    field->installEventFilter(guard);
  }
}

}  // namespace shotchain::ui
