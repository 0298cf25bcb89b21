#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Builds the module of one git revision several times, each with its code
# laid out differently, for an A/B that does not mistake a layout for a
# change (scripts/ab.sh --layouts):
#
#   scripts/layout-builds.sh [--pads "P1 P2 ..."] REV DIR
#
# Build P puts P bytes of int3 padding at the start of every C file's
# .text (a header forced in with -include), so each function and loop sits
# at another offset in its cache lines and pages than in the other builds;
# the code itself is the same. DIR/pad-P/chapoly.so for each P (default
# pads: 0 16 32 48 80 112 176 240, which put a 16-byte aligned loop at each
# of the four offsets in a 64-byte line more than once). Release builds of
# REV's own tree (a temporary git worktree), nothing else from it.
#
# Why: moving code (a change elsewhere in the file, another function's size)
# moves a hot loop or a call's return point across lines and predictor
# slots, which moved cells of the same code by 5-10 % between two builds on
# the development host; the old build read 0.90 against the new one at
# POLY1305 1 KiB with one layout, and the new one 1.02-1.11x the old over
# eight code layouts and drawn heap placements (AMD EPYC family 26 model 2).
set -eu

pads="0 16 32 48 80 112 176 240"
if [ "${1:-}" = "--pads" ]; then
    pads=$2
    shift 2
fi
if [ $# -ne 2 ]; then
    sed -n '3,21p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
rev=$1
dir=$2
src=$(git rev-parse --show-toplevel)
commit=$(git -C "$src" rev-parse --verify "$rev^{commit}")
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
tmp=$(mktemp -d)
trap 'git -C "$src" worktree remove --force "$tmp/src" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
git -C "$src" worktree add --detach "$tmp/src" "$commit" >/dev/null 2>&1
cat >"$tmp/pad.h" <<'EOF'
#define CHAPOLY_LAYOUT_S2_(x) #x
#define CHAPOLY_LAYOUT_S_(x) CHAPOLY_LAYOUT_S2_(x)
__asm__(".pushsection .text\n\t.skip " CHAPOLY_LAYOUT_S_(CHAPOLY_LAYOUT_PAD) ", 0xcc\n\t.popsection");
EOF
for p in $pads; do
    case $p in
        '' | *[!0-9]*) echo "layout-builds.sh: pad '$p' is not a number of bytes" >&2; exit 2 ;;
    esac
    b=$tmp/build-$p
    cmake -S "$tmp/src" -B "$b" -DCMAKE_BUILD_TYPE=Release \
        "-DCMAKE_C_FLAGS=-include $tmp/pad.h -DCHAPOLY_LAYOUT_PAD=$p" >"$tmp/log" 2>&1 ||
        { cat "$tmp/log" >&2; exit 1; }
    make -C "$b" -j"$(nproc)" chapoly >"$tmp/log" 2>&1 || { cat "$tmp/log" >&2; exit 1; }
    mkdir -p "$dir/pad-$p"
    cp "$b/lib/chapoly.so" "$dir/pad-$p/chapoly.so"
    rm -rf "$b"
    echo "$dir/pad-$p/chapoly.so ($(git -C "$src" rev-parse --short "$commit"), $p bytes of padding)"
done
