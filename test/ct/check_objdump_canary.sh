#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# check_objdump_canary.sh OBJDUMP OBJECT
#
# check_objdump.sh must tell the functions of objdump_canary.c apart: every
# bad_* function (a branch on a value out of a vector or mask register)
# reported, no good_* function (a branch on a general register parked in a
# vector or mask register and reloaded) reported, and a failing status.
set -eu
objdump=$1
obj=$2
here=$(dirname "$0")
out=$(sh "$here/check_objdump.sh" "$objdump" "$obj") && rc=0 || rc=$?
printf '%s\n' "$out"
fail=0
funcs=$("$objdump" -d "$obj" | sed -n 's/^[0-9a-f]* <\(\(good\|bad\)_[a-z_]*\)>:$/\1/p')
[ -n "$funcs" ] || { echo "FAIL: no good_*/bad_* functions in $obj"; exit 1; }
for f in $funcs; do
    if printf '%s\n' "$out" | grep -q "^FAIL [^ ]* $f+"; then hit=1; else hit=0; fi
    case "$f:$hit" in
    bad_*:0) echo "FAIL: $f not reported"; fail=1 ;;
    good_*:1) echo "FAIL: $f reported (a spilled general register is no vector value)"; fail=1 ;;
    esac
done
[ "$rc" -ne 0 ] || { echo "FAIL: check_objdump.sh passed an object with bad_* functions"; fail=1; }
n=$(printf '%s\n' "$funcs" | wc -l)
[ "$fail" = 0 ] && echo "check_objdump_canary: $n functions judged as expected"
exit "$fail"
