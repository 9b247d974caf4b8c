// The CUDA plugin (core/cuda_sources.txt). c10d declares ProcessGroupNCCL only under USE_C10D_NCCL; it is
// defined here rather than by CMake so that scripts/check-cuda, which compiles this file with the
// CPU build's flags, sees the same code as the CUDA build.
#define USE_C10D_NCCL 1

#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>

#include "distributed/c10d_backend.h"

extern "C" __attribute__((visibility("default"))) shotchain::distributed::CollectiveBackend*
shotchain_cuda_nccl_backend(const c10::intrusive_ptr<::c10d::Store>* store, int rank, int size,
                            std::chrono::milliseconds timeout) {
  auto options = ::c10d::ProcessGroupNCCL::Options::create();
  options->timeout = timeout;
  return c10::make_intrusive<::c10d::ProcessGroupNCCL>(*store, rank, size, options).release();
}
