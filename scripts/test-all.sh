#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The whole test suite, fourteen builds, each configured, built and run through CTest
# by its preset in CMakePresets.json (same name as its build directory):
#   build-test      SIMD kernels; every test at every kernel level, valgrind
#                   (constant-time and memcheck), the real clients (curl,
#                   nginx, python, Debian's sshd and ssh), and the
#                   Debian package (label package: cpack -G DEB, then, as root,
#                   dpkg -i, chapoly loaded from the system, dpkg -r)
#   build-portable  -DCHAPOLY_SIMD=OFF: the same suite on the portable kernels
#   build-arm64     cross-built for aarch64 (cmake/aarch64-linux-gnu.cmake), run
#                   under qemu: every kernel, EVP, TLS and secrets test at each
#                   arm64 level; tests needing an x86 tool (openssl command,
#                   curl, nginx, python, valgrind) are reported as skipped
#                   (label host-tool); its arm64 .deb is built and inspected,
#                   not installed. x86-64 hosts only.
#   build-arm64-portable  the same with -DCHAPOLY_SIMD=OFF: the serving policy
#                   (label serve) where only the portable level runs
#   build-s390x, build-armhf, build-i386  Debian's big-endian and 32-bit
#                   architectures, cross-built (cmake/debian-cross.cmake)
#                   against that architecture's libssl3 and libsodium, which
#                   scripts/cross-sysroot.sh unpacks into .cache/; run under
#                   qemu (i386: natively where the kernel runs 32-bit x86
#                   programs): the portable layer (labels kernels, evp, tls,
#                   package: the .deb built and inspected). x86-64 hosts only.
#   build-asan      ASan + UBSan (+ LeakSanitizer): everything in-process
#   build-tsan      ThreadSanitizer: the thread tests
#   build-fuzz      clang libFuzzer targets, each for CHAPOLY_FUZZ_SECONDS (45)
#   build-openssl35 against OpenSSL 3.5 (Debian trixie's, in a private prefix
#                   that scripts/openssl35.sh prepares and caches): the EVP,
#                   TLS (libssl 3.5), QUIC (libssl 3.5's server and client),
#                   CLI (its openssl command) and secrets tests at every
#                   level, and binary compatibility both ways
#   build-openssl35-asan  the same OpenSSL 3.5 with ASan + UBSan, the tests of
#                   what exists only against 3.5: test_pipeline{,_memory} (the pipeline
#                   API, aead_pipeline.c), test_openssl35 and test_quic
#   build-openssl36, build-openssl40  against OpenSSL 3.6 (Debian forky's) and
#                   4.0 (experimental's, libcrypto.so.4), each in a private
#                   prefix (scripts/openssl-prefix.sh): the whole suite but
#                   valgrind, ct and deploy, and the binary matrix with
#                   build-test both ways
# Usage: scripts/test-all.sh [--quick | --check-tools | --arch ARCH[,ARCH...]]
#   --quick        build-test, quick label only; needs only the native tools
#                  (no arm64 packages, no cross compiler)
#   --arch         only the cross trees of these Debian architectures, each
#                  build-ARCH: s390x armhf i386 (the full run's), ppc64el and
#                  riscv64 (the optional run, docs/testing.md); x86-64 hosts
#   --check-tools  only check (and on Debian install) every tool the full run
#                  needs, the arm64 cross tools included, then exit
#                  (scripts/install-test-deps.sh, which every run starts with)
# The developer's inner loop is not this script but one layer's label in an
# existing build directory (labels: kernels, evp, tls, cli, clients, ct,
# valgrind; see docs/testing.md, "Labels: one per layer"):
#   cmake --build build -j && (cd build && ctest -L kernels)    # about 4 s
#
# First every tool the suite uses must be there (scripts/install-test-deps.sh):
# on Debian the missing packages are installed (apt-get, no recommends) when
# this runs as root or `sudo -n` works; otherwise it stops at once and prints
# the apt-get line to run. Each build is then configured by its preset with
# --fresh (a reused build directory keeps nothing from an earlier configure),
# -DCHAPOLY_REQUIRE_TEST_TOOLS=ON and -DCHAPOLY_WERROR=ON, and its test preset
# runs with CHAPOLY_REQUIRE_TOOLS=1, so a tool that is still missing is a
# failure, never a silently smaller suite, and a compiler warning (gcc or
# clang) fails the build. A test preset selects what this script runs in its
# tree (the labels above); a plain ctest in any of the trees runs the rest too,
# each test passing or reporting itself skipped with the reason. Every build
# runs even when an earlier one failed; a summary at the end names each
# build's result, and the exit status is nonzero if any failed.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
jobs=$(nproc 2>/dev/null || echo 2)
mode=all
usage() {
    echo "usage: $0 [--quick | --check-tools | --arch ARCH[,ARCH...]]"
    echo "inner loop, in a build directory: ctest -L kernels (about 4 s; or evp, tls, '^cli\$', ...)"
    echo "one build of them: cmake --workflow --preset NAME (cmake --list-presets names them)"
}
arches=""
case "${1:-}" in
    "") ;;
    --quick) mode=quick ;;
    --check-tools) mode=check ;;
    --arch)
        mode=arch
        arches=$(printf '%s' "${2:-}" | tr ',' ' ')
        for a in $arches; do
            case "$a" in
                s390x | armhf | i386 | ppc64el | riscv64) ;;
                *)
                    echo "test-all: --arch: unknown architecture '$a' (s390x armhf i386 ppc64el riscv64)" >&2
                    exit 2
                    ;;
            esac
        done
        if [ -z "$arches" ]; then
            usage >&2
            exit 2
        fi
        ;;
    -h | --help)
        usage
        exit 0
        ;;
    *)
        usage >&2
        exit 2
        ;;
