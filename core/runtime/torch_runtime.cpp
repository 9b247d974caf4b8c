#include "runtime/torch_runtime.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <thread>

#include <ATen/Parallel.h>
#include <torch/version.h>

#include "runtime/cuda_device.h"

namespace shotchain::runtime {

void relaunchWithPassiveOpenMp(char** argv) {
  if (std::getenv("OMP_WAIT_POLICY") != nullptr) return;
  ::setenv("OMP_WAIT_POLICY", "PASSIVE", 1);
  ::execv("/proc/self/exe", argv);  // returns only on failure: then run on with the default policy
}

RuntimeInfo initTorchRuntime() {
  RuntimeInfo info;
  // Ranks that share a machine (LOCAL_WORLD_SIZE, as torchrun and `--ranks` set it) share its cores.
  const char* local = std::getenv("LOCAL_WORLD_SIZE");
  const int sharing = local != nullptr ? std::max(1, std::atoi(local)) : 1;
  const unsigned cores = std::thread::hardware_concurrency();
  at::set_num_threads(std::max(1, static_cast<int>(cores > 0 ? cores : 1) / sharing));
  info.intraOpThreads = at::get_num_threads();
  info.torchVersion = TORCH_VERSION;
  info.cudaBuild = cudaBuild();
  const CudaDeviceInfo cuda = describeCudaDevice();
  info.cudaAvailable = cuda.available;
  info.device = cuda.available ? cuda.description : "CPU (" + std::to_string(info.intraOpThreads) + " threads)";
  return info;
}

}  // namespace shotchain::runtime
