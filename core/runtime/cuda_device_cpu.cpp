#include "runtime/cuda_device.h"

namespace shotchain {

bool cudaBuild() { return false; }
CudaDeviceInfo describeCudaDevice() { return {}; }

}  // namespace shotchain