esac
fuzz_seconds=${CHAPOLY_FUZZ_SECONDS:-45}
start=$(date +%s)

host_is_x86_64() {
    [ "$(uname -m)" = x86_64 ]
}

# ---- tools -------------------------------------------------------------------

deps_args=()
[ "$mode" = quick ] && deps_args=(--native)
if [ "$mode" = arch ]; then
    if ! host_is_x86_64; then
        echo "test-all: --arch: the cross trees are built on x86-64 hosts only, this is $(uname -m)"
        exit 1
    fi
    deps_args=(--cross "$(printf '%s' "$arches" | tr ' ' ',')")
fi
if ! "$here/scripts/install-test-deps.sh" "${deps_args[@]}"; then
    echo "test-all: FAILED: test tools missing, nothing was built"
    exit 1
fi
[ "$mode" = check ] && exit 0

# A test that cannot find its tool fails instead of reporting "skipped".
export CHAPOLY_REQUIRE_TOOLS=1

# The cross trees' sysroots (scripts/cross-sysroot.sh: a download and unpack
# each, mostly waiting for the network) are prepared in the background from
# here on; each tree's toolchain file waits for its own (the script's lock),
# or prepares it again, with its messages, if this failed (log in .cache/).
prefetch_sysroots() {
    local a
    mkdir -p "$here/.cache"
    for a in "$@"; do
        "$here/scripts/cross-sysroot.sh" "$a" --prefix > "$here/.cache/sysroot-$a.log" 2>&1 &
    done
}
if [ "$mode" = arch ]; then
    # shellcheck disable=SC2086
    prefetch_sysroots $arches
elif [ "$mode" = all ] && host_is_x86_64; then
    prefetch_sysroots s390x armhf i386
fi

# ---- builds ------------------------------------------------------------------

results=()
failed=()

