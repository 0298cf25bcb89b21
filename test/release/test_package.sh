#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# test_package.sh deb|install: the Debian package (cpack -G DEB, cmake/package.cmake).
#
# deb      builds chapoly_<version>_<arch>.deb into CHAPOLY_PACKAGE_DIR and
#          inspects it without installing (any tree, the cross trees too:
#          arm64, s390x, armhf, i386, ppc64el, riscv64):
#          its fields (name, the project version, the architecture of the
#          module's ELF machine, Depends on libc6 alone, a maintainer, a
#          description), exactly the expected files and modes (the module in
#          the target's ossl-modules directory, mode 0644, stripped; README,
#          CHANGELOG, LICENSE, copyright and the example config under
#          /usr/share/doc/chapoly, docs/*.md and the pipeline example under
#          its docs/; the example as /usr/share/chapoly/chapoly.cnf),
#          nothing under /etc, no maintainer scripts or conffiles; the
#          module built with Debian's hardening flags (CHAPOLY_HARDENING:
#          BIND_NOW, GNU_RELRO, no executable stack, __stack_chk_fail and
#          fortified __*_chk functions imported).
# install  (root, dpkg, the openssl command's own module directory) installs
#          that .deb with dpkg -i, checks that chapoly loads from the system's
#          module directory through the example config and through the two
#          snippets docs/packaging.md documents (read from that file), removes
#          it with dpkg -r and checks that no file of it is left and that the
#          system's openssl.cnf is byte-identical. It never touches a
#          chapoly.so or a chapoly package that was there before: it skips
#          (exit 77) with the reason. Not root or no dpkg: skipped too, except
#          under CI=true, where that is a failure (CI runs as root on Debian).
#
# Environment (CTest): CHAPOLY_SOURCE_DIR, CHAPOLY_BUILD_DIR, CHAPOLY_PACKAGE_DIR,
# CHAPOLY_PROJECT_VERSION, CHAPOLY_DEB_ARCH, CHAPOLY_MODULES_DIR,
# CHAPOLY_DEFAULT_MODULES_DIR (libcrypto's, from pkg-config), CHAPOLY_DEB_SHLIBDEPS
# (ON: Depends computed by dpkg-shlibdeps), CHAPOLY_CPACK,
# CHAPOLY_READELF, CHAPOLY_HARDENING, CHAPOLY_HARDENING_FLAGS, OPENSSL_PROGRAM (install),
# CHAPOLY_LEVEL_PROBE (install).
# Prints "N passed, N failed".
set -u
mode=${1:?usage: test_package.sh deb|install}
SRC=${CHAPOLY_SOURCE_DIR:?}
BUILD=${CHAPOLY_BUILD_DIR:?}
PKGDIR=${CHAPOLY_PACKAGE_DIR:?}
V=${CHAPOLY_PROJECT_VERSION:?}
ARCH=${CHAPOLY_DEB_ARCH:-}
MODDIR=${CHAPOLY_MODULES_DIR:?}
. "$SRC/test/common/check.sh"

T=$(mktemp -d "${TMPDIR:-/tmp}/chapoly-package.XXXXXX") || exit 1
cleanup_hook=:
trap '$cleanup_hook; rm -rf "$T"' EXIT
trap 'exit 130' INT TERM

