#pragma once

#include <filesystem>
#include <stdexcept>
#include <string>

#include <c10/core/ScalarType.h>

#include "render/render_options.h"

namespace shotchain::cli {

// The value of a benchmark's --dtype flag.
inline at::ScalarType parseBenchDtype(const std::string& name) {
  if (name == "float32") return at::kFloat;
  if (name == "bfloat16") return at::kBFloat16;
  throw std::invalid_argument("--dtype: float32 or bfloat16, not \"" + name + "\"");
}

// A benchmark's render: no previews, no files written, timing what a render does in memory.
inline render::RenderOptions quietBenchRender(const std::filesystem::path& baseDir, const std::filesystem::path& out,
                                              const std::string& device) {
  render::RenderOptions options;
  options.sequenceDirectory = baseDir;
  options.outputDirectory = out;
  options.device = device;
  options.previews = false;
  options.framesOnDisk = false;
  options.writesFiles = false;
  return options;
}

}  // namespace shotchain::cli
