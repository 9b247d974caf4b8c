#pragma once

#include <string>

namespace shotchain::runtime {

struct RuntimeInfo {
  std::string torchVersion;
  int intraOpThreads = 1;
  bool cudaBuild = false;      // compiled against a CUDA libtorch
  bool cudaAvailable = false;  // and a device answered at start
  std::string cudaPlugin;      // its path where it is loaded, else why not (runtime/cuda_module.h)
  std::string device;          // "CPU (2 threads)" or the GPU's name and memory
};

// Call once at start, before any tensor work: sets libtorch's intra-op thread count to the
// machine's cores (libtorch starts with one here) and describes the compute device.
RuntimeInfo initTorchRuntime();

// libgomp reads OMP_WAIT_POLICY once, when it loads (before main), and by default spins idle
// threads, which made libtorch ~20x slower on a busy 2-core machine. Call first thing in main():
// when the variable is unset it sets PASSIVE and executes the program again (once).
void relaunchWithPassiveOpenMp(char** argv);

}  // namespace shotchain::runtime
