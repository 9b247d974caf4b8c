#include "runtime/cuda_device.h"

#include <cuda_runtime_api.h>

#include <c10/cuda/CUDAFunctions.h>

#include "util/byte_size.h"

namespace shotchain::runtime {

bool cudaBuild() { return true; }

CudaDeviceInfo describeCudaDevice() {
  CudaDeviceInfo info;
  if (c10::cuda::device_count() < 1) return info;
  cudaDeviceProp props{};
  if (cudaGetDeviceProperties(&props, 0) != cudaSuccess) return info;
  info.available = true;
  info.description = std::string(props.name) + ", " + util::formatByteSize(props.totalGlobalMem) + ", sm_" +
                     std::to_string(props.major) + std::to_string(props.minor);
  return info;
}

}  // namespace shotchain::runtime
