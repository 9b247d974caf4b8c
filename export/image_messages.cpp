#include "export/image_messages.h"

#include <QString>
#include <QtGlobal>

#include <cstdio>
#include <cstring>
#include <mutex>

namespace shotchain::exporting {
namespace {

thread_local std::string* captured = nullptr;
QtMessageHandler previous = nullptr;

bool fromImageDecoder(const QMessageLogContext& context, const QString& message) {
  return (context.category && std::strcmp(context.category, "qt.gui.imageio") == 0) || message.startsWith("libpng") ||
         message.contains("JPEG");
}

void handle(QtMsgType type, const QMessageLogContext& context, const QString& message) {
  if (captured && fromImageDecoder(context, message)) {
    *captured += (captured->empty() ? "" : "; ") + message.toStdString();
    return;
  }
  if (previous) return previous(type, context, message);
  std::fprintf(stderr, "%s\n", qPrintable(qFormatLogMessage(type, context, message)));
}

}  // namespace

ImageMessages::ImageMessages() {
  static std::once_flag installed;
  std::call_once(installed, [] { previous = qInstallMessageHandler(handle); });
  captured = new std::string;
}

ImageMessages::~ImageMessages() {
  delete captured;
  captured = nullptr;
}

std::string ImageMessages::text() const { return captured ? *captured : std::string(); }

}  // namespace shotchain::exporting
