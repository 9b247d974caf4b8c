#include "memory/out_of_memory.h"

#include <c10/util/Exception.h>

namespace shotchain::memory {

bool isOutOfMemory(const std::exception& error) {
  if (dynamic_cast<const c10::OutOfMemoryError*>(&error)) return true;
  const std::string what = error.what();
  return dynamic_cast<const c10::Error*>(&error) && what.find("out of memory") != std::string::npos;
}

std::string firstLineOf(const std::string& text) { return text.substr(0, text.find('\n')); }

}  // namespace shotchain::memory
