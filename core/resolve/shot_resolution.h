#pragma once

// The parts of resolveSequence, one file each (resolve_*.cpp): what they share. Internal to resolve/.
#include <string>

#include "resolve/resolve_sequence.h"

namespace shotchain::resolve {

// Collects problems with their document paths.
class Problems {
 public:
  explicit Problems(Diagnostics& out) : out_(out) {}
  void error(std::string path, std::string message) {
    out_.push_back({Diagnostic::Severity::Error, std::move(path), std::move(message)});
  }
  void warning(std::string path, std::string message) {
    out_.push_back({Diagnostic::Severity::Warning, std::move(path), std::move(message)});
  }
  // A file that is not there: an error for a render, a warning while editing.
  void missing(const ResolveContext& context, std::string path, std::string message) {
    if (context.missingFilesAreErrors)
      error(std::move(path), std::move(message));
    else
      warning(std::move(path), std::move(message) + " (a render refuses it until it is there)");
  }

 private:
  Diagnostics& out_;
};

// A file the document names, relative to the sequence's folder unless absolute.
std::filesystem::path documentFile(const ResolveContext& context, const std::string& file);

// The shot's step cache, from the policy table, the shot's sampling and the DiT's published numbers.
ResolvedStepCache resolveStepCache(const Sequence& sequence, const ResolvedShot& shot, const ResolvedSequence& resolved,
                                   const ResolveContext& context, Problems& problems);
// Two experts: the switch and the expert runs over the shot's schedule.
ResolvedExperts resolveExperts(const Sequence& sequence, const ResolvedShot& shot, const ResolvedSequence& resolved);
// The shot's LoRAs (its own list, else the sequence's) with their files' headers read.
void resolveLoras(const Sequence& sequence, ResolvedShot& shot, const ResolvedSequence& resolved,
                  const ResolveContext& context, Problems& problems);

}  // namespace shotchain::resolve
