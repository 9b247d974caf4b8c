#include "util/digest.h"

#include <array>
#include <cstdint>
#include <cstdio>

namespace shotchain::util {
namespace {

std::uint64_t fnv1a(std::string_view bytes, std::uint64_t hash) {
  for (const unsigned char c : bytes) {
    hash ^= c;
    hash *= 0x100000001b3ull;
  }
  return hash;
}

}  // namespace

std::string digestHex(std::string_view bytes) {
  const std::uint64_t a = fnv1a(bytes, 0xcbf29ce484222325ull);
  const std::uint64_t b = fnv1a(bytes, a ^ 0x9e3779b97f4a7c15ull);
  std::array<char, 33> text{};
  std::snprintf(text.data(), text.size(), "%016llx%016llx", static_cast<unsigned long long>(a),
                static_cast<unsigned long long>(b));
  return text.data();
}

}  // namespace shotchain::util
