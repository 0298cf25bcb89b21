#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# A/B of two chapoly builds through bench_evp, both ways: A as the module
# and B as the base, then B as the module and A as the base, with the same
# options; per operation and size the two "vs base" ratios and their
# geometric mean, which cancels the side a run favours (on the development
# host the --base side measured 1-5 % faster with two copies of one build).
#
#   scripts/ab.sh [--rounds N] [--separate | --layouts] [--bench PATH] A B [bench_evp options]
#
# A and B: chapoly.so files or their directories (copy each build to a
# directory of its own first: a rebuilt file under a running benchmark is
# not the file measured). The options go to both runs (--ops, --sizes,
# --reps, --time, ...); set CHAPOLY_KERNEL and OPENSSL_ia32cap for a forced
# level as for bench_evp. Output: op bytes a->b b->a both, where both > 1
# means A is faster; "<<" marks both below 0.97.
#
#   --rounds N   N pairs of runs, 2N processes: each process is one address
#                layout (ASLR), which alone moves a cell by up to ~15 %;
#                a->b and b->a are then medians over the rounds and a column
#                "lo" gives the lowest round's both (default 1).
#   --separate   A and B never share a process: each round runs bench_evp
#                with A, then with B, each against the default provider in
#                its own process, and compares their "vs default" ratios
#                (the default's time in the same process cancels the host's
#                speed of the moment). Output: op bytes A B A/B lo, A/B > 1
#                when A is faster. A check that two copies of chapoly in one
#                process do not bias the A/B (on the development host both
#                ways agreed within 2-3 %).
#   --layouts    A and B are directories of layout builds of two revisions
#                (scripts/layout-builds.sh: DIR/pad-P/chapoly.so, the same
#                pads in both); implies --separate; each round runs every
#                layout of A and of B, one process each, and the columns
#                compare all those processes (rounds x layouts pairs). Code
#                layout and heap placement (bench_evp draws --heap-shift
#                per process) each moved cells by 5-30 % on the development
#                host, more than most changes: this is the A/B to trust.
# Options may come in any order before A and B.
set -eu

bench=
rounds=1
separate=0
layouts=0
while [ $# -gt 0 ]; do
    case $1 in
        --rounds) rounds=$2; shift 2 ;;
        --separate) separate=1; shift ;;
        --layouts) layouts=1; separate=1; shift ;;
        --bench) bench=$2; shift 2 ;;
        *) break ;;
    esac
done
if [ $# -lt 2 ]; then
    sed -n '3,39p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
a=$1
b=$2
shift 2
if [ -z "$bench" ]; then
    for c in build/bench/bench_evp build-test/bench/bench_evp; do
        [ -x "$c" ] && bench=$c && break
    done
fi
[ -n "$bench" ] && [ -x "$bench" ] || { echo "ab.sh: no bench_evp (--bench PATH)" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
case $rounds in
    '' | *[!0-9]* | 0) echo "ab.sh: --rounds needs a positive number" >&2; exit 2 ;;
esac
# One pair of processes a round: A then B alone (--separate), or each with
# the other as its base.
run() { # name, then bench_evp's arguments
    n=$1
    shift
    "$bench" "$@" --csv "$tmp/$n.csv" >"$tmp/$n.log" 2>&1 || { cat "$tmp/$n.log" >&2; exit 1; }
    files="$files $tmp/$n.csv"
}
files=
pairs=$rounds
if [ "$layouts" = 1 ]; then
    pads=$(cd "$a" && ls -d pad-* 2>/dev/null | sort -t- -k2 -n | tr '\n' ' ')
    [ -n "$pads" ] || { echo "ab.sh: no layout builds (pad-*/chapoly.so) in $a" >&2; exit 2; }
    for p in $pads; do
        [ -f "$a/$p/chapoly.so" ] && [ -f "$b/$p/chapoly.so" ] ||
            { echo "ab.sh: $p/chapoly.so missing in $a or $b" >&2; exit 2; }
    done
    pairs=$((rounds * $(echo $pads | wc -w)))
fi
i=1
while [ "$i" -le "$rounds" ]; do
    if [ "$layouts" = 1 ]; then
        # every other round the layouts in reverse, so none always runs first
        order=$pads
        [ $((i % 2)) = 0 ] && order=$(echo $pads | tr ' ' '\n' | sort -t- -k2 -rn | tr '\n' ' ')
        for p in $order; do
            run "a$i$p" --module "$a/$p/chapoly.so" "$@"
            run "b$i$p" --module "$b/$p/chapoly.so" "$@"
        done
    elif [ "$separate" = 1 ]; then
        run "a$i" --module "$a" "$@"
        run "b$i" --module "$b" "$@"
    else
        run "ab$i" --module "$a" --base "$b" "$@"
        run "ba$i" --module "$b" --base "$a" "$@"
    fi
    i=$((i + 1))
done

# The chapoly rows' ratio_vs_default (column 11) with --separate: A's / B's
# (XChaCha20-Poly1305, which the default provider lacks: ratio_vs_libsodium);
# else ratio_vs_base (column 14): a->b = B ns / A ns, b->a = A ns / B ns, and
# their geometric mean. Files alternate the pair's first and second process.
# shellcheck disable=SC2086
awk -F, -v rounds="$pairs" -v sep="$separate" '
    function median(arr, m,    i, j, t) {
        for (i = 2; i <= m; i++)
            for (j = i; j > 1 && arr[j - 1] > arr[j]; j--) { t = arr[j]; arr[j] = arr[j - 1]; arr[j - 1] = t }
        return m % 2 ? arr[(m + 1) / 2] : sqrt(arr[m / 2] * arr[m / 2 + 1])
    }
    function cmp(x, y) { return sep ? x / y : sqrt(x / y) }
    BEGIN { col = sep ? 11 : 14; lo_col = sep || rounds > 1 }
    FNR == 1 { file++; next }
    $3 == "chapoly" && (v = ($col != "" ? $col : (sep ? $13 : ""))) != "" {
        k = $1 "," $2
        r[file, k] = v
        if (file == 1) order[++n] = k
    }
    END {
        printf "%-12s %7s %7s %7s %7s", "op", "bytes", sep ? "A" : "a->b", sep ? "B" : "b->a", sep ? "A/B" : "both"
        printf lo_col ? " %7s\n" : "\n", "lo"
        for (i = 1; i <= n; i++) {
            k = order[i]
            m = 0; lo = 0
            for (q = 1; q <= rounds; q++) {
                if (!((2 * q - 1, k) in r) || !((2 * q, k) in r)) continue
                m++
                x[m] = r[2 * q - 1, k]; y[m] = r[2 * q, k]
                g = cmp(x[m], y[m])
                if (m == 1 || g < lo) lo = g
            }
            if (m == 0) continue
            split(k, f, ",")
            mx = median(x, m); my = median(y, m)
            g = cmp(mx, my)
            printf "%-12s %7s %7.3f %7.3f %7.3f", f[1], f[2], mx, my, g
            if (lo_col)
                printf " %7.3f", lo
            printf "%s\n", g < 0.97 ? "  <<" : ""
        }
    }' $files
