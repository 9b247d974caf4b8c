# libtorch from PyPI's torch wheel, as scripts/lib/torch.sh unpacks it into SHOTCHAIN_TORCH_ROOT:
# torch/{include,lib} and, for a CUDA wheel, the nvidia/ runtime wheels beside it. The wheel's own
# TorchConfig.cmake is not used: for a CUDA build it looks for a CUDA toolkit with nvcc and links that
# toolkit's libraries, while the wheel already brings the CUDA headers and libraries it was built with.
# Defines the targets shotchain_torch (libtorch_cpu: what the project links) and, for a CUDA wheel,
# shotchain_torch_cuda (libtorch_cuda and the CUDA runtime: what the CUDA plugin links), and sets Torch_VERSION,
# SHOTCHAIN_TORCH_CUDA and SHOTCHAIN_TORCH_GOMP.

set(_torch "${SHOTCHAIN_TORCH_ROOT}/torch")
if(NOT EXISTS "${_torch}/lib/libtorch.so" OR NOT EXISTS "${_torch}/include/torch/headeronly/version.h")
  message(FATAL_ERROR "SHOTCHAIN_TORCH_ROOT=${SHOTCHAIN_TORCH_ROOT} holds no unpacked torch wheel "
                      "(torch/lib/libtorch.so, torch/include/torch/headeronly/version.h): scripts/run or scripts/test installs one")
endif()
file(STRINGS "${_torch}/include/torch/headeronly/version.h" _version REGEX "#define TORCH_VERSION_(MAJOR|MINOR|PATCH) ")
string(REGEX REPLACE ".*MAJOR ([0-9]+).*MINOR ([0-9]+).*PATCH ([0-9]+).*" "\\1.\\2.\\3" Torch_VERSION "${_version}")

add_library(shotchain_torch INTERFACE)
target_include_directories(shotchain_torch SYSTEM INTERFACE "${_torch}/include" "${_torch}/include/torch/csrc/api/include")
# Not libtorch.so: it is empty, and it needs libtorch_cuda.so.
set(_libs "${_torch}/lib/libtorch_cpu.so" "${_torch}/lib/libc10.so")
# The OpenMP runtime the wheel brings and libtorch loads: what the project links for omp_* too.
if(EXISTS "${_torch}/lib/libgomp.so.1")
  set(SHOTCHAIN_TORCH_GOMP "${_torch}/lib/libgomp.so.1")
endif()
set(SHOTCHAIN_TORCH_CUDA OFF)
if(EXISTS "${_torch}/lib/libtorch_cuda.so")
  set(_nvidia "${SHOTCHAIN_TORCH_ROOT}/nvidia")
  file(GLOB _cudart "${_nvidia}/cu*/lib/libcudart.so.*")
  file(GLOB _cuda_include LIST_DIRECTORIES true "${_nvidia}/cu*/include")
  if(NOT _cudart OR NOT EXISTS "${_nvidia}/nccl/include/nccl.h")
    message(FATAL_ERROR "${_torch} is a CUDA build but ${_nvidia} lacks the CUDA runtime or NCCL wheels it was built with")
  endif()
  set(SHOTCHAIN_TORCH_CUDA ON)
  list(GET _cudart 0 _cudart)
  target_include_directories(shotchain_torch SYSTEM INTERFACE ${_cuda_include} "${_nvidia}/nccl/include")
  # libtorch_cuda.so registers the CUDA kernels and hooks when it loads: no symbol of it is named, so it
  # is linked whatever --as-needed says (as TorchConfig.cmake does). Its own rpath
  # ($ORIGIN/../../nvidia/...) finds the rest; the linker follows it while it resolves its symbols.
  add_library(shotchain_torch_cuda INTERFACE)
  target_link_libraries(shotchain_torch_cuda INTERFACE shotchain_torch
    "-Wl,--push-state,--no-as-needed" "${_torch}/lib/libtorch_cuda.so" "-Wl,--pop-state"
    "${_torch}/lib/libc10_cuda.so" "${_cudart}")
  target_link_options(shotchain_torch_cuda INTERFACE "LINKER:-rpath-link,${_torch}/lib")
endif()
target_link_libraries(shotchain_torch INTERFACE ${_libs})
