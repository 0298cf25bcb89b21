#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The target's libraries for a cross-built tree (cmake/debian-cross.cmake):
# Debian's libssl3, libssl-dev, libsodium23, libsodium-dev and libc6 of one
# architecture, unpacked into a sysroot. Nothing is installed system-wide
# (the cross compiler and qemu are: scripts/install-test-deps.sh): apt runs
# with the system's own sources but its own lists, cache and architecture,
# and the packages are unpacked with dpkg -x. This replaces a multiarch
# install (apt-get install libssl-dev:s390x), which apt refuses whenever that
# architecture's archive lags the host's (libssl3 3.0.20 against 3.0.22).
#
# Usage: scripts/cross-sysroot.sh ARCH [MODE]
#   ARCH: a Debian architecture: s390x armhf i386 ppc64el riscv64
#   (none), --prefix   prepare the sysroot if needed; print its path
#   --cached           print the sysroot if it is complete, else exit 1 (no download)
#   --triplet          print the architecture's multiarch triplet
#   --list             print the architectures this script knows, one per line
#
# The sysroot is ${CHAPOLY_SYSROOT_DIR:-REPO/.cache}/sysroot-ARCH (.cache/ is
# ignored by git): a fresh clone downloads again (a few seconds). Inside it:
#   root/            every package unpacked: headers, libraries, pkg-config files
#   pkg/NAME/        the run-time packages (libc6, libssl3, libsodium23) one by
#                    one, each with its DEBIAN/ control files (symbols, shlibs),
#                    for dpkg-shlibdeps when cpack builds the tree's package
#                    (cmake/deb-shlibdeps-sysroot.cmake)
#   .packages        the .deb files it was made of
#   .complete        written last: a sysroot without it is prepared again
# The archive is the system's own apt sources (bookworm here, with its
# updates and security suites): the target's libraries are those a Debian
# system of that architecture installs. riscv64, a release architecture only
# from Debian 13 on, takes trixie's (libssl3t64 for libssl3) from the same
# mirror (CHAPOLY_DEBIAN_ARCHIVE overrides it).
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)

say() { echo "cross-sysroot: $*" >&2; }
die() {
    say "$*"
    exit 1
}

triplet_of() {
    case "$1" in
        s390x) echo s390x-linux-gnu ;;
        armhf) echo arm-linux-gnueabihf ;;
        i386) echo i386-linux-gnu ;;
        ppc64el) echo powerpc64le-linux-gnu ;;
        riscv64) echo riscv64-linux-gnu ;;
        arm64) echo aarch64-linux-gnu ;;
        *) return 1 ;;
    esac
}

[ $# -ge 1 ] || die "usage: $0 ARCH [--prefix | --cached | --triplet | --list]"
case "$1" in
    --list)
        printf '%s\n' s390x armhf i386 ppc64el riscv64 arm64
        exit 0
        ;;
    -h | --help)
        sed -n '3,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"
        exit 0
        ;;
esac
arch=$1
mode=${2:---prefix}
triplet=$(triplet_of "$arch") || die "unknown architecture '$arch' (known: $("$0" --list | tr '\n' ' '))"
# riscv64 is a release architecture from Debian 13 (trixie) on: its packages
# come from trixie (libssl3t64, glibc 2.41), the others' from the system's
# own sources.
suite=""
runtime_packages="libc6 libssl3 libsodium23"
if [ "$arch" = riscv64 ]; then
    suite=trixie
    # trixie's libcrypto also needs zlib and zstd
    runtime_packages="libc6 libssl3t64 libsodium23 zlib1g libzstd1"
fi
dev_packages="libssl-dev libsodium-dev"
sysroot=${CHAPOLY_SYSROOT_DIR:-$repo/.cache}/sysroot-$arch

unpacked() {
    local p
    [ -f "$sysroot/root/usr/include/openssl/opensslv.h" ] &&
        [ -f "$sysroot/root/usr/include/$triplet/openssl/configuration.h" ] &&
        [ -f "$sysroot/root/usr/lib/$triplet/libcrypto.so" ] &&
        [ -f "$sysroot/root/usr/lib/$triplet/libssl.so" ] &&
        [ -f "$sysroot/root/usr/lib/$triplet/pkgconfig/libcrypto.pc" ] &&
        [ -f "$sysroot/root/usr/lib/$triplet/pkgconfig/libsodium.pc" ] || return 1
    for p in $runtime_packages; do
        [ -f "$sysroot/pkg/$p/DEBIAN/control" ] || return 1
    done
}
complete() { [ -f "$sysroot/.complete" ] && unpacked; }

# debian_archive: the Debian archive the system's apt sources name
. "$repo/scripts/debian-archive.sh"

