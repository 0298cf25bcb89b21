#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# check_cpu_probe.sh OBJDUMP NM OBJECT...
#
# One dispatch point: only cpu_features.c executes cpuid/xgetbv or uses the
# compiler's CPU checks (__builtin_cpu_supports/__builtin_cpu_init refer to
# __cpu_model, __cpu_features2, __cpu_indicator_init), and only dispatch.c
# calls that probe (chapoly_cpu_features). Every kernel object given is
# inspected: a kernel that looks at the CPU itself fails here. So that the
# check cannot pass by reading nothing, the probe must also be found where
# it belongs (cpuid/xgetbv on x86, getauxval on AArch64: elsewhere the
# probe is a stub).
# Prints "N passed, N failed"; exits nonzero on any failure.
set -eu
objdump=$1
nm=$2
shift 2
pass=0
fail=0
check() { # check OK MESSAGE
    if [ "$1" = 1 ]; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "FAIL $2"
    fi
}
seen_insn=0
seen_auxv=0
seen_call=0
for obj in "$@"; do
    name=$(basename "$obj")
    name=${name%.o}
    insn=$("$objdump" -d "$obj" | grep -E '[[:space:]](cpuid|xgetbv)([[:space:]]|$)' || true)
    refs=$("$nm" -P -u "$obj" | awk '{ print $1 }')
    builtin=$(printf '%s\n' "$refs" |
        grep -E '^(__cpu_model|__cpu_features2|__cpu_indicator_init|__get_cpuid.*|getauxval)$' || true)
    probe=$(printf '%s\n' "$refs" | grep -x 'chapoly_cpu_features' || true)
    case "$name" in
    cpu_features.c)
        [ -n "$insn" ] && seen_insn=1
        [ -n "$builtin" ] && seen_auxv=1
        # the objects' CPU, not the host's (the arm64 tree runs this on x86)
        arch=$("$objdump" -f "$obj" | sed -n 's/^architecture: \([^,]*\).*/\1/p')
        continue
        ;;
    dispatch.c)
        [ -n "$probe" ] && seen_call=1
        probe=""
        ;;
    esac
    check "$([ -z "$insn" ] && echo 1)" "$name executes cpuid/xgetbv (only cpu_features.c may):
$(printf '%s\n' "$insn" | sed 's/^/    /')"
    check "$([ -z "$builtin" ] && echo 1)" \
        "$name uses the compiler's CPU checks ($(echo $builtin)): only cpu_features.c may"
    check "$([ -z "$probe" ] && echo 1)" \
        "$name calls chapoly_cpu_features: only dispatch.c looks at the CPU"
done
check "$([ -n "${arch:-}" ] && echo 1)" "cpu_features.c is not among the objects given ($*)"
case "${arch:-}" in
*x86-64 | i386*)
    check "$seen_insn" "cpu_features.c: no cpuid/xgetbv found (objects given: $*)"
    ;;
aarch64)
    check "$seen_auxv" "cpu_features.c: no getauxval reference found (objects given: $*)"
    ;;
esac
check "$seen_call" "dispatch.c: no call of chapoly_cpu_features found (objects given: $*)"
echo "$# kernel objects inspected"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
