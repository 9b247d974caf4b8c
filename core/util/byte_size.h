#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace shotchain::util {

// Parses a size: a byte count ("1048576", "800 B"), SI units ("16GB" = 16·10⁹ bytes, kB/KB, MB, GB,
// TB) or binary units ("16GiB" = 16·2³⁰; KiB, MiB, GiB, TiB, and the bare letters K, M, G, T as
// memory sizes are usually meant). Case-insensitive, spaces allowed, fractions allowed when they come
// to whole bytes ("1.5GiB"); nullopt when malformed, fractional bytes or overflowing 64 bits.
std::optional<std::uint64_t> parseByteSize(const std::string& text);

// The size in the unit it was most likely written in: "16 GB" for 16·10⁹, "16 GiB" for 16·2³⁰,
// "1.5 GiB", else the plain byte count. Exact: parses back to the same value.
std::string formatByteSizeExact(std::uint64_t bytes);

// "16 GiB", "1.5 GiB", "512 MiB", "800 B": the shortest exact-enough form for people.
std::string formatByteSize(std::uint64_t bytes);

}  // namespace shotchain::util
