#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "sequence/diagnostic.h"
#include "sequence/sequence.h"
#include "sequence/validation.h"

namespace shotchain {

inline constexpr const char* kSequenceSchema = "shotchain.sequence/1";
// Far beyond any real document (which nests 4 deep); deeper text is refused before it is read.
inline constexpr int kMaxDocumentDepth = 64;
// A document larger than this is refused unread (a real one is a few KiB).
inline constexpr std::uint64_t kMaxDocumentBytes = 64u << 20;

struct LoadResult {
  std::optional<Sequence> sequence;  // set when there is no error (warnings may remain)
  Diagnostics diagnostics;
  bool ok() const { return sequence.has_value(); }
};

// Parses a document; every problem found is reported, not only the first. `context` decides
// where relative paths are checked (warnings only).
LoadResult parseSequence(std::string_view text, const ValidationContext& context = {});
// Reads and parses a file; never writes to it. Diagnostics carry JSON paths; format them with
// the file name for people (Diagnostic::format(file)).
LoadResult loadSequenceFile(const std::filesystem::path& path);

std::string serializeSequence(const Sequence& sequence);
// One shot as the document writes it (JSON object text, compact): for records like shot.json.
std::string serializeShot(const Shot& shot);
// Atomic (temporary file + rename); throws FileWriteError naming the file.
void saveSequenceFile(const Sequence& sequence, const std::filesystem::path& path);

}  // namespace shotchain
