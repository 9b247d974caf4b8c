#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace shotchain {

// One finding about a document: where (a JSON path such as "shots[2].frames") and which rule.
struct Diagnostic {
  enum class Severity { Error, Warning };
  Severity severity = Severity::Error;
  std::string path;
  std::string message;

  bool isError() const { return severity == Severity::Error; }
  // "demo.json: shots[2].frames: 18 is not 4k+1 (try 17 or 21)"; the file part is left out when empty.
  std::string format(const std::string& file = {}) const;
};

using Diagnostics = std::vector<Diagnostic>;

bool hasErrors(const Diagnostics& diagnostics);
std::string formatAll(const Diagnostics& diagnostics, const std::string& file = {});

// Thrown where a single failure must stop an operation (a failed save, a refused edit).
class DocumentError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace shotchain
