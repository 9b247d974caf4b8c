#pragma once

// The c10d pieces ShotChain uses: ProcessGroupGloo/NCCL derive from c10d::Backend.
// Include only from translation units compiled with USE_C10D_GLOO (CMake sets it on them).

#include <chrono>
#include <string>

#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

namespace shotchain::distributed {

using CollectiveBackend = ::c10d::Backend;

// Gloo over TCP, bound to `host` (an address or host name of this machine; empty: the interface
// GLOO_SOCKET_IFNAME names, else this machine's host name).
c10::intrusive_ptr<CollectiveBackend> makeGlooBackend(const c10::intrusive_ptr<::c10d::Store>& store, int rank,
                                                      int size, std::chrono::milliseconds timeout,
                                                      const std::string& host);

// NCCL on the current CUDA device, from the CUDA plugin (nccl_backend_cuda.cpp); throws DistributedError where it
// is not loaded.
c10::intrusive_ptr<CollectiveBackend> makeNcclBackend(const c10::intrusive_ptr<::c10d::Store>& store, int rank,
                                                      int size, std::chrono::milliseconds timeout);

}  // namespace shotchain::distributed
