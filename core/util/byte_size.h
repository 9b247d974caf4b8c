#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace shotchain {

// Parses "16GiB", "512 MiB", "1.5G", "24GB" or a plain byte count. Binary units for K/M/G/T
// with or without "i" (memory sizes are binary in practice); nullopt when malformed or overflowing.
std::optional<std::uint64_t> parseByteSize(const std::string& text);

// "16 GiB" when exact in some binary unit, else the plain byte count: parses back to the same value.
std::string formatByteSizeExact(std::uint64_t bytes);

// "16 GiB", "1.5 GiB", "512 MiB", "800 B": the shortest exact-enough form for people.
std::string formatByteSize(std::uint64_t bytes);

}  // namespace shotchain
