#include "distributed/c10d_backend.h"
#include "distributed/process_group.h"
#include "runtime/cuda_module.h"

namespace shotchain::distributed {

c10::intrusive_ptr<CollectiveBackend> makeNcclBackend(const c10::intrusive_ptr<::c10d::Store>& store, int rank,
                                                      int size, std::chrono::milliseconds timeout) {
  using Make = CollectiveBackend* (*)(const c10::intrusive_ptr<::c10d::Store>*, int, int, std::chrono::milliseconds);
  const auto make = reinterpret_cast<Make>(runtime::cudaModuleSymbol("shotchain_cuda_nccl_backend"));
  if (make == nullptr)
    throw DistributedError("NCCL needs CUDA, and there is none here (" + runtime::cudaModuleStatus().note + ")", -1);
  return c10::intrusive_ptr<CollectiveBackend>::reclaim(make(&store, rank, size, timeout));
}

}  // namespace shotchain::distributed
