#pragma once

#include <string>

namespace shotchain::exporting {

// Qt's image plug-ins print their decoders' complaints on stderr ("libpng error: Read Error", "Corrupt JPEG
// data: …", the qt.gui.imageio category). While an ImageMessages lives on a thread, those of that thread are kept
// instead, so that the reader says what went wrong in its own words; everything else passes on as before.
class ImageMessages {
 public:
  ImageMessages();
  ~ImageMessages();
  ImageMessages(const ImageMessages&) = delete;
  ImageMessages& operator=(const ImageMessages&) = delete;
  // What the decoders said while it lived, "; "-joined ("" when nothing).
  std::string text() const;
};

}  // namespace shotchain::exporting
