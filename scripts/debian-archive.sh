# SPDX-License-Identifier: Apache-2.0
# Sourced by scripts/openssl-prefix.sh and scripts/cross-sysroot.sh:
# debian_archive prints the Debian archive URI from the system's apt sources
# (deb822 or one-line format), skipping the security archive;
# CHAPOLY_DEBIAN_ARCHIVE overrides it. Returns 1 when there is none.
debian_archive() {
    if [ -n "${CHAPOLY_DEBIAN_ARCHIVE:-}" ]; then
        echo "$CHAPOLY_DEBIAN_ARCHIVE"
        return
    fi
    local f uri
    for f in /etc/apt/sources.list.d/*.sources; do
        [ -f "$f" ] || continue
        uri=$(sed -n 's/^URIs:[[:space:]]*\([^[:space:]]*\).*/\1/p' "$f" | grep -v -- '-security' | head -n 1)
        [ -n "$uri" ] && echo "$uri" && return
    done
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
        [ -f "$f" ] || continue
        uri=$(sed -n 's/^deb[[:space:]]\+\(\[[^]]*\][[:space:]]\+\)\?\([^[:space:]]*\).*/\2/p' "$f" |
            grep -v -- '-security' | head -n 1)
        [ -n "$uri" ] && echo "$uri" && return
    done
    return 1
}
