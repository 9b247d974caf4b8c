#include "runtime/cuda_device.h"

namespace shotchain::runtime {

bool cudaBuild() { return false; }
CudaDeviceInfo describeCudaDevice() { return {}; }

}  // namespace shotchain::runtime
