#include "runtime/cuda_device.h"

#include "runtime/cuda_module.h"
#include "util/byte_size.h"

namespace shotchain::runtime {

bool cudaBuild() { return cudaModuleStatus().built; }

CudaDeviceInfo describeCudaDevice() {
  CudaDeviceInfo info;
  const auto count = reinterpret_cast<CudaDeviceCountFn>(cudaModuleSymbol("shotchain_cuda_device_count"));
  const auto properties =
      reinterpret_cast<CudaDevicePropertiesFn>(cudaModuleSymbol("shotchain_cuda_device_properties"));
  CudaDeviceProperties props;
  if (count == nullptr || properties == nullptr || count() < 1 || !properties(0, &props)) return info;
  info.available = true;
  info.description = std::string(props.name) + ", " + util::formatByteSize(props.totalBytes) + ", sm_" +
                     std::to_string(props.major) + std::to_string(props.minor);
  return info;
}

}  // namespace shotchain::runtime
