#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# scripts/arm64-insn-count.sh [BUILD_DIR]
#
# Dynamic AArch64 instruction counts of chapoly's neon (and portable) level
# against OpenSSL's own arm64 code (the default provider of libcrypto.so.3
# from libssl3:arm64), under qemu, for docs/performance.md ("arm64"). Speed cannot be
# timed under emulation; instructions executed can be counted exactly.
#
# Method: Debian's qemu-user-static has no plugin support, so each run is
# logged with -d in_asm,exec,nochain (every translated block's instructions
# once, then one line per executed block; nochain makes every execution
# show) into a pipe, and the script sums the instructions of the blocks
# executed. scripts/arm64_insn_driver.c does the EVP calls; two runs that
# differ only in the repetitions (per message) or in the length (per block
# at 16 KiB: 16 KiB minus 8 KiB) are subtracted, so process start, provider
# loading, setup and a warm-up operation cancel out. The emulated CPU is a
# Cortex-A72 (-cpu cortex-a72: Advanced SIMD, no SVE), so both sides run
# their NEON code. The hottest translated block of each long run (the
# inner loop, where the loop body has no branch) is printed with its size.
#
# BUILD_DIR: an arm64 tree (cmake --toolchain cmake/aarch64-linux-gnu.cmake),
# default build-arm64. Needs qemu-aarch64-static, aarch64-linux-gnu-gcc,
# libssl-dev:arm64 and python3. Takes about 5 minutes.
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$src/build-arm64}
build=$(cd "$build" && pwd)
qemu=${QEMU_AARCH64:-qemu-aarch64-static}
cpu=${QEMU_CPU_MODEL:-cortex-a72}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
drv=$tmp/arm64_insn_driver
"${CC_AARCH64:-aarch64-linux-gnu-gcc}" -O2 -o "$drv" "$src/scripts/arm64_insn_driver.c" -lcrypto
[ -f "$build/lib/chapoly.so" ] || { echo "no $build/lib/chapoly.so: build the arm64 tree first" >&2; exit 1; }

cat > "$tmp/sum.py" <<'EOF'
import sys
# in_asm: "IN: ..." then one "0x<pc>:  <word>  <insn>" line per instruction;
# exec: "Trace N: <host> [<flags>/<pc>/...]". A block may be translated again
# (same pc): the latest translation counts. Prints the total; argv[1] gets
# "pc instructions executions" per block.
size, total, runs = {}, 0, {}
cur, n = None, 0
for line in sys.stdin:
    if line.startswith('Trace '):
        pc = int(line.split('[', 1)[1].split('/', 2)[1], 16)
        total += size.get(pc, 0)
        runs[pc] = runs.get(pc, 0) + 1
    elif line.startswith('IN:'):
        cur, n = None, 0
    elif line.startswith('0x') and ':' in line:
        pc = int(line.split(':', 1)[0], 16)
        if cur is None:
            cur = pc
        n += 1
        size[cur] = n
print(total)
with open(sys.argv[1], 'w') as f:
    for pc, k in runs.items():
        f.write('%x %d %d\n' % (pc, size.get(pc, 0), k))
EOF
cat > "$tmp/hot.py" <<'EOF'
import sys
# The translated blocks executed more often in run A than in run B (the
# extra 8 KiB per operation): the inner loop. Prints the largest ones.
def load(f):
    return {l.split()[0]: (int(l.split()[1]), int(l.split()[2])) for l in open(f)}
a, b, nb = load(sys.argv[1]), load(sys.argv[2]), float(sys.argv[3])
d = sorted(((s * (k - b.get(pc, (0, 0))[1]), pc, s, k - b.get(pc, (0, 0))[1])
            for pc, (s, k) in a.items()), reverse=True)[:3]
print('; '.join('%d-insn block %.3gx' % (s, k / nb) for _, pc, s, k in d if k > 0))
EOF

# count PROVIDER KERNEL OP LEN REPS TAG -> total instructions on stdout
count() {
    mkfifo "$tmp/fifo"
    python3 "$tmp/sum.py" "$tmp/pcs.$6" < "$tmp/fifo" > "$tmp/out" &
    py=$!
    OPENSSL_MODULES="$build/lib" OPENSSL_CONF=/dev/null CHAPOLY_KERNEL=$2 \
        "$qemu" -cpu "$cpu" -d in_asm,exec,nochain -D "$tmp/fifo" "$drv" "$1" "$3" "$4" "$5" \
        > /dev/null
    wait "$py"
    rm -f "$tmp/fifo"
    cat "$tmp/out"
}

# per_block PROVIDER KERNEL OP BLOCKBYTES: instructions per block at 16 KiB
# (two operations plus the warm-up, each 8 KiB longer in the first run),
# then the largest translated blocks of the difference, in executions per
# block of data (the inner loop).
per_block() {
    a=$(count "$1" "$2" "$3" 16384 2 a)
    b=$(count "$1" "$2" "$3" 8192 2 b)
    blocks=$((3 * 8192 / $4))
    awk -v a="$a" -v b="$b" -v n="$blocks" 'BEGIN { printf "%.1f", (a - b) / n }'
    printf ' (inner loop: %s)' "$(python3 "$tmp/hot.py" "$tmp/pcs.a" "$tmp/pcs.b" "$blocks")"
}

# per_msg PROVIDER KERNEL OP LEN: instructions per message (4 more messages)
per_msg() {
    a=$(count "$1" "$2" "$3" "$4" 5 a)
    b=$(count "$1" "$2" "$3" "$4" 1 b)
    awk -v a="$a" -v b="$b" 'BEGIN { printf "%.0f", (a - b) / 4 }'
}

echo "AArch64 instructions executed (qemu $($qemu --version | head -1 | awk '{print $3}'), -cpu $cpu)"
for who in "default -" "chapoly neon" "chapoly portable"; do
    set -- $who
    name="OpenSSL default provider"
    [ "$1" = chapoly ] && name="chapoly $2"
    echo "== $name"
    echo "  ChaCha20 per 64-byte block at 16 KiB: $(per_block "$1" "$2" chacha20 64)"
    echo "  Poly1305 per 16-byte block at 16 KiB: $(per_block "$1" "$2" poly1305 16)"
    for len in 64 256; do
        echo "  per message, $len bytes: ChaCha20 $(per_msg "$1" "$2" chacha20 $len)," \
             "Poly1305 $(per_msg "$1" "$2" poly1305 $len)," \
             "ChaCha20-Poly1305 seal (13-byte AAD) $(per_msg "$1" "$2" aead $len)"
    done
done
