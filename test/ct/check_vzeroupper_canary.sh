#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# check_vzeroupper_canary.sh OBJDUMP OBJECT
#
# check_vzeroupper.sh must tell the functions of vzeroupper_canary.c apart:
# every bad_* function (a return with ymm0-15's upper halves possibly dirty:
# on every path, on one path, after a loop that dirties again) reported, no
# good_* function (cleared on every path, zmm16 only, xmm only, the
# compiler's own 256-bit code) reported, and a failing status.
set -eu
objdump=$1
obj=$2
here=$(dirname "$0")
out=$(sh "$here/check_vzeroupper.sh" "$objdump" "$obj") && rc=0 || rc=$?
printf '%s\n' "$out"
fail=0
funcs=$("$objdump" -d "$obj" | sed -n 's/^[0-9a-f]* <\(\(good\|bad\)_[a-z_0-9]*\)>:$/\1/p')
[ -n "$funcs" ] || { echo "FAIL: no good_*/bad_* functions in $obj"; exit 1; }
for f in $funcs; do
    if printf '%s\n' "$out" | grep -q "^FAIL [^ ]* $f+"; then hit=1; else hit=0; fi
    case "$f:$hit" in
    bad_*:0) echo "FAIL: $f not reported"; fail=1 ;;
    good_*:1) echo "FAIL: $f reported"; fail=1 ;;
    esac
done
[ "$rc" -ne 0 ] || { echo "FAIL: check_vzeroupper.sh passed an object with bad_* functions"; fail=1; }
n=$(printf '%s\n' "$funcs" | wc -l)
[ "$fail" = 0 ] && echo "check_vzeroupper_canary: $n functions judged as expected"
exit "$fail"
