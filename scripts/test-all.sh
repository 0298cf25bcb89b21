#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The whole test suite, nine builds, each configured, built and run through CTest:
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
#   build-asan      ASan + UBSan (+ LeakSanitizer): everything in-process
#   build-tsan      ThreadSanitizer: the thread tests
#   build-fuzz      clang libFuzzer targets, each for CHAPOLY_FUZZ_SECONDS (45)
#   build-openssl35 against OpenSSL 3.5 (Debian trixie's, in a private prefix
#                   that scripts/openssl35.sh prepares and caches): the EVP,
#                   TLS (libssl 3.5), QUIC (libssl 3.5's server and client),
#                   CLI (its openssl command) and secrets tests at every
#                   level, and binary compatibility both ways
#   build-openssl35-asan  the same OpenSSL 3.5 with ASan + UBSan, only what
#                   exists only against 3.5: test_pipeline (the pipeline API,
#                   aead_pipeline.c), test_openssl35 and test_quic, just those
#                   targets built
# Usage: scripts/test-all.sh [--quick | --check-tools]
#   --quick        build-test, quick label only; needs only the native tools
#                  (no arm64 packages, no cross compiler)
#   --check-tools  only check (and on Debian install) every tool the full run
#                  needs, the arm64 cross tools included, then exit
# The developer's inner loop is not this script but one layer's label in an
# existing build directory (labels: kernels, evp, tls, cli, clients, ct,
# valgrind; see README.md, "How chapoly is tested"):
#   cmake --build build -j && (cd build && ctest -L kernels)    # about 4 s
#
# First every tool the suite uses must be there. On Debian the missing
# packages are installed (apt-get, no recommends) when this runs as root or
# `sudo -n` works; otherwise it stops at once and prints the apt-get line to
# run. The builds are then configured with -DCHAPOLY_REQUIRE_TEST_TOOLS=ON and
# run with CHAPOLY_REQUIRE_TOOLS=1, so a tool that is still missing is a
# failure, never a silently smaller suite. Every build is compiled with
# -DCHAPOLY_WERROR=ON: a compiler warning (gcc or clang) fails it. Every build
# runs even when an earlier one failed; a summary at the end names each
# build's result, and the exit status is nonzero if any failed.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
jobs=$(nproc 2>/dev/null || echo 2)
mode=all
usage() {
    echo "usage: $0 [--quick | --check-tools]"
    echo "inner loop, in a build directory: ctest -L kernels (about 4 s; or evp, tls, '^cli\$', ...)"
}
case "${1:-}" in
    "") ;;
    --quick) mode=quick ;;
    --check-tools) mode=check ;;
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

# ---- tools -------------------------------------------------------------------

# The Debian packages behind every tool below. The libFuzzer runtime belongs
# to clang's version (Debian 12: clang 14, libclang-rt-14-dev).
clang_rt_package() {
    local v=""
    if command -v clang > /dev/null 2>&1; then
        v=$(clang -dumpversion 2> /dev/null)
        v=${v%%.*}
    fi
    if [ -z "$v" ] && command -v apt-cache > /dev/null 2>&1; then
        v=$(apt-cache depends clang 2> /dev/null | sed -n 's/^ *Depends: clang-\([0-9][0-9]*\)$/\1/p' | head -n 1)
    fi
    echo "libclang-rt-${v:-14}-dev"
}
native_arch() {
    dpkg --print-architecture 2> /dev/null || echo amd64
}
# openssl with the host's architecture: openssl:arm64 would replace it.
debian_packages() {
    echo cmake gcc make pkg-config libssl-dev "openssl:$(native_arch)" libsodium-dev clang \
        "$(clang_rt_package)" valgrind binutils curl nginx python3 python3-cryptography iproute2 \
        util-linux dpkg-dev file openssh-client openssh-server
}
# The arm64 tree's packages (x86-64 hosts only). They need the arm64
# architecture in dpkg (install_debian_packages adds it). Never openssl:arm64.
host_is_x86_64() {
    [ "$(uname -m)" = x86_64 ]
}
# The arm64 trees are built by the full run only (and checked by
# --check-tools, which prepares for it); --quick needs none of it.
need_arm64() {
    [ "$mode" != quick ] && host_is_x86_64
}
arm64_packages() {
    if need_arm64; then
        # the cross libc is only a Recommends of the compiler
        echo gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user-static libssl-dev:arm64 \
            libsodium-dev:arm64
    fi
}

