#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# check_canary.sh CHECKER OBJDUMP OBJECT
#
# A static check of this folder (check_objdump.sh, check_vzeroupper.sh) must
# tell the functions of its canary object apart: every bad_* function
# reported (a "FAIL <object> <function>+..." line), no good_* function
# reported, and a failing status. objdump_canary.c: branches on values out
# of vector or mask registers (bad) and on general registers parked there
# (good); vzeroupper_canary.c: returns with ymm0-15's upper halves dirty
# (bad) or clean (good).
set -eu
checker=$1
objdump=$2
obj=$3
here=$(dirname "$0")
out=$(sh "$here/$checker" "$objdump" "$obj") && rc=0 || rc=$?
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
[ "$rc" -ne 0 ] || { echo "FAIL: $checker passed an object with bad_* functions"; fail=1; }
n=$(printf '%s\n' "$funcs" | wc -l)
[ "$fail" = 0 ] && echo "$checker canary: $n functions judged as expected"
exit "$fail"
