# scripts/test --sanitize: the whole tree built with AddressSanitizer + UndefinedBehaviorSanitizer in
# its own folder (build-asan/, Debug at -O1 so asserts stay on and it runs at a usable speed), the
# full ctest suite run there, then every libFuzzer target the build made (tests/**/fuzz_*_bin) for
# longer than ctest's short runs. Not part of CI (a full rebuild with other flags: 30-50 min on
# 2 cores); run it before a release or after touching parsers, buffers or threads.
ASAN_BUILD_DIR=${SHOTCHAIN_ASAN_BUILD_DIR:-$ROOT/build-asan}
SANITIZER_DIR="$ROOT/scripts/lib/sanitizers"
FUZZ_RUNS=${SHOTCHAIN_FUZZ_RUNS:-200000}

# Only the project's code is instrumented; libtorch, Qt, libgomp and the rest run uninstrumented
# but with ASan's allocator. The suppression files name the third-party code and say why.
sanitizer_environment() {
  # allocator_may_return_null: an impossible allocation returns null as it does without ASan, so the
  # out-of-memory paths (counted refusals, the fallbacks) run as they do for users.
  export ASAN_OPTIONS="detect_leaks=1:check_initialization_order=1:allocator_may_return_null=1"
  export LSAN_OPTIONS="suppressions=$SANITIZER_DIR/lsan.supp:print_suppressions=0"
  export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:suppressions=$SANITIZER_DIR/ubsan.supp"
}

build_sanitized() {
  local log="$ASAN_BUILD_DIR/configure.log" flags="-fsanitize=address,undefined -fno-omit-frame-pointer" torch_arg
  torch_arg=$(torch_cmake_arg)  # the same libtorch as build/ (one download, kept in build/torch)
  mkdir -p "$ASAN_BUILD_DIR"
  if [ ! -f "$ASAN_BUILD_DIR/build.ninja" ]; then
    if ! cmake -S "$ROOT" -B "$ASAN_BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g" \
         -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="$flags" -DCMAKE_SHARED_LINKER_FLAGS="$flags" \
         -DCMAKE_MODULE_LINKER_FLAGS="$flags" "$torch_arg" >"$log" 2>&1; then
      cat "$log" >&2
      die "cmake could not configure the sanitizer build (log: $log)"
    fi
  fi
  local status=0
  ninja -C "$ASAN_BUILD_DIR" -j "$(nproc)" --quiet >"$ASAN_BUILD_DIR/build.log" 2>&1 || status=$?
  grep -v -e '^ninja: no work to do\.$' -e '^ninja: Entering directory' "$ASAN_BUILD_DIR/build.log" || true
  [ "$status" -eq 0 ] || die "the sanitizer build failed (log: $ASAN_BUILD_DIR/build.log)"
}

# Each fuzzer: FUZZ_RUNS inputs from a fixed seed; a crash or sanitizer report fails the run.
run_fuzzers() {
  local fuzzer status=0 found=0
  while IFS= read -r fuzzer; do
    found=1
    say "fuzzing: $(basename "$fuzzer") -runs=$FUZZ_RUNS"
    "$fuzzer" -runs="$FUZZ_RUNS" -max_len=4096 -seed=1 -rss_limit_mb=2048 -print_final_stats=1 \
      >"$fuzzer.long.log" 2>&1 || { status=1; tail -40 "$fuzzer.long.log" >&2; say "FAILED: $fuzzer (log: $fuzzer.long.log)"; }
    grep -E '^stat::number_of_executed_units' "$fuzzer.long.log" || true
  done < <(find "$ASAN_BUILD_DIR/tests" -type f -name 'fuzz_*_bin' -perm -u+x | sort)
  [ "$found" -eq 1 ] || say "no libFuzzer target was built (needs clang++ with -fsanitize=fuzzer)"
  return "$status"
}

run_sanitized_suite() {
  local start=$SECONDS status=0
  build_sanitized
  say "sanitizer build ready ($((SECONDS - start)) s); running the suite under ASan+UBSan"
  sanitizer_environment
  export QT_QPA_PLATFORM=offscreen
  ctest --test-dir "$ASAN_BUILD_DIR" --output-on-failure -j "$(nproc)" || status=1
  run_fuzzers || status=1
  say "sanitize: $([ "$status" -eq 0 ] && echo clean || echo FAILED) after $((SECONDS - start)) s"
  return "$status"
}