# Installed packages are checked with dpkg-query; the tools themselves are
# checked afterwards in any case.
missing_debian_packages() {
    local p missing=""
    for p in $(debian_packages) $(arm64_packages); do
        dpkg-query -W -f='${Status}' "$p" 2> /dev/null | grep -q "install ok installed" ||
            missing="$missing $p"
    done
    echo "${missing# }"
}

# Runs its arguments as root: directly, through `sudo -n`, or not at all.
as_root() {
    if [ "$(id -u)" = 0 ]; then
        "$@"
    elif command -v sudo > /dev/null 2>&1 && sudo -n true > /dev/null 2>&1; then
        sudo -n "$@"
    else
        return 126
    fi
}
can_be_root() {
    [ "$(id -u)" = 0 ] || { command -v sudo > /dev/null 2>&1 && sudo -n true > /dev/null 2>&1; }
}

install_debian_packages() {
    local missing
    missing=$(missing_debian_packages)
    [ -z "$missing" ] && return 0
    echo "test-all: Debian packages missing: $missing"
    if ! can_be_root; then
        echo "test-all: not root and sudo -n is not available; install them with" >&2
        case " $missing" in
        *:arm64*) echo "  sudo dpkg --add-architecture arm64" >&2 ;;
        esac
        echo "  sudo apt-get update && sudo apt-get install -y --no-install-recommends $missing" >&2
        echo "then run $0 again." >&2
        return 1
    fi
    echo "test-all: installing: $missing"
    # arm64 packages come from the arm64 architecture, which apt-get update
    # must know about first.
    case " $missing" in
    *:arm64*)
        if ! dpkg --print-foreign-architectures | grep -qx arm64; then
            echo "test-all: dpkg --add-architecture arm64"
            as_root dpkg --add-architecture arm64 || {
                echo "test-all: dpkg --add-architecture arm64 failed" >&2
                return 1
            }
        fi
        ;;
    esac
    # Error-Mode=any: by default apt-get update exits 0 when an index cannot
    # be fetched, and the install then fails with "Unable to locate package".
    local updated=1 why="the network or a mirror in /etc/apt/sources.list{,.d} is unreachable"
    case " $missing" in
        *:arm64*) why="$why, or a source has no arm64 packages (after dpkg --add-architecture arm64)" ;;
    esac
    if ! as_root env DEBIAN_FRONTEND=noninteractive \
        apt-get -o APT::Update::Error-Mode=any update -qq; then
        updated=0
        echo "test-all: apt-get update could not fetch every package list (errors above): $why;" \
            "trying the install anyway" >&2
    fi
    # shellcheck disable=SC2086
    if ! as_root env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y -qq --no-install-recommends $missing > /dev/null; then
        [ "$updated" = 0 ] &&
            echo "test-all: apt-get install failed, probably because apt-get update did (see above)" >&2
        echo "test-all: apt-get failed; install by hand:" >&2
        echo "  apt-get install -y --no-install-recommends $missing" >&2
        return 1
    fi
    missing=$(missing_debian_packages)
    if [ -n "$missing" ]; then
        echo "test-all: still missing after apt-get: $missing" >&2
        return 1
    fi
}

