#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The openssl command line with chapoly: registration (list), the ChaCha20
# stream cipher through `enc`, POLY1305 through `mac`, and the same through an
# openssl.cnf that prefers chapoly. Oracles: the default provider's output for
# the same inputs, RFC 8439 section 2.5.2, and the interface brief's enc
# known answer.
#
# Environment (CTest): OPENSSL_PROGRAM, OPENSSL_MODULES (dir of chapoly.so),
# CHAPOLY_MODULE (its full path), CHAPOLY_KERNEL (level under test; exit 77
# when this CPU lacks it), CHAPOLY_SOURCE_DIR, OPENSSL_CONF=/dev/null.
# Prints "N passed, N failed"; exits nonzero on any failure.

set -u

OSSL=${OPENSSL_PROGRAM:-openssl}
MODS=${OPENSSL_MODULES:?OPENSSL_MODULES must name the directory of chapoly.so}
MODULE=${CHAPOLY_MODULE:-$MODS/chapoly.so}
KERNEL=${CHAPOLY_KERNEL:-best}
HERE=$(cd "$(dirname "$0")" && pwd)
TEMPLATE=${CHAPOLY_SOURCE_DIR:+$CHAPOLY_SOURCE_DIR/test/common/}chapoly-test.cnf.in
[ -f "$TEMPLATE" ] || TEMPLATE=$HERE/../common/chapoly-test.cnf.in
# Without a config, openssl uses only what the command line loads; the
# default-provider reference runs rely on that.
OPENSSL_CONF=${OPENSSL_CONF:-/dev/null}
export OPENSSL_CONF
# Statistics must come from the config key `stats = 1`, not from the caller.
unset CHAPOLY_STATS CHAPOLY_STATS_FILE

. "$(dirname "$0")/../common/check.sh"

# Skip a level this CPU lacks, decided by the same dispatch code as the module.
if [ -n "${CHAPOLY_LEVEL_PROBE:-}" ]; then
    "$CHAPOLY_LEVEL_PROBE" "$KERNEL" || exit 77
fi
if [ ! -f "$MODULE" ]; then
    echo "FAIL: module $MODULE missing" >&2
    echo "0 passed, 1 failed"
    exit 1
fi

T=$(mktemp -d "${TMPDIR:-/tmp}/chapoly-cli.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
trap 'exit 130' INT TERM

# A tree configured for an OpenSSL (CHAPOLY_EXPECT_OPENSSL=3.5) drives that
# version's openssl command, not the system's.
if [ -n "${CHAPOLY_EXPECT_OPENSSL:-}" ]; then
    v=$("$OSSL" version 2> /dev/null | sed -n 's/^OpenSSL \([0-9]*\)\.\([0-9]*\)\..*/\1 \2/p')
    want="${CHAPOLY_EXPECT_OPENSSL%%.*} ${CHAPOLY_EXPECT_OPENSSL#*.}"
    check "openssl version '$v' is at least $CHAPOLY_EXPECT_OPENSSL" \
        awk -v v="$v" -v w="$want" 'BEGIN { split(v, a); split(w, b);
            exit !(v != "" && (a[1] > b[1] || (a[1] == b[1] && a[2] >= b[2]))) }'
fi

