#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# check-spdx.sh [--missing] [DIR]
# Every source, script and CMake file names its licence: an
# "SPDX-License-Identifier: <licence>" line in its first 5 lines. Checked:
# *.c *.h *.sh *.py *.cmake CMakeLists.txt *.in *.gp and every other
# executable file, outside test/vectors/ (the vectors keep their own licences,
# test/vectors/SOURCES.md). DIR (default: this repository) is read through
# `git ls-files` when it is the top of a git work tree (tracked files only),
# else with find (a release tarball without .git), leaving out what
# .gitignore ignores at the top (build*/, _build*/, cmake-build*/, .cache/,
# bench/out/) and CMakeFiles/, Testing/ anywhere.
# Prints the files without the line and exits 1 if there is any (or if no
# file was found at all: a check of nothing is not a pass); 0 otherwise.
# --missing: print only those paths, one per line, and exit 0
# (scripts/add-spdx.sh uses it).
set -u

missing_only=0
if [ "${1:-}" = --missing ]; then
    missing_only=1
    shift
fi
case "${1:-}" in
    -h | --help)
        sed -n '3,/^set -u/{/^set -u/d;s/^# \{0,1\}//;p}' "$0"
        exit 0
        ;;
    -*)
        echo "usage: $0 [--missing] [DIR]" >&2
        exit 2
        ;;
esac
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root" 2> /dev/null || {
    echo "check-spdx: cannot enter $root" >&2
    exit 2
}

# Candidate paths relative to DIR, one per line. Only DIR's own repository
# is asked: a tarball unpacked inside another work tree is read with find.
via=find
if command -v git > /dev/null 2>&1 && top=$(git rev-parse --show-toplevel 2> /dev/null) &&
    [ "$(cd "$top" && pwd -P)" = "$(pwd -P)" ]; then
    via="git ls-files"
fi
list_files() {
    if [ "$via" = find ]; then
        find . \( -path ./.git -o -path './build*' -o -path './_build*' -o -path './cmake-build*' \
            -o -path ./.cache -o -path ./bench/out -o -name CMakeFiles -o -name Testing \) -prune \
            -o -type f -print | sed 's|^\./||' | LC_ALL=C sort
    else
        git -c core.quotePath=false ls-files
    fi
}

# Does the file need the line?
wanted() {
    case "$1" in
        test/vectors/*) return 1 ;;
        *.c | *.h | *.sh | *.py | *.cmake | CMakeLists.txt | */CMakeLists.txt | *.in | *.gp) return 0 ;;
    esac
    [ -x "$1" ]
}

checked=0
bad=""
nl='
'
files=$(list_files)
IFS=$nl
for f in $files; do
    [ -f "$f" ] && [ ! -L "$f" ] || continue # deleted in the work tree, or a link
    wanted "$f" || continue
    checked=$((checked + 1))
    if ! head -n 5 "$f" | grep -q 'SPDX-License-Identifier: *[^ ]'; then
        bad="$bad$f$nl"
    fi
done

if [ "$missing_only" = 1 ]; then
    printf '%s' "$bad"
    exit 0
fi
if [ "$checked" -eq 0 ]; then
    echo "check-spdx: no source, script or CMake file found in $root (via $via)" >&2
    exit 1
fi
if [ -n "$bad" ]; then
    n=$(printf '%s' "$bad" | grep -c .)
    echo "check-spdx: $n of $checked files (via $via) have no SPDX-License-Identifier line in their first 5 lines:"
    printf '%s' "$bad" | sed 's/^/  /'
    echo "add one (scripts/add-spdx.sh does it: '/* SPDX-License-Identifier: Apache-2.0 */' as line 1 of C files, '# SPDX-License-Identifier: Apache-2.0' after the #! line elsewhere)"
    exit 1
fi
echo "check-spdx: $checked files (via $via), each with an SPDX-License-Identifier line"
exit 0
