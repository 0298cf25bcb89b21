#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Safe to deploy system-wide. Checks, each able to fail:
#  A. the statistics file: written only with statistics on (CHAPOLY_STATS or
#     `stats = 1`), with the process id and every counter, and only by a
#     process that counted something; never through a symlink; created 0600
#     whatever the umask; an existing file of ours appended to, mode kept; a
#     FIFO, directory, hard-linked or missing path skipped silently. The same
#     for the config key stats_file (%p = the process id), which
#     CHAPOLY_STATS_FILE overrides.
#  B. a setuid-root program run by nobody: CHAPOLY_STATS_FILE pointing into a
#     root-only directory creates nothing, CHAPOLY_KERNEL and CHAPOLY_STATS
#     are ignored (secure_getenv).
#  C. config mistakes (unknown key, unknown kernel level, bad stats or serve value; the
#     same from CHAPOLY_KERNEL) go to stderr once, naming the key, and chapoly
#     is still active; a valid config prints nothing. A value (or key) is
#     quoted in at most 64 characters, its first 61 and "..." past that, and
#     its control characters as '?': a 100 KB value makes a short line.
#  D. buildinfo (`openssl list -providers -verbose`) names the kernel level;
#     OPENSSL_ia32cap's masks are chapoly's too: AVX2 masked gives the
#     portable level (and the default provider serves ChaCha20-Poly1305),
#     AVX-512 masked the avx2 level, and CHAPOLY_KERNEL=avx512 with AVX-512
#     masked is refused with the usual warning.
#  E. error lines printed by `openssl` carry no absolute source path.
#
# Environment (CTest): OPENSSL_PROGRAM, OPENSSL_MODULES, CHAPOLY_MODULE,
# CHAPOLY_DEPLOY_SEAL (test/deploy_seal.c), CHAPOLY_LEVEL_PROBE,
# CHAPOLY_BUILD_DIR, CHAPOLY_SOURCE_DIR. Part B needs root, setpriv, the user
# nobody and a file system that honours setuid (probed; the build directory
# is tried first). If B cannot run, everything else still runs and the script
# exits 77 (skipped) with the reason, unless a check failed.
# Prints "N passed, N failed"; KEEP_T=1 keeps the temporary directories.

set -u

