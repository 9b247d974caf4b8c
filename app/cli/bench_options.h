#pragma once

#include <stdexcept>
#include <string>

#include <c10/core/ScalarType.h>

namespace shotchain::cli {

// The value of a benchmark's --dtype flag.
inline at::ScalarType parseBenchDtype(const std::string& name) {
  if (name == "float32") return at::kFloat;
  if (name == "bfloat16") return at::kBFloat16;
  throw std::invalid_argument("--dtype: float32 or bfloat16, not \"" + name + "\"");
}

}  // namespace shotchain::cli
