#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# TLS between two separate processes, `openssl s_server` and `openssl
# s_client` on 127.0.0.1, configured only through an openssl.cnf that
# activates default and chapoly (module = CHAPOLY_MODULE, stats = 1) and sets
# default_properties = ?provider=chapoly. Each process names its own
# CHAPOLY_STATS_FILE; chapoly appends its counters there at teardown, which is
# the proof that chapoly sealed/opened records on both sides: TLS 1.3 records
# are AEAD messages (chapoly-aead-messages), TLS 1.2 records go through record
# mode (chapoly-tls-records). A control run with ?provider=default must leave
# both counters at 0, so neither process writes a line (a process that
# counted nothing writes none).
#
# Data check: s_server -rev echoes each line reversed; the client sends a
# known payload and compares what comes back with the reversal done by awk.
#
# Environment (CTest): OPENSSL_PROGRAM, OPENSSL_MODULES, CHAPOLY_MODULE,
# CHAPOLY_KERNEL (exit 77 when this CPU lacks the level), CHAPOLY_SOURCE_DIR.
# Prints "N passed, N failed"; exits nonzero on any failure. KEEP_T=1 keeps
# the temporary directory (certificate, configs, per-run logs) for debugging.

set -u

OSSL=${OPENSSL_PROGRAM:-openssl}
MODS=${OPENSSL_MODULES:-}
MODULE=${CHAPOLY_MODULE:-$MODS/chapoly.so}
KERNEL=${CHAPOLY_KERNEL:-best}
HERE=$(cd "$(dirname "$0")" && pwd)
TEMPLATE=${CHAPOLY_SOURCE_DIR:+$CHAPOLY_SOURCE_DIR/test/common/}chapoly-test.cnf.in
[ -f "$TEMPLATE" ] || TEMPLATE=$HERE/../common/chapoly-test.cnf.in
# Statistics must be switched on by the config key, not by the caller.
unset CHAPOLY_STATS CHAPOLY_STATS_FILE

. "$(dirname "$0")/../common/check.sh"
# atleast N V: V is a decimal number >= N
atleast() {
    case $2 in '' | *[!0-9]*) return 1 ;; esac
    [ "$2" -ge "$1" ]
}
bounded() {
    _secs=$1
    shift
    if command -v timeout > /dev/null 2>&1; then timeout "$_secs" "$@"; else "$@"; fi
}
# Skip a level this CPU lacks, decided by the same dispatch code as the module.
if [ -n "${CHAPOLY_LEVEL_PROBE:-}" ]; then
    "$CHAPOLY_LEVEL_PROBE" "$KERNEL" || exit 77
fi
if [ ! -f "$MODULE" ]; then
    echo "FAIL: module $MODULE missing" >&2
    echo "0 passed, 1 failed"
    exit 1
fi

