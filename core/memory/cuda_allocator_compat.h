#pragma once

// CUDA build only: where the caching allocator's API differs between the libtorch versions
// ShotChain builds against (Debian's 1.13 in CI, a PyTorch 2.x wheel on a GPU machine), keyed on
// libtorch's own version macros. scripts/check-cuda compiles the 1.13 side on every CI run.
#include <vector>

#include <c10/cuda/CUDACachingAllocator.h>
#include <torch/version.h>

namespace shotchain::cuda_compat {

namespace alloc = c10::cuda::CUDACachingAllocator;

#define SHOTCHAIN_TORCH_AT_LEAST(major, minor) \
  (TORCH_VERSION_MAJOR > (major) || (TORCH_VERSION_MAJOR == (major) && TORCH_VERSION_MINOR >= (minor)))

// The allocator's segments. libtorch 1.x (1.13 here): snapshot() returns the vector itself; 2.0
// and later (the headers of 2.0 and 2.9 read): it returns SnapshotInfo, the vector in .segments.
inline std::vector<alloc::SegmentInfo> snapshotSegments() {
#if SHOTCHAIN_TORCH_AT_LEAST(2, 0)
  return alloc::snapshot().segments;
#else
  return alloc::snapshot();
#endif
}

// Whether a segment is an expandable one. SegmentInfo::is_expandable exists from libtorch 2.1
// (expandable segments came with it); 1.13 and 2.0 have no such segments: always false.
inline bool isExpandable([[maybe_unused]] const alloc::SegmentInfo& segment) {
#if SHOTCHAIN_TORCH_AT_LEAST(2, 1)
  return segment.is_expandable;
#else
  return false;
#endif
}

}  // namespace shotchain::cuda_compat
