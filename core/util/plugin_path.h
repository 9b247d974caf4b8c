#pragma once

#include <filesystem>
#include <string>

namespace shotchain::util {

// Where a plugin the build put in its lib/ folder is: SHOTCHAIN_PLUGIN_DIR, beside the program, the program's
// ../lib/shotchain, then the build folder that compiled this. Empty when it is in none of them; `looked` then
// lists the places, one per line.
std::filesystem::path findPlugin(const std::string& fileName, std::string& looked);

}  // namespace shotchain::util
