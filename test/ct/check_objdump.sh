#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# check_objdump.sh OBJDUMP OBJECT...
#
# Static constant-time inspection of kernel object files, for the code that
# valgrind cannot execute (valgrind 3.19 has no AVX-512, so the AVX-512
# levels never run under ct_kernels). Every object given is listed;
# the rules apply to all of them.
#
# Fails on:
#   - gather/scatter instructions (a secret index would pick the address);
#   - div/idiv (data-dependent latency);
#   - a conditional jump, cmov or setcc whose flags come from a
#     vector-to-flags instruction (kortest, ktest, ptest, vptest, (u)comis):
#     in these kernels vector registers hold key, state and data;
#   - a conditional jump whose flags come from a general register that,
#     earlier in the same function, was filled from a vector or mask register
#     (vmovq/vmovd/vpextr*/kmov/pmovmskb/movmskp*), directly or through
#     arithmetic: a secret leaving the vector unit to steer control flow.
# Lists, for review (not failures): per function the number of conditional
# jumps, cmov/setcc, memory operands with an index register and
# variable-count shifts, and for the objects marked AVX-512 every
# conditional jump with the instruction that set its flags.
#
# The taint tracking is local to straight-line code (it restarts at every
# jump target, so a secret moved out of a vector register in one block and
# branched on in another is missed) and cannot see secrets kept in general
# registers (the scalar radix-2^64
# Poly1305 steps, shared with levels valgrind does run): those are covered by
# ct_kernels at the avx2 level, where the same source is executed.
set -eu
objdump=$1
shift
status=0
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
for obj in "$@"; do
    case "$obj" in
    *avx512*) tag="AVX-512 (not executed by valgrind: inspected here)" detail=1 ;;
    *avx2*) tag="AVX2 (also executed by ct_kernels)" detail=0 ;;
    *) tag="baseline (also executed by ct_kernels)" detail=0 ;;
    esac
    echo "== $(basename "$obj"): $tag"
    "$objdump" -d -M att --no-show-raw-insn "$obj" > "$tmp"
    # Two passes over the listing: the first collects jump targets.
    awk -v detail="$detail" -v objname="$(basename "$obj")" '
    NR == FNR {
        if ($0 ~ /^ +[0-9a-f]+:\t(j[a-z]+|call|jmpq?) +[0-9a-f]+ </) {
            t = $0; sub(/^ +[0-9a-f]+:\t[a-z]+ +/, "", t); sub(/ .*/, "", t); target[t] = 1
        }
        next
    }
    function reg64(r,   b) {
        b = r
        sub(/^%/, "", b)
        if (b ~ /^r[0-9]+[dwb]?$/) { sub(/[dwb]$/, "", b); return b }
        if (b ~ /^(e|r)?(ax|bx|cx|dx|si|di|bp|sp)$/ || b ~ /^(al|bl|cl|dl|sil|dil|bpl|spl|ah|bh|ch|dh)$/) {
            sub(/^(e|r)/, "", b); sub(/l$/, "", b); sub(/h$/, "", b)
            if (b == "a" || b == "b" || b == "c" || b == "d") b = b "x"
            return "r" b
        }
        return ""
    }
    function isvec(r) { return r ~ /^%(x|y|z)mm[0-9]+$/ || r ~ /^%k[0-7]$/ }
    # Split AT&T operands at top-level commas (not inside parentheses).
    function split_ops(s, arr,   n, i, c, depth, cur) {
        n = 0; depth = 0; cur = ""
        for (i = 1; i <= length(s); i++) {
            c = substr(s, i, 1)
            if (c == "(") depth++
            if (c == ")") depth--
            if (c == "," && depth == 0) { arr[++n] = cur; cur = ""; continue }
            cur = cur c
        }
        if (cur != "") arr[++n] = cur
        return n
    }
    function flush(   f) {
        if (fn == "") return
        printf "  %-44s insns %5d  jcc %3d  cmov/setcc %3d  idx-mem %3d  var-shift %3d\n", fn, ninsn, njcc, ncmov, nidx, nshift
    }
    function reset_fn(name) {
        flush()
        fn = name; ninsn = 0; njcc = 0; ncmov = 0; nidx = 0; nshift = 0
        split("", taint); flagset = ""; flagtaint = 0; flagvec = 0
    }
    /^[0-9a-f]+ <.*>:$/ {
        name = $2; gsub(/[<>:]/, "", name); reset_fn(name); next
    }
    /^ +[0-9a-f]+:\t/ {
        line = $0
        sub(/^ +/, "", line)
        addr = line; sub(/:.*/, "", addr)
        # Taint is tracked within straight-line code only: a jump target or
        # the instruction after an unconditional transfer starts afresh.
        if (addr in target || after_transfer) { split("", taint); flagset = ""; flagtaint = 0; flagvec = 0 }
        after_transfer = 0
        ins = line; sub(/^[0-9a-f]+:\t/, "", ins)
        sub(/ *#.*$/, "", ins)
        mn = ins; sub(/ .*/, "", mn)
        ops = ins; sub(/^[^ ]+ */, "", ops)
        if (mn == "" || ins ~ /(^|[ \t])nop[wl]?( |$)/ || ins ~ /^xchg +%ax,%ax$/) next
        ninsn++
        nops = split_ops(ops, op)
        dst = nops > 0 ? op[nops] : ""

        if (mn ~ /^v?p?(gather|scatter)/ || mn ~ /^vp?(gather|scatter)/) {
            printf "FAIL %s %s+%s: %s (gather/scatter)\n", objname, fn, addr, ins; bad = 1
        }
        if (mn ~ /^i?div/) {
            printf "FAIL %s %s+%s: %s (division)\n", objname, fn, addr, ins; bad = 1
        }
        if (ops ~ /\(%[a-z0-9]*,%[a-z0-9]+(,[1248])?\)/) nidx++
        if ((mn ~ /^(sh[lr]|sar|ro[lr])[bwlq]?$/ && ops ~ /^%cl,/) || mn ~ /^(shlx|shrx|sarx|bzhi)$/) nshift++

        # Conditional uses of flags.
        if (mn ~ /^(jmpq?|ret[q]?|ud2)$/) after_transfer = 1
        if (mn ~ /^j/ && mn !~ /^jmpq?$/) {
            njcc++
            if (flagvec) { printf "FAIL %s %s+%s: %s after %s (flags from a vector compare)\n", objname, fn, addr, ins, flagset; bad = 1 }
            else if (flagtaint) { printf "FAIL %s %s+%s: %s after %s (flags from a value moved out of a vector/mask register)\n", objname, fn, addr, ins, flagset; bad = 1 }
            if (detail) printf "    jcc %s+%s: %-6s after  %s\n", fn, addr, mn, flagset
            next
        }
        if (mn ~ /^(cmov|set)/) {
            ncmov++
            if (flagvec) { printf "FAIL %s %s+%s: %s after %s (flags from a vector compare)\n", objname, fn, addr, ins, flagset; bad = 1 }
        }

        # Taint: general registers filled from vector or mask registers.
        srcvec = 0; srctaint = 0
        for (i = 1; i < nops; i++) {
            if (isvec(op[i])) srcvec = 1
            r = reg64(op[i]); if (r != "" && taint[r]) srctaint = 1
        }
        d = reg64(dst)
        if (d != "") {
            if (mn ~ /^(v?movq|v?movd|v?pextr[bwdq]|kmov[bwdq]|v?pmovmskb|v?movmskp[sd])$/ && srcvec)
                taint[d] = 1
            else if (mn ~ /^(mov|movabs|lea|movz|movs)/ || mn ~ /^xor/ && nops == 2 && op[1] == op[2])
                taint[d] = srctaint
            else
                taint[d] = taint[d] || srctaint
        }

        # Which instruction set the flags last.
        if (mn ~ /^(kortest|ktest|v?ptest|v?u?comis)/) {
            flagset = ins; flagvec = 1; flagtaint = 0
        } else if (mn ~ /^(cmp|test|and|or|xor|add|sub|inc|dec|neg|adc|sbb|bt|sh[lr]|sar|ro[lr]|adcx|adox|popcnt|lzcnt|tzcnt|bsf|bsr|andn|blsr|blsi|blsmsk)[bwlq]?$/ && mn !~ /^(shlx|shrx|sarx|rorx)$/) {
            flagset = ins; flagvec = 0
            flagtaint = 0
            for (i = 1; i <= nops; i++) { r = reg64(op[i]); if (r != "" && taint[r]) flagtaint = 1 }
        }
    }
    END { flush(); exit bad ? 1 : 0 }
    ' "$tmp" "$tmp" || status=1
done
if [ "$status" -ne 0 ]; then
    echo "check_objdump: constant-time rule violations above"
else
    echo "check_objdump: no rule violations in $# object(s)"
fi
exit "$status"
