# Sourced by common.sh: libtorch from PyPI's torch wheel, unpacked with the NVIDIA runtime wheels it
# loads into a private folder (no Python package is imported or installed into any Python).
#
# The wheel is PyTorch's own CUDA build: on a machine with an NVIDIA GPU the studio renders on it,
# elsewhere the same libraries run on the CPU. What CMake needs is its headers and libraries
# (torch/include, torch/lib) and, because libtorch_cuda.so links them, the CUDA runtime libraries of
# the nvidia-* wheels beside it (libtorch finds them through its own $ORIGIN/../../nvidia rpath).
#
# Another build: SHOTCHAIN_TORCH_VERSION=2.x.y (with SHOTCHAIN_TORCH_CUDA_WHEELS for its nvidia
# wheels), SHOTCHAIN_TORCH_INDEX=URL (a PyPI-style index, e.g. one of CPU-only wheels: the nvidia
# wheels are then skipped), or SHOTCHAIN_TORCH_CMAKE_DIR=DIR/share/cmake/Torch (any libtorch already
# on disk; nothing is downloaded).

TORCH_VERSION=${SHOTCHAIN_TORCH_VERSION:-2.15.0}
TORCH_PREFIX=${SHOTCHAIN_TORCH_PREFIX:-$ROOT/build/torch}

# The NVIDIA wheels that torch 2.15.0 needs at load time (the NEEDED entries of libtorch_cpu/_cuda.so:
# cudart, CUPTI, cuBLAS/cuBLASLt, cuFFT, cuSPARSE and nvJitLink, cuFile, NVRTC, cuDNN, cuSPARSELt, NCCL,
# NVSHMEM), pinned as that wheel's metadata pins them. Not its Python dependencies (sympy, triton...).
TORCH_CUDA_WHEELS_DEFAULT="nvidia-cuda-runtime==13.2.86.* nvidia-cublas==13.4.1.3.* nvidia-cufft==12.2.0.57.*
  nvidia-cusparse==12.7.10.12.* nvidia-nvjitlink==13.2.86.* nvidia-cufile==1.17.1.22.* nvidia-cuda-nvrtc==13.2.86.*
  nvidia-cuda-cupti==13.2.86.*
  nvidia-cudnn-cu13==9.26.0.51 nvidia-cusparselt-cu13==0.8.1 nvidia-nccl-cu13==2.30.7 nvidia-nvshmem-cu13==3.7.2"

# What was asked for, one line: the stamp of an installed prefix holds it, so a change reinstalls.
torch_request() {
  if [ -n "${SHOTCHAIN_TORCH_INDEX:-}" ]; then
    printf 'torch==%s index=%s\n' "$TORCH_VERSION" "$SHOTCHAIN_TORCH_INDEX"
  else
    printf 'torch==%s %s\n' "$TORCH_VERSION" "$(echo ${SHOTCHAIN_TORCH_CUDA_WHEELS:-$TORCH_CUDA_WHEELS_DEFAULT})"
  fi
}

# The CMake argument that points the build at libtorch (printed), installing the wheel first if needed.
torch_cmake_arg() {
  if [ -n "${SHOTCHAIN_TORCH_CMAKE_DIR:-}" ]; then
    [ -f "$SHOTCHAIN_TORCH_CMAKE_DIR/TorchConfig.cmake" ] ||
      die "SHOTCHAIN_TORCH_CMAKE_DIR=$SHOTCHAIN_TORCH_CMAKE_DIR has no TorchConfig.cmake"
    printf -- '-DTorch_DIR=%s\n' "$SHOTCHAIN_TORCH_CMAKE_DIR"
    return 0
  fi
  install_torch >&2
  printf -- '-DSHOTCHAIN_TORCH_ROOT=%s\n' "$TORCH_PREFIX"
}

find_pip() {
  local python
  for python in python3 python; do
    command -v "$python" >/dev/null 2>&1 && "$python" -m pip --version >/dev/null 2>&1 && { printf '%s\n' "$python"; return 0; }
  done
  return 1
}

