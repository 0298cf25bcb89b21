#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# A/B of two chapoly builds through bench_evp, both ways: A as the module
# and B as the base, then B as the module and A as the base, with the same
# options; per operation and size the two "vs base" ratios and their
# geometric mean, which cancels the side a run favours (on the development
# host the --base side measured 1-5 % faster with two copies of one build).
#
#   scripts/ab.sh [--bench PATH] A B [bench_evp options]
#
# A and B: chapoly.so files or their directories (copy each build to a
# directory of its own first: a rebuilt file under a running benchmark is
# not the file measured). The options go to both runs (--ops, --sizes,
# --reps, --time, ...); set CHAPOLY_KERNEL and OPENSSL_ia32cap for a forced
# level as for bench_evp. Output: op bytes a->b b->a both, where both > 1
# means A is faster; "<<" marks both below 0.97.
set -eu

bench=
if [ "${1:-}" = "--bench" ]; then
    bench=$2
    shift 2
fi
if [ $# -lt 2 ]; then
    sed -n '3,17p' "$0" | sed 's/^# \{0,1\}//'
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
"$bench" --module "$a" --base "$b" --csv "$tmp/ab.csv" "$@" >"$tmp/ab.log" 2>&1 ||
    { cat "$tmp/ab.log" >&2; exit 1; }
"$bench" --module "$b" --base "$a" --csv "$tmp/ba.csv" "$@" >"$tmp/ba.log" 2>&1 ||
    { cat "$tmp/ba.log" >&2; exit 1; }

# ratio_vs_base (column 14) of the chapoly rows: a->b = B ns / A ns, b->a = A ns / B ns
awk -F, '
    FNR == 1 { file++; next }
    $3 == "chapoly" && $14 != "" { r[file, $1 "," $2] = $14; if (file == 1) order[++n] = $1 "," $2 }
    END {
        printf "%-12s %7s %7s %7s %7s\n", "op", "bytes", "a->b", "b->a", "both"
        for (i = 1; i <= n; i++) {
            k = order[i]
            if (!((2, k) in r)) continue
            split(k, f, ",")
            g = sqrt(r[1, k] / r[2, k])
            printf "%-12s %7s %7.3f %7.3f %7.3f%s\n", f[1], f[2], r[1, k], r[2, k], g, g < 0.97 ? "  <<" : ""
        }
    }' "$tmp/ab.csv" "$tmp/ba.csv"
