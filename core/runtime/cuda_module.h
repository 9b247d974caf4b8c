#pragma once

#include <cstdint>
#include <string>

// A CUDA build keeps its CUDA half in a plugin, libshotchain_cuda.so, which brings libtorch_cuda and with it
// cuBLAS, cuDNN and NCCL: about 260 MB of every process's memory, and a third of a second at every start. It is
// loaded where there is an NVIDIA driver (or SHOTCHAIN_CUDA=on), before main, because libtorch decides once, at
// its first CUDA question, whether CUDA is there. SHOTCHAIN_CUDA=off never loads it.
namespace shotchain::runtime {

struct CudaModuleStatus {
  bool built = false;   // this is a CUDA build: the plugin exists
  bool loaded = false;  // it is in this process
  std::string note;     // why it is not loaded, or its path
};
const CudaModuleStatus& cudaModuleStatus();

// A function the plugin defines, null when it is not loaded.
void* cudaModuleSymbol(const char* name);

// What the plugin says of a device; the plugin's own C interface (runtime/cuda_device_cuda.cpp).
struct CudaDeviceProperties {
  char name[256] = {};
  std::uint64_t totalBytes = 0;
  int major = 0, minor = 0;
};
using CudaDeviceCountFn = int (*)();
using CudaDevicePropertiesFn = bool (*)(int index, CudaDeviceProperties* out);

}  // namespace shotchain::runtime