T=$(mktemp -d "${TMPDIR:-/tmp}/chapoly-tlsproc.XXXXXX") || exit 1
SPID=
cleanup() {
    if [ -n "$SPID" ]; then
        kill "$SPID" 2> /dev/null
        wait "$SPID" 2> /dev/null
    fi
    [ -n "${KEEP_T:-}" ] || rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# mkconf OUT DEFAULT_PROPERTIES
mkconf() {
    if [ "$KERNEL" = best ]; then kl="# kernel: best available"; else kl="kernel = $KERNEL"; fi
    sed -e "s|@CHAPOLY_MODULE@|$MODULE|" -e "s|@DEFAULT_PROPERTIES@|$2|" \
        -e "s|@KERNEL@|$kl|" "$TEMPLATE" > "$1"
}
mkconf "$T/chapoly.cnf" '?provider=chapoly'
mkconf "$T/default.cnf" '?provider=default'

# Self-signed RSA certificate (RSA for ECDHE-RSA), made by the default provider.
OPENSSL_CONF=/dev/null bounded 60 "$OSSL" req -x509 -newkey rsa:2048 -nodes \
    -keyout "$T/key.pem" -out "$T/cert.pem" -days 2 -subj /CN=localhost \
    > /dev/null 2> "$T/req.err"
check "self-signed certificate generated" [ -s "$T/cert.pem" ]

# Payload: lines that s_client cannot mistake for commands (no leading Q/R/K),
# short ones and a few long ones so records of several sizes are sent.
od -An -v -tx1 -N 4800 /dev/urandom | tr -d ' \n' | fold -w 64 |
    awk '{ print "PAYLOAD-" NR "-" $0 }' > "$T/payload"
od -An -v -tx1 -N 9000 /dev/urandom | tr -d ' \n' | fold -w 6000 |
    awk '{ print "PAYLOAD-L" NR "-" $0 }' >> "$T/payload"
awk '{ s = ""; for (i = length($0); i > 0; i--) s = s substr($0, i, 1); print s }' \
    "$T/payload" > "$T/expected"
{ cat "$T/payload"; echo CLOSE; } > "$T/input"
NLINES=$(wc -l < "$T/payload")

# statval FILE KEY: last value of KEY= in a stats file, or empty
statval() {
    sed -n "s/.*$2=\\([0-9][0-9]*\\).*/\\1/p" "$1" 2> /dev/null | tail -n 1
}

# run NAME CONF SUITE VERSION-ARGS...: one s_server/s_client session.
run() {
    name=$1
    cnf=$2
    suite=$3
    shift 3
    d=$T/$name
    mkdir -p "$d"
    port=
    tries=0
    while [ $tries -lt 10 ]; do
        tries=$((tries + 1))
        p=$(od -An -N2 -tu2 /dev/urandom | tr -d ' ')
        p=$((20000 + p % 40000))
        : > "$d/srv.out"
        : > "$d/srv.err"
        OPENSSL_CONF=$cnf CHAPOLY_STATS_FILE=$d/srv.stats bounded 30 "$OSSL" s_server \
            -accept "127.0.0.1:$p" -cert "$T/cert.pem" -key "$T/key.pem" -naccept 1 -rev \
            "$@" > "$d/srv.out" 2> "$d/srv.err" < /dev/null &
        SPID=$!
        w=0
        while [ $w -lt 100 ] && ! grep -q '^ACCEPT' "$d/srv.out" && kill -0 "$SPID" 2> /dev/null; do
            sleep 0.1
            w=$((w + 1))
        done
        if grep -q '^ACCEPT' "$d/srv.out"; then
            port=$p
            break
        fi
        kill "$SPID" 2> /dev/null
        wait "$SPID" 2> /dev/null
        SPID=
        grep -q 'in use' "$d/srv.err" || break # not a port clash: give up
    done
    if ! check "$name: s_server listening on 127.0.0.1 (try $tries)" [ -n "$port" ]; then
        sed 's/^/  server: /' "$d/srv.err" >&2
        return
    fi

    OPENSSL_CONF=$cnf CHAPOLY_STATS_FILE=$d/cli.stats bounded 20 "$OSSL" s_client \
        -connect "127.0.0.1:$port" -servername localhost -CAfile "$T/cert.pem" \
        -verify_return_error -verify_hostname localhost -ign_eof "$@" \
        < "$T/input" > "$d/cli.out" 2> "$d/cli.err"
    crc=$?
    wait "$SPID"
    src=$?
    SPID=
    check "$name: s_client exit status 0 (got $crc)" [ $crc -eq 0 ]
    check "$name: s_server exit status 0 (got $src)" [ $src -eq 0 ]
    if [ $crc -ne 0 ] || [ $src -ne 0 ]; then
        sed 's/^/  client: /' "$d/cli.err" | tail -n 5 >&2
        sed 's/^/  server: /' "$d/srv.err" | tail -n 5 >&2
    fi

    grep -- '-[0-9L]*-DAOLYAP$' "$d/cli.out" > "$d/echoed"
    check "$name: all $NLINES payload lines echoed reversed, in order" \
        cmp -s "$d/echoed" "$T/expected"
    check "$name: s_client negotiated $suite" grep -q "Cipher is $suite\$" "$d/cli.out"
    check "$name: s_server negotiated $suite" grep -q "^Ciphersuite: $suite\$" \
        "$d/srv.out" "$d/srv.err"
    check "$name: s_client verified the server certificate" \
        grep -q 'Verify return code: 0 (ok)' "$d/cli.out"
}

# expect_stats NAME SIDE KEY-that-must-be-positive | zero
expect_stats() {
    f=$T/$1/$2.stats
    a=$(statval "$f" chapoly-aead-messages)
    r=$(statval "$f" chapoly-tls-records)
    case $3 in
    chapoly-aead-messages) v=$a ;;
    chapoly-tls-records) v=$r ;;
    zero) v= ;;
    esac
    if [ "$3" = zero ]; then
        check "$1 $2: counted nothing, so no stats line ($(cat "$f" 2> /dev/null))" \
            [ ! -s "$f" ]
    else
        check "$1 $2: $3 > 0 (stats file: aead '$a', tls '$r')" atleast 1 "$v"
    fi
}

run tls13 "$T/chapoly.cnf" TLS_CHACHA20_POLY1305_SHA256 \
    -tls1_3 -ciphersuites TLS_CHACHA20_POLY1305_SHA256
expect_stats tls13 srv chapoly-aead-messages
expect_stats tls13 cli chapoly-aead-messages

run tls12 "$T/chapoly.cnf" ECDHE-RSA-CHACHA20-POLY1305 \
    -tls1_2 -cipher ECDHE-RSA-CHACHA20-POLY1305
expect_stats tls12 srv chapoly-tls-records
expect_stats tls12 cli chapoly-tls-records

# Control: chapoly loaded with stats on, but default preferred.
run tls13-default "$T/default.cnf" TLS_CHACHA20_POLY1305_SHA256 \
    -tls1_3 -ciphersuites TLS_CHACHA20_POLY1305_SHA256
expect_stats tls13-default srv zero
expect_stats tls13-default cli zero

echo "test_tls_processes.sh [kernel $KERNEL]: $((pass + fail)) checks"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
