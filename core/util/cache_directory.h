#pragma once

#include <filesystem>

namespace shotchain::util {

// Where ShotChain keeps what it can always work out again (file digests, prompt embeddings):
// $SHOTCHAIN_CACHE_DIR, else $XDG_CACHE_HOME/shotchain, else ~/.cache/shotchain. Empty when none of them is set
// (nothing is then kept between runs).
std::filesystem::path userCacheDirectory();

}  // namespace shotchain::util