finish() {
    echo "test_package $mode"
    echo "$pass passed, $fail failed"
    [ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
    exit $?
}
skip() {
    echo "skipped: $*"
    exit 77
}

deb=$PKGDIR/chapoly_${V}_${ARCH}.deb

# ---- deb ---------------------------------------------------------------------
if [ "$mode" = deb ]; then
    if ! command -v dpkg-deb > /dev/null 2>&1; then
        [ "${CHAPOLY_REQUIRE_TOOLS:-0}" = 1 ] && { bad "dpkg-deb not found (CHAPOLY_REQUIRE_TOOLS=1)"; finish; }
        skip "dpkg-deb not found (not a Debian system)"
    fi
    [ -n "$ARCH" ] || { bad "no Debian architecture configured (CPACK_DEBIAN_PACKAGE_ARCHITECTURE)"; finish; }
    case "$PKGDIR" in "$BUILD"/?*) rm -rf "$PKGDIR" ;; *) bad "CHAPOLY_PACKAGE_DIR $PKGDIR not in the build tree"; finish ;; esac
    "${CHAPOLY_CPACK:-cpack}" -G DEB --config "$BUILD/CPackConfig.cmake" -B "$PKGDIR" > "$T/cpack.log" 2>&1
    r=$?
    check "cpack -G DEB exits 0" [ "$r" -eq 0 ]
    [ "$r" -eq 0 ] || cat "$T/cpack.log"
    debs=$(cd "$PKGDIR" 2> /dev/null && ls -- *.deb 2> /dev/null | tr '\n' ' ')
    check "one .deb, named chapoly_${V}_${ARCH}.deb (made: ${debs:-none})" \
        [ "$debs" = "chapoly_${V}_${ARCH}.deb " ]
    [ -f "$deb" ] || finish

    field() { dpkg-deb -f "$deb" "$1"; }
    check "Package: chapoly" [ "$(field Package)" = chapoly ]
    check "Version: $V (project(VERSION)), got $(field Version)" [ "$(field Version)" = "$V" ]
    check "Architecture: $ARCH, got $(field Architecture)" [ "$(field Architecture)" = "$ARCH" ]
    check "Maintainer: a name and an address ($(field Maintainer))" \
        sh -c 'printf "%s\n" "$1" | grep -Eq "^[^<]+ <[^@ ]+@[^> ]+>$"' _ "$(field Maintainer)"
    check "Description: a synopsis and a long description" \
        [ "$(field Description | wc -l)" -ge 3 ]
    # One entry per line: libc6 alone ("libc6 (>= 2.x)" from dpkg-shlibdeps):
    # the module links no libcrypto, so one package serves OpenSSL 3.0 to 4.0.
    field Depends | tr ',' '\n' | sed 's/^ *//' > "$T/depends"
    if [ "${CHAPOLY_DEB_SHLIBDEPS:-OFF}" = ON ]; then
        check "Depends: libc6 (>= ...) from dpkg-shlibdeps ($(field Depends))" \
            grep -Eqx 'libc6 \(>= 2\.[0-9]+\)' "$T/depends"
    else
        check "Depends: libc6 ($(field Depends))" grep -Eqx 'libc6' "$T/depends"
    fi
    check "Depends: nothing else (no libssl)" sh -c '! grep -Evx "libc6( \(>= 2\.[0-9]+\))?" "$1"' _ "$T/depends"
    check "Section: libs" [ "$(field Section)" = libs ]

    # The target's architecture, read from the module itself, and its
    # multiarch directory: independent of the CMake code that set the fields.
    dpkg-deb -x "$deb" "$T/x" || bad "dpkg-deb -x"
    mod=$(find "$T/x" -name chapoly.so -type f | head -n 1)
    # e_machine (2 bytes in the target's byte order), and where one machine
    # has two Debian architectures, the ELF class (byte 4) or flags (36..39)
    elf_byte() { od -An -tu1 -j"$1" -N1 "${mod:-/dev/null}" 2> /dev/null | tr -d ' \n'; }
    want_arch="" triplet=""
    case $(od -An -tx1 -j18 -N2 "${mod:-/dev/null}" 2> /dev/null | tr -d ' \n') in
        3e00) want_arch=amd64 triplet=x86_64-linux-gnu ;;
        b700) want_arch=arm64 triplet=aarch64-linux-gnu ;;
        0016) want_arch=s390x triplet=s390x-linux-gnu ;; # big-endian
        0300) want_arch=i386 triplet=i386-linux-gnu ;;
        1500) want_arch=ppc64el triplet=powerpc64le-linux-gnu ;;
        f300) [ "$(elf_byte 4)" = 2 ] && want_arch=riscv64 triplet=riscv64-linux-gnu ;;
        2800)
            # 32-bit Arm: EF_ARM_ABI_FLOAT_HARD (0x400) makes it armhf
            if [ $(($(elf_byte 37) & 4)) -ne 0 ]; then
                want_arch=armhf triplet=arm-linux-gnueabihf
            else
                want_arch=armel triplet=arm-linux-gnueabi
            fi
            ;;
    esac
    if [ -n "$want_arch" ]; then
        check "Architecture $ARCH is the module's ($want_arch)" [ "$ARCH" = "$want_arch" ]
        # Unless -DCHAPOLY_MODULES_DIR chose another directory on purpose.
        if [ "$MODDIR" = "${CHAPOLY_DEFAULT_MODULES_DIR:-$MODDIR}" ]; then
            check "module directory $MODDIR is $triplet's" [ "$MODDIR" = "/usr/lib/$triplet/ossl-modules" ]
        else
            echo "note: -DCHAPOLY_MODULES_DIR=$MODDIR, not libcrypto's $CHAPOLY_DEFAULT_MODULES_DIR"
        fi
    else
        echo "note: an ELF machine this test has no table entry for; architecture taken as configured"
    fi

    # Exactly these files, owned by root, with these modes.
    dpkg-deb -c "$deb" > "$T/contents" || bad "dpkg-deb -c"
    awk '$1 !~ /^d/ { print $1, $2, $6 }' "$T/contents" | LC_ALL=C sort > "$T/files"
    {
        echo "-rw-r--r-- root/root .$MODDIR/chapoly.so"
        for f in CHANGELOG.md LICENSE README.md copyright openssl.cnf.example; do
            echo "-rw-r--r-- root/root ./usr/share/doc/chapoly/$f"
        done
        for f in "$SRC"/docs/*.md "$SRC"/docs/examples/pipeline_seal.c "$SRC"/docs/examples/pipeline_seal.expected; do
            echo "-rw-r--r-- root/root ./usr/share/doc/chapoly/docs/${f#"$SRC"/docs/}"
        done
        echo "-rw-r--r-- root/root ./usr/share/chapoly/chapoly.cnf"
    } | LC_ALL=C sort > "$T/want"
    check "the files and modes expected" cmp -s "$T/files" "$T/want"
    cmp -s "$T/files" "$T/want" || diff "$T/want" "$T/files"
    check "nothing under /etc" sh -c '! grep -q " \./etc/" "$1"' _ "$T/contents"
    dpkg-deb --ctrl-tarfile "$deb" | tar -tf - | sed 's|^\./||' | grep -v '^$' | LC_ALL=C sort > "$T/ctrl"
    check "control members: control and md5sums only ($(tr '\n' ' ' < "$T/ctrl"))" \
        [ "$(tr '\n' ' ' < "$T/ctrl")" = "control md5sums " ]

    # The module: stripped, still exporting its entry point.
    RE=${CHAPOLY_READELF:-readelf}
    if [ -n "$mod" ] && command -v "$RE" > /dev/null 2>&1; then
        "$RE" -S -W "$mod" > "$T/sections" 2>&1
        check "module stripped: no .symtab" sh -c '! grep -q "\.symtab" "$1"' _ "$T/sections"
        check "module stripped: no .debug sections" sh -c '! grep -q "\.debug_" "$1"' _ "$T/sections"
        check "module exports OSSL_provider_init" sh -c '"$1" --dyn-syms -W "$2" | grep -q " OSSL_provider_init$"' \
            _ "$RE" "$mod"
        # Debian's hardening flags (cmake/hardening.cmake, dpkg-buildflags
        # hardening=+all), read from the module itself.
        check "built with CHAPOLY_HARDENING=ON (${CHAPOLY_HARDENING:-unset}: ${CHAPOLY_HARDENING_FLAGS:-})" \
            [ "${CHAPOLY_HARDENING:-}" = ON ]
        "$RE" -d -W "$mod" > "$T/dynamic" 2>&1
        "$RE" -l -W "$mod" > "$T/segments" 2>&1
        "$RE" --dyn-syms -W "$mod" > "$T/dynsyms" 2>&1
        check "hardening: BIND_NOW (dynamic FLAGS BIND_NOW or FLAGS_1 NOW)" \
            grep -Eq '\(FLAGS\) +.*BIND_NOW|\(FLAGS_1\) +Flags:.* NOW' "$T/dynamic"
        check "hardening: a GNU_RELRO segment" grep -Eq '^ *GNU_RELRO ' "$T/segments"
        check "hardening: no executable stack (GNU_STACK RW)" grep -Eq '^ *GNU_STACK .* RW +0x' "$T/segments"
        check "hardening: stack protector (__stack_chk_fail imported)" \
            grep -Eq ' UND __stack_chk_fail(@|$)' "$T/dynsyms"
        check "hardening: _FORTIFY_SOURCE (checked libc functions imported: $(grep -Eo ' UND __[a-z0-9_]+_chk' "$T/dynsyms" |
            sed 's/ UND //' | grep -v '^__stack_chk' | tr '\n' ' '))" \
            sh -c 'grep -Eo " UND __[a-z0-9_]+_chk" "$1" | grep -vq "__stack_chk"' _ "$T/dynsyms"
        # one module for every OpenSSL: libc (and, on some architectures, the
        # dynamic loader, which is libc6's too: aarch64's stack guard) is all it links
        "$RE" -d -W "$mod" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' > "$T/needed"
        check "module needs libc.so.6 and nothing but the loader ($(tr '\n' ' ' < "$T/needed"))" \
            sh -c 'grep -qx "libc.so.6" "$1" && ! grep -vxE "libc\.so\.6|ld-linux[-a-z0-9_.]*\.so\.[0-9]+|ld64\.so\.[0-9]+" "$1"' \
            _ "$T/needed"
    else
        bad "no module in the package, or no readelf ($RE)"
    fi
    # The documents are the repository's.
    D=$T/x/usr/share/doc/chapoly
    for f in README.md CHANGELOG.md LICENSE openssl.cnf.example; do
        check "doc $f is the repository's" cmp -s "$D/$f" "$SRC/$f"
    done
    for f in "$SRC"/docs/*.md "$SRC"/docs/examples/pipeline_seal.c "$SRC"/docs/examples/pipeline_seal.expected; do
        r=${f#"$SRC"/}
        check "doc $r is the repository's" cmp -s "$D/$r" "$f"
    done
    check "chapoly.cnf is openssl.cnf.example" cmp -s "$T/x/usr/share/chapoly/chapoly.cnf" "$SRC/openssl.cnf.example"
    check "copyright: machine-readable, Apache-2.0" \
        sh -c 'head -n 1 "$1" | grep -q "^Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/" &&
               grep -q "^License: Apache-2.0$" "$1" && grep -q "/usr/share/common-licenses/Apache-2.0" "$1"' _ "$D/copyright"
    check "CHANGELOG.md has a section for $V" grep -Eq "^## \[?$(printf '%s' "$V" | sed 's/\./\\./g')\]?( |$)" "$D/CHANGELOG.md"
    finish
fi

[ "$mode" = install ] || { echo "usage: test_package.sh deb|install" >&2; exit 2; }

# ---- install -----------------------------------------------------------------
# cannot_run REASON: skipped, but under CI (root on Debian) the suite must not shrink.
cannot_run() {
    if [ "${CI:-}" = true ]; then
        bad "CI=true but the package cannot be installed here: $*"
        finish
    fi
    skip "$*"
}
[ "$(id -u)" = 0 ] || cannot_run "dpkg -i needs root (scripts/test-all.sh runs it as root in CI)"
command -v dpkg > /dev/null 2>&1 && command -v dpkg-query > /dev/null 2>&1 || cannot_run "no dpkg (not Debian)"
OSSL=${OPENSSL_PROGRAM:-openssl}
command -v "$OSSL" > /dev/null 2>&1 || cannot_run "no openssl command"
[ -f "$deb" ] || { bad "$deb missing (the package_deb test makes it)"; finish; }
sysmods=$("$OSSL" version -m | sed -n 's/^MODULESDIR: "\(.*\)"$/\1/p')
[ "$sysmods" = "$MODDIR" ] ||
    skip "the package installs into $MODDIR, but the openssl command loads modules from $sysmods"
status() { dpkg-query -W -f='${db:Status-Abbrev}' chapoly 2> /dev/null | tr -d ' '; }
# Never clobber what someone installed: another chapoly.so, or a chapoly package.
if [ -e "$MODDIR/chapoly.so" ]; then
    owner=$(dpkg-query -S "$MODDIR/chapoly.so" 2> /dev/null | sed 's/: .*//')
    [ -n "$owner" ] && owner="from package $owner" || owner="not from a package: cmake --install?"
    skip "$MODDIR/chapoly.so is already there ($owner); not touching it"
fi
case $(status) in "" | un) ;; *) skip "a chapoly package is already on this system ($(status)); not touching it" ;; esac

