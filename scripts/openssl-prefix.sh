#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A private OpenSSL of another series beside the system's 3.0, from Debian's
# packages, for building and testing chapoly against it. Nothing is installed
# system-wide: apt runs with its own source list, lists and cache, and the
# packages are unpacked with dpkg -x into one prefix.
#
# Usage: scripts/openssl-prefix.sh SERIES [MODE]
#   SERIES              3.5 (Debian 13 trixie), 3.6 (Debian 14 forky) or 4.0
#                       (Debian experimental, with sid's C library)
#   (none), --prefix    prepare the prefix if needed; print its path
#   --loader            print the loader command line that runs a program of
#                       the prefix (its ld-linux with --library-path), words
#                       separated by spaces
#   --run PROG ARGS...  run PROG through that loader (PROG without a slash is
#                       looked up in PREFIX/usr/bin first, then in PATH)
#   --cmake-args        print the CMake arguments for a tree built against the
#                       series (the toolchain file cmake/openssl-prefix.cmake,
#                       the series and the prefix), one per line (none contains
#                       a space): use as $(... --cmake-args)
#   --cached            print the prefix if it is complete, else exit 1 (no download)
#
# The prefix is ${CHAPOLY_OPENSSL<MAJOR><MINOR>_PREFIX:-REPO/.cache/openssl-SERIES}
# (CHAPOLY_OPENSSL35_PREFIX, CHAPOLY_OPENSSL36_PREFIX, CHAPOLY_OPENSSL40_PREFIX),
# inside the repository (.cache/ is ignored by git): the project reads and
# writes nothing outside its repository except the system's apt sources, read
# to find the mirror. A fresh clone downloads again (a few seconds).
# A complete prefix (marked by PREFIX/.complete, written last) is reused; an
# incomplete one is prepared again from scratch. The archive is the one the
# system's own apt sources name for Debian (CHAPOLY_DEBIAN_ARCHIVE overrides it).
# The newest version of the series the suites offer is taken (apt-cache
# madison), so a new upload to the suite needs no change here.
#
# The prefix's libraries need its newer glibc, so every program of the prefix
# runs through the prefix's loader, and a program linked here against the
# prefix's libcrypto needs -Wl,--allow-shlib-undefined (its newer glibc
# symbols cannot be resolved by this system's linker).
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
say() { echo "openssl-prefix${series:+ $series}: $*" >&2; }
die() {
    say "$*"
    exit 1
}

series=${1:-}
case "$series" in
    3.5) suites="trixie" libpkg=libssl3t64 ;;
    3.6) suites="forky" libpkg=libssl3t64 ;;
    4.0) suites="sid experimental" libpkg=libssl4 ;;
    -h | --help)
        sed -n '3,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"
        exit 0
        ;;
    *)
        series=""
        die "usage: $0 3.5|3.6|4.0 [--prefix|--loader|--run PROG ARGS|--cmake-args|--cached] (--help)"
        ;;
esac
shift
# the packages whose version must be of the series, then the C library and
# libcrypto's own dependencies (any version the suites have)
series_packages="$libpkg libssl-dev openssl"
other_packages="libc6 libzstd1 zlib1g"
tag=${series/./}
env_name=CHAPOLY_OPENSSL${tag}_PREFIX
prefix=${!env_name:-$repo/.cache/openssl-$series}

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

# debian_archive: the Debian archive the system's apt sources name
. "$repo/scripts/debian-archive.sh"

prepare() {
    if ! command -v apt-get > /dev/null 2>&1 || ! command -v dpkg > /dev/null 2>&1; then
        die "needs apt-get and dpkg (Debian) to fetch OpenSSL $series"
    fi
    local keyring=/usr/share/keyrings/debian-archive-keyring.gpg
    [ -f "$keyring" ] || die "missing $keyring (apt-get install debian-archive-keyring)"
    local archive
    archive=$(debian_archive) || die "no Debian archive in the apt sources; set CHAPOLY_DEBIAN_ARCHIVE"

    local parent work s
    parent=$(dirname "$prefix")
    mkdir -p "$parent"
    work=$(mktemp -d "$parent/.openssl-$series.XXXXXX")
    # shellcheck disable=SC2064
    trap "rm -rf '$work'" EXIT
    mkdir -p "$work/lists/partial" "$work/cache/archives/partial" "$work/debs" "$work/root"
    # one stanza per suite, a blank line between them
    for s in $suites; do
        printf 'Types: deb\nURIs: %s\nSuites: %s\nComponents: main\nSigned-By: %s\n\n' \
            "$archive" "$s" "$keyring"
    done > "$work/openssl-$series.sources"
    # Error-Mode=any: an index that cannot be fetched fails the update (by
    # default apt-get update exits 0 and only warns).
    local opts=(-o "Dir::Etc::sourcelist=$work/openssl-$series.sources" -o Dir::Etc::sourceparts=/dev/null
        -o Dir::Etc::preferences=/dev/null -o Dir::Etc::preferencesparts=/dev/null
        -o "Dir::State::Lists=$work/lists" -o "Dir::Cache=$work/cache"
        -o APT::Architecture="$arch" -o APT::Architectures="$arch")
    [ "$(id -u)" = 0 ] && opts+=(-o APT::Sandbox::User=root)
    local apt=(apt-get -q -o APT::Update::Error-Mode=any "${opts[@]}")
    say "fetching the package lists of $suites (private apt state)"
    # The log is checked too, in case this apt ignores Error-Mode.
    if ! "${apt[@]}" update > "$work/update.log" 2>&1 ||
        grep -q '^[WE]: \(Failed to fetch\|Some index files failed\)' "$work/update.log"; then
        cat "$work/update.log" >&2
        die "cannot fetch the package lists of $suites from $archive (the network or the mirror" \
            "is unreachable, or the mirror lacks them; set CHAPOLY_DEBIAN_ARCHIVE to another" \
            "Debian mirror); apt-get update's output is above"
    fi
    # The newest version of the series for each of its packages (experimental
    # is never a candidate by default, and sid may hold an older series).
    local p v want=()
    for p in $series_packages; do
        v=$(apt-cache "${opts[@]}" madison "$p" |
            awk -F'|' -v s="$series" '{gsub(/ /, "", $2); if (index($2, s ".") == 1) print $2}' |
            sort -V | tail -n 1)
        [ -n "$v" ] || die "no $p of OpenSSL $series in $suites"
        want+=("$p=$v")
    done
    say "downloading: ${want[*]} $other_packages"
    # shellcheck disable=SC2086
    (cd "$work/debs" && "${apt[@]}" download "${want[@]}" $other_packages) > "$work/download.log" 2>&1 || {
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
    local version
    version=$("$loader" --library-path "$libdir" "$prefix/usr/bin/openssl" version) ||
        die "$prefix/usr/bin/openssl does not run through $loader"
    case "$version" in
        "OpenSSL $series."*) ;;
        *) die "unexpected version: $version" ;;
    esac
    date -u +%Y-%m-%dT%H:%M:%SZ > "$prefix/.complete"
    say "ready: $version in $prefix"
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
        # cmake/openssl-prefix.cmake holds the settings (the presets
        # build-openssl* use it too); the series and the prefix are passed on
        # so the tree keeps them.
        echo "-DCMAKE_TOOLCHAIN_FILE=$repo/cmake/openssl-prefix.cmake"
        echo "-DCHAPOLY_OPENSSL_SERIES=$series"
        echo "-D$env_name=$prefix"
        ;;
    *)
        die "unknown mode $mode (see --help)"
        ;;
esac
