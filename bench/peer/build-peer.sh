#!/usr/bin/env bash
# Fetches stable-diffusion.cpp (vendored, with ggml, in the stable-diffusion-cpp-python
# source package), builds it CPU-only twice (default; ggml's llamafile kernels) with
# native CPU flags, and the Wan DiT driver against each build. Skips what is built.
#
#   bench/peer/build-peer.sh [-j N]
#
# Cache folder: $SHOTCHAIN_PEER_DIR, else build/peer in the repository (git-ignored).
set -euo pipefail

SDCPP_PY_VERSION=0.4.7
SDCPP_PY_SHA256=998d1957260dd5ae4e18a8acc0c14b0a8757aaa9f96515197b6d5bbf46df9282
# The sdist records neither; its src/, include/ and examples/server match this
# leejet/stable-diffusion.cpp commit, whose ggml submodule is the one given.
SDCPP_COMMIT=90e87bc846f17059771efb8aaa31e9ef0cab6f78
GGML_COMMIT=404fcb9d7c96989569e68c9e7881ee3465a05c50
JOBS=2
while [[ $# -gt 0 ]]; do
  case "$1" in
    -j) JOBS="$2"; shift 2 ;;
    -j*) JOBS="${1#-j}"; shift ;;
    -h|--help) sed -n '2,8p' "$0"; exit 0 ;;
    *) echo "build-peer.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
peer="${SHOTCHAIN_PEER_DIR:-$repo/build/peer}"
mkdir -p "$peer"
peer="$(cd "$peer" && pwd)"

sdist_name="stable_diffusion_cpp_python-$SDCPP_PY_VERSION"
sdist="$peer/download/$sdist_name.tar.gz"
src="$peer/src/$sdist_name"
sdcpp="$src/vendor/stable-diffusion.cpp"

if [[ ! -f "$sdist" ]]; then
  echo "== fetching stable-diffusion-cpp-python $SDCPP_PY_VERSION (source package) from PyPI"
  python3 -m pip download --quiet --no-binary :all: --no-deps \
    "stable-diffusion-cpp-python==$SDCPP_PY_VERSION" -d "$peer/download"
fi
if [[ -n "$SDCPP_PY_SHA256" ]]; then
  echo "$SDCPP_PY_SHA256  $sdist" | sha256sum --check --quiet
fi

if [[ ! -f "$sdcpp/src/wan.hpp" ]]; then
  echo "== unpacking into $peer/src"
  rm -rf "$src"
  mkdir -p "$peer/src"
  tar -xzf "$sdist" -C "$peer/src"
  # The sdist carries a stub .git of the bindings' own repository (its HEAD commit, and
  # a CI checkout's config): keep the commit, drop the rest.
  if [[ -f "$src/.git/refs/heads/main" ]]; then
    cp "$src/.git/refs/heads/main" "$src/BINDINGS_COMMIT"
  fi
  rm -rf "$src/.git"
fi

echo "stable-diffusion-cpp-python $SDCPP_PY_VERSION, commit $(cat "$src/BINDINGS_COMMIT" 2>/dev/null || echo unrecorded)"
echo "vendored stable-diffusion.cpp: $SDCPP_COMMIT (not recorded in the sdist: matched by source tree)"
ggml_version="$(sed -n 's/^set(GGML_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\))$/\2/p' "$sdcpp/ggml/CMakeLists.txt" | paste -sd.)"
echo "vendored ggml: $ggml_version, submodule $GGML_COMMIT, synced from llama.cpp $(cat "$sdcpp/ggml/scripts/sync-llama.last" 2>/dev/null || echo '?')"

build_variant() {
  local name="$1"; shift
  local dir="$peer/build-$name"
  echo "== $name: $dir"
  if [[ ! -f "$dir/build.ninja" ]]; then
    # sd.cpp names its version with `git describe`; stop git from finding the repository
    # this cache may sit in.
    GIT_CEILING_DIRECTORIES="$peer" cmake -S "$here" -B "$dir" -G Ninja \
      -DCMAKE_BUILD_TYPE=Release -DSDCPP_SOURCE_DIR="$sdcpp" \
      -DGGML_NATIVE=ON -DGGML_CUDA=OFF -DGGML_VULKAN=OFF -DGGML_METAL=OFF -DGGML_BLAS=OFF \
      "$@"
  fi
  # Ninja rebuilds nothing that is up to date.
  cmake --build "$dir" --target sdcpp_wan_dit -j "$JOBS"
}

build_variant default -DGGML_LLAMAFILE=OFF
build_variant llamafile -DGGML_LLAMAFILE=ON
