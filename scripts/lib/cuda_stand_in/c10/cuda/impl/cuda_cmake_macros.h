#pragma once
// scripts/check-cuda's stand-in for the one header a CUDA build of libtorch generates and a CPU-only
// libtorch lacks. It is searched last (-idirafter): a real libtorch's own
// copy wins. libtorch is a shared library, so its CUDA part is too.
#define C10_CUDA_BUILD_SHARED_LIBS
