#pragma once

#include <QString>
#include <QTest>

#include <exception>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace shotchain::testing {

inline std::filesystem::path sourceDir() { return SHOTCHAIN_SOURCE_DIR; }
inline std::filesystem::path workflow(const std::string& name) { return sourceDir() / "workflows" / name; }
// A file of the golden reference data of the official code (tests/golden/README.md).
inline std::filesystem::path golden(const std::string& name) {
  return std::filesystem::path(SHOTCHAIN_GOLDEN_DIR) / name;
}

inline std::string readFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

inline void writeFile(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

// A copy of workflows/<name> in `folder`: a document opened from there never sees the tree's own render folders.
inline std::filesystem::path workflowCopy(const std::string& name, const std::filesystem::path& folder) {
  writeFile(folder / name, readFile(workflow(name)));
  return folder / name;
}

inline QString q(const std::string& text) { return QString::fromStdString(text); }

// The message of the exception `f` throws, or an empty string when it does not throw.
template <typename F>
QString errorOf(F&& f) {
  try {
    f();
  } catch (const std::exception& error) {
    return QString::fromUtf8(error.what());
  }
  return {};
}

}  // namespace shotchain::testing
