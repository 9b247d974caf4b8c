#pragma once

#include <string>
#include <string_view>

namespace shotchain::util {

// 128-bit FNV-1a style digest as 32 hex characters: keys and fingerprints, not security.
std::string digestHex(std::string_view bytes);

}  // namespace shotchain::util
