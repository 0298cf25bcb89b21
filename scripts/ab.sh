#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# A/B of two chapoly builds through bench_evp:
#
#   scripts/ab.sh [--rounds N] [--separate] [--bench PATH] A B [bench_evp options]
#
# A and B: chapoly.so files or their directories (copy each build to a
# directory of its own first: a rebuilt file under a running benchmark is
# not the file measured). The options go to every run (--ops, --sizes,
# --reps, --time, --avx2, ...; set CHAPOLY_KERNEL for a forced level).
#
# Each round runs bench_evp --module A --base B, then --module B --base A,
# and takes per operation and size both 'vs base' ratios of the chapoly row
# (a->b = B ns / A ns, b->a = A ns / B ns) and their geometric mean, "both":
# > 1 when A is faster. The side a process favours cancels out.
#
#   --separate   A and B never share a process: each round runs
#                --module A, then --module B, each against the default
#                provider in its own process, and compares their
#                'vs default' ratios ('vs libsodium' for XChaCha): A/B > 1
#                when A is faster.
#   --rounds N   N rounds, 2N processes, each its own address layout and
#                placement draw (bench_evp draws --placement and --heap-shift
#                per process), which alone can move a cell more than many
#                changes do (docs/performance.md): the columns are medians
#                over the rounds, "lo" the lowest round.
#
# "<<" marks a result below 0.97 (A more than 3 % slower).
set -eu

bench=
rounds=1
separate=0
while [ $# -gt 0 ]; do
    case $1 in
        --rounds) rounds=$2; shift 2 ;;
        --separate) separate=1; shift ;;
        --bench) bench=$2; shift 2 ;;
        *) break ;;
    esac
done
if [ $# -lt 2 ]; then
    sed -n '3,29p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
a=$1
b=$2
shift 2
case $rounds in
    '' | *[!0-9]* | 0) echo "ab.sh: --rounds needs a positive number" >&2; exit 2 ;;
esac
if [ -z "$bench" ]; then
    for c in build/bench/bench_evp build-test/bench/bench_evp; do
        [ -x "$c" ] && bench=$c && break
    done
fi
[ -n "$bench" ] && [ -x "$bench" ] || { echo "ab.sh: no bench_evp (--bench PATH)" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
files=
i=1
while [ "$i" -le "$rounds" ]; do
    for run in a b; do
        if [ "$run" = a ]; then m=$a o=$b; else m=$b o=$a; fi
        base="--base $o"
        [ "$separate" = 1 ] && base=
        # shellcheck disable=SC2086
        "$bench" --module "$m" $base "$@" --csv "$tmp/$run$i.csv" >"$tmp/$run$i.log" 2>&1 ||
            { cat "$tmp/$run$i.log" >&2; exit 1; }
        files="$files $tmp/$run$i.csv"
    done
    i=$((i + 1))
done

# The files alternate a round's A and B process; columns found by name.
# shellcheck disable=SC2086
awk -F, -v rounds="$rounds" -v sep="$separate" '
    function median(arr, m,    i, j, t) {
        for (i = 2; i <= m; i++)
            for (j = i; j > 1 && arr[j - 1] > arr[j]; j--) { t = arr[j]; arr[j] = arr[j - 1]; arr[j - 1] = t }
        return m % 2 ? arr[(m + 1) / 2] : sqrt(arr[m / 2] * arr[m / 2 + 1])
    }
    function cmp(x, y) { return sep ? x / y : sqrt(x / y) }
    FNR == 1 { file++; for (c = 1; c <= NF; c++) col[$c] = c; next }
    $col["impl"] == "chapoly" {
        v = sep ? $col["ratio_vs_default"] : $col["ratio_vs_base"]
        if (v == "" && sep) v = $col["ratio_vs_libsodium"]
        if (v == "") next
        k = $col["op"] "," $col["bytes"]
        r[file, k] = v
        if (file == 1) order[++n] = k
    }
    END {
        printf "%-12s %7s %7s %7s %7s %7s\n", "op", "bytes", sep ? "A" : "a->b", sep ? "B" : "b->a",
            sep ? "A/B" : "both", "lo"
        for (i = 1; i <= n; i++) {
            k = order[i]
            m = 0
            for (q = 1; q <= rounds; q++) {
                if (!((2 * q - 1, k) in r) || !((2 * q, k) in r)) continue
                m++
                x[m] = r[2 * q - 1, k]; y[m] = r[2 * q, k]
                g = cmp(x[m], y[m])
                if (m == 1 || g < lo) lo = g
            }
            if (m == 0) continue
            split(k, f, ",")
            g = cmp(median(x, m), median(y, m))
            printf "%-12s %7s %7.3f %7.3f %7.3f %7.3f%s\n", f[1], f[2], median(x, m), median(y, m), g,
                lo, g < 0.97 ? "  <<" : ""
        }
    }' $files
