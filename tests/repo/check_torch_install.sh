#!/usr/bin/env bash
# scripts/lib/torch.sh against a package index that does not answer: it fails fast with a message that
# names libtorch and the index, leaves nothing behind, and an installed prefix with the same request is
# taken as it is (no pip call at all).
set -uo pipefail
ROOT=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

out=$(cd "$work" && SHOTCHAIN_TORCH_PREFIX="$work/torch" SHOTCHAIN_TORCH_INDEX="http://127.0.0.1:9/simple" \
      PIP_FIND_LINKS="" timeout 120 bash -c \
      "source '$ROOT/scripts/lib/common.sh'; torch_cmake_arg" 2>&1)
status=$?
[ "$status" -ne 0 ] || fail "an unreachable index was reported as success: $out"
[ "$status" -ne 124 ] || fail "the install hung on an unreachable index"
grep -q "could not download libtorch" <<<"$out" || fail "no clear message: $out"
grep -q "SHOTCHAIN_TORCH_INDEX" <<<"$out" || fail "the message does not say how to pick another index: $out"
[ ! -e "$work/torch" ] && [ ! -e "$work/torch.partial" ] || fail "a failed install left files behind"

# A prefix whose stamp matches the request is used as it is, silently.
mkdir -p "$work/torch/torch/lib" && touch "$work/torch/torch/lib/libtorch.so"
request=$(SHOTCHAIN_TORCH_PREFIX="$work/torch" bash -c "source '$ROOT/scripts/lib/common.sh'; torch_request")
printf '%s\n' "$request" >"$work/torch/.shotchain-torch"
out=$(SHOTCHAIN_TORCH_PREFIX="$work/torch" PIP_INDEX_URL="http://127.0.0.1:9/simple" bash -c \
      "source '$ROOT/scripts/lib/common.sh'; torch_cmake_arg" 2>&1) || fail "an installed prefix was not taken: $out"
[ "$out" = "-DSHOTCHAIN_TORCH_ROOT=$work/torch" ] || fail "unexpected output for an installed prefix: $out"
echo "ok: the torch install fails clearly offline and keeps an installed prefix"
