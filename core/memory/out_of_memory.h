#pragma once

#include <exception>
#include <string>

namespace shotchain::memory {

// c10::OutOfMemoryError, or a c10 error whose message says "out of memory" (CUDA error 2).
bool isOutOfMemory(const std::exception& error);

// The first line of an error message (c10 errors append a backtrace).
std::string firstLineOf(const std::string& text);

}  // namespace shotchain::memory
