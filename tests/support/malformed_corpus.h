#pragma once

#include <string>
#include <vector>

namespace shotchain::testing {

// One malformed safetensors file, generated (never hand-edited) with the phrase its error must contain.
struct MalformedCase {
  std::string name;      // file name to write it under
  std::string bytes;     // the whole file
  std::string expected;  // substring of the error message
};

// Builds a file: 8-byte little-endian length of `header`, `header`, then `dataBytes` zero bytes.
std::string safetensorsBytes(const std::string& header, std::size_t dataBytes);

std::vector<MalformedCase> malformedCorpus();

}  // namespace shotchain::testing