# The cross trees of other Debian architectures build only the programs their
# test preset runs (tested_targets): the rest (the benchmarks, stand-ins'
# programs, on 32-bit the radix 2^26 twin of the kernel tests) was a third of
# their build, which counts three times over in a 2-core CI run.
tested_only="build-s390x build-armhf build-i386 build-ppc64el build-riscv64"
# tested_targets DIR TEST_PRESET: the targets of DIR (a configured Ninja tree)
# whose files the tests of TEST_PRESET run or name in their environment
# (ctest's JSON; chapoly.so is the target chapoly), one per line; fails (and
# the whole tree is built) when none is found.
tested_targets() {
    local dir=$1 tests=$2 known
    known=$(cd "$here" && cmake --build "$dir" --target help 2> /dev/null |
        sed -n 's/^\([A-Za-z0-9_.+-]*\): phony$/\1/p') || return 1
    (cd "$here" && ctest --preset "$tests" --show-only=json-v1 2> /dev/null) |
        python3 -c '
import json, os, sys
build, known = sys.argv[1], set(sys.argv[2].split())
found = set()
for t in json.load(sys.stdin)["tests"]:
    words = list(t.get("command") or [])
    for p in t.get("properties", []):
        if p["name"] == "ENVIRONMENT":
            words += [v.split("=", 1)[-1] for v in p["value"]]
    for w in words:
        if w.startswith(build + "/"):
            name = os.path.basename(w)
            name = name[:-3] if name.endswith(".so") else name
            if name in known:
                found.add(name)
print("\n".join(sorted(found)))
sys.exit(0 if found else 1)' "$here/$dir" "$known"
}

# run_build PRESET [TEST_PRESET [cmake-args...]]: configures, builds and tests
# the tree of the configure preset PRESET (directory PRESET) with the test
# preset TEST_PRESET (default: PRESET); records "PRESET result" and returns
# nonzero on failure; never stops the script.
run_build() {
    local dir=$1 tests=${2:-$1} t0 what=""
    shift
    [ $# -gt 0 ] && shift
    t0=$(date +%s)
    echo "=== $dir: configure (cmake --preset $dir --fresh${*:+ $*})"
    mkdir -p "$here/$dir"
    if ! (cd "$here" && cmake --preset "$dir" --fresh -DCHAPOLY_REQUIRE_TEST_TOOLS=ON \
        -DCHAPOLY_WERROR=ON "$@") > "$here/$dir/configure.log" 2>&1; then
        cat "$here/$dir/configure.log"
        what="configure failed (log: $dir/configure.log)"
    else
        local targets=()
        case " $tested_only " in
            *" $dir "*) mapfile -t targets < <(tested_targets "$dir" "$tests") || targets=() ;;
        esac
        echo "=== $dir: build${targets[0]:+ (the ${#targets[@]} targets its tests run)}"
        if ! (cd "$here" && cmake --build --preset "$dir" -j"$jobs" ${targets[0]:+--target "${targets[@]}"}) \
            > "$here/$dir/build.log" 2>&1; then
            tail -n 60 "$here/$dir/build.log"
            what="build failed (log: $dir/build.log)"
        else
            echo "=== $dir: ctest --preset $tests"
            if ! (cd "$here" && ctest --preset "$tests" -j"$jobs"); then
                what="tests failed"
            fi
        fi
    fi
    local secs=$(($(date +%s) - t0))
    if [ -z "$what" ]; then
        results+=("$(printf '%-20s passed (%d s)' "$dir" "$secs")")
        echo "=== $dir: passed in $secs s"
        return 0
    fi
    results+=("$(printf '%-20s FAILED: %s (%d s)' "$dir" "$what" "$secs")")
    failed+=("$dir")
    echo "=== $dir: FAILED: $what"
    return 1
}

if [ "$mode" = quick ]; then
    run_build build-test build-test-quick
elif [ "$mode" = arch ]; then
    for a in $arches; do
        run_build "build-$a"
    done
