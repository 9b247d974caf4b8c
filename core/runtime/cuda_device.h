#pragma once

#include <string>

namespace shotchain::runtime {

struct CudaDeviceInfo {
  bool available = false;
  std::string description;  // "NVIDIA H200, 139.8 GiB, sm_90"
};

// Implemented by cuda_device_cuda.cpp in a CUDA build and by cuda_device_cpu.cpp otherwise.
bool cudaBuild();
CudaDeviceInfo describeCudaDevice();

}  // namespace shotchain::runtime
