#pragma once

#include <string>

#include <c10/core/Device.h>

namespace shotchain::render {

// "cpu", "cuda", "cuda:N" → a device this build can use; RenderError("device", …) otherwise.
c10::Device chooseDevice(const std::string& name);

}  // namespace shotchain::render
