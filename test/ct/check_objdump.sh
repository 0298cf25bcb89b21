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
#     Not a reload of a general register the compiler parked in a vector or
#     mask register (vmovq %rcx,%xmm1 ... vmovq %xmm1,%rax, a loop count
#     under register pressure): a register holds such a spill where, on
#     every path through the function to the reload, it was last written by
#     a move from a general register (not tainted itself), a copy of such a
#     spill or a zero idiom, with no call in between (spill_pass below).
#     ct_objdump_canary (objdump_canary.c) checks both sides of this rule.
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
    # Three passes over the listing: the first collects jump targets, the
    # second finds per function the vector-to-general moves that only reload
    # a spilled general register (spill_pass), the third applies the rules.
    awk -v detail="$detail" -v objname="$(basename "$obj")" '
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
    # The architectural register of a vector or mask operand: xmm5, ymm5 and
    # zmm5 are v5; a write with a mask ({%k1}, {z}) is reported as "".
    function vreg(r,   b) {
        if (r ~ /\{/) return ""
        b = r
        if (b ~ /^%(x|y|z)mm[0-9]+$/) { sub(/^%(x|y|z)mm/, "v", b); return b }
        if (b ~ /^%k[0-7]$/) { sub(/^%/, "", b); return b }
        return ""
    }
    function vdst(r,   b) { b = r; sub(/\{.*$/, "", b); return isvec(b) ? b : "" }
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
    # One listing line -> addr, ins, mn, ops, nops, op[], dst; 0 if no instruction.
    function parse(l) {
        sub(/^ +/, "", l)
        addr = l; sub(/:.*/, "", addr)
        ins = l; sub(/^[0-9a-f]+:\t/, "", ins)
        sub(/ *#.*$/, "", ins)
        mn = ins; sub(/ .*/, "", mn)
        ops = ins; sub(/^[^ ]+ */, "", ops)
        if (mn == "" || ins ~ /(^|[ \t])nop[wl]?( |$)/ || ins ~ /^xchg +%ax,%ax$/) return 0
        split("", op)
        nops = split_ops(ops, op)
        dst = nops > 0 ? op[nops] : ""
        return 1
    }
    function is_reload(   d) {
        return (mn ~ /^(v?movq|v?movd|kmov[bwdq])$/ && nops == 2 || mn ~ /^v?pextr[dq]$/ && nops == 3) &&
               isvec(op[nops - 1]) && reg64(dst) != ""
    }
    # Taint of general registers filled from vector or mask registers, one
    # instruction (ok: this one only reloads a spilled general register).
    function taint_step(ok,   i, r, srcvec, srctaint, d) {
        srcvec = 0; srctaint = 0
        for (i = 1; i < nops; i++) {
            if (isvec(op[i])) srcvec = 1
            r = reg64(op[i]); if (r != "" && taint[r]) srctaint = 1
        }
        d = reg64(dst)
        if (d != "") {
            if (mn ~ /^(v?movq|v?movd|v?pextr[bwdq]|kmov[bwdq]|v?pmovmskb|v?movmskp[sd])$/ && srcvec)
                taint[d] = !ok
            else if (mn ~ /^(mov|movabs|lea|movz|movs)/ || mn ~ /^xor/ && nops == 2 && op[1] == op[2])
                taint[d] = srctaint
            else
                taint[d] = taint[d] || srctaint
        }
    }
    # The instruction ends straight-line code (the next starts afresh).
    function transfer(m) { return m ~ /^(jmpq?|ret[q]?|ud2)$/ }
    # Before the instruction, taint restarts: a jump target or after a transfer.
    function restart(a, after) { return (a in target) || after }

    # ---- spilled general registers (pass 2, at the end of each function) ----
    # Compilers park a general register in a vector or mask register under
    # register pressure (vmovq %rcx,%xmm1 ... vmovq %xmm1,%rax) and may
    # branch on the reloaded value (a loop count). Such a reload carries no
    # value of the vector unit: a forward must-analysis over the function
    # finds, before each instruction, the vector/mask registers that on
    # every path hold only a general register moved there (untainted at
    # that point, by the rules of pass 2), unchanged or copied between
    # vector registers, or zeroed (vpxor x, x, x); any other write (a vector
    # result, a load, a masked merge) and every call clear it. A reload from such a register is
    # marked ok. Iterated until the marks settle: a reload marked ok can
    # make a later spill untainted.
    function fn_add(l) {
        if (!parse(l)) return
        nf++; F_addr[nf] = addr; F_line[nf] = l; fidx[addr] = nf
    }
    function transfer_v(i, S,   k, vs, r, sv) {
        if (mn ~ /^call/ || mn == "vzeroall") { for (k in S) delete S[k]; return }
        vs = vdst(dst)
        if (vs == "") return
        r = vreg(dst)
        if (r == "") { delete S[vreg(vs)]; return }
        if (mn ~ /^(v?movq|v?movd|kmov[bwdq])$/ && nops == 2 && reg64(op[1]) != "") {
            if (!spill_taint[i]) S[r] = 1; else delete S[r]
        } else if (mn ~ /^(v?pxor[dq]?|v?xorp[sd]|kxor[bwdq])$/ && vreg(op[1]) == r && vreg(op[2]) == r) {
            S[r] = 1 # the zero idiom: a constant, like a zeroed general register
        } else if (mn ~ /^v?pinsr[dq]$/ && nops == 4 && reg64(op[2]) != "" && (vreg(op[3]) in S) && !spill_taint[i]) {
            S[r] = 1
        } else if (mn ~ /^(v?movdq[au](8|16|32|64)?|v?movap[sd]|v?movup[sd]|v?movq|kmov[bwdq])$/ &&
                   nops == 2 && vreg(op[1]) != "") {
            if (vreg(op[1]) in S) S[r] = 1; else delete S[r]
        } else {
            delete S[r]
        }
    }
    # Sets of registers as strings " k1 v13 v2 " (sorted); "*": not reached yet.
    function canon(S,   k, a, n, i, j, t, r) {
        n = 0; for (k in S) a[++n] = k
        for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
        r = " "; for (i = 1; i <= n; i++) r = r a[i] " "
        return r
    }
    function inter(a, b,   x, n, i, r) {
        if (a == "*") return b
        if (b == "*") return a
        n = split(a, x, " "); r = " "
        for (i = 1; i <= n; i++) if (index(b, " " x[i] " ")) r = r x[i] " "
        return r
    }
    function block_in(b,   k, s) {
        if (b == 1 || npred[b] == 0 || (b in extpred)) return " "
        s = "*"
        for (k = 1; k <= npred[b]; k++) s = inter(s, OUT[pred[b, k]])
        return s
    }
    function load_set(str, S,   x, n, i) {
        split("", S)
        if (str == "*") return
        n = split(str, x, " ")
        for (i = 1; i <= n; i++) S[x[i]] = 1
    }
    function spill_pass(   i, b, nb, e, t, k, after, changed, bin, out, round, newok, S) {
        if (nf == 0) return
        split("", leader); split("", bstart); split("", bend); split("", blk)
        split("", npred); split("", pred); split("", okm); split("", extpred)
        leader[1] = 1
        for (i = 1; i <= nf; i++) {
            parse(F_line[i])
            if (F_addr[i] in target) leader[i] = 1
            if (mn ~ /^j/ || transfer(mn)) leader[i + 1] = 1
        }
        nb = 0
        for (i = 1; i <= nf; i++) {
            if (leader[i]) { nb++; bstart[nb] = i }
            bend[nb] = i; blk[i] = nb
            # entered from another function too: nothing known there
            if ((F_addr[i] in tfn) && tfn[F_addr[i]] != fnname) extpred[nb] = 1
        }
        for (b = 1; b <= nb; b++) {
            e = bend[b]; parse(F_line[e])
            if (mn ~ /^j/) {
                t = dst; sub(/ .*/, "", t)
                if (t in fidx) { k = blk[fidx[t]]; pred[k, ++npred[k]] = b }
            }
            if (!(mn ~ /^jmpq?$/ || transfer(mn)) && e < nf) pred[b + 1, ++npred[b + 1]] = b
        }
        for (round = 0; round < 20; round++) {
            # the taint pass 2 will see, with the reloads marked so far
            split("", taint); after = 0
            for (i = 1; i <= nf; i++) {
                parse(F_line[i])
                if (restart(F_addr[i], after)) split("", taint)
                after = transfer(mn)
                spill_taint[i] = (mn ~ /^(v?movq|v?movd|kmov[bwdq])$/ && nops == 2 && taint[reg64(op[1])]) ||
                                 (mn ~ /^v?pinsr[dq]$/ && nops == 4 && taint[reg64(op[2])])
                taint_step(i in okm)
            }
            # the must-analysis, to a fixed point
            for (b = 1; b <= nb; b++) OUT[b] = "*"
            changed = 1
            while (changed) {
                changed = 0
                for (b = 1; b <= nb; b++) {
                    bin = block_in(b)
                    if (bin == "*") continue
                    load_set(bin, S)
                    for (i = bstart[b]; i <= bend[b]; i++) { parse(F_line[i]); transfer_v(i, S) }
                    out = canon(S)
                    if (out != OUT[b]) { OUT[b] = out; changed = 1 }
                }
            }
            # reloads from registers holding a spilled general register
            newok = 0
            for (b = 1; b <= nb; b++) {
                load_set(block_in(b), S)
                for (i = bstart[b]; i <= bend[b]; i++) {
                    parse(F_line[i])
                    if (is_reload() && (vreg(op[nops - 1]) in S) && !(i in okm)) { okm[i] = 1; newok = 1 }
                    transfer_v(i, S)
                }
            }
            if (!newok) break
        }
        for (i in okm) spillok[fnname, F_addr[i]] = 1
    }
    function fn_begin(name) {
        spill_pass()
        fnname = name; nf = 0; split("", fidx); split("", F_addr); split("", F_line)
    }

    FNR == 1 { pass++ }
    pass == 1 {
        if ($0 ~ /^Disassembly of section /) nsec++
        if ($0 ~ /^[0-9a-f]+ <.*>:$/) { cur = $2; gsub(/[<>:]/, "", cur) }
        if ($0 ~ /^ +[0-9a-f]+:\t(j[a-z]+|call|jmpq?) +[0-9a-f]+ </) {
            t = $0; sub(/^ +[0-9a-f]+:\t[a-z]+ +/, "", t); sub(/ .*/, "", t); target[t] = 1
            # the functions jumping there ("*": more than one)
            f = (t in tfn) && tfn[t] != cur ? "*" : cur
            tfn[t] = f
        }
        next
    }
    pass == 2 {
        # one code section only: several would share addresses
        if (nsec > 1) next
        if ($0 ~ /^[0-9a-f]+ <.*>:$/) { name = $2; gsub(/[<>:]/, "", name); fn_begin(name) }
        else if ($0 ~ /^ +[0-9a-f]+:\t/) fn_add($0)
        next
    }
    pass == 3 && FNR == 1 { fn_begin("") }
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
        # Taint is tracked within straight-line code only: a jump target or
        # the instruction after an unconditional transfer starts afresh.
        if (!parse($0)) next
        if (restart(addr, after_transfer)) { split("", taint); flagset = ""; flagtaint = 0; flagvec = 0 }
        after_transfer = 0
        ninsn++

        if (mn ~ /^v?p?(gather|scatter)/ || mn ~ /^vp?(gather|scatter)/) {
            printf "FAIL %s %s+%s: %s (gather/scatter)\n", objname, fn, addr, ins; bad = 1
        }
        if (mn ~ /^i?div/) {
            printf "FAIL %s %s+%s: %s (division)\n", objname, fn, addr, ins; bad = 1
        }
        if (ops ~ /\(%[a-z0-9]*,%[a-z0-9]+(,[1248])?\)/) nidx++
        if ((mn ~ /^(sh[lr]|sar|ro[lr])[bwlq]?$/ && ops ~ /^%cl,/) || mn ~ /^(shlx|shrx|sarx|bzhi)$/) nshift++

        # Conditional uses of flags.
        if (transfer(mn)) after_transfer = 1
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

        # Taint: general registers filled from vector or mask registers (not
        # by the reload of a spilled general register, pass 2).
        taint_step((fn, addr) in spillok)

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
    ' "$tmp" "$tmp" "$tmp" || status=1
done
if [ "$status" -ne 0 ]; then
    echo "check_objdump: constant-time rule violations above"
else
    echo "check_objdump: no rule violations in $# object(s)"
fi
exit "$status"
