#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Every tool the test suite (scripts/test-all.sh) uses, checked and, on
# Debian, installed when missing. scripts/test-all.sh runs this first.
# Usage: scripts/install-test-deps.sh [--native | --cross ARCH[,ARCH...]]
#   --native   without the arm64 cross tools and packages (scripts/test-all.sh
#              --quick builds only the native tree); on other hosts than x86-64
#              they are never needed (the arm64 trees are built on x86-64 only)
#   --cross    the native tools and the cross compiler of each Debian ARCH
#              (s390x armhf i386 ppc64el riscv64) with qemu-user-static, and
#              nothing for arm64 (scripts/test-all.sh --arch); without an
#              option, those of s390x, armhf and i386 (the full run's trees)
# The cross trees' OpenSSL and libsodium are not installed here: the
# toolchain file unpacks them into the repository's .cache/
# (scripts/cross-sysroot.sh).
# On Debian the missing packages are installed (apt-get, no recommends) when
# this runs as root or `sudo -n` works; otherwise it stops at once and prints
# the apt-get line to run. Then every tool is checked directly (also on
# systems without dpkg): the exit status is 0 when every one is present, 1
# when any is missing (each named on stderr, with the Debian packages).
set -uo pipefail
me=install-test-deps
native_only=0
# The Debian architectures of the cross trees the full run builds
# (build-s390x, build-armhf, build-i386; x86-64 hosts only).
cross_arches="s390x armhf i386"
case "${1:-}" in
    "") ;;
    --native) native_only=1 cross_arches="" ;;
    --cross)
        # only these cross trees: no arm64
        native_only=1
        cross_arches=$(printf '%s' "${2:-}" | tr ',' ' ')
        for a in $cross_arches; do
            case "$a" in
                s390x | armhf | i386 | ppc64el | riscv64) ;;
                *)
                    echo "$me: --cross: unknown architecture '$a' (s390x armhf i386 ppc64el riscv64)" >&2
                    exit 2
                    ;;
            esac
        done
        [ -n "$cross_arches" ] || {
            echo "usage: $0 --cross ARCH[,ARCH...]" >&2
            exit 2
        }
        ;;
    -h | --help)
        sed -n '3,/^set -uo/{/^set -uo/d;s/^# \{0,1\}//;p}' "$0"
        exit 0
        ;;
    *)
        echo "usage: $0 [--native | --cross ARCH[,ARCH...]]" >&2
        exit 2
        ;;
esac

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
# The arm64 trees are built by test-all's full run only (and checked by its
# --check-tools, which prepares for it); --native (test-all --quick) needs none of it.
need_arm64() {
    [ "$native_only" = 0 ] && host_is_x86_64
}
arm64_packages() {
    if need_arm64; then
        # the cross libc is only a Recommends of the compiler
        echo gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user-static libssl-dev:arm64 \
            libsodium-dev:arm64
    fi
}

# The cross trees of other Debian architectures (cmake/debian-cross.cmake;
# x86-64 hosts only): the cross compiler and C library, and qemu-user-static
# (i386 programs run natively where the kernel runs 32-bit x86 programs,
# under qemu-i386 where it does not). No package of the target architecture
# is installed: scripts/cross-sysroot.sh unpacks those into .cache/.
cross_gnu() {
    case "$1" in
        s390x) echo s390x-linux-gnu ;;
        armhf) echo arm-linux-gnueabihf ;;
        i386) echo i686-linux-gnu ;;
        ppc64el) echo powerpc64le-linux-gnu ;;
        riscv64) echo riscv64-linux-gnu ;;
    esac
}
cross_packages() {
    local a
    host_is_x86_64 && [ -n "$cross_arches" ] || return 0
    for a in $cross_arches; do
        printf 'gcc-%s libc6-dev-%s-cross ' "$(cross_gnu "$a")" "$a"
    done
    # their presets use Ninja: about a third less build time than make there
    echo qemu-user-static ninja-build
}

# Installed packages are checked with dpkg-query; the tools themselves are
# checked afterwards in any case.
missing_debian_packages() {
    local p missing=""
    for p in $(debian_packages) $(arm64_packages) $(cross_packages); do
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
    echo "$me: Debian packages missing: $missing"
    if ! can_be_root; then
        echo "$me: not root and sudo -n is not available; install them with" >&2
        case " $missing" in
        *:arm64*) echo "  sudo dpkg --add-architecture arm64" >&2 ;;
        esac
        echo "  sudo apt-get update && sudo apt-get install -y --no-install-recommends $missing" >&2
        echo "then run $0 (or scripts/test-all.sh) again." >&2
        return 1
    fi
    echo "$me: installing: $missing"
    # arm64 packages come from the arm64 architecture, which apt-get update
    # must know about first.
    case " $missing" in
    *:arm64*)
        if ! dpkg --print-foreign-architectures | grep -qx arm64; then
            echo "$me: dpkg --add-architecture arm64"
            as_root dpkg --add-architecture arm64 || {
                echo "$me: dpkg --add-architecture arm64 failed" >&2
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
        echo "$me: apt-get update could not fetch every package list (errors above): $why;" \
            "trying the install anyway" >&2
    fi
    # shellcheck disable=SC2086
    if ! as_root env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y -qq --no-install-recommends $missing > /dev/null; then
        [ "$updated" = 0 ] &&
            echo "$me: apt-get install failed, probably because apt-get update did (see above)" >&2
        echo "$me: apt-get failed; install by hand:" >&2
        echo "  apt-get install -y --no-install-recommends $missing" >&2
        return 1
    fi
    missing=$(missing_debian_packages)
    if [ -n "$missing" ]; then
        echo "$me: still missing after apt-get: $missing" >&2
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
    if host_is_x86_64 && [ -n "$cross_arches" ]; then
        local x g q
        for x in $cross_arches; do
            g=$(cross_gnu "$x")
            q=$x
            case "$x" in armhf) q=arm ;; ppc64el) q=ppc64le ;; esac
            for t in "$g-gcc" "qemu-$q-static" ninja; do
                command -v "$t" > /dev/null 2>&1 || echo "$t (the $x tree)"
            done
            if command -v "$g-gcc" > /dev/null 2>&1; then
                local c
                c=$(mktemp -d)
                printf 'int main(void) { return 0; }\n' > "$c/m.c"
                "$g-gcc" "$c/m.c" -o "$c/m" > /dev/null 2>&1 ||
                    echo "$g-gcc cannot link a program (libc6-dev-$x-cross)"
                rm -rf "$c"
            fi
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
        echo "$me: the test suite needs these, and they are missing:" >&2
        while IFS= read -r line; do echo "  $line"; done <<< "$missing" >&2
        echo "(Debian packages: $(debian_packages) $(cross_packages)$(
            [ -n "$(arm64_packages)" ] &&
                echo "; after dpkg --add-architecture arm64: $(arm64_packages)"
        ))" >&2
        return 1
    fi
    echo "$me: every test tool is present"
}

check_tools