# ours CMD ARGS...: only chapoly loaded (no default to fall back on).
ours() {
    c=$1
    shift
    "$OSSL" "$c" -provider-path "$MODS" -provider chapoly "$@"
}
# mixed CMD ARGS...: default and chapoly loaded, chapoly preferred.
mixed() {
    c=$1
    shift
    "$OSSL" "$c" -provider-path "$MODS" -provider default -provider chapoly \
        -propquery '?provider=chapoly' "$@"
}
# forced CMD ARGS...: default and chapoly loaded, chapoly mandatory.
forced() {
    c=$1
    shift
    "$OSSL" "$c" -provider-path "$MODS" -provider default -provider chapoly \
        -propquery 'provider=chapoly' "$@"
}
# ref CMD ARGS...: the default provider only (OPENSSL_CONF=/dev/null).
ref() {
    "$OSSL" "$@"
}
# same A B: both non-empty and equal
same() { [ -n "$1" ] && [ "$1" = "$2" ]; }
# atleast N V: V is a decimal number >= N
atleast() {
    case $2 in '' | *[!0-9]*) return 1 ;; esac
    [ "$2" -ge "$1" ]
}
absent() { ! grep -q "$1" "$2"; }
# bounded SECONDS CMD...: timeout(1) where available
bounded() {
    _secs=$1
    shift
    if command -v timeout > /dev/null 2>&1; then timeout "$_secs" "$@"; else "$@"; fi
}
hex() { od -An -v -tx1 "$1" | tr -d ' \n'; }
randhex() { "$OSSL" rand -hex "$1"; }
# listed FILE NAME PROVIDER: an algorithm line "NAME @ PROVIDER", the name
# possibly inside an alias list "{ a, NAME, b } @ PROVIDER".
listed() {
    grep -Eq "(^|[ {,])$2([ ,}]|\$).*@ $3\$" "$1"
}

# --- registration ---------------------------------------------------------

ours list -cipher-algorithms > "$T/ciphers" 2> "$T/err"
check "list -cipher-algorithms with -provider chapoly runs" [ $? -eq 0 ]
for a in ChaCha20-Poly1305 ChaCha20 XChaCha20-Poly1305; do
    check "cipher $a @ chapoly listed" listed "$T/ciphers" "$a" chapoly
done
check "only chapoly loaded: no @ default ciphers" absent '@ default' "$T/ciphers"
ours list -mac-algorithms > "$T/macs" 2> "$T/err"
check "list -mac-algorithms with -provider chapoly runs" [ $? -eq 0 ]
check "mac POLY1305 @ chapoly listed" listed "$T/macs" POLY1305 chapoly

"$OSSL" list -providers -verbose -provider-path "$MODS" -provider default \
    -provider chapoly > "$T/providers" 2> "$T/err"
check "list -providers -verbose runs" [ $? -eq 0 ]
# the chapoly block: from "  chapoly" to the next two-space-indented name
awk '/^  [^ ]/ { inblk = ($1 == "chapoly") } inblk' "$T/providers" > "$T/chapoly-block"
check "list -providers shows chapoly" grep -q '^  chapoly$' "$T/chapoly-block"
check "chapoly status: active" grep -q 'status: active' "$T/chapoly-block"
# Which build of the module was loaded (test/compat: "(OpenSSL 3.0." headers).
if [ -n "${CHAPOLY_EXPECT_BUILDINFO:-}" ]; then
    check "chapoly buildinfo names '$CHAPOLY_EXPECT_BUILDINFO'" \
        grep -qF -- "$CHAPOLY_EXPECT_BUILDINFO" "$T/chapoly-block"
fi
for p in name version buildinfo status chapoly-kernel chapoly-aead-messages chapoly-aead-seals \
    chapoly-aead-opens chapoly-tls-records chapoly-chacha20-calls chapoly-chacha20-bytes \
    chapoly-poly1305-macs chapoly-pipeline-batches; do
    check "gettable provider parameter $p listed" grep -Eq "^ +$p: " "$T/chapoly-block"
done

# --- enc -chacha20 ----------------------------------------------------------

Z64=0000000000000000000000000000000000000000000000000000000000000000
Z32=00000000000000000000000000000000

printf hello > "$T/in.hello"
: > "$T/in.empty"
for n in 1 63 64 65 4097; do
    "$OSSL" rand -out "$T/in.$n" "$n"
done
"$OSSL" rand -out "$T/in.1m" 1048583

ours enc -chacha20 -K "$Z64" -iv "$Z32" -in "$T/in.hello" -out "$T/kat" 2> "$T/err"
check "enc -chacha20 via chapoly alone (hello) runs" [ $? -eq 0 ]
check "enc -chacha20 key 0 iv 0 'hello' = 1edd8cc1cf" [ "$(hex "$T/kat")" = 1edd8cc1cf ]
mixed enc -chacha20 -K "$Z64" -iv "$Z32" -in "$T/in.hello" -out "$T/kat2" 2> "$T/err"
check "enc -chacha20 default+chapoly ?provider=chapoly 'hello' = 1edd8cc1cf" \
    [ "$(hex "$T/kat2")" = 1edd8cc1cf ]

