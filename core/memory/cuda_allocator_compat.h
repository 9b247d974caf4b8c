#pragma once

// CUDA build only: the caching allocator's segments, read the same way from libtorch 2.3 on (the
// oldest ShotChain builds against; CMake refuses older ones).
#include <vector>

#include <c10/cuda/CUDACachingAllocator.h>

namespace shotchain::memory::cuda_compat {

namespace alloc = c10::cuda::CUDACachingAllocator;

inline std::vector<alloc::SegmentInfo> snapshotSegments() { return alloc::snapshot().segments; }

inline bool isExpandable(const alloc::SegmentInfo& segment) { return segment.is_expandable; }

}  // namespace shotchain::memory::cuda_compat