# What the suite runs, checked directly (also on systems without dpkg).
# Prints one line per missing tool.
elf_machine() {
    od -An -tx1 -j18 -N2 "$1" 2> /dev/null | tr -d ' \n'
}
missing_tools() {
    local t
    for t in cmake cc make pkg-config openssl clang valgrind objdump curl ss setpriv \
        dpkg-deb dpkg-shlibdeps file ssh ssh-keygen; do
        command -v "$t" > /dev/null 2>&1 || echo "$t"
    done
    command -v nginx > /dev/null 2>&1 || [ -x /usr/sbin/nginx ] || echo "nginx"
    # test_ssh.py runs it by this path (sshd re-executes itself by its path)
    [ -x /usr/sbin/sshd ] || echo "/usr/sbin/sshd (openssh-server)"
    # The ELF machine field: the openssl command must be the host's (with
    # qemu-user-static an arm64 one still runs, but cannot load the module).
    if command -v openssl > /dev/null 2>&1 &&
        [ "$(elf_machine "$(command -v openssl)")" != "$(elf_machine /bin/sh)" ]; then
        echo "openssl: $(command -v openssl) is not built for this CPU (openssl:arm64 replaced it?" \
            "apt-get install openssl:$(native_arch))"
    fi
    if need_arm64; then
        for t in aarch64-linux-gnu-gcc qemu-aarch64-static; do
            command -v "$t" > /dev/null 2>&1 || echo "$t (the arm64 tree)"
        done
        if command -v aarch64-linux-gnu-gcc > /dev/null 2>&1; then
            local a
            a=$(mktemp -d)
            printf 'int main(void) { return 0; }\n' > "$a/m.c"
            aarch64-linux-gnu-gcc "$a/m.c" -o "$a/m" > /dev/null 2>&1 ||
                echo "aarch64-linux-gnu-gcc cannot link a program (libc6-dev-arm64-cross)"
            rm -rf "$a"
        fi
        for t in libcrypto libsodium; do
            PKG_CONFIG_LIBDIR=/usr/lib/aarch64-linux-gnu/pkgconfig pkg-config --exists "$t" 2> /dev/null ||
                echo "arm64 $t headers (the arm64 tree: $t in /usr/lib/aarch64-linux-gnu/pkgconfig)"
        done
    fi
    pkg-config --exists 'libcrypto >= 3.0' 2> /dev/null || echo "libcrypto >= 3.0 headers (pkg-config libcrypto)"
    pkg-config --exists libsodium 2> /dev/null || echo "libsodium headers (pkg-config libsodium)"
    printf '#include <valgrind/memcheck.h>\n' | cc -E -x c - > /dev/null 2>&1 ||
        echo "valgrind/memcheck.h"
    if [ -x /usr/bin/python3 ]; then
        case $(/usr/bin/python3 -c 'import cryptography; print(cryptography.__file__)' 2> /dev/null) in
            /usr/lib/python3/dist-packages/*) ;;
            "") echo "python3-cryptography (/usr/bin/python3 cannot import cryptography)" ;;
            *) echo "python3-cryptography (/usr/bin/python3 imports a cryptography that is not Debian's; a pip wheel carries its own OpenSSL)" ;;
        esac
    else
        echo "/usr/bin/python3"
    fi
    if command -v clang > /dev/null 2>&1; then
        local d
        d=$(mktemp -d)
        printf 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { (void)d; (void)n; return 0; }\n' > "$d/f.c"
        clang -fsanitize=fuzzer "$d/f.c" -o "$d/f" > /dev/null 2>&1 || echo "libFuzzer runtime ($(clang_rt_package))"
        rm -rf "$d"
    fi
}

check_tools() {
    if command -v dpkg-query > /dev/null 2>&1 && command -v apt-get > /dev/null 2>&1; then
        install_debian_packages || return 1
    fi
    local missing
    missing=$(missing_tools)
    if [ -n "$missing" ]; then
        echo "test-all: the test suite needs these, and they are missing:" >&2
        while IFS= read -r line; do echo "  $line"; done <<< "$missing" >&2
        echo "(Debian packages: $(debian_packages)$(
            [ -n "$(arm64_packages)" ] &&
                echo "; after dpkg --add-architecture arm64: $(arm64_packages)"
        ))" >&2
        return 1
    fi
    echo "test-all: every test tool is present"
}

if ! check_tools; then
    echo "test-all: FAILED: test tools missing, nothing was built"
    exit 1
fi
[ "$mode" = check ] && exit 0

# A test that cannot find its tool fails instead of reporting "skipped".
export CHAPOLY_REQUIRE_TOOLS=1

# ---- builds ------------------------------------------------------------------

results=()
failed=()

# run_build [--targets "T..."] DIR "ctest args" cmake-args...: records "DIR
# result" and returns nonzero on failure; never stops the script. --targets
# builds only those targets (and what they depend on) instead of everything.
run_build() {
    local targets=() t0 what=""
    if [ "$1" = --targets ]; then
        read -r -a targets <<< "$2"
        shift 2
    fi
    local dir=$1 ctest_args=$2
    shift 2
    t0=$(date +%s)
    echo "=== $dir: configure ($*)"
    mkdir -p "$here/$dir"
    # every option spelled out, so a reused build directory cannot keep a stale one
    if ! cmake -S "$here" -B "$here/$dir" -DCHAPOLY_SIMD=ON -DCHAPOLY_SANITIZE=OFF \
        -DCHAPOLY_TSAN=OFF -DCHAPOLY_FUZZ=OFF -DCHAPOLY_TESTS=ON -DCHAPOLY_REQUIRE_TEST_TOOLS=ON \
        -DCHAPOLY_WERROR=ON \
        -DCHAPOLY_VECTOR_DIR="$here/test/vectors" "$@" > "$here/$dir/configure.log" 2>&1; then
        cat "$here/$dir/configure.log"
        what="configure failed (log: $dir/configure.log)"
    else
        echo "=== $dir: build"
        local build_args=(-j"$jobs")
        [ "${#targets[@]}" -gt 0 ] && build_args+=(--target "${targets[@]}")
        if ! cmake --build "$here/$dir" "${build_args[@]}" > "$here/$dir/build.log" 2>&1; then
            tail -n 60 "$here/$dir/build.log"
            what="build failed (log: $dir/build.log)"
        else
            echo "=== $dir: ctest $ctest_args"
            # shellcheck disable=SC2086
            if ! (cd "$here/$dir" && ctest --output-on-failure -j"$jobs" $ctest_args); then
                what="tests failed"
            fi
        fi
    fi
    local secs=$(($(date +%s) - t0))
    if [ -z "$what" ]; then
        results+=("$(printf '%-15s passed (%d s)' "$dir" "$secs")")
        echo "=== $dir: passed in $secs s"
        return 0
    fi
    results+=("$(printf '%-15s FAILED: %s (%d s)' "$dir" "$what" "$secs")")
    failed+=("$dir")
    echo "=== $dir: FAILED: $what"
    return 1
}

if [ "$mode" = quick ]; then
    run_build build-test "-L quick" -DCMAKE_BUILD_TYPE=Release
else
    run_build build-test "" -DCMAKE_BUILD_TYPE=Release
    # The package is built and installed by build-test alone.
    run_build build-portable "-LE ^(valgrind|package)$" -DCMAKE_BUILD_TYPE=Release -DCHAPOLY_SIMD=OFF
    # aarch64 under qemu: the whole suite; the stand-ins of tests that need an
    # x86 tool report themselves as skipped (configure.log lists them).
    if host_is_x86_64; then
        echo "=== build-arm64: tests needing an x86 tool (openssl command, curl, nginx, python," \
            "valgrind, x86 objdump rules) are reported as skipped there (label host-tool)"
        run_build build-arm64 "" -DCMAKE_BUILD_TYPE=Release \
            -DCMAKE_TOOLCHAIN_FILE="$here/cmake/aarch64-linux-gnu.cmake"
        # qemu runs NEON, so build-arm64's best level is neon: the default
        # serving policy at the portable level needs a build without it.
        run_build build-arm64-portable "-L serve" -DCMAKE_BUILD_TYPE=Release -DCHAPOLY_SIMD=OFF \
            -DCMAKE_TOOLCHAIN_FILE="$here/cmake/aarch64-linux-gnu.cmake"
    else
        echo "=== build-arm64: not built: the host is $(uname -m), not x86_64"
    fi
    # The module inside foreign processes (curl, nginx, python) under ASan is not
    # meaningful; everything in-process is.
    run_build build-asan "-LE clients" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCHAPOLY_SANITIZE=ON
    run_build build-tsan "-L threads" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCHAPOLY_TSAN=ON
    run_build build-fuzz "-L fuzz" -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DCHAPOLY_FUZZ=ON -DCHAPOLY_SANITIZE=ON -DCMAKE_C_FLAGS=-fsanitize=fuzzer-no-link \
        -DCHAPOLY_FUZZ_SECONDS="$fuzz_seconds"
    # OpenSSL 3.5 beside the system's 3.0; its programs run through trixie's
    # loader (the CTest emulator). Left out there: valgrind and ct (valgrind
    # starts the program itself, not through the loader), the system's real
    # clients (curl, nginx, python, ssh and sshd are built against 3.0: label
    # clients without quic, not selected) and deploy (its helper runs without
    # the loader); the build-test tree runs those. The QUIC test (labels
    # clients and quic) is a program of this tree and exists only here.
    if o35_args=$("$here/scripts/openssl35.sh" --cmake-args); then
        # shellcheck disable=SC2086
        run_build build-openssl35 "-L ^(evp|tls|cli|quic)$ -LE ^(valgrind|ct|deploy)$" \
            -DCMAKE_BUILD_TYPE=Release -DCHAPOLY_COMPAT_SYSTEM_OPENSSL=ON $o35_args
        # What only a 3.5 tree builds, under ASan + UBSan (through trixie's
        # loader like the tree above): the pipeline API, test_openssl35 and
        # the QUIC test.
        # shellcheck disable=SC2086
        run_build --targets "test_pipeline test_openssl35 test_quic" build-openssl35-asan \
            "-R ^(test_pipeline|test_openssl35|quic):" \
            -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCHAPOLY_SANITIZE=ON $o35_args
    else
        for d in build-openssl35 build-openssl35-asan; do
            results+=("$(printf '%-15s FAILED: scripts/openssl35.sh could not prepare OpenSSL 3.5' "$d")")
            failed+=("$d")
        done
    fi
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
