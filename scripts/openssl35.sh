#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A private OpenSSL 3.5 (Debian trixie's packages) beside the system's 3.0,
# for building and testing chapoly against 3.5. Nothing is installed
# system-wide: apt runs with its own source list, lists and cache, and the
# packages are unpacked with dpkg -x into one prefix.
#
# Usage: scripts/openssl35.sh [MODE]
#   (none), --prefix    prepare the prefix if needed; print its path
#   --loader            print the loader command line that runs a 3.5 program
#                       (trixie's ld-linux with --library-path), words separated by spaces
#   --run PROG ARGS...  run PROG through that loader (PROG without a slash is
#                       looked up in PREFIX/usr/bin first, then in PATH)
#   --cmake-args        print the CMake arguments for a tree built against 3.5
#                       (the toolchain file cmake/openssl35.cmake and the prefix),
#                       one per line (none contains a space): use as $(... --cmake-args)
#   --cached            print the prefix if it is complete, else exit 1 (no download)
#
# The prefix is ${CHAPOLY_OPENSSL35_PREFIX:-REPO/.cache/openssl-3.5}, inside the
# repository (.cache/ is ignored by git): the project reads and writes nothing
# outside its repository except the system's apt sources, read to find the
# mirror. A fresh clone downloads again (a few seconds).
# A complete prefix (marked by PREFIX/.complete, written last) is reused; an
# incomplete one is prepared again from scratch. The archive is the one the
# system's own apt sources name for Debian (CHAPOLY_DEBIAN_ARCHIVE overrides it).
#
# Trixie's libraries need its glibc (2.38 or later), so every 3.5 program runs
# through trixie's loader, and a program linked here against 3.5's libcrypto
# needs -Wl,--allow-shlib-undefined (its newer glibc symbols cannot be
# resolved by this system's linker).
set -euo pipefail

suite=trixie
packages="libssl3t64 libssl-dev openssl libc6 libzstd1 zlib1g"
repo=$(cd "$(dirname "$0")/.." && pwd)
prefix=${CHAPOLY_OPENSSL35_PREFIX:-$repo/.cache/openssl-3.5}

say() { echo "openssl35: $*" >&2; }
die() {
    say "$*"
    exit 1
}

case "$(uname -m)" in
    x86_64) triplet=x86_64-linux-gnu loader_name=ld-linux-x86-64.so.2 arch=amd64 ;;
    aarch64) triplet=aarch64-linux-gnu loader_name=ld-linux-aarch64.so.1 arch=arm64 ;;
    *) die "unsupported machine $(uname -m)" ;;
esac
libdir="$prefix/usr/lib/$triplet"
loader="$libdir/$loader_name"

unpacked() {
    [ -x "$loader" ] && [ -x "$prefix/usr/bin/openssl" ] && [ -f "$libdir/libcrypto.so" ] &&
        [ -f "$libdir/libssl.so" ] && [ -f "$prefix/usr/include/openssl/opensslv.h" ] &&
        [ -f "$prefix/usr/include/$triplet/openssl/configuration.h" ]
}
complete() { [ -f "$prefix/.complete" ] && unpacked; }

# The Debian archive URI from the system's apt sources (deb822 or one-line
# format), skipping the security archive.
debian_archive() {
    if [ -n "${CHAPOLY_DEBIAN_ARCHIVE:-}" ]; then
        echo "$CHAPOLY_DEBIAN_ARCHIVE"
        return
    fi
    local f uri
    for f in /etc/apt/sources.list.d/*.sources; do
        [ -f "$f" ] || continue
        uri=$(sed -n 's/^URIs:[[:space:]]*\([^[:space:]]*\).*/\1/p' "$f" | grep -v -- '-security' | head -n 1)
        [ -n "$uri" ] && echo "$uri" && return
    done
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
        [ -f "$f" ] || continue
        uri=$(sed -n 's/^deb[[:space:]]\+\(\[[^]]*\][[:space:]]\+\)\?\([^[:space:]]*\).*/\2/p' "$f" |
            grep -v -- '-security' | head -n 1)
        [ -n "$uri" ] && echo "$uri" && return
    done
    return 1
}

