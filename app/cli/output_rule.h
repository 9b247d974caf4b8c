#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace shotchain::cli {

// The one rule of every verb that writes a file the user names: an existing file is replaced only with --force,
// and never a file the verb reads (`inputs`), be it by another name or through a symbolic link. Returns why not
// ("OUT exists; give another file or --force"), or "" when the file may be written.
std::string outputRefusal(const std::filesystem::path& out, const std::vector<std::filesystem::path>& inputs,
                          bool force);

}  // namespace shotchain::cli