# Proof that the chapoly-alone runs had nothing to fall back on.
ours enc -aes-128-ctr -K "$Z32" -iv "$Z32" -in "$T/in.hello" -out "$T/aes" 2> "$T/err"
check "enc -aes-128-ctr fails with only chapoly loaded" [ $? -ne 0 ]

# key/iv sets: zero, random, and a block counter of 0xffffffff (LE) so the
# counter wraps after the first block and carries like the default provider.
K1=$(randhex 32)
I1=$(randhex 16)
K2=$(randhex 32)
I2=ffffffff$(randhex 12)
set -- "$Z64:$Z32" "$K1:$I1" "$K2:$I2"
for kv in "$@"; do
    k=${kv%%:*}
    iv=${kv#*:}
    for f in empty hello 1 63 64 65 4097 1m; do
        in=$T/in.$f
        # every input with the random key; a few with the others
        case $k:$f in
        "$K1":*) ;;
        "$Z64":empty | "$Z64":hello | "$Z64":64 | "$Z64":4097) ;;
        "$K2":65 | "$K2":4097) ;;
        *) continue ;;
        esac
        ref enc -chacha20 -K "$k" -iv "$iv" -in "$in" -out "$T/ref" 2> "$T/err" ||
            bad "default provider enc failed (iv $iv, $f)"
        for how in ours mixed forced; do
            rm -f "$T/ct" "$T/pt"
            $how enc -chacha20 -K "$k" -iv "$iv" -in "$in" -out "$T/ct" 2> "$T/err"
            check "enc -chacha20 ($how, iv $iv, input $f) runs" [ $? -eq 0 ]
            check "enc -chacha20 ($how, iv $iv, input $f) = default provider" cmp -s "$T/ct" "$T/ref"
        done
        # decryption is the same keystream; once per input is enough
        ours enc -d -chacha20 -K "$k" -iv "$iv" -in "$T/ref" -out "$T/pt" 2> "$T/err"
        check "enc -d -chacha20 (ours, iv $iv, input $f) decrypts back" cmp -s "$T/pt" "$in"
    done
done

# --- mac POLY1305 -------------------------------------------------------------

RFCKEY=85d6be7857556d337f4452fe42d506a80103808afb0db2fd4abff6af4149f51b
printf 'Cryptographic Forum Research Group' > "$T/rfcmsg"
for how in ours mixed forced; do
    out=$($how mac -macopt "hexkey:$RFCKEY" -in "$T/rfcmsg" POLY1305 2> "$T/err")
    check "mac POLY1305 ($how) RFC 8439 2.5.2 tag (got '$out')" \
        [ "$out" = A8061DC1305136C6C22B8BAF0C0127A9 ]
done
MK=$(randhex 32)
for f in empty hello 1 63 64 65 4097 1m; do
    want=$(ref mac -macopt "hexkey:$MK" -in "$T/in.$f" POLY1305 2> "$T/err")
    [ -n "$want" ] || bad "default provider mac failed (input $f)"
    for how in ours mixed; do
        got=$($how mac -macopt "hexkey:$MK" -in "$T/in.$f" POLY1305 2> "$T/err")
        check "mac POLY1305 ($how, input $f) = default provider ($got vs $want)" \
            same "$got" "$want"
    done
done
# A 31-byte key is not a Poly1305 key: default refuses it, so must chapoly.
SHORTKEY=$(randhex 31)
ref mac -macopt "hexkey:$SHORTKEY" -in "$T/rfcmsg" POLY1305 > /dev/null 2>&1
check "control: default provider rejects a 31-byte POLY1305 key" [ $? -ne 0 ]
ours mac -macopt "hexkey:$SHORTKEY" -in "$T/rfcmsg" POLY1305 > "$T/out" 2> "$T/err"
check "chapoly rejects a 31-byte POLY1305 key" [ $? -ne 0 ]

# --- through openssl.cnf ---------------------------------------------------------

