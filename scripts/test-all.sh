#!/usr/bin/env bash
# The whole test suite: the SIMD build, a portable-only build (CHAPOLY_SIMD=OFF)
# and an ASan+UBSan build, each configured, built and run through CTest.
# Usage: scripts/test-all.sh [--quick]   (--quick: SIMD build only)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
jobs=$(nproc 2>/dev/null || echo 2)
quick=0
[ "${1:-}" = "--quick" ] && quick=1

run_build() {
    local dir=$1; shift
    echo "=== build $dir ($*)"
    cmake -S "$here" -B "$here/$dir" -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
    cmake --build "$here/$dir" -j"$jobs" >/dev/null
    (cd "$here/$dir" && ctest --output-on-failure -j"$jobs" --timeout 900)
}

run_build build-test
if [ "$quick" -eq 0 ]; then
    run_build build-portable -DCHAPOLY_SIMD=OFF
    run_build build-asan -DCHAPOLY_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo
fi
echo "all test builds passed"
