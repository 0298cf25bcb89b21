#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""mca-estimate.py: pipeline-model estimates (llvm-mca) of the steady-state
AEAD loops of chapoly's AVX2 and AVX-512 levels against OpenSSL's.

usage: scripts/mca-estimate.py [--build DIR] [--openssl-src DIR]
                               [--libcrypto PATH] [--mca PROG]
                               [--models m1,m2,...] [--iterations N]
                               [--dump DIR] [--sketch] [--raw]

What it does, for every model (-mcpu) named:
  1. disassembles the built kernel objects (DIR/kernels/CMakeFiles/
     chapoly_kernels.dir/*.c.o, a Release build) and OpenSSL's perlasm
     output (generated from --openssl-src, a source tree of the OpenSSL
     release that libcrypto.so.3 was built from, e.g. `apt-get source
     openssl`; its bytes are checked against --libcrypto, which is stripped);
  2. finds the loops by what they contain (not by address), and lays out
     one steady-state unit of each kernel as straight-line code: e.g. one
     8-lane ChaCha20 batch = the outer loop's head + the double-round loop
     body x 10 + the outer loop's tail;
  3. unfolds the memory source operands of ALU instructions in the AVX2
     units (see unfold(): llvm-mca 16 puts the load latency on the register
     path of a load-op instruction; --raw keeps them folded);
  4. runs llvm-mca on each unit (-iterations N) and prints cycles per unit
     and per 512 bytes (AVX2) or per 1 KiB (AVX-512), and the ratios.
--sketch adds lean_poly_sketch(), a spill-free AVX2 Poly1305 step that is
not chapoly's code (bench/results/intel-estimates.md, section 4).
The write-up of the results: bench/results/intel-estimates.md.
Units: the AVX2 AEAD per 512 bytes of text (one ChaCha20 batch, 32
Poly1305 blocks); the AVX-512 AEAD per 1024 bytes. Per-message costs (key
block, AAD, key powers, lane folding, tag, EVP) are not in these numbers.

--dump DIR writes each unit as DIR/<kernel>.s for further llvm-mca runs
(-timeline, -bottleneck-analysis). Needs python3, binutils (objdump, as),
perl (OpenSSL's perlasm) and llvm-16 (llvm-mca-16).
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

AVX2_MODELS = ["sapphirerapids", "alderlake", "icelake-server", "skylake-avx512",
               "skylake", "znver3", "znver4"]
AVX512_MODELS = ["sapphirerapids", "icelake-server", "znver4"]
NO_AVX512 = ("skylake", "alderlake", "znver3", "znver2", "znver1", "haswell", "broadwell")


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw).stdout


# ---- disassembly -------------------------------------------------------------

INSN = re.compile(r"^\s*([0-9a-f]+):\s+(.*)$")


def disasm(obj, func):
    """[(addr, text)] of one function of an object file (AT&T, no raw bytes)."""
    out = run(["objdump", "-d", "--no-show-raw-insn", "-w", obj])
    lines, on = [], False
    for line in out.split("\n"):
        if re.match(r"^[0-9a-f]+ <%s>:$" % re.escape(func), line):
            on = True
            continue
        if on:
            if line.strip() == "" or re.match(r"^[0-9a-f]+ <", line):
                break
            m = INSN.match(line)
            if m:
                text = m.group(2).split("#")[0].strip()
                if text and not text.startswith("(bad)"):
                    lines.append((int(m.group(1), 16), text))
    if not lines:
        raise SystemExit("mca-estimate: no function %s in %s" % (func, obj))
    return lines


def mnem(text):
    return text.split()[0]


def is_branch(text):
    return mnem(text).startswith("j")


def target(text):
    m = re.match(r"^j\w+\s+([0-9a-f]+)\b", text)
    return int(m.group(1), 16) if m else None


def loops(ins):
    """Backward branches: (start address, address of the branch)."""
    res = []
    for a, t in ins:
        if is_branch(t):
            tg = target(t)
            if tg is not None and tg <= a:
                res.append((tg, a))
    return res


def rng(ins, lo, hi):
    """Instructions with lo <= address <= hi."""
    return [t for a, t in ins if lo <= a <= hi]


def count(texts, pat):
    r = re.compile(pat)
    return sum(1 for t in texts if r.match(mnem(t)))


def find_loop(ins, pred, nth=0):
    """The nth loop (in address order) whose body satisfies pred(body)."""
    ls = loops(ins)
    inner = [l for l in ls if not any(o != l and l[0] <= o[0] and o[1] <= l[1] for o in ls)]
    found = sorted((lo, hi) for lo, hi in inner if pred(rng(ins, lo, hi)))
    if len(found) <= nth:
        raise SystemExit("mca-estimate: loop not found")
    return found[nth]


def enclosing(ins, inner):
    """The smallest loop strictly containing the loop 'inner'."""
    c = [(lo, hi) for lo, hi in loops(ins)
         if lo <= inner[0] and hi > inner[1] and (lo, hi) != inner]
    if not c:
        raise SystemExit("mca-estimate: no enclosing loop")
    return min(c, key=lambda l: l[1] - l[0])


def nest(ins, inner, times):
    """One iteration of the loop enclosing 'inner', with inner run 'times' times."""
    outer = enclosing(ins, inner)
    head = [t for a, t in ins if outer[0] <= a < inner[0]]
    tail = [t for a, t in ins if inner[1] < a <= outer[1]]
    return head + rng(ins, *inner) * times + tail


# A memory source operand: the first operand, e.g. 0x40(%rsp) or 0x0(%rip) or (%r8,%rax,8).
MEMSRC = re.compile(r"^(\S+)\s+((?:-?0x[0-9a-f]+|-?\d+)?\(%[a-z0-9]+(?:,%[a-z0-9]+,\d)?\)),(.*)$")
# Vector ops whose EVEX form (needed to name %ymm31/%xmm31) the models schedule as the
# VEX form; adds and subtracts become an OR (the same ports and latency in every model
# used here: the EVEX add is p05-only in the Skylake and Alder Lake models).
VEC_MAP = {"vpxor": "vpxord", "vpand": "vpandq", "vpor": "vporq", "vpandn": "vpandnq",
           "vpaddd": "vpord", "vpaddq": "vporq", "vpsubd": "vpord", "vpsubq": "vporq"}
VEC_SAME = ("vpshufb", "vpmuludq", "vpmuldq", "vpunpcklqdq", "vpunpckhqdq", "vpunpckldq",
            "vpunpckhdq", "vpermd", "vpermq", "vpsllvq", "vpsrlvq", "vpsrlvd", "vpsllvd")
GPR_OPS = ("add", "adc", "sub", "sbb", "and", "or", "xor", "imul", "mulx")


def unfold(texts):
    """llvm-mca 16 charges a load-op instruction (e.g. vpshufb (%rip),%ymm1,%ymm1) the
    load's latency on the path from its register operand: a chain through such
    instructions runs ~6 cycles slower per step than on the hardware, where the load
    micro-op runs as soon as its address is known. So each memory source of an ALU
    instruction becomes a load micro-op that feeds nothing (prefetcht0 of the same
    address: one load-port micro-op) and the instruction reads a register that is never
    written in the unit (%ymm31/%xmm31, %rbp), which leaves its latency on the register
    path only. zmm code is left as it is (no register is free there; its memory
    operands are the feed-forward and the text, off the loop-carried chains)."""
    used = " ".join(texts)
    vfree = "mm31" not in used
    gfree = not re.search(r"%[re]?bp\b|%bpl\b", used)
    out, n = [], 0
    for t in texts:
        m = MEMSRC.match(t)
        if m:
            op, mem, rest = m.group(1), m.group(2), m.group(3)
            base = op.rstrip("q") if op not in ("vpmuludq", "vpmuldq") else op
            new = None
            if vfree and ("%ymm" in rest or "%xmm" in rest) and "%zmm" not in rest:
                reg = "%ymm31" if "%ymm" in rest else "%xmm31"
                if op in VEC_MAP:
                    new = "%s %s,%s" % (VEC_MAP[op], reg, rest)
                elif op in VEC_SAME:
                    new = "%s %s,%s" % (op, reg, rest)
            elif gfree and base in GPR_OPS and re.match(r"^%r", rest.split(",")[-1]):
                new = "%s %%rbp,%s" % (op, rest)
            elif gfree and base in GPR_OPS and re.match(r"^%e", rest.split(",")[-1]):
                new = "%s %%ebp,%s" % (op, rest)
            if new:
                out += ["prefetcht0 " + mem, new]
                n += 1
                continue
        out.append(t)
    return out, n


def to_asm(texts, do_unfold=True):
    """Straight-line assembler text for llvm-mca: branches aim at one label, nops dropped."""
    if do_unfold:
        texts, _ = unfold(texts)
    out = [".text", ".Lt:"]
    for t in texts:
        m = mnem(t)
        if "nop" in t.split()[0] or t.startswith(("data16", "cs nop", "xchg   %ax,%ax")):
            continue
        if m.startswith("j") or m in ("call", "loop"):
            t = "%s .Lt" % m
        out.append("\t" + t)
    return "\n".join(out) + "\n"


# ---- the kernels --------------------------------------------------------------

def vpshufb(n):
    return lambda b: count(b, r"vpshufb$") == n


def chapoly_units(kdir):
    o = lambda f: os.path.join(kdir, f)
    u = {}

    # split form, ChaCha20: xor_columns' batch loop around the double-round loop
    ins = disasm(o("chacha20_avx2.c.o"), "xor_columns")
    inner = find_loop(ins, lambda b: count(b, r"vpshufb$") == 16 and count(b, r"mulx") == 0)
    u["chapoly-chacha-ymm"] = (nest(ins, inner, 10), 1.0, "xor_columns: batch loop, 10 x double round")

    # split form, Poly1305: run4's two-batch step (128 bytes)
    ins = disasm(o("poly1305_avx2.c.o"), "run4")
    lp = find_loop(ins, lambda b: count(b, r"vpmuludq$") == 50)
    u["chapoly-poly-avx2"] = (rng(ins, *lp), 4.0, "run4: h*r^8 + m1*r^4 + m2 loop (128 B)")

    # stitched: the five double-round loops of batch_hash_n_asm (4, 3, 2, 1, 0 blocks),
    # first copy (whole batches); a batch of 32 blocks = 2 x (4 blocks) + 8 x (3 blocks)
    ins = disasm(o("aead_avx2.c.o"), "stitched_range")
    chain = sorted((lo, hi) for lo, hi in loops(ins)
                   if count(rng(ins, lo, hi), r"vpshufb$") == 16
                   and mnem(dict(ins)[hi]) in ("jae", "jnc"))[:5]
    lps = dict(zip((4, 3, 2, 1, 0), chain))
    for k, lp in lps.items():
        if count(rng(ins, *lp), r"mulx") != 4 * k:
            raise SystemExit("mca-estimate: stitched loop chain not as expected")
    # head: the vector loads just before the jump into the loop chain
    first = lps[4][0]
    pre = [(a, t) for a, t in ins if a < first]
    j = max(i for i, (a, t) in enumerate(pre) if mnem(t) == "jmp")
    i = j
    while i > 0 and mnem(pre[i - 1][1]).startswith("vmovdqa"):
        i -= 1
    head = [t for a, t in pre[i:j + 1]]
    # tail: after the last loop up to the next unconditional jump
    post = [(a, t) for a, t in ins if a > lps[0][1]]
    k = next(n for n, (a, t) in enumerate(post) if mnem(t) == "jmp")
    tail = [t for a, t in post[:k + 1]]
    checks = []
    for kk in (2, 1, 0):  # the counter checks of the loops that run no time
        b = rng(ins, *lps[kk])
        checks += b[-2:]
    seq = head + rng(ins, *lps[4]) * 2 + rng(ins, *lps[3]) * 8 + checks + tail
    u["chapoly-stitched"] = (seq, 1.0, "stitched_range: 2 x DR+4 blocks, 8 x DR+3 blocks, feed/xor/store")

    # avx512 level: 16-lane zmm batches, one (cols16_full_zmm) or two (cols32_full_zmm) in flight
    ins = disasm(o("chacha20_avx512.c.o"), "cols16_full_zmm")
    lp = find_loop(ins, lambda b: count(b, r"vprold$") == 320)
    u["chapoly-chacha-zmm1"] = (rng(ins, *lp), 1.0, "cols16_full_zmm: one batch (1 KiB)")
    ins = disasm(o("chacha20_avx512.c.o"), "cols32_full_zmm")
    lp = find_loop(ins, lambda b: count(b, r"vprold$") > 600)
    u["chapoly-chacha-zmm2"] = (rng(ins, *lp), 0.5, "cols32_full_zmm: two batches (2 KiB)")

    # IFMA Poly1305: run16's 16-block step (256 bytes)
    ins = disasm(o("poly1305_avx512.c.o"), "run16")
    lp = find_loop(ins, lambda b: count(b, r"vpmadd52(l|h)uq$") >= 36)
    u["chapoly-poly-ifma16"] = (rng(ins, *lp), 4.0, "run16: two 8-lane accumulators x r^16 (256 B)")
    return u


def openssl_units(sdir, libcrypto, work):
    """OpenSSL's perlasm output for this release, assembled; checked against libcrypto."""
    env = dict(os.environ, CC=os.environ.get("CC", "gcc"))
    objs = {}
    for name, pl in (("chacha", "crypto/chacha/asm/chacha-x86_64.pl"),
                     ("poly", "crypto/poly1305/asm/poly1305-x86_64.pl")):
        s = os.path.join(work, name + ".s")
        obj = os.path.join(work, name + ".o")
        run(["perl", os.path.join(sdir, pl), "elf", s], env=env, cwd=sdir)
        run(["as", "--64", "-o", obj, s])
        objs[name] = obj
    verify(objs, libcrypto, work)
    u = {}
    ins = disasm(objs["chacha"], "ChaCha20_8x")
    inner = find_loop(ins, vpshufb(16))
    u["openssl-chacha-8x"] = (nest(ins, inner, 10), 1.0, "ChaCha20_8x: .Loop_outer8x, 10 x .Loop8x")
    ins = disasm(objs["poly"], "poly1305_blocks_avx2")
    lp = find_loop(ins, lambda b: count(b, r"vpmuludq$") == 25)
    u["openssl-poly-avx2"] = (rng(ins, *lp), 8.0, "poly1305_blocks_avx2: .Loop_avx2 (64 B)")
    ins = disasm(objs["chacha"], "ChaCha20_16x")
    inner = find_loop(ins, lambda b: count(b, r"vprold$") == 32)
    u["openssl-chacha-16x"] = (nest(ins, inner, 10), 1.0, "ChaCha20_16x: .Loop_outer16x, 10 x .Loop16x")
    ins = disasm(objs["poly"], "poly1305_blocks_vpmadd52_8x")
    lp = find_loop(ins, lambda b: count(b, r"vpmadd52(l|h)uq$") >= 18)
    u["openssl-poly-ifma8x"] = (rng(ins, *lp), 8.0, "poly1305_blocks_vpmadd52_8x: .Loop_vpmadd52_8x (128 B)")
    return u


def verify(objs, libcrypto, work):
    """Every function of the assembled perlasm output must be in libcrypto, byte
    for byte outside relocated fields."""
    lib = open(libcrypto, "rb").read()
    for obj in objs.values():
        binf = os.path.join(work, os.path.basename(obj) + ".bin")
        run(["objcopy", "-O", "binary", "--only-section=.text", obj, binf])
        text = open(binf, "rb").read()
        rel = set()
        for line in run(["objdump", "-r", "-j", ".text", obj]).split("\n"):
            m = re.match(r"^([0-9a-f]{8,16})\s+R_X86_64_(PC32|PLT32|32S?|64)", line)
            if m:
                off = int(m.group(1), 16)
                rel.update(range(off, off + (8 if m.group(2) == "64" else 4)))
        syms = []
        for line in run(["nm", "-n", obj]).split("\n"):
            p = line.split()
            if len(p) == 3 and p[1] in "tT":
                syms.append((int(p[0], 16), p[2]))
        for i, (a, n) in enumerate(syms):
            e = syms[i + 1][0] if i + 1 < len(syms) else len(text)
            # a relocation-free window to find the function, then the whole compare
            w = next((x for x in range(a, e - 32) if not rel & set(range(x, x + 32))), None)
            if w is None:
                continue
            pos, ok = lib.find(text[w:w + 32]), False
            while pos >= 0 and not ok:
                base = pos - (w - a)
                ok = all(lib[base + k - a] == text[k] for k in range(a, e) if k not in rel)
                pos = lib.find(text[w:w + 32], pos + 1)
            if not ok:
                raise SystemExit("mca-estimate: %s (%s) is not in %s: wrong OpenSSL source?"
                                 % (n, os.path.basename(obj), libcrypto))


def lean_poly_sketch():
    """Not chapoly's code: a sketch of a spill-free AVX2 Poly1305 step for the model,
    h <- h*r^8 + mA*r^4 + mB per 128 bytes, h in ymm0-4, sums in ymm5-9, temporaries
    ymm10-11, the 26-bit mask in ymm15, r^8 and r^4 (r0..r4, 5*r1..5*r4) as memory
    operands at (%rsi) and 288(%rsi), one lazy carry per 128 bytes."""
    L = []
    e = L.append
    H, D, T, T2, MASK = [0, 1, 2, 3, 4], [5, 6, 7, 8, 9], 10, 11, 15
    y = lambda i: "%%ymm%d" % i

    def key(tab, i, j):  # multiplier of limb j into d_i: r_(i-j), or 5 r_(5+i-j)
        k = i - j
        off = tab + (k * 32 if k >= 0 else (4 + 5 + k) * 32)
        return "%d(%%rsi)" % off if off else "(%rsi)"

    def split(off, r):  # 4 blocks at off(%rdi) -> limbs in r[0..4]
        lo, hi, c = r[0], r[1], r[2:]
        e("vmovdqu %d(%%rdi),%s" % (off, y(T)))
        e("vmovdqu %d(%%rdi),%s" % (off + 32, y(T2)))
        e("vpunpcklqdq %s,%s,%s" % (y(T2), y(T), y(lo)))
        e("vpunpckhqdq %s,%s,%s" % (y(T2), y(T), y(hi)))
        e("vpermq $0xd8,%s,%s" % (y(lo), y(lo)))
        e("vpermq $0xd8,%s,%s" % (y(hi), y(hi)))
        e("vpsrlq $40,%s,%s" % (y(hi), y(c[2])))
        e("vpor 608(%%rsi),%s,%s" % (y(c[2]), y(c[2])))
        e("vpsrlq $14,%s,%s" % (y(hi), y(c[1])))
        e("vpand %s,%s,%s" % (y(MASK), y(c[1]), y(c[1])))
        e("vpsllq $12,%s,%s" % (y(hi), y(hi)))
        e("vpsrlq $52,%s,%s" % (y(lo), y(c[0])))
        e("vpor %s,%s,%s" % (y(hi), y(c[0]), y(c[0])))
        e("vpand %s,%s,%s" % (y(MASK), y(c[0]), y(c[0])))
        e("vpsrlq $26,%s,%s" % (y(lo), y(hi)))
        e("vpand %s,%s,%s" % (y(MASK), y(hi), y(hi)))
        e("vpand %s,%s,%s" % (y(MASK), y(lo), y(lo)))
        return [lo, hi, c[0], c[1], c[2]]

    for j in range(5):  # h * r^8, limb by limb of h (frees h's registers)
        for i in range(5):
            if j == 0:
                e("vpmuludq %s,%s,%s" % (key(0, i, j), y(H[j]), y(D[i])))
            else:
                e("vpmuludq %s,%s,%s" % (key(0, i, j), y(H[j]), y(T)))
                e("vpaddq %s,%s,%s" % (y(T), y(D[i]), y(D[i])))
    ma = split(0, H)
    for j in range(5):  # + mA * r^4
        for i in range(5):
            e("vpmuludq %s,%s,%s" % (key(288, i, j), y(ma[j]), y(T)))
            e("vpaddq %s,%s,%s" % (y(T), y(D[i]), y(D[i])))
    mb = split(64, H)
    for i in range(5):  # + mB
        e("vpaddq %s,%s,%s" % (y(mb[i]), y(D[i]), y(D[i])))

    def carry(a, b):
        e("vpsrlq $26,%s,%s" % (y(D[a]), y(T)))
        e("vpand %s,%s,%s" % (y(MASK), y(D[a]), y(D[a])))
        e("vpaddq %s,%s,%s" % (y(T), y(D[b]), y(D[b])))
    carry(3, 4)
    carry(0, 1)
    e("vpsrlq $26,%s,%s" % (y(D[4]), y(T)))
    e("vpand %s,%s,%s" % (y(MASK), y(D[4]), y(D[4])))
    e("vpaddq %s,%s,%s" % (y(T), y(D[0]), y(D[0])))
    e("vpsllq $2,%s,%s" % (y(T), y(T)))
    e("vpaddq %s,%s,%s" % (y(T), y(D[0]), y(D[0])))
    for a, b in ((1, 2), (2, 3), (0, 1), (3, 4)):
        carry(a, b)
    for i in range(5):
        e("vmovdqa %s,%s" % (y(D[i]), y(H[i])))
    e("leaq 128(%rdi),%rdi")
    e("subq $128,%rdx")
    e("jnz 0")
    return L


# ---- llvm-mca ------------------------------------------------------------------

def mca(prog, asm, model, iterations):
    with tempfile.NamedTemporaryFile("w", suffix=".s", delete=False) as f:
        f.write(asm)
        path = f.name
    try:
        out = subprocess.run([prog, "-mtriple=x86_64-unknown-linux-gnu", "-mcpu=" + model,
                              "-mattr=+avx2,+bmi2,+avx512f,+avx512vl,+avx512bw,+avx512dq,+avx512ifma",
                              "-iterations=%d" % iterations, "-resource-pressure=0",
                              "-instruction-info=0", path],
                             capture_output=True, text=True)
    finally:
        os.unlink(path)
    if out.returncode != 0:
        return None, out.stderr.strip().split("\n")[0]
    m = re.search(r"Total Cycles:\s+(\d+)", out.stdout)
    return int(m.group(1)) / iterations, None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--openssl-src", default=None)
    ap.add_argument("--libcrypto", default="/usr/lib/x86_64-linux-gnu/libcrypto.so.3")
    ap.add_argument("--mca", default="llvm-mca-16")
    ap.add_argument("--models", default=None)
    ap.add_argument("--iterations", type=int, default=100)
    ap.add_argument("--dump", default=None)
    ap.add_argument("--sketch", action="store_true",
                    help="also model lean_poly_sketch(), a spill-free AVX2 Poly1305 step")
    ap.add_argument("--raw", action="store_true",
                    help="keep memory operands folded (llvm-mca's own view; see unfold())")
    a = ap.parse_args()

    kdir = os.path.join(a.build, "kernels", "CMakeFiles", "chapoly_kernels.dir")
    units = chapoly_units(kdir)
    if a.sketch:
        units["sketch-poly-avx2"] = (lean_poly_sketch(), 4.0,
                                     "sketch (not chapoly's code): spill-free h*r^8 + mA*r^4 + mB (128 B)")
    with tempfile.TemporaryDirectory() as work:
        if a.openssl_src:
            units.update(openssl_units(a.openssl_src, a.libcrypto, work))
        else:
            print("(no --openssl-src: OpenSSL's loops left out)", file=sys.stderr)
    if a.dump:
        os.makedirs(a.dump, exist_ok=True)
        for k, (seq, mult, what) in units.items():
            with open(os.path.join(a.dump, k + ".s"), "w") as f:
                f.write("# %s; x %g per unit of text\n" % (what, mult) + to_asm(seq))
            with open(os.path.join(a.dump, k + ".raw.s"), "w") as f:
                f.write("# %s; x %g per unit of text\n" % (what, mult) + to_asm(seq, False))

    avx2 = ["chapoly-stitched", "chapoly-chacha-ymm", "chapoly-poly-avx2",
            "openssl-chacha-8x", "openssl-poly-avx2", "sketch-poly-avx2"]
    avx512 = ["chapoly-chacha-zmm1", "chapoly-chacha-zmm2", "chapoly-poly-ifma16",
              "openssl-chacha-16x", "openssl-poly-ifma8x"]
    models = a.models.split(",") if a.models else None

    for title, names, mlist, unit in (("AVX2 level, cycles per 512 B of AEAD text", avx2,
                                       models or AVX2_MODELS, 512),
                                      ("AVX-512 level, cycles per 1 KiB of AEAD text", avx512,
                                       [m for m in models if m not in NO_AVX512]
                                       if models else AVX512_MODELS, 1024)):
        names = [n for n in names if n in units]
        if not mlist:
            continue
        print("\n## %s (%s, -iterations=%d%s)\n" % (title, a.mca, a.iterations,
                                                  ", memory operands folded" if a.raw else ""))
        for n in names:
            print("- %s: %s, %d instructions, x %g" % (n, units[n][2], len(units[n][0]), units[n][1]))
        print()
        print("| model | " + " | ".join(names) + " |")
        print("|---|" + "---|" * len(names))
        res = {}
        for m in mlist:
            row = []
            for n in names:
                seq, mult, _ = units[n]
                c, err = mca(a.mca, to_asm(seq, not a.raw), m, a.iterations)
                res[(m, n)] = None if c is None else c * mult
                row.append("%.0f" % (c * mult) if c is not None else "n/a")
            print("| %s | %s |" % (m, " | ".join(row)))
        print()
        if unit == 512 and "openssl-chacha-8x" in names:
            sk = "sketch-poly-avx2" in names
            print("| model | default | stitched | split | stitched / default | split / default |"
                  + (" split, sketch Poly1305 / default |" if sk else ""))
            print("|---|---|---|---|---|---|" + ("---|" if sk else ""))
            for m in mlist:
                g = lambda n: res.get((m, n))
                if None in (g("openssl-chacha-8x"), g("openssl-poly-avx2"),
                            g("chapoly-chacha-ymm"), g("chapoly-poly-avx2"), g("chapoly-stitched")):
                    continue
                d = g("openssl-chacha-8x") + g("openssl-poly-avx2")
                sp = g("chapoly-chacha-ymm") + g("chapoly-poly-avx2")
                st = g("chapoly-stitched")
                extra = ""
                if sk and g("sketch-poly-avx2") is not None:
                    extra = " %.2fx |" % (d / (g("chapoly-chacha-ymm") + g("sketch-poly-avx2")))
                print("| %s | %.0f | %.0f | %.0f | %.2fx | %.2fx |%s" % (m, d, st, sp, d / st, d / sp,
                                                                      extra))
        if unit == 1024 and "openssl-chacha-16x" in names:
            print("| model | default | split (1 batch) | split (2 in flight) | ratio 1 | ratio 2 |")
            print("|---|---|---|---|---|---|")
            for m in mlist:
                g = lambda n: res.get((m, n))
                if None in (g("openssl-chacha-16x"), g("openssl-poly-ifma8x"),
                            g("chapoly-chacha-zmm1"), g("chapoly-chacha-zmm2"),
                            g("chapoly-poly-ifma16")):
                    continue
                d = g("openssl-chacha-16x") + g("openssl-poly-ifma8x")
                s1 = g("chapoly-chacha-zmm1") + g("chapoly-poly-ifma16")
                s2 = g("chapoly-chacha-zmm2") + g("chapoly-poly-ifma16")
                print("| %s | %.0f | %.0f | %.0f | %.2fx | %.2fx |" % (m, d, s1, s2, d / s1, d / s2))


if __name__ == "__main__":
    main()