OSSL=${OPENSSL_PROGRAM:-openssl}
MODS=${OPENSSL_MODULES:?OPENSSL_MODULES must name the directory of chapoly.so}
MODULE=${CHAPOLY_MODULE:-$MODS/chapoly.so}
SEAL=${CHAPOLY_DEPLOY_SEAL:?CHAPOLY_DEPLOY_SEAL must name the deploy_seal program}
SRC=${CHAPOLY_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${CHAPOLY_BUILD_DIR:-}
# Every run below says what it wants; nothing is inherited from the caller.
unset CHAPOLY_STATS CHAPOLY_STATS_FILE CHAPOLY_KERNEL OPENSSL_ia32cap
OPENSSL_CONF=/dev/null
export OPENSSL_CONF

. "$(dirname "$0")/../common/check.sh"
bounded() {
    _secs=$1
    shift
    if command -v timeout > /dev/null 2>&1; then timeout "$_secs" "$@"; else "$@"; fi
}
absent() { [ ! -e "$1" ] && [ ! -L "$1" ]; }
empty() { [ ! -s "$1" ]; }
mode_is() { [ "$(stat -c %a "$1" 2> /dev/null)" = "$2" ]; }
# lines N PATTERN FILE: exactly N lines of FILE contain the fixed string
lines() { [ "$(grep -cF -- "$2" "$3" 2> /dev/null)" = "$1" ]; }
# deploy_seal's line: one XChaCha20-Poly1305 seal
COUNTS='chapoly-aead-messages=1 chapoly-aead-seals=1 chapoly-aead-opens=0 chapoly-tls-records=0 chapoly-chacha20-calls=0 chapoly-chacha20-bytes=0 chapoly-poly1305-macs=0 chapoly-pipeline-batches=0'
STATLINE="^pid=[1-9][0-9]* $COUNTS\$"

for f in "$MODULE" "$SEAL"; do
    if [ ! -f "$f" ]; then
        echo "FAIL: $f missing" >&2
        echo "0 passed, 1 failed"
        exit 1
    fi
done

T=$(mktemp -d "${TMPDIR:-/tmp}/chapoly-deploy.XXXXXX") || exit 1
S=
cleanup() {
    [ -n "${KEEP_T:-}" ] && { echo "kept $T ${S:-}" >&2; return; }
    rm -rf "$T"
    [ -n "$S" ] && rm -rf "$S"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# seal [ARGS...]: the test program, loading chapoly from OPENSSL_MODULES.
seal() { OPENSSL_MODULES=$MODS bounded 30 "$SEAL" "$@"; }
# seal_pid: deploy_seal with no arguments, its process id in $SPID_SEAL
seal_pid() {
    OPENSSL_MODULES=$MODS "$SEAL" > /dev/null 2>&1 &
    SPID_SEAL=$!
    wait "$SPID_SEAL"
}

# --- A. the statistics file --------------------------------------------------

seal > "$T/out" 2> "$T/err"
check "deploy_seal runs (no stats)" [ $? -eq 0 ]
BEST=$(sed -n 's/^chapoly-kernel: //p' "$T/out")
check "deploy_seal prints the active kernel level (got '$BEST')" [ -n "$BEST" ]

CHAPOLY_STATS_FILE=$T/off.stats seal > /dev/null 2> "$T/err"
check "stats off: deploy_seal runs" [ $? -eq 0 ]
check "stats off (no CHAPOLY_STATS, no config): CHAPOLY_STATS_FILE not created" absent "$T/off.stats"
CHAPOLY_STATS=0 CHAPOLY_STATS_FILE=$T/off0.stats seal > /dev/null 2> "$T/err"
check "CHAPOLY_STATS=0: CHAPOLY_STATS_FILE not created" absent "$T/off0.stats"

(umask 022 && CHAPOLY_STATS=1 CHAPOLY_STATS_FILE=$T/on.stats seal > /dev/null 2> "$T/err")
check "stats on: deploy_seal runs" [ $? -eq 0 ]
check "stats on: the file holds one line, the pid, 1 AEAD message sealed and every other counter 0" \
    grep -q "$STATLINE" "$T/on.stats"
check "stats on: nothing else in the file" [ "$(wc -l < "$T/on.stats")" -eq 1 ]
check "stats on: nothing on stderr" empty "$T/err"
for u in 000 022 077 777; do
    (umask $u && CHAPOLY_STATS=yes CHAPOLY_STATS_FILE=$T/umask$u.stats seal > /dev/null 2>&1)
    check "umask $u: created stats file has mode 600 (got $(stat -c %a "$T/umask$u.stats" 2> /dev/null))" \
        mode_is "$T/umask$u.stats" 600
    check "umask $u: created stats file holds the counters" grep -q "$STATLINE" "$T/umask$u.stats"
done

# An existing file of ours is appended to, its mode untouched.
printf 'previous line\n' > "$T/existing.stats"
chmod 640 "$T/existing.stats"
CHAPOLY_STATS=1 CHAPOLY_STATS_FILE=$T/existing.stats seal > /dev/null 2>&1
check "existing file: first line kept" [ "$(head -n 1 "$T/existing.stats")" = "previous line" ]
check "existing file: counters appended" eval 'sed -n 2p "$T/existing.stats" | grep -q "$STATLINE"'
check "existing file: two lines" [ "$(wc -l < "$T/existing.stats")" -eq 2 ]

# The line names the process that wrote it.
CHAPOLY_STATS=1 CHAPOLY_STATS_FILE=$T/pid.stats seal_pid
check "the line starts with pid=$SPID_SEAL (got '$(cat "$T/pid.stats" 2> /dev/null)')" \
    [ "$(cat "$T/pid.stats" 2> /dev/null)" = "pid=$SPID_SEAL $COUNTS" ]
# %p in CHAPOLY_STATS_FILE: the process id, at the time of writing
CHAPOLY_STATS=1 CHAPOLY_STATS_FILE=$T/p-%p.stats seal_pid
check "CHAPOLY_STATS_FILE with %p: written to p-$SPID_SEAL.stats" \
    [ "$(cat "$T/p-$SPID_SEAL.stats" 2> /dev/null)" = "pid=$SPID_SEAL $COUNTS" ]
# A process that counted nothing writes nothing (openssl list loads chapoly, encrypts nothing).
CHAPOLY_STATS=1 CHAPOLY_STATS_FILE=$T/idle.stats bounded 30 "$OSSL" list -providers \
    -provider-path "$MODS" -provider chapoly > /dev/null 2> "$T/err"
check "stats on, nothing encrypted (openssl list -providers): no stats file" absent "$T/idle.stats"
check "existing file: mode 640 kept (got $(stat -c %a "$T/existing.stats"))" mode_is "$T/existing.stats" 640

# Symlinks are not followed: neither to an existing file nor a dangling one.
printf 'keep\n' > "$T/target"
ln -s "$T/target" "$T/link"
ln -s "$T/nothing-here" "$T/dangling"
CHAPOLY_STATS=1 CHAPOLY_STATS_FILE=$T/link seal > /dev/null 2> "$T/err"
check "symlink: deploy_seal runs" [ $? -eq 0 ]
check "symlink: target untouched" [ "$(cat "$T/target")" = keep ]
check "symlink: still a symlink" [ -L "$T/link" ]
check "symlink: silent" empty "$T/err"
CHAPOLY_STATS=1 CHAPOLY_STATS_FILE=$T/dangling seal > /dev/null 2>&1
check "dangling symlink: its target is not created" absent "$T/nothing-here"

# Hard links: a file with a second name elsewhere is not written.
printf 'keep\n' > "$T/hard.a"
ln "$T/hard.a" "$T/hard.b"
CHAPOLY_STATS=1 CHAPOLY_STATS_FILE=$T/hard.b seal > /dev/null 2>&1
check "hard link: file untouched" [ "$(cat "$T/hard.a")" = keep ]

# Not a regular file, or no such directory: silent, and no hang on a FIFO.
mkfifo "$T/fifo"
CHAPOLY_STATS=1 CHAPOLY_STATS_FILE=$T/fifo OPENSSL_MODULES=$MODS bounded 20 "$SEAL" \
    > /dev/null 2> "$T/err"
rc=$?
check "FIFO: deploy_seal exits 0 without blocking (exit $rc)" [ $rc -eq 0 ]
check "FIFO: silent" empty "$T/err"
# A FIFO with a reader (this shell holds it open read-write on fd 3): the
# open succeeds, but it is not a regular file, so nothing is sent.
mkfifo "$T/fifo2"
exec 3<> "$T/fifo2"
CHAPOLY_STATS=1 CHAPOLY_STATS_FILE=$T/fifo2 seal > /dev/null 2> "$T/err"
check "FIFO with a reader: deploy_seal exits 0" [ $? -eq 0 ]
echo END >&3
while IFS= read -r l <&3 && [ "$l" != END ]; do printf '%s\n' "$l"; done > "$T/fifo2.out"
exec 3<&-
check "FIFO with a reader: nothing written to it" empty "$T/fifo2.out"
mkdir "$T/dir.stats"
CHAPOLY_STATS=1 CHAPOLY_STATS_FILE=$T/dir.stats seal > /dev/null 2> "$T/err"
check "directory: deploy_seal exits 0" [ $? -eq 0 ]
check "directory: silent" empty "$T/err"
check "directory: left empty" [ -z "$(ls -A "$T/dir.stats")" ]
CHAPOLY_STATS=1 CHAPOLY_STATS_FILE=$T/no/such/dir/stats seal > /dev/null 2> "$T/err"
check "missing directory: deploy_seal exits 0" [ $? -eq 0 ]
check "missing directory: silent" empty "$T/err"

# A file someone else owns is not appended to (root can chown it to nobody).
if [ "$(id -u)" = 0 ] && id nobody > /dev/null 2>&1; then
    printf 'keep\n' > "$T/theirs.stats"
    chown nobody "$T/theirs.stats"
    CHAPOLY_STATS=1 CHAPOLY_STATS_FILE=$T/theirs.stats seal > /dev/null 2>&1
    check "file owned by another user: untouched" [ "$(cat "$T/theirs.stats")" = keep ]
fi

# --- C. configuration mistakes -------------------------------------------------

# mkcnf FILE [KEY = VALUE lines...]: default + chapoly (this module), activated.
mkcnf() {
    _f=$1
    shift
    {
        printf 'openssl_conf = openssl_init\n[openssl_init]\nproviders = provider_sect\n'
        printf '[provider_sect]\ndefault = default_sect\nchapoly = chapoly_sect\n'
        printf '[default_sect]\nactivate = 1\n[chapoly_sect]\nmodule = %s\nactivate = 1\n' "$MODULE"
        for l in "$@"; do printf '%s\n' "$l"; done
    } > "$_f"
}
# listp NAME CONF: `openssl list -providers` under CONF; out/err in $T/NAME.*
listp() {
    OPENSSL_CONF=$2 bounded 30 "$OSSL" list -providers > "$T/$1.out" 2> "$T/$1.err"
}
active() {
    awk '/^  [^ ]/ { inblk = ($1 == "chapoly") } inblk' "$T/$1.out" | grep -q 'status: active'
}
# cseal CONF: deploy_seal with OPENSSL_CONF=CONF; chapoly is the instance that
# CONF activated (OSSL_PROVIDER_load finds it by name)
cseal() { OPENSSL_CONF=$1 seal > /dev/null 2>&1; }

mkcnf "$T/good.cnf" "stats = TRUE" "kernel = portable"
listp good "$T/good.cnf"
check "valid config: list -providers runs" [ $? -eq 0 ]
check "valid config: chapoly active" active good
check "valid config (stats = TRUE, kernel = portable): nothing on stderr" empty "$T/good.err"
mkcnf "$T/good2.cnf" "stats = off" "kernel = best"
listp good2 "$T/good2.cnf"
check "valid config (stats = off, kernel = best): nothing on stderr" empty "$T/good2.err"

mkcnf "$T/key.cnf" "statz = 1" "stats = 1"
listp key "$T/key.cnf"
check "unknown key: list -providers runs" [ $? -eq 0 ]
check "unknown key: chapoly active" active key
check "unknown key: stderr names \"statz\" once" lines 1 'chapoly: unknown key "statz" in config section [chapoly_sect]' "$T/key.err"
check "unknown key: nothing else on stderr" [ "$(wc -l < "$T/key.err")" -eq 1 ]
CHAPOLY_STATS_FILE=$T/key.stats cseal "$T/key.cnf"
check "unknown key: the other keys still apply (stats = 1 wrote the file)" \
    grep -q "$STATLINE" "$T/key.stats"

mkcnf "$T/kern.cnf" "kernel = avx521"
listp kern "$T/kern.cnf"
check "unknown kernel: list -providers runs" [ $? -eq 0 ]
check "unknown kernel: chapoly active" active kern
check "unknown kernel: stderr says so once, naming the key and the known levels" lines 1 \
    'chapoly: config key "kernel": unknown kernel level "avx521" (known: best, portable, avx2, avx512vl, avx512-noifma, avx512, neon)' \
    "$T/kern.err"
check "unknown kernel: not called unavailable on this CPU" lines 0 'not available' "$T/kern.err"

mkcnf "$T/stats.cnf" "stats = maybe"
listp stats "$T/stats.cnf"
check "bad stats value: list -providers runs" [ $? -eq 0 ]
check "bad stats value: chapoly active" active stats
check "bad stats value: stderr names the key and the value once" lines 1 \
    'chapoly: config key "stats": unrecognised value "maybe"' "$T/stats.err"
CHAPOLY_STATS_FILE=$T/maybe.stats cseal "$T/stats.cnf"
check "bad stats value: treated as off (no stats file)" absent "$T/maybe.stats"

mkcnf "$T/serve.cnf" "serve = everything"
listp serve "$T/serve.cnf"
check "bad serve value: list -providers runs" [ $? -eq 0 ]
check "bad serve value: chapoly active" active serve
check "bad serve value: stderr names the key and the value once" lines 1 \
    'chapoly: config key "serve": unrecognised value "everything"' "$T/serve.err"
check "bad serve value: nothing else on stderr" [ "$(wc -l < "$T/serve.err")" -eq 1 ]
mkcnf "$T/serveall.cnf" "serve = all" "kernel = best"
listp serveall "$T/serveall.cnf"
check "valid config (serve = all, kernel = best): nothing on stderr" empty "$T/serveall.err"

mkcnf "$T/nostats.cnf"
CHAPOLY_STATS_FILE=$T/nostats.stats cseal "$T/nostats.cnf"
check "config without stats: no stats file" absent "$T/nostats.stats"
mkcnf "$T/stats1.cnf" "stats = 1"
CHAPOLY_STATS_FILE=$T/stats1.stats cseal "$T/stats1.cnf"
check "config stats = 1: the stats file is written" grep -q "$STATLINE" "$T/stats1.stats"
CHAPOLY_STATS_FILE=$T/stats1-idle.stats listp stats1 "$T/stats1.cnf"
check "config stats = 1, nothing encrypted (list -providers): no stats file" \
    absent "$T/stats1-idle.stats"

# The config key stats_file: the same rules, "%p" the process id; the
# environment's CHAPOLY_STATS_FILE wins.
mkcnf "$T/sf.cnf" "stats = 1" "stats_file = $T/sf-%p.stats"
listp sf "$T/sf.cnf"
check "valid config (stats_file): nothing on stderr" empty "$T/sf.err"
check "stats_file, nothing encrypted (list -providers): no file" \
    eval '[ -z "$(ls "$T" | grep "^sf-")" ]'
(umask 022 && OPENSSL_CONF=$T/sf.cnf seal_pid && echo "$SPID_SEAL" > "$T/sf.pid")
sp=$(cat "$T/sf.pid")
check "stats_file with %p: sf-$sp.stats holds pid=$sp and the counters" \
    [ "$(cat "$T/sf-$sp.stats" 2> /dev/null)" = "pid=$sp $COUNTS" ]
check "stats_file: created with mode 600 under umask 022 (got $(stat -c %a "$T/sf-$sp.stats" 2> /dev/null))" \
    mode_is "$T/sf-$sp.stats" 600
check "stats_file: nothing else was created" [ "$(ls "$T" | grep -c "^sf-")" -eq 1 ]
CHAPOLY_STATS_FILE=$T/env-sf.stats cseal "$T/sf.cnf"
check "stats_file and CHAPOLY_STATS_FILE: the environment's file is written" \
    grep -q "$STATLINE" "$T/env-sf.stats"
check "stats_file and CHAPOLY_STATS_FILE: stats_file is not" [ "$(ls "$T" | grep -c "^sf-")" -eq 1 ]
mkcnf "$T/sfoff.cnf" "stats_file = $T/sfoff.stats"
cseal "$T/sfoff.cnf"
check "stats_file without stats = 1: no file" absent "$T/sfoff.stats"
printf 'keep\n' > "$T/sftarget"
ln -s "$T/sftarget" "$T/sflink"
mkcnf "$T/sflink.cnf" "stats = 1" "stats_file = $T/sflink"
cseal "$T/sflink.cnf"
check "stats_file naming a symlink: target untouched" [ "$(cat "$T/sftarget")" = keep ]
check "stats_file naming a symlink: still a symlink" [ -L "$T/sflink" ]

CHAPOLY_KERNEL=avx521 bounded 30 "$OSSL" list -providers -provider-path "$MODS" \
    -provider chapoly > "$T/envk.out" 2> "$T/envk.err"
check "CHAPOLY_KERNEL=avx521: list -providers runs" [ $? -eq 0 ]
check "CHAPOLY_KERNEL=avx521: chapoly active" active envk
check "CHAPOLY_KERNEL=avx521: stderr names the variable and the level" lines 1 \
    'chapoly: CHAPOLY_KERNEL: unknown kernel level "avx521" (known: best' "$T/envk.err"
CHAPOLY_KERNEL=avx521 seal --two-contexts > /dev/null 2> "$T/twice.err"
check "two chapoly instances: deploy_seal runs" [ $? -eq 0 ]
check "two chapoly instances: the unknown level is reported once per process" \
    lines 1 'unknown kernel level "avx521"' "$T/twice.err"
CHAPOLY_STATS=maybe seal > /dev/null 2> "$T/envs.err"
check "CHAPOLY_STATS=maybe: reported, naming the variable" \
    lines 1 'chapoly: CHAPOLY_STATS: unrecognised value "maybe"' "$T/envs.err"

# Long values: every mistake's line quotes at most 64 characters of the value
# (of a key: 500 characters, since libcrypto drops a section with a key of
# 1000 and never loads chapoly).
big=$(head -c 100000 /dev/zero | tr '\0' A)
cut="\"$(printf '%.61s' "$big")...\""
# short FILE: FILE has a line and no line of it is longer than 256 bytes
short() { [ -s "$1" ] && [ "$(awk '{ if (length($0) > m) m = length($0) } END { print m + 0 }' "$1")" -le 256 ]; }
# bigenv NAME VAR: list -providers with VAR=$big in the environment
bigenv() {
    env "$2=$big" "$OSSL" list -providers -provider-path "$MODS" -provider chapoly \
        > "$T/$1.out" 2> "$T/$1.err"
}
bigenv bigk CHAPOLY_KERNEL
check "CHAPOLY_KERNEL of 100 KB: chapoly active" active bigk
check "CHAPOLY_KERNEL of 100 KB: its first 61 characters and ... quoted" lines 1 \
    "chapoly: CHAPOLY_KERNEL: unknown kernel level $cut (known: best" "$T/bigk.err"
check "CHAPOLY_KERNEL of 100 KB: stderr lines of at most 256 bytes ($(wc -c < "$T/bigk.err") bytes)" \
    short "$T/bigk.err"
bigenv bigp CHAPOLY_PATHS
check "CHAPOLY_PATHS of 100 KB: chapoly active" active bigp
check "CHAPOLY_PATHS of 100 KB: its first 61 characters and ... quoted" lines 1 \
    "chapoly: CHAPOLY_PATHS $cut: a forced path" "$T/bigp.err"
check "CHAPOLY_PATHS of 100 KB: stderr lines of at most 256 bytes ($(wc -c < "$T/bigp.err") bytes)" \
    short "$T/bigp.err"
CHAPOLY_STATS=$big seal > /dev/null 2> "$T/bigs.err"
check "CHAPOLY_STATS of 100 KB: quoted short" lines 1 "chapoly: CHAPOLY_STATS: unrecognised value $cut" \
    "$T/bigs.err"
check "CHAPOLY_STATS of 100 KB: stderr lines of at most 256 bytes" short "$T/bigs.err"
for kv in "kernel = $big:config key \"kernel\": unknown kernel level $cut" \
    "paths = $big:config key \"paths\" $cut: a forced path" \
    "stats = $big:config key \"stats\": unrecognised value $cut" \
    "serve = $big:config key \"serve\": unrecognised value $cut" \
    "$(printf '%.500s' "$big") = 1:unknown key $cut in config section [chapoly_sect]"; do
    key=$(printf '%.8s' "${kv%% *}")
    mkcnf "$T/big.cnf" "${kv%%:*}"
    listp bigc "$T/big.cnf"
    check "config ${key}... of 100 KB: chapoly active" active bigc
    check "config ${key}... of 100 KB: quoted in 64 characters" lines 1 "chapoly: ${kv#*:}" "$T/bigc.err"
    check "config ${key}... of 100 KB: stderr lines of at most 256 bytes ($(wc -c < "$T/bigc.err") bytes)" \
        short "$T/bigc.err"
done
# The edge: 64 characters are quoted whole, 65 cut.
v64=$(printf '%.64s' "$big")
CHAPOLY_KERNEL=$v64 seal > /dev/null 2> "$T/k64.err"
check "CHAPOLY_KERNEL of 64 characters: quoted whole" lines 1 "unknown kernel level \"$v64\" (" "$T/k64.err"
CHAPOLY_KERNEL=${v64}B seal > /dev/null 2> "$T/k65.err"
check "CHAPOLY_KERNEL of 65 characters: its first 61 and ..." lines 1 "unknown kernel level $cut (" \
    "$T/k65.err"
# Control characters: an escape sequence is not passed to the terminal.
CHAPOLY_KERNEL=$(printf 'x\033[2J\ty') seal > /dev/null 2> "$T/kesc.err"
check "CHAPOLY_KERNEL with ESC and TAB: quoted with ? for each" lines 1 \
    'unknown kernel level "x?[2J?y"' "$T/kesc.err"
check "CHAPOLY_KERNEL with ESC: no ESC byte on stderr" sh -c '! grep -q "$(printf "\033")" "$1"' _ "$T/kesc.err"

# --- D. buildinfo names the kernel level ----------------------------------------

# binfo: the chapoly block's "build info" line of list -providers -verbose
binfo() {
    "$OSSL" list -providers -verbose -provider-path "$MODS" -provider chapoly 2> /dev/null |
        awk '/^  [^ ]/ { inblk = ($1 == "chapoly") } inblk && /build info:/'
}
b=$(binfo)
check "buildinfo names the best level '$BEST' ($b)" \
    eval 'case $b in *"kernel $BEST: "*) true ;; *) false ;; esac'
for lv in portable:'portable C' avx2:'AVX2 BMI2' avx512vl:'AVX-512F/VL/BW/DQ' \
    avx512-noifma:'AVX-512F/VL/BW/DQ' avx512:'AVX-512F/VL/BW/DQ IFMA' neon:'Advanced SIMD'; do
    level=${lv%%:*}
    feat=${lv#*:}
    if [ -n "${CHAPOLY_LEVEL_PROBE:-}" ] && ! "$CHAPOLY_LEVEL_PROBE" "$level" > /dev/null; then
        continue
    fi
    b=$(CHAPOLY_KERNEL=$level binfo)
    check "CHAPOLY_KERNEL=$level: buildinfo says 'kernel $level: ...$feat' ($b)" \
        eval 'case $b in *"kernel $level: "*"$feat"*) true ;; *) false ;; esac'
done

# OPENSSL_ia32cap, as libcrypto reads it, masks chapoly's levels too.
runs() { [ -n "${CHAPOLY_LEVEL_PROBE:-}" ] && "$CHAPOLY_LEVEL_PROBE" "$1" > /dev/null; }
has_kernel() { case $1 in *"kernel $2: "*) true ;; *) false ;; esac; }
if runs avx2; then
    b=$(OPENSSL_ia32cap=:~0x20 binfo)
    check "OPENSSL_ia32cap=:~0x20 (AVX2 masked) on an AVX2 CPU: kernel portable ($b)" has_kernel "$b" portable
    OPENSSL_ia32cap=:~0x20 bounded 30 "$OSSL" list -cipher-algorithms -provider-path "$MODS" \
        -provider chapoly -provider default > "$T/mask.algs" 2>&1
    check "OPENSSL_ia32cap=:~0x20: chapoly serves XChaCha20-Poly1305" grep -q 'XChaCha20-Poly1305 @ chapoly' \
        "$T/mask.algs"
    check "OPENSSL_ia32cap=:~0x20: chapoly leaves ChaCha20-Poly1305 to the default provider" \
        sh -c '! grep -Eq "(^|[^X])ChaCha20-Poly1305 @ chapoly" "$1"' _ "$T/mask.algs"
    b=$(OPENSSL_ia32cap='~0x1000000000000000:~0' binfo)
    check "OPENSSL_ia32cap=~0x1000000000000000:~0 (AVX masked): kernel portable ($b)" has_kernel "$b" portable
    b=$(OPENSSL_ia32cap=':~0x1' binfo)
    check "OPENSSL_ia32cap=:~0x1 (nothing chapoly uses): kernel $BEST ($b)" has_kernel "$b" "$BEST"
fi
if runs avx512vl; then
    b=$(OPENSSL_ia32cap=:~0xC0230000 binfo)
    check "OPENSSL_ia32cap=:~0xC0230000 (AVX-512 masked) on an AVX-512 CPU: kernel avx2 ($b)" has_kernel "$b" avx2
    b=$(OPENSSL_ia32cap=:~0x10000 binfo)
    check "OPENSSL_ia32cap=:~0x10000 (AVX512F masked: no zmm code): kernel avx512vl ($b)" has_kernel "$b" avx512vl
    OPENSSL_ia32cap=:~0xC0230000 CHAPOLY_KERNEL=avx512 bounded 30 "$OSSL" list -providers -verbose \
        -provider-path "$MODS" -provider chapoly > "$T/mask512.out" 2> "$T/mask512.err"
    check "CHAPOLY_KERNEL=avx512 with AVX-512 masked: refused with the usual warning" lines 1 \
        'chapoly: CHAPOLY_KERNEL: kernel "avx512": requested kernel level is not available on this CPU or not compiled in; using the best available (avx2)' \
        "$T/mask512.err"
    check "CHAPOLY_KERNEL=avx512 with AVX-512 masked: nothing else on stderr" [ "$(wc -l < "$T/mask512.err")" -eq 1 ]
    check "CHAPOLY_KERNEL=avx512 with AVX-512 masked: falls back to avx2" \
        grep -q 'build info: .*kernel avx2: ' "$T/mask512.out"
fi
if runs avx512; then
    b=$(OPENSSL_ia32cap=:~0x200000 binfo)
    check "OPENSSL_ia32cap=:~0x200000 (IFMA masked) on an IFMA CPU: kernel avx512-noifma ($b)" \
        has_kernel "$b" avx512-noifma
fi

# --- E. no build paths in error lines -------------------------------------------

# CHAPOLY_KERNEL=portable: chapoly serves POLY1305 at every level asked for by
# name (by default a portable-only CPU leaves it to the default provider).
CHAPOLY_KERNEL=portable "$OSSL" mac -provider-path "$MODS" -provider chapoly -macopt hexkey:00 POLY1305 \
    < /dev/null > /dev/null 2> "$T/macerr"
check "a 1-byte POLY1305 key is refused" [ $? -ne 0 ]
check "the error line names chapoly's source file relative to the tree" \
    grep -q ':provider/macs/poly1305_mac\.c:[0-9]' "$T/macerr"
check "the error line does not contain the source directory $SRC" lines 0 "$SRC/" "$T/macerr"

# --- B. setuid root, run by nobody -------------------------------------------------

skip=
if [ "$(id -u)" != 0 ]; then
    skip="not root (the setuid checks need root to make a setuid-root copy)"
elif ! command -v setpriv > /dev/null 2>&1; then
    skip="setpriv not found (util-linux)"
elif ! id nobody > /dev/null 2>&1; then
    skip="no user nobody"
else
    NGROUP=$(id -gn nobody)
    asnobody() { bounded 30 setpriv --reuid=nobody --regid="$NGROUP" --clear-groups "$@"; }
    # A directory where a setuid-root copy of id(1) run by nobody reports
    # euid 0: the file system honours setuid and nobody can reach it.
    for base in ${BUILD:+"$BUILD"} "${TMPDIR:-/tmp}" /var/tmp; do
        [ -d "$base" ] || continue
        S=$(mktemp -d "$base/chapoly-suid.XXXXXX") || { S=; continue; }
        chmod 755 "$S"
        cp "$(command -v id)" "$S/probe" && chown root:root "$S/probe" && chmod 4755 "$S/probe"
        if [ "$(asnobody "$S/probe" -u 2> /dev/null)" = 0 ]; then
            break
        fi
        rm -rf "$S"
        S=
    done
    [ -n "$S" ] || skip="no directory where a setuid-root program run by nobody gets euid 0 (nosuid mounts, or paths nobody cannot traverse)"
fi
if [ -z "$skip" ]; then
    cp "$SEAL" "$S/deploy_seal"
    chown root:root "$S/deploy_seal"
    chmod 4755 "$S/deploy_seal"
    mkdir "$S/rootonly"
    chmod 700 "$S/rootonly"
    asnobody sh -c ": > '$S/rootonly/by-nobody'" 2> /dev/null
    check "setup: nobody cannot create files in the root-only directory" absent "$S/rootonly/by-nobody"

    CHAPOLY_STATS=1 CHAPOLY_STATS_FILE=$S/rootonly/stats \
        asnobody "$S/deploy_seal" "$MODS" > "$T/suid.out" 2> "$T/suid.err"
    rc=$?
    check "setuid as nobody: deploy_seal loads chapoly and seals (exit $rc)" [ $rc -eq 0 ]
    [ $rc -eq 0 ] || sed 's/^/  /' "$T/suid.err" >&2
    check "setuid as nobody: CHAPOLY_STATS_FILE in a root-only directory not created" \
        absent "$S/rootonly/stats"
    check "setuid as nobody: nothing on stderr" empty "$T/suid.err"

    # Control: the same copy run by root itself does write there.
    CHAPOLY_STATS=1 CHAPOLY_STATS_FILE=$S/rootonly/control \
        "$S/deploy_seal" "$MODS" > /dev/null 2>&1
    check "control: run by root, the same program writes the stats file" \
        grep -q "$STATLINE" "$S/rootonly/control"

    # The kernel level and config diagnostics from the environment are ignored too.
    if [ "$BEST" != portable ]; then
        CHAPOLY_KERNEL=portable seal > "$T/k.out" 2> /dev/null
        check "control: CHAPOLY_KERNEL=portable applies to a normal process" \
            grep -q '^chapoly-kernel: portable$' "$T/k.out"
        CHAPOLY_KERNEL=portable asnobody "$S/deploy_seal" "$MODS" \
            > "$T/k.out" 2> /dev/null
        check "setuid as nobody: CHAPOLY_KERNEL ignored (level $(sed -n 's/^chapoly-kernel: //p' "$T/k.out"), best $BEST)" \
            grep -q "^chapoly-kernel: $BEST\$" "$T/k.out"
    fi
    CHAPOLY_KERNEL=avx521 CHAPOLY_STATS=maybe asnobody "$S/deploy_seal" "$MODS" \
        > /dev/null 2> "$T/k.err"
    check "setuid as nobody: bad CHAPOLY_KERNEL/CHAPOLY_STATS ignored, nothing printed" empty "$T/k.err"
fi

echo "test_deploy.sh: $((pass + fail)) checks"
echo "$pass passed, $fail failed"
if [ "$fail" -ne 0 ] || [ "$pass" -eq 0 ]; then
    exit 1
fi
if [ -n "$skip" ]; then
    echo "setuid checks skipped: $skip"
    # scripts/test-all.sh installs setpriv: there only not being root is a skip
    case "$skip" in
    "setpriv not found"*)
        [ "${CHAPOLY_REQUIRE_TOOLS:-0}" = 1 ] && { echo "FAIL: CHAPOLY_REQUIRE_TOOLS=1"; exit 1; } ;;
    esac
    exit 77
fi
exit 0
