#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# openssl.cnf.example, used verbatim, must activate chapoly next to default and
# make chapoly serve ChaCha20-Poly1305 (or, where the best kernel level is
# portable, leave it to the default provider and serve XChaCha20-Poly1305:
# the default serving policy), once chapoly.so sits in OpenSSL's
# module directory (where `cmake --install` puts it). OPENSSL_MODULES, which
# CTest sets to the build's module directory, stands in for that directory:
# OpenSSL looks there instead of its built-in MODULESDIR. A module line with
# a path that does not exist would make OpenSSL 3.0 skip chapoly silently;
# this test catches that. Also checked: the same file appended to the end of
# a Debian-style system openssl.cnf (which already sets openssl_conf and has
# an [openssl_init] section).
#
# Environment (CTest): OPENSSL_PROGRAM, OPENSSL_MODULES, CHAPOLY_SOURCE_DIR,
# CHAPOLY_LEVEL_PROBE (which SIMD levels this CPU runs in this build).
# Prints "N passed, N failed"; exits nonzero on any failure.

set -u

OSSL=${OPENSSL_PROGRAM:-openssl}
MODS=${OPENSSL_MODULES:?OPENSSL_MODULES must name the directory of chapoly.so}
SRC=${CHAPOLY_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
EXAMPLE=$SRC/openssl.cnf.example
unset CHAPOLY_STATS CHAPOLY_STATS_FILE CHAPOLY_KERNEL

. "$(dirname "$0")/../common/check.sh"

if [ ! -f "$MODS/chapoly.so" ]; then
    echo "FAIL: $MODS/chapoly.so missing" >&2
    echo "0 passed, 1 failed"
    exit 1
fi
T=$(mktemp -d "${TMPDIR:-/tmp}/chapoly-cnf.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
trap 'exit 130' INT TERM

# active NAME FILE: `openssl list -providers` output FILE shows provider NAME
# with "status: active".
active() {
    awk -v name="$1" '
        /^  [^ ]/ { cur = $1 }
        cur == name && $1 == "status:" && $2 == "active" { found = 1 }
        END { exit !found }' "$2"
}

# A Debian-style system file: openssl_conf set at the top, an [openssl_init]
# section of its own, and other sections after it.
cat > "$T/system.cnf" << 'EOF'
HOME = .
openssl_conf = openssl_init
[openssl_init]
# providers = provider_sect
[ req ]
distinguished_name = req_distinguished_name
[ req_distinguished_name ]
EOF
cat "$T/system.cnf" "$EXAMPLE" > "$T/appended.cnf"

# Does a SIMD kernel level run here? Only then does chapoly serve
# ChaCha20-Poly1305 by default.
simd=0
if [ -n "${CHAPOLY_LEVEL_PROBE:-}" ]; then
    for lv in $("$CHAPOLY_LEVEL_PROBE" --list); do
        if [ "$lv" != portable ] && "$CHAPOLY_LEVEL_PROBE" "$lv" > /dev/null 2>&1; then
            simd=1
        fi
    done
fi
[ -n "${CHAPOLY_LEVEL_PROBE:-}" ] || echo "CHAPOLY_LEVEL_PROBE unset: assuming no SIMD level"

for cnf in "$EXAMPLE" "$T/appended.cnf"; do
    what=$(basename "$cnf")
    OPENSSL_CONF=$cnf OPENSSL_MODULES=$MODS "$OSSL" list -providers > "$T/list" 2> "$T/err"
    check "$what: openssl list -providers exits 0" [ $? -eq 0 ]
    check "$what: no error output ($(head -c 300 "$T/err"))" [ ! -s "$T/err" ]
    check "$what: chapoly is listed as active" active chapoly "$T/list"
    check "$what: default is listed as active" active default "$T/list"
    # default_properties = ?provider=chapoly: a plain fetch of
    # ChaCha20-Poly1305 (here by openssl speed) lands in chapoly, whose
    # counters (CHAPOLY_STATS=1) record it.
    rm -f "$T/stats"
    CHAPOLY_STATS=1 CHAPOLY_STATS_FILE=$T/stats OPENSSL_CONF=$cnf OPENSSL_MODULES=$MODS \
        "$OSSL" speed -evp chacha20-poly1305 -seconds 1 -bytes 64 > "$T/speed" 2>&1
    check "$what: openssl speed -evp chacha20-poly1305 runs" [ $? -eq 0 ]
    n=$(sed -n 's/.*chapoly-aead-messages=\([0-9][0-9]*\).*/\1/p' "$T/stats" 2> /dev/null | head -n 1)
    OPENSSL_CONF=$cnf OPENSSL_MODULES=$MODS "$OSSL" list -providers -verbose > "$T/info" 2>&1
    note=$(grep -c 'serving XChaCha20-Poly1305 only' "$T/info")
    if [ "$simd" = 1 ]; then
        check "$what: ChaCha20-Poly1305 was served by chapoly (counters: ${n:-none})" \
            [ "${n:-0}" -ge 1 ]
        check "$what: buildinfo does not limit what chapoly serves" [ "$note" -eq 0 ]
    else
        # portable only: the default provider serves ChaCha20-Poly1305
        # chapoly counted nothing, so it wrote no line
        check "$what: portable level: ChaCha20-Poly1305 left to default (counters: ${n:-none})" \
            [ -z "$n" ]
        check "$what: portable level: buildinfo says so once" [ "$note" -eq 1 ]
        OPENSSL_CONF=$cnf OPENSSL_MODULES=$MODS "$OSSL" list -cipher-algorithms > "$T/algs" 2>&1
        check "$what: portable level: XChaCha20-Poly1305 still from chapoly" \
            grep -q 'XChaCha20-Poly1305 @ chapoly' "$T/algs"
    fi
done

if [ "$fail" -ne 0 ]; then
    echo "--- $EXAMPLE, [chapoly_sect]:" >&2
    sed -n '/^\[chapoly_sect\]/,/^\[/p' "$EXAMPLE" >&2
fi
echo "test_cnf_example"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