prepare() {
    if ! command -v apt-get > /dev/null 2>&1 || ! command -v dpkg > /dev/null 2>&1; then
        die "needs apt-get and dpkg (Debian) to fetch $arch's libraries"
    fi
    local parent work
    parent=$(dirname "$sysroot")
    mkdir -p "$parent"
    work=$(mktemp -d "$parent/.sysroot-$arch.XXXXXX")
    # shellcheck disable=SC2064
    trap "rm -rf '$work'" EXIT
    mkdir -p "$work/lists/partial" "$work/cache/archives/partial" "$work/debs" "$work/out/root" \
        "$work/out/pkg"
    # The system's sources (both formats), private state, the target's architecture only.
    # Error-Mode=any: an index that cannot be fetched fails the update.
    local apt=(apt-get -q -o APT::Update::Error-Mode=any
        -o Dir::Etc::preferences=/dev/null -o Dir::Etc::preferencesparts=/dev/null
        -o "Dir::State::Lists=$work/lists" -o "Dir::Cache=$work/cache"
        -o APT::Architecture="$arch" -o APT::Architectures="$arch")
    [ "$(id -u)" = 0 ] && apt+=(-o APT::Sandbox::User=root)
    if [ -n "$suite" ]; then
        local archive keyring=/usr/share/keyrings/debian-archive-keyring.gpg
        [ -f "$keyring" ] || die "missing $keyring (apt-get install debian-archive-keyring)"
        archive=$(debian_archive) || die "no Debian archive in the apt sources; set CHAPOLY_DEBIAN_ARCHIVE"
        printf 'Types: deb\nURIs: %s\nSuites: %s\nComponents: main\nSigned-By: %s\n' \
            "$archive" "$suite" "$keyring" > "$work/$suite.sources"
        apt+=(-o "Dir::Etc::sourcelist=$work/$suite.sources" -o Dir::Etc::sourceparts=/dev/null)
    fi
    say "fetching $arch's package lists (${suite:-from the system apt sources}, private apt state)"
    if ! "${apt[@]}" update > "$work/update.log" 2>&1 ||
        grep -q '^[WE]: \(Failed to fetch\|Some index files failed\)' "$work/update.log"; then
        cat "$work/update.log" >&2
        die "cannot fetch $arch's package lists (the network or a mirror of the apt sources is" \
            "unreachable, or it has no $arch packages); apt-get update's output is above"
    fi
    say "downloading: $runtime_packages $dev_packages"
    # shellcheck disable=SC2086
    (cd "$work/debs" && "${apt[@]}" download $runtime_packages $dev_packages) \
        > "$work/download.log" 2>&1 || {
        cat "$work/download.log" >&2
        die "apt-get download failed"
    }
    local deb name
    for deb in "$work"/debs/*.deb; do
        name=$(dpkg-deb -f "$deb" Package)
        case " $runtime_packages " in
            *" $name "*)
                # a package tree for dpkg-shlibdeps: its files and DEBIAN/
                dpkg-deb -x "$deb" "$work/out/pkg/$name"
                # the same files in root/, hard links (no second copy)
                cp -al "$work/out/pkg/$name/." "$work/out/root/"
                dpkg-deb -e "$deb" "$work/out/pkg/$name/DEBIAN"
                ;;
            *) dpkg-deb -x "$deb" "$work/out/root" ;;
        esac
    done
    # merged /usr (trixie's packages have no /lib): the loader's path is /lib/...
    [ -e "$work/out/root/lib" ] || ln -s usr/lib "$work/out/root/lib"
    # Absolute symlinks point into the host once unpacked (ppc64el's
    # /lib64/ld64.so.2 -> /lib/powerpc64le-linux-gnu/ld64.so.2, which qemu -L
    # then missed): each becomes relative, inside its own tree.
    local t link target
    for t in "$work/out/root" "$work"/out/pkg/*; do
        find "$t" -type l -lname '/*' -print | while IFS= read -r link; do
            target=$(readlink "$link")
            ln -sfn "$(realpath -m --relative-to="$(dirname "$link")" "$t$target")" "$link"
        done
    done
    (cd "$work/debs" && ls) > "$work/out/.packages"
    # replace an incomplete sysroot; the marker comes last
    rm -rf "$sysroot"
    mv "$work/out" "$sysroot"
    unpacked || die "the unpacked sysroot lacks OpenSSL's or libsodium's headers or libraries"
    date -u +%Y-%m-%dT%H:%M:%SZ > "$sysroot/.complete"
    say "ready: $sysroot ($(tr '\n' ' ' < "$sysroot/.packages"))"
    rm -rf "$work"
    trap - EXIT
}

ensure() {
    complete && return 0
    mkdir -p "$(dirname "$sysroot")"
    exec 9> "$sysroot.lock"
    flock 9
    complete || prepare
    flock -u 9
    exec 9>&-
}

case "$mode" in
    --prefix)
        ensure
        echo "$sysroot"
        ;;
    --cached)
        complete || exit 1
        echo "$sysroot"
        ;;
    --triplet)
        echo "$triplet"
        ;;
    *)
        die "unknown mode $mode (see --help)"
        ;;
esac
