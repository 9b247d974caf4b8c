#include "render/render_event_types.h"

#include <cstring>

#include "export/shot_paths.h"

namespace shotchain::ui {

QImage toImage(const render::RgbFrame& frame) {
  if (frame.empty() || frame.width <= 0 || frame.height <= 0) return {};
  const auto rowBytes = static_cast<std::size_t>(frame.width) * 3;
  if (frame.rgb.size() < rowBytes * static_cast<std::size_t>(frame.height)) return {};
  QImage image(frame.width, frame.height, QImage::Format_RGB888);
  for (int y = 0; y < frame.height; ++y)
    std::memcpy(image.scanLine(y), frame.rgb.data() + rowBytes * static_cast<std::size_t>(y), rowBytes);
  return image;
}

QVector<QImage> readShotFrames(const std::string& shotDirectory, int count) {
  QVector<QImage> frames;
  for (int f = 1; f <= count; ++f) {
    QImage image(QString::fromStdString(exporting::frameFile(shotDirectory, f).string()));
    if (image.isNull()) break;
    frames.push_back(image.convertToFormat(QImage::Format_RGB888));
  }
  return frames;
}

}  // namespace shotchain::ui
