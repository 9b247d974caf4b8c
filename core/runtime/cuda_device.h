#pragma once

#include <string>

namespace shotchain::runtime {

struct CudaDeviceInfo {
  bool available = false;
  std::string description;  // "NVIDIA H200, 139.8 GiB, sm_90"
};

// cudaBuild: compiled against a CUDA libtorch. describeCudaDevice: from the CUDA plugin (runtime/cuda_module.h),
// unavailable where it is not loaded.
bool cudaBuild();
CudaDeviceInfo describeCudaDevice();

}  // namespace shotchain::runtime
