// The CUDA plugin (core/cuda_sources.txt): what runtime/cuda_device.cpp asks of a device.
#include <algorithm>
#include <cstring>

#include <cuda_runtime_api.h>

#include <c10/cuda/CUDAFunctions.h>

#include "runtime/cuda_module.h"

extern "C" __attribute__((visibility("default"))) int shotchain_cuda_device_count() {
  return static_cast<int>(c10::cuda::device_count());
}

extern "C" __attribute__((visibility("default"))) bool shotchain_cuda_device_properties(
    int index, shotchain::runtime::CudaDeviceProperties* out) {
  cudaDeviceProp props{};
  if (cudaGetDeviceProperties(&props, index) != cudaSuccess) return false;
  const std::size_t length = std::min(::strnlen(props.name, sizeof props.name), sizeof out->name - 1);
  std::memcpy(out->name, props.name, length);
  out->name[length] = '\0';
  out->totalBytes = props.totalGlobalMem;
  out->major = props.major;
  out->minor = props.minor;
  return true;
}
