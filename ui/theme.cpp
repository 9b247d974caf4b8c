#include "theme.h"

#include <QApplication>
#include <QPalette>
#include <QStyleFactory>

namespace shotchain::ui {

void applyDarkTheme(QApplication& app) {
  app.setStyle(QStyleFactory::create(QStringLiteral("Fusion")));
  QPalette p;
  const QColor window(0x2b, 0x2b, 0x2b), base(0x1e, 0x1e, 0x1e), text(0xdc, 0xdc, 0xdc);
  const QColor accent(0x3d, 0x8e, 0xd8), disabled(0x7f, 0x7f, 0x7f);
  p.setColor(QPalette::Window, window);
  p.setColor(QPalette::WindowText, text);
  p.setColor(QPalette::Base, base);
  p.setColor(QPalette::AlternateBase, QColor(0x26, 0x26, 0x26));
  p.setColor(QPalette::ToolTipBase, base);
  p.setColor(QPalette::ToolTipText, text);
  p.setColor(QPalette::Text, text);
  p.setColor(QPalette::Button, window);
  p.setColor(QPalette::ButtonText, text);
  p.setColor(QPalette::BrightText, Qt::red);
  p.setColor(QPalette::Link, accent);
  p.setColor(QPalette::Highlight, accent);
  p.setColor(QPalette::HighlightedText, Qt::white);
  p.setColor(QPalette::PlaceholderText, disabled);
  for (auto role : {QPalette::WindowText, QPalette::Text, QPalette::ButtonText})
    p.setColor(QPalette::Disabled, role, disabled);
  app.setPalette(p);
  // The one action that matters most stands out; dock titles read as panel headers.
  app.setStyleSheet(QStringLiteral(
      "QToolButton#RenderButton { background: #2f7dd1; color: white; font-weight: bold; border-radius: 4px;"
      "  padding: 4px 14px; margin: 2px 4px; }"
      "QToolButton#RenderButton:hover { background: #3d8ee6; }"
      "QToolButton#RenderButton:disabled { background: #3a3a3a; color: #808080; }"
      "QLabel#DeviceLabel { color: #9cc4ff; border: 1px solid #3d4a5c; border-radius: 4px; padding: 2px 6px; }"
      "QDockWidget::title { background: #232326; padding: 4px 8px; }"
      "QToolTip { color: #e0e0e0; background: #1e1e1e; border: 1px solid #444; }"));
}

}  // namespace shotchain::ui
