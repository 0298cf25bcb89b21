#!/usr/bin/env bash
# The whole test suite, five builds, each configured, built and run through CTest:
#   build-test      SIMD kernels; every test at every kernel level, valgrind
#                   (constant-time and memcheck) and the real clients
#   build-portable  -DCHAPOLY_SIMD=OFF: the same suite on the portable kernels
#   build-asan      ASan + UBSan (+ LeakSanitizer): everything in-process
#   build-tsan      ThreadSanitizer: the thread tests
#   build-fuzz      clang libFuzzer targets, each for CHAPOLY_FUZZ_SECONDS (45)
# Usage: scripts/test-all.sh [--quick]   (--quick: build-test, quick label only)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
jobs=$(nproc 2>/dev/null || echo 2)
quick=0
[ "${1:-}" = "--quick" ] && quick=1
fuzz_seconds=${CHAPOLY_FUZZ_SECONDS:-45}
start=$(date +%s)

# run_build DIR "ctest args" cmake-args...
run_build() {
    local dir=$1 ctest_args=$2
    shift 2
    local t0
    t0=$(date +%s)
    echo "=== $dir: configure ($*)"
    # every option spelled out, so a reused build directory cannot keep a stale one
    cmake -S "$here" -B "$here/$dir" -DCHAPOLY_SIMD=ON -DCHAPOLY_SANITIZE=OFF \
        -DCHAPOLY_TSAN=OFF -DCHAPOLY_FUZZ=OFF -DCHAPOLY_TESTS=ON "$@" >/dev/null
    echo "=== $dir: build"
    cmake --build "$here/$dir" -j"$jobs" >/dev/null
    echo "=== $dir: ctest $ctest_args"
    # shellcheck disable=SC2086
    (cd "$here/$dir" && ctest --output-on-failure -j"$jobs" $ctest_args)
    echo "=== $dir: done in $(( $(date +%s) - t0 )) s"
}

if [ "$quick" -eq 1 ]; then
    run_build build-test "-L quick" -DCMAKE_BUILD_TYPE=Release
    exit 0
fi

run_build build-test "" -DCMAKE_BUILD_TYPE=Release
run_build build-portable "-LE valgrind" -DCMAKE_BUILD_TYPE=Release -DCHAPOLY_SIMD=OFF
# The module inside foreign processes (curl, nginx, python) under ASan is not
# meaningful; everything in-process is.
run_build build-asan "-LE clients" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCHAPOLY_SANITIZE=ON
run_build build-tsan "-L threads" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCHAPOLY_TSAN=ON
if command -v clang >/dev/null 2>&1; then
    run_build build-fuzz "-L fuzz" -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DCHAPOLY_FUZZ=ON -DCHAPOLY_SANITIZE=ON -DCMAKE_C_FLAGS=-fsanitize=fuzzer-no-link \
        -DCHAPOLY_FUZZ_SECONDS="$fuzz_seconds"
else
    echo "clang not found: fuzzing skipped (apt-get install clang)" >&2
    exit 1
fi
echo "all test builds passed in $(( $(date +%s) - start )) s"
