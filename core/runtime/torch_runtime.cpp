#include "runtime/torch_runtime.h"

#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <thread>

#include <ATen/Parallel.h>
#include <ATen/detail/CUDAHooksInterface.h>
#include <torch/version.h>

#include "runtime/cuda_device.h"
#include "runtime/cuda_module.h"

namespace shotchain::runtime {

void relaunchWithPassiveOpenMp(char** argv) {
  if (std::getenv("OMP_WAIT_POLICY") != nullptr) return;
  ::setenv("OMP_WAIT_POLICY", "PASSIVE", 1);
  ::execv("/proc/self/exe", argv);  // returns only on failure: then run on with the default policy
}

RuntimeInfo initTorchRuntime() {
  RuntimeInfo info;
  // Host tensors of 1 MiB and more come from mmap and go back to the system when freed. By default glibc raises
  // that threshold as large blocks are freed (up to 32 MiB), and freed activations then stay in its heap: 90 MB
  // more at the peak of a 1.3B-wide forward.
  ::mallopt(M_MMAP_THRESHOLD, 1 << 20);
  // Ranks that share a machine (LOCAL_WORLD_SIZE, as torchrun and `--ranks` set it) share its cores.
  const char* local = std::getenv("LOCAL_WORLD_SIZE");
  const int sharing = local != nullptr ? std::max(1, std::atoi(local)) : 1;
  const unsigned cores = std::thread::hardware_concurrency();
  at::set_num_threads(std::max(1, static_cast<int>(cores > 0 ? cores : 1) / sharing));
  info.intraOpThreads = at::get_num_threads();
  info.torchVersion = TORCH_VERSION;
  info.cudaBuild = cudaBuild();
  info.cudaPlugin = cudaModuleStatus().note;
  if (cudaModuleStatus().loaded) {
    // libtorch's own CUDA hooks answer only when libtorch_cuda registered them as the plugin loaded.
    const long runtime = at::detail::getCUDAHooks().versionCUDART();
    info.cudaPlugin = "loaded from " + info.cudaPlugin + " (CUDA runtime " + std::to_string(runtime / 1000) + "." +
                      std::to_string(runtime % 1000 / 10) + ")";
  }
  const CudaDeviceInfo cuda = describeCudaDevice();
  info.cudaAvailable = cuda.available;
  info.device = cuda.available ? cuda.description : "CPU (" + std::to_string(info.intraOpThreads) + " threads)";
  return info;
}

}  // namespace shotchain::runtime