# The system configuration, to compare after removal.
sysconf=$("$OSSL" version -d | sed -n 's/^OPENSSLDIR: "\(.*\)"$/\1/p')/openssl.cnf
confs=""
for c in /etc/ssl/openssl.cnf "$sysconf"; do
    [ -e "$c" ] || continue
    n=$(printf '%s' "$c" | tr '/' '_')
    cp "$c" "$T/before$n" && confs="$confs $c"
done
check "a system openssl.cnf to compare ($sysconf)" [ -n "$confs" ]

# dpkg waits for nobody: retry while another dpkg or apt holds its lock.
dpkg_locked() { grep -qi 'lock' "$T/dpkg.log"; }
run_dpkg() {
    i=0
    while :; do
        dpkg "$@" > "$T/dpkg.log" 2>&1 && return 0
        dpkg_locked && [ "$i" -lt 120 ] || { cat "$T/dpkg.log"; return 1; }
        i=$((i + 1))
        sleep 1
    done
}
# It was not there before: whatever state a failure left it in, remove it.
remove_if_ours() {
    case $(status) in "" | un) ;; *) run_dpkg -r chapoly || echo "could not remove chapoly: dpkg -r chapoly" >&2 ;; esac
}
cleanup_hook=remove_if_ours

run_dpkg -i "$deb"
check "dpkg -i $(basename "$deb")" [ $? -eq 0 ]
check "chapoly is installed ($(status))" [ "$(status)" = ii ]
dpkg -L chapoly > "$T/listed" 2>&1
check "dpkg -L chapoly lists the module" grep -qx "$MODDIR/chapoly.so" "$T/listed"
check "the module is in $MODDIR, mode 0644" [ "$(stat -c %a "$MODDIR/chapoly.so" 2> /dev/null)" = 644 ]

