#include "render/device_choice.h"

#include "render/render_options.h"
#include "runtime/cuda_device.h"

namespace shotchain::render {

c10::Device chooseDevice(const std::string& name) {
  if (name.empty() || name == "cpu") return c10::kCPU;
  if (name.rfind("cuda", 0) == 0) {
    if (!runtime::describeCudaDevice().available)
      throw RenderError("device",
                        "\"" + name + "\" was asked for, but this build has no usable CUDA device (use --device cpu)");
    try {
      return c10::Device(name);
    } catch (const std::exception&) {
      throw RenderError("device", "\"" + name + "\" is not a device name (cpu, cuda, cuda:N)");
    }
  }
  throw RenderError("device", "\"" + name + "\" is not a device name (cpu, cuda, cuda:N)");
}

}  // namespace shotchain::render
