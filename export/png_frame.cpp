#include "export/png_frame.h"
#include "export/image_messages.h"

#include <QBuffer>
#include <QByteArray>
#include <QImage>
#include <QImageReader>
#include <QImageWriter>
#include <QString>

#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>

#include "util/atomic_file.h"
#include "util/bounded_file.h"
#include "util/image_file_check.h"

namespace shotchain::exporting {

void writePngFrame(const render::RgbFrame& frame, const std::filesystem::path& path) {
  const auto expected = static_cast<std::size_t>(frame.width) * static_cast<std::size_t>(frame.height) * 3;
  if (frame.width <= 0 || frame.height <= 0 || frame.rgb.size() != expected)
    throw std::invalid_argument(path.string() + ": cannot save: frame of " + std::to_string(frame.width) + "x" +
                                std::to_string(frame.height) + " holds " + std::to_string(frame.rgb.size()) +
                                " bytes, expected " + std::to_string(expected));
  // Wraps the caller's pixels without copying; rows are tightly packed (3 bytes per pixel).
  const QImage image(frame.rgb.data(), frame.width, frame.height, frame.width * 3, QImage::Format_RGB888);
  QByteArray png;
  QBuffer buffer(&png);
  buffer.open(QIODevice::WriteOnly);
  QImageWriter writer(&buffer, "png");
  if (!writer.write(image))
    throw util::FileWriteError(path.string() +
                               ": cannot save: PNG encoding failed: " + writer.errorString().toStdString());
  buffer.close();
  util::writeFileAtomically(path, std::string_view(png.constData(), static_cast<std::size_t>(png.size())));
}

render::RgbFrame readPngFrame(const std::filesystem::path& path) {
  // The same rules validation applies (one source of truth): a regular file of bounded size, read
  // without blocking on a FIFO or device; then a header-checked size before any pixel is decoded.
  if (const std::string problem = util::imageFileProblem(path); !problem.empty())
    throw std::runtime_error(path.string() + ": " + problem);
  const std::string bytes = util::readRegularFile(path, util::kMaxImageFileBytes);
  QByteArray data = QByteArray::fromRawData(bytes.data(), static_cast<qsizetype>(bytes.size()));
  QBuffer buffer(&data);
  buffer.open(QIODevice::ReadOnly);
  const ImageMessages decoder;
  QImageReader reader(&buffer);
  reader.setAllocationLimit(util::kMaxImageDecodeMiB);
  const QSize size = reader.size();
  if (size.isValid() && (size.width() > util::kMaxImageSide || size.height() > util::kMaxImageSide))
    throw std::runtime_error(path.string() + ": the image is " + std::to_string(size.width()) + "×" +
                             std::to_string(size.height()) + "; each side may be at most " +
                             std::to_string(util::kMaxImageSide));
  QImage image = reader.read();
  if (image.isNull())
    throw std::runtime_error(path.string() + ": cannot read image: " + reader.errorString().toStdString() +
                             (decoder.text().empty() ? "" : " (" + decoder.text() + ")"));
  image = image.convertToFormat(QImage::Format_RGB888);
  render::RgbFrame frame;
  frame.width = image.width();
  frame.height = image.height();
  const auto rowBytes = static_cast<std::size_t>(frame.width) * 3;
  frame.rgb.resize(rowBytes * static_cast<std::size_t>(frame.height));
  for (int y = 0; y < frame.height; ++y)
    std::memcpy(frame.rgb.data() + rowBytes * static_cast<std::size_t>(y), image.constScanLine(y), rowBytes);
  return frame;
}

}  // namespace shotchain::exporting