# mkconf OUT DEFAULT_PROPERTIES [MODULE]
mkconf() {
    if [ "$KERNEL" = best ]; then kl="# kernel: best available"; else kl="kernel = $KERNEL"; fi
    sed -e "s|@CHAPOLY_MODULE@|${3:-$MODULE}|" -e "s|@DEFAULT_PROPERTIES@|$2|" \
        -e "s|@KERNEL@|$kl|" "$TEMPLATE" > "$1"
}
mkconf "$T/chapoly.cnf" '?provider=chapoly'
mkconf "$T/default.cnf" '?provider=default'
# A module that fails to load is skipped silently by OpenSSL 3.0.19 even with
# config_diagnostics = 1, so every config run below is only meaningful because
# this listing shows chapoly active under the same config.
OPENSSL_CONF=$T/chapoly.cnf "$OSSL" list -providers > "$T/providers" 2> "$T/err"
check "config: list -providers runs" [ $? -eq 0 ]
check "config: chapoly provider active" grep -q '^  chapoly$' "$T/providers"
check "config: default provider active" grep -q '^  default$' "$T/providers"
OPENSSL_CONF=$T/chapoly.cnf "$OSSL" list -cipher-algorithms > "$T/ciphers" 2> "$T/err"
for a in ChaCha20-Poly1305 ChaCha20 XChaCha20-Poly1305; do
    check "config: cipher $a @ chapoly listed" listed "$T/ciphers" "$a" chapoly
done

for f in empty hello 4097 1m; do
    ref enc -chacha20 -K "$K1" -iv "$I1" -in "$T/in.$f" -out "$T/ref" 2> "$T/err"
    OPENSSL_CONF=$T/chapoly.cnf "$OSSL" enc -chacha20 -K "$K1" -iv "$I1" -in "$T/in.$f" \
        -out "$T/ct" 2> "$T/err"
    check "config: enc -chacha20 (input $f) = default provider" cmp -s "$T/ct" "$T/ref"
    OPENSSL_CONF=$T/chapoly.cnf "$OSSL" enc -d -chacha20 -K "$K1" -iv "$I1" -in "$T/ct" \
        -out "$T/pt" 2> "$T/err"
    check "config: enc -d -chacha20 (input $f) decrypts back" cmp -s "$T/pt" "$T/in.$f"
done
OPENSSL_CONF=$T/chapoly.cnf "$OSSL" mac -macopt "hexkey:$RFCKEY" -in "$T/rfcmsg" POLY1305 \
    > "$T/out" 2> "$T/err"
check "config: mac POLY1305 RFC 8439 tag" [ "$(cat "$T/out")" = A8061DC1305136C6C22B8BAF0C0127A9 ]

# enc cannot do AEAD; `speed -evp chacha20-poly1305` finishes its one AEAD
# message with EVP_EncryptFinal_ex, which the stats (stats = 1 in the config)
# count in the file written at provider teardown.
# aead_in FILE: chapoly-aead-messages of the last stats line, or "none".
aead_in() {
    v=$(sed -n 's/.*chapoly-aead-messages=\([0-9][0-9]*\).*/\1/p' "$1" 2> /dev/null | tail -n 1)
    echo "${v:-none}"
}
for cnf in chapoly default; do
    rm -f "$T/stats.$cnf"
    OPENSSL_CONF=$T/$cnf.cnf CHAPOLY_STATS_FILE=$T/stats.$cnf bounded 60 "$OSSL" speed \
        -seconds 1 -bytes 1024 -evp chacha20-poly1305 > "$T/speed.$cnf" 2> "$T/err"
    check "config ($cnf): speed -evp chacha20-poly1305 runs" [ $? -eq 0 ]
done
n=$(aead_in "$T/stats.chapoly")
check "config ?provider=chapoly: speed's AEAD message counted by chapoly (stats file: $n)" \
    atleast 1 "$n"
n=$(aead_in "$T/stats.default")
check "config ?provider=default: chapoly loaded with stats but counted nothing, so wrote no line (stats file: $n)" \
    [ "$n" = none ]

echo "test_cli.sh [kernel $KERNEL]: $((pass + fail)) checks"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