else
    # The package is built and installed by build-test alone.
    run_build build-test
    run_build build-portable
    # aarch64 under qemu: the whole suite; the stand-ins of tests that need an
    # x86 tool report themselves as skipped (configure.log lists them).
    if host_is_x86_64; then
        echo "=== build-arm64: tests needing an x86 tool (openssl command, curl, nginx, python," \
            "valgrind, x86 objdump rules) are reported as skipped there (label host-tool)"
        run_build build-arm64
        # qemu runs NEON, so build-arm64's best level is neon: the default
        # serving policy at the portable level needs a build without it.
        run_build build-arm64-portable
        # Debian's big-endian and 32-bit architectures at the portable level
        # (cmake/debian-cross.cmake; their libraries unpacked into .cache/ by
        # scripts/cross-sysroot.sh when the toolchain file first needs them).
        for a in s390x armhf i386; do
            run_build "build-$a"
        done
    else
        echo "=== build-arm64, build-arm64-portable, build-s390x, build-armhf, build-i386: not built:" \
            "the host is $(uname -m), not x86_64"
    fi
    # The module inside foreign processes (curl, nginx, python) under ASan is not
    # meaningful; everything in-process is.
    run_build build-asan
    run_build build-tsan
    run_build build-fuzz build-fuzz -DCHAPOLY_FUZZ_SECONDS="$fuzz_seconds"
    # OpenSSL 3.5 beside the system's 3.0 (cmake/openssl35.cmake); its programs
    # run through trixie's loader (the CTest emulator). Its test preset leaves
    # out valgrind and ct (valgrind starts the program itself, not through the
    # loader), the system's real clients (curl, nginx, python, ssh and sshd
    # are built against 3.0: label clients without quic) and deploy (a setuid
    # program cannot run through the loader); the build-test tree runs those.
    # The QUIC test (labels clients and quic) is a program of this tree and
    # exists only here. The prefix is prepared first, once for both trees.
    # The compat tests (label compat) take the module and programs built
    # against 3.0 from build-test, built above: the module is one binary for
    # every OpenSSL, so it is not built again in each tree.
    compat_tree=-DCHAPOLY_COMPAT_SYSTEM_TREE="$here/build-test"
    if "$here/scripts/openssl35.sh" --prefix > /dev/null; then
        run_build build-openssl35 build-openssl35 "$compat_tree"
        # What only a 3.5 tree has, under ASan + UBSan (through trixie's loader
        # like the tree above): the pipeline API, test_openssl35 and the QUIC test.
        run_build build-openssl35-asan
    else
        for d in build-openssl35 build-openssl35-asan; do
            results+=("$(printf '%-20s FAILED: scripts/openssl35.sh could not prepare OpenSSL 3.5' "$d")")
            failed+=("$d")
        done
    fi
    # OpenSSL 3.6 (Debian forky) and 4.0 (experimental: libcrypto.so.4), each
    # in a private prefix like 3.5's (scripts/openssl-prefix.sh SERIES), its
    # programs run through the prefix's loader: the whole suite but what
    # needs the system's own programs under valgrind or setuid (build-test
    # runs those), and the binary matrix with build-test's 3.0 build both
    # ways (label compat): the module built against 3.0 in 3.6 and 4.0
    # processes, the module built against 3.6 and 4.0 in 3.0 processes; the
    # system's real clients (3.0 programs) load each tree's own module.
    for series in 3.6 4.0; do
        d=build-openssl${series/./}
        if "$here/scripts/openssl-prefix.sh" "$series" --prefix > /dev/null; then
            run_build "$d" "$d" "$compat_tree"
        else
            results+=("$(printf '%-20s FAILED: scripts/openssl-prefix.sh could not prepare OpenSSL %s' "$d" "$series")")
            failed+=("$d")
        fi
    done
fi

total=$(($(date +%s) - start))
echo
echo "=== summary"
printf '%s\n' "${results[@]}"
if [ "${#failed[@]}" -eq 0 ]; then
    echo "test-all: passed (${#results[@]} of ${#results[@]} builds) in $total s"
    exit 0
fi
echo "test-all: FAILED: ${failed[*]} (${#failed[@]} of ${#results[@]} builds) in $total s"
exit 1