# From here on the installed module, found in the system's module directory.
unset OPENSSL_MODULES OPENSSL_CONF CHAPOLY_KERNEL CHAPOLY_STATS CHAPOLY_STATS_FILE
active() {
    awk -v name="$1" '
        /^  [^ ]/ { cur = $1 }
        cur == name && $1 == "status:" && $2 == "active" { found = 1 }
        END { exit !found }' "$2"
}
simd=0
if [ -n "${CHAPOLY_LEVEL_PROBE:-}" ]; then
    for lv in $("$CHAPOLY_LEVEL_PROBE" --list); do
        if [ "$lv" != portable ] && "$CHAPOLY_LEVEL_PROBE" "$lv" > /dev/null 2>&1; then
            simd=1
        fi
    done
fi
# loads WHAT CNF: chapoly active beside default, the package's version, and
# the ciphers chapoly serves here (ChaCha20-Poly1305 where a SIMD level runs).
loads() {
    OPENSSL_CONF=$2 "$OSSL" list -providers -verbose > "$T/list" 2> "$T/err"
    check "$1: openssl list -providers exits 0" [ $? -eq 0 ]
    check "$1: no error output ($(head -c 300 "$T/err"))" [ ! -s "$T/err" ]
    check "$1: chapoly active" active chapoly "$T/list"
    check "$1: default active" active default "$T/list"
    check "$1: chapoly version $V" \
        sh -c 'awk "/^  [^ ]/ { cur = \$1 } cur == \"chapoly\" && \$1 == \"version:\" { print \$2 }" "$1" | grep -qx "$2"' \
        _ "$T/list" "$V"
    OPENSSL_CONF=$2 "$OSSL" list -cipher-algorithms > "$T/algs" 2>&1
    check "$1: XChaCha20-Poly1305 @ chapoly" grep -q 'XChaCha20-Poly1305 @ chapoly' "$T/algs"
    if [ "$simd" = 1 ]; then
        check "$1: ChaCha20-Poly1305 @ chapoly" grep -Eq '(^|[^X])ChaCha20-Poly1305 @ chapoly' "$T/algs"
    fi
}
loads "OPENSSL_CONF=/usr/share/doc/chapoly/openssl.cnf.example" /usr/share/doc/chapoly/openssl.cnf.example

