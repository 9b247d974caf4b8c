# Shared by scripts/run and scripts/test: install what is missing, configure and build.
# Quiet when everything is already there; loud only on a problem.

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD_DIR=${SHOTCHAIN_BUILD_DIR:-$ROOT/build}

# Debian 12 packages (libtorch comes from PyPI: scripts/lib/torch.sh). Runtime: Qt 6, sentencepiece
# and its spm_train tool, libav* for the
# rendered MP4 (libx264 comes with libavcodec) and ffmpeg (ffprobe, used by the export tests).
BUILD_PACKAGES=(cmake ninja-build g++ pkg-config ccache jq)
LIB_PACKAGES=(nlohmann-json3-dev libsentencepiece-dev sentencepiece qt6-base-dev qt6-image-formats-plugins
              libavcodec-dev libavformat-dev libavutil-dev libswscale-dev ffmpeg libgloo-dev libxxhash-dev)
# qt6-image-formats-plugins: WebP pictures (documented beside PNG, JPEG and BMP) decode at run time.
# libxxhash-dev: the digest of every byte of a model file that a shot's key follows.
# libgloo-dev: the <gloo/...> headers that c10d's ProcessGroupGloo.hpp includes (the wheel has none).
# The tests also check the house style (scripts/format --check) with Debian 12's clang-format.
TEST_PACKAGES=(clang-format-14)

# libgomp spins waiting threads by default; on a busy 2-core machine that made libtorch ~20x
# slower. It reads the setting when it loads, so it is set here (and by the programs themselves).
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-PASSIVE}

source "$ROOT/scripts/lib/torch.sh"

say() { printf '%s\n' "$*"; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

missing_packages() {
  local pkg
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || printf '%s\n' "$pkg"
  done
}

install_packages() {
  local missing
  mapfile -t missing < <(missing_packages "$@")
  [ ${#missing[@]} -eq 0 ] && return 0
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || die "installing ${missing[*]} needs root (or sudo)"
    sudo="sudo"
  fi
  say "Installing ${#missing[@]} Debian packages (${missing[*]}): about a minute on a fast mirror..."
  local log
  log=$(mktemp)
  if ! { $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"; } >"$log" 2>&1; then
    cat "$log" >&2
    rm -f "$log"
    die "apt-get could not install ${missing[*]}"
  fi
  rm -f "$log"
}

# build [TARGET...]: configure once (Release), then build the targets (all by default).
build() {
  local log="$BUILD_DIR/configure.log" torch_arg
  torch_arg=$(torch_cmake_arg)
  mkdir -p "$BUILD_DIR"
  # A build configured for another libtorch (or none) is configured again.
  if [ ! -f "$BUILD_DIR/build.ninja" ] || [ "$(cat "$BUILD_DIR/.torch-arg" 2>/dev/null)" != "$torch_arg" ]; then
    rm -f "$BUILD_DIR/CMakeCache.txt"
    if ! cmake -S "$ROOT" -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release "$torch_arg" >"$log" 2>&1; then
      cat "$log" >&2
      die "cmake could not configure the build (log: $log)"
    fi
    printf '%s\n' "$torch_arg" >"$BUILD_DIR/.torch-arg"
  fi
  # What is left to do, from ninja's own plan: nothing is printed when the build is current.
  local steps
  steps=$(ninja -C "$BUILD_DIR" -n "$@" 2>/dev/null | grep -c '^\[' || true)
  [ "$steps" -gt 0 ] || return 0
  local cores minutes
  cores=$(nproc)
  # About 14 s of one core per step in a cold build with an empty compiler cache (measured on 2 cores).
  minutes=$(( (steps * 14 + cores * 60 - 1) / (cores * 60) ))
  say "Building: $steps steps with $cores cores (a cold build takes about $minutes minutes; ccache makes later ones faster)..."
  local status start=$SECONDS
  # ninja's progress goes to build.log; a line every tenth of the way, and every warning or error, go here.
  { NINJA_STATUS='[%f/%t] ' ninja -C "$BUILD_DIR" "$@" 2>&1; echo $? >"$BUILD_DIR/.ninja-status"; } |
    tee "$BUILD_DIR/build.log" | awk '
    /^\[[0-9]+\/[0-9]+\] / { split(substr($1, 2), n, "/"); tenth = int(10 * n[1] / n[2]);
                             if (tenth > shown) { shown = tenth; printf "  %d%% (%d of %d steps)\n", 10 * tenth, n[1], n[2]; fflush() }
                             next }
    /warning:|error:|FAILED:/ { print; fflush() }'
  status=$(cat "$BUILD_DIR/.ninja-status")
  [ "$status" -eq 0 ] || die "the build failed (log: $BUILD_DIR/build.log)"
  say "Built in $(( (SECONDS - start + 30) / 60 )) min."
}
