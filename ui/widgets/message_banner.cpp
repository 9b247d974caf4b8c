#include "widgets/message_banner.h"

#include <QAction>
#include <QHBoxLayout>
#include <QLabel>
#include <QPlainTextEdit>
#include <QToolButton>
#include <QVBoxLayout>

namespace shotchain::ui {

MessageBanner::MessageBanner(QWidget* parent)
    : QFrame(parent),
      text_(new QLabel(this)),
      detailsButton_(new QToolButton(this)),
      details_(new QPlainTextEdit(this)),
      buttons_(new QHBoxLayout) {
  setObjectName(QStringLiteral("MessageBanner"));
  text_->setWordWrap(true);
  text_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  detailsButton_->setText(tr("Details"));
  detailsButton_->setCheckable(true);
  details_->setReadOnly(true);
  details_->setMaximumHeight(110);
  details_->setVisible(false);
  auto* close = new QToolButton(this);
  close->setText(QStringLiteral("✕"));
  close->setToolTip(tr("Dismiss"));
  close->setAutoRaise(true);

  auto* row = new QHBoxLayout;
  row->addWidget(text_, 1);
  row->addLayout(buttons_);
  row->addWidget(detailsButton_);
  row->addWidget(close);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(10, 6, 6, 6);
  layout->addLayout(row);
  layout->addWidget(details_);

  connect(detailsButton_, &QToolButton::toggled, details_, &QWidget::setVisible);
  connect(close, &QToolButton::clicked, this, &QWidget::hide);
  setVisible(false);
}

void MessageBanner::showMessage(Kind kind, const QString& text, const QString& details,
                                const QList<QAction*>& actions) {
  kind_ = kind;
  const char* colours[] = {"#1f3a2a; border-left: 4px solid #4cc36a", "#3d3420; border-left: 4px solid #f0b03c",
                           "#45201f; border-left: 4px solid #e84a4a"};
  setStyleSheet(
      QStringLiteral("#MessageBanner { background: %1; }").arg(QString::fromLatin1(colours[static_cast<int>(kind)])));
  text_->setText(text);
  details_->setPlainText(details);
  detailsButton_->setVisible(!details.isEmpty());
  detailsButton_->setChecked(false);
  qDeleteAll(actionButtons_);
  actionButtons_.clear();
  for (QAction* action : actions) {
    auto* button = new QToolButton(this);
    button->setDefaultAction(action);
    buttons_->addWidget(button);
    actionButtons_ << button;
  }
  setVisible(true);
}

QString MessageBanner::text() const { return text_->text(); }
QString MessageBanner::details() const { return details_->toPlainText(); }

}  // namespace shotchain::ui
