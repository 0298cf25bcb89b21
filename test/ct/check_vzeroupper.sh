#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# check_vzeroupper.sh OBJDUMP OBJECT...
#
# Every function of the kernel objects returns with the upper halves of
# ymm0-15 clean: on no path from its entry to a ret (or a tail jump into
# another function) does an instruction naming ymm0-15 or zmm0-15 come
# after the last vzeroupper/vzeroall. A dirty upper state costs every SSE
# instruction the program runs afterwards on some cores (Intel's transition
# penalty) and slowed this project's own scalar code on an AMD Zen 5 core
# although XINUSE read clean (the values were zero), which is why
# test_kernels_upper (XINUSE) cannot catch it alone. zmm16-31 and ymm16-31
# are not counted: SSE code cannot reach them, and zero_zmm16_31 clears the
# state XINUSE shows for them.
#
# The analysis follows control flow inside a function: instructions are
# nodes, edges go to the next instruction (unless the jump is unconditional
# or a ret) and to a direct jump's target in the same function; "may be
# dirty" flows forward (OR where paths meet) until nothing changes. A call
# leaves the state as it was (the callee is checked on its own and leaves
# clean what it dirtied). An indirect jump counts as a way out. Entry is
# clean. ct_vzeroupper_canary (check_canary.sh, vzeroupper_canary.c) checks
# that it reports functions that return dirty and passes the ones that do not.
# GCC inserts its own vzeroupper only when it optimises: the kernels are
# built optimised in every configuration (kernels/CMakeLists.txt).
set -eu
objdump=$1
shift
status=0
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
for obj in "$@"; do
    "$objdump" -dr -M att --no-show-raw-insn "$obj" > "$tmp"
    awk -v objname="$(basename "$obj")" '
    function flush(   i, j, changed, pass, t, bad, where) {
        if (n == 0)
            return
        for (i = 1; i <= n; i++) { indirty[i] = 0; seen[i] = 0 }
        seen[1] = 1
        for (pass = 0; pass < 10000; pass++) {
            changed = 0
            for (i = 1; i <= n; i++) {
                if (!seen[i])
                    continue
                t = effect[i] == 1 ? 1 : effect[i] == -1 ? 0 : indirty[i]
                outd[i] = t
                if (fall[i] && i < n && (!seen[i + 1] || (t && !indirty[i + 1]))) {
                    seen[i + 1] = 1
                    if (t) indirty[i + 1] = 1
                    changed = 1
                }
                if (target[i] in idx) {
                    j = idx[target[i]]
                    if (!seen[j] || (t && !indirty[j])) {
                        seen[j] = 1
                        if (t) indirty[j] = 1
                        changed = 1
                    }
                }
            }
            if (!changed)
                break
        }
        bad = 0
        for (i = 1; i <= n; i++)
            if (seen[i] && exits[i] && outd[i]) {
                printf "FAIL %s %s+0x%s: %s with the upper halves of ymm0-15 possibly dirty\n", objname, fname, addr[i], text[i]
                bad = 1
            }
        if (bad) {
            failed = 1
            nbad++
        }
        nfunc++
        if (vec) nvec++
        n = 0
        vec = 0
        delete idx
    }
    /^[0-9a-f]+ <[^>]+>:$/ {
        flush()
        fname = $2
        gsub(/[<>:]/, "", fname)
        next
    }
    # a relocation on a jmp in an unlinked object: a tail call out of the function
    /^[ \t]+[0-9a-f]+: R_X86_64_/ {
        if (n > 0 && text[n] ~ /^jmp /) {
            exits[n] = 1
            target[n] = ""
        }
        next
    }
    /^ *[0-9a-f]+:\t/ {
        line = $0
        a = line
        sub(/:.*/, "", a)
        gsub(/ /, "", a)
        ins = line
        sub(/^ *[0-9a-f]+:\t/, "", ins)
        sub(/ *#.*/, "", ins)
        gsub(/\t/, " ", ins)
        sub(/^(bnd|notrack|rep|repz|repnz|lock|data16|cs|ds) /, "", ins)
        m = ins
        sub(/ .*/, "", m)
        n++
        addr[n] = a
        idx[a] = n
        text[n] = ins
        effect[n] = 0
        fall[n] = 1
        target[n] = ""
        exits[n] = 0
        if (m == "vzeroupper" || m == "vzeroall") {
            effect[n] = -1
        } else if (ins ~ /%[yz]mm([0-9]|1[0-5])([^0-9]|$)/) {
            effect[n] = 1
            vec = 1
        }
        if (m ~ /^ret/ || m == "ud2" || m == "hlt") {
            fall[n] = 0
            exits[n] = m ~ /^ret/
        } else if (m ~ /^j/) {
            if (m == "jmp")
                fall[n] = 0
            if (ins ~ /\*/) {
                exits[n] = 1 # indirect: a way out as far as we can tell
            } else if (match(ins, / [0-9a-f]+ </)) {
                t = substr(ins, RSTART + 1, RLENGTH - 3)
                tf = ins
                sub(/.*</, "", tf)
                sub(/[+>].*/, "", tf)
                if (tf != fname && m == "jmp")
                    exits[n] = 1 # a tail call
                else
                    target[n] = t
            }
        }
        next
    }
    END {
        flush()
        printf "%s: %d functions, %d naming ymm/zmm0-15, %d returning dirty\n", objname, nfunc, nvec, nbad
        exit failed
    }' "$tmp" || status=1
done
exit "$status"