# The two ways docs/packaging.md gives to enable it system-wide, taken from
# that file, applied to a copy of the system's openssl.cnf.
DOC=$SRC/docs/packaging.md
inc=$(grep -m 1 '^\.include ' "$DOC")
check "docs/packaging.md: the .include line names the shipped chapoly.cnf ($inc)" \
    [ "$inc" = ".include /usr/share/chapoly/chapoly.cnf" ]
{ cat "$sysconf"; printf '%s\n' "$inc"; } > "$T/include.cnf"
loads "the system's openssl.cnf + '$inc'" "$T/include.cnf"
# The block after the marker line, up to the end of its fenced code block.
awk '/<!-- tested: appended to the system openssl.cnf/ { on = 1; next }
     on && /^```/ { if (inblock) exit; inblock = 1; next }
     inblock { print }' "$DOC" > "$T/block"
check "docs/packaging.md: the block to append ($(wc -l < "$T/block") lines)" \
    grep -q '^chapoly = chapoly_sect$' "$T/block"
{ cat "$sysconf"; cat "$T/block"; } > "$T/block.cnf"
loads "the system's openssl.cnf + the block" "$T/block.cnf"

# dpkg -r: nothing of the package is left.
cleanup_hook=:
run_dpkg -r chapoly
check "dpkg -r chapoly" [ $? -eq 0 ]
check "chapoly not installed after dpkg -r (status '$(status)', no conffiles to keep)" \
    sh -c 'case "$1" in "" | un) exit 0 ;; esac; exit 1' _ "$(status)"
dpkg-deb -c "$deb" | awk '{ sub(/^\./, "", $6); print $6 }' > "$T/paths"
left=""
while IFS= read -r p; do
    case "$p" in */) continue ;; esac
    [ -e "$p" ] && left="$left $p"
done < "$T/paths"
check "no file of the package left (${left:-none})" [ -z "$left" ]
check "no chapoly.so in $MODDIR" [ ! -e "$MODDIR/chapoly.so" ]
check "dpkg -S knows no chapoly.so" sh -c '! dpkg-query -S "$1/chapoly.so" > /dev/null 2>&1' _ "$MODDIR"
check "/usr/share/doc/chapoly is gone" [ ! -e /usr/share/doc/chapoly ]
check "/usr/share/chapoly is gone" [ ! -e /usr/share/chapoly ]
check "$MODDIR itself stays (OpenSSL's)" [ -d "$MODDIR" ]
for c in $confs; do
    n=$(printf '%s' "$c" | tr '/' '_')
    check "$c byte-identical before and after" cmp -s "$c" "$T/before$n"
done
finish