install_torch() {
  local request stamp="$TORCH_PREFIX/.shotchain-torch"
  request=$(torch_request)
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$request" ] && [ -f "$TORCH_PREFIX/torch/lib/libtorch.so" ]; then
    return 0
  fi
  local python
  if ! python=$(find_pip); then
    install_packages python3-pip
    python=$(find_pip) || die "no working pip (python3 -m pip) to download libtorch with"
  fi
  local packages=("torch==$TORCH_VERSION") index=()
  if [ -n "${SHOTCHAIN_TORCH_INDEX:-}" ]; then
    index=(--index-url "$SHOTCHAIN_TORCH_INDEX")
  else
    # shellcheck disable=SC2206  # a list of requirement specifiers, split on white space
    packages+=(${SHOTCHAIN_TORCH_CUDA_WHEELS:-$TORCH_CUDA_WHEELS_DEFAULT})
  fi
  if [ ${#index[@]} -gt 0 ]; then
    say "Downloading libtorch $TORCH_VERSION from $SHOTCHAIN_TORCH_INDEX into ${TORCH_PREFIX#"$ROOT"/} (once)..."
  else
    say "Downloading libtorch $TORCH_VERSION from PyPI into ${TORCH_PREFIX#"$ROOT"/} (once): the torch wheel and" \
        "$(( ${#packages[@]} - 1 )) NVIDIA runtime wheels, about 2.5 GB to download and 3.8 GB on disk..."
  fi
  local partial="$TORCH_PREFIX.partial" log start=$SECONDS
  rm -rf "$partial"
  mkdir -p "$(dirname "$TORCH_PREFIX")"
  log=$(mktemp)
  # --platform/--only-binary: the manylinux wheels (glibc 2.28 or older, as torch's) whatever this
  # Python is, since only their C++ is used; --no-deps: none of torch's Python dependencies.
  local platforms=() glibc
  for glibc in $(seq 28 -1 5); do platforms+=(--platform "manylinux_2_${glibc}_x86_64"); done
  platforms+=(--platform manylinux2014_x86_64 --platform manylinux2010_x86_64 --platform manylinux1_x86_64)
  if ! "$python" -m pip install --disable-pip-version-check --no-deps --no-compile --only-binary=:all: \
        "${platforms[@]}" --python-version 3.11 --implementation cp --target "$partial" \
        --timeout 30 --retries 2 "${index[@]}" "${packages[@]}" >"$log" 2>&1; then
    grep -E "ERROR|error|Could not|No matching" "$log" | head -5 >&2
    rm -rf "$partial" "$log"
    die "could not download libtorch $TORCH_VERSION (${packages[*]}) from the package index:" \
        "check the network or the index (SHOTCHAIN_TORCH_INDEX, pip's configuration); nothing was installed"
  fi
  grep -E '^ *Downloading ' "$log" | sed -E 's#^ *Downloading (.*/)?#  #' || true
  rm -f "$log"
  [ -f "$partial/torch/lib/libtorch.so" ] || { rm -rf "$partial"; die "the torch $TORCH_VERSION wheel has no torch/lib/libtorch.so"; }
  # Only torch/include, torch/lib, torch/share and the nvidia/ libraries are used; the rest is Python.
  find "$partial/torch" -mindepth 1 -maxdepth 1 ! -name include ! -name lib ! -name share -exec rm -rf {} +
  rm -rf "$partial"/torchgen "$partial"/functorch "$partial"/bin
  printf '%s\n' "$request" >"$partial/.shotchain-torch"
  rm -rf "$TORCH_PREFIX"
  mv "$partial" "$TORCH_PREFIX"
  say "libtorch $TORCH_VERSION is in ${TORCH_PREFIX#"$ROOT"/} ($(du -sh "$TORCH_PREFIX" | cut -f1), $((SECONDS - start)) s)."
}
