#include "runtime/cuda_module.h"

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>

#include <dlfcn.h>

#include "util/plugin_path.h"

namespace shotchain::runtime {
namespace {

constexpr const char* kPluginName = "libshotchain_cuda.so";

bool driverPresent() {
  std::error_code error;
  return std::filesystem::exists("/proc/driver/nvidia/version", error) ||
         std::filesystem::exists("/dev/nvidiactl", error);
}

struct Module {
  CudaModuleStatus status;
  void* handle = nullptr;
};

Module load() {
  Module m;
#ifdef SHOTCHAIN_WITH_CUDA
  m.status.built = true;
  const char* wish = std::getenv("SHOTCHAIN_CUDA");
  const std::string setting = wish ? wish : "auto";
  if (setting == "off") {
    m.status.note = "not loaded: SHOTCHAIN_CUDA=off";
    return m;
  }
  if (setting != "on" && !driverPresent()) {
    m.status.note = "not loaded: no NVIDIA driver on this machine";
    return m;
  }
  std::string looked;
  const std::filesystem::path path = util::findPlugin(kPluginName, looked);
  if (path.empty()) {
    m.status.note = std::string("not loaded: ") + kPluginName + " was not found; looked at:" + looked;
    return m;
  }
  m.handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (m.handle == nullptr) {
    m.status.note = "not loaded: " + std::string(::dlerror());
    return m;
  }
  m.status.loaded = true;
  m.status.note = path.string();
#else
  m.status.note = "a CPU build (libtorch without CUDA)";
#endif
  return m;
}

const Module& module() {
  static const Module loaded = load();
  return loaded;
}

// Before main: libtorch caches its CUDA hooks at the first question, and CUDA must be there by then.
[[maybe_unused]] const bool kLoadedAtStart = (module(), true);

}  // namespace

const CudaModuleStatus& cudaModuleStatus() { return module().status; }

void* cudaModuleSymbol(const char* name) {
  const Module& m = module();
  return m.handle == nullptr ? nullptr : ::dlsym(m.handle, name);
}

}  // namespace shotchain::runtime