prepare() {
    if ! command -v apt-get > /dev/null 2>&1 || ! command -v dpkg > /dev/null 2>&1; then
        die "needs apt-get and dpkg (Debian) to fetch trixie's OpenSSL 3.5"
    fi
    local keyring=/usr/share/keyrings/debian-archive-keyring.gpg
    [ -f "$keyring" ] || die "missing $keyring (apt-get install debian-archive-keyring)"
    local archive
    archive=$(debian_archive) || die "no Debian archive in the apt sources; set CHAPOLY_DEBIAN_ARCHIVE"

    local parent work
    parent=$(dirname "$prefix")
    mkdir -p "$parent"
    work=$(mktemp -d "$parent/.openssl-3.5.XXXXXX")
    # shellcheck disable=SC2064
    trap "rm -rf '$work'" EXIT
    mkdir -p "$work/lists/partial" "$work/cache/archives/partial" "$work/debs" "$work/root"
    printf 'Types: deb\nURIs: %s\nSuites: %s\nComponents: main\nSigned-By: %s\n' \
        "$archive" "$suite" "$keyring" > "$work/$suite.sources"
    # Error-Mode=any: an index that cannot be fetched fails the update (by
    # default apt-get update exits 0 and only warns).
    local apt=(apt-get -q -o APT::Update::Error-Mode=any
        -o "Dir::Etc::sourcelist=$work/$suite.sources" -o Dir::Etc::sourceparts=/dev/null
        -o Dir::Etc::preferences=/dev/null -o Dir::Etc::preferencesparts=/dev/null
        -o "Dir::State::Lists=$work/lists" -o "Dir::Cache=$work/cache"
        -o APT::Architecture="$arch" -o APT::Architectures="$arch")
    [ "$(id -u)" = 0 ] && apt+=(-o APT::Sandbox::User=root)
    say "fetching $suite's package lists (private apt state)"
    # The log is checked too, in case this apt ignores Error-Mode.
    if ! "${apt[@]}" update > "$work/update.log" 2>&1 ||
        grep -q '^[WE]: \(Failed to fetch\|Some index files failed\)' "$work/update.log"; then
        cat "$work/update.log" >&2
        die "cannot fetch $suite's package lists from $archive (the network or the mirror is" \
            "unreachable, or the mirror lacks $suite; set CHAPOLY_DEBIAN_ARCHIVE to another" \
            "Debian mirror); apt-get update's output is above"
    fi
    say "downloading: $packages"
    # shellcheck disable=SC2086
    (cd "$work/debs" && "${apt[@]}" download $packages) > "$work/download.log" 2>&1 || {
        cat "$work/download.log" >&2
        die "apt-get download failed"
    }
    local deb
    for deb in "$work"/debs/*.deb; do
        dpkg -x "$deb" "$work/root"
    done
    ls "$work/debs" > "$work/root/.packages"
    # replace an incomplete prefix; the marker comes last
    rm -rf "$prefix"
    mv "$work/root" "$prefix"
    unpacked || die "the unpacked prefix lacks the loader, openssl or the headers"
    local v
    v=$("$loader" --library-path "$libdir" "$prefix/usr/bin/openssl" version) ||
        die "$prefix/usr/bin/openssl does not run through $loader"
    case "$v" in
        "OpenSSL 3."[5-9]* | "OpenSSL 3."[1-9][0-9]*) ;;
        *) die "unexpected version: $v" ;;
    esac
    date -u +%Y-%m-%dT%H:%M:%SZ > "$prefix/.complete"
    say "ready: $v in $prefix"
    # here, not only in the trap: --run's exec would skip the EXIT trap
    rm -rf "$work"
    trap - EXIT
}

ensure() {
    complete && return 0
    local lock
    mkdir -p "$(dirname "$prefix")"
    lock="$prefix.lock"
    exec 9> "$lock"
    flock 9
    if ! complete; then
        prepare
    fi
    flock -u 9
    # not inherited by the program --run starts
    exec 9>&-
}

loader_words() { echo "$loader" --library-path "$libdir"; }

mode=${1:---prefix}
case "$mode" in
    --prefix)
        ensure
        echo "$prefix"
        ;;
    --cached)
        complete || exit 1
        echo "$prefix"
        ;;
    --loader)
        ensure
        loader_words
        ;;
    --run)
        shift
        [ $# -ge 1 ] || die "--run needs a program"
        ensure
        prog=$1
        shift
        if [[ $prog != */* ]]; then
            if [ -x "$prefix/usr/bin/$prog" ]; then
                prog="$prefix/usr/bin/$prog"
            else
                prog=$(command -v "$prog") || die "no program $1"
            fi
        fi
        exec "$loader" --library-path "$libdir" "$prog" "$@"
        ;;
    --cmake-args)
        ensure
        case "$prefix" in *[[:space:]\;]*) die "the prefix path must not contain spaces or ';': $prefix" ;; esac
        # cmake/openssl35.cmake holds the settings (the presets build-openssl35*
        # use it too); the prefix is passed on so the tree keeps it.
        echo "-DCMAKE_TOOLCHAIN_FILE=$repo/cmake/openssl35.cmake"
        echo "-DCHAPOLY_OPENSSL35_PREFIX=$prefix"
        ;;
    -h | --help)
        sed -n '3,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"
        ;;
    *)
        die "unknown mode $mode (see --help)"
        ;;
esac
