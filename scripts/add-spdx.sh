#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# add-spdx.sh [DIR]
# Adds the licence line to every file scripts/check-spdx.sh finds without one
# (same selection: sources, scripts, CMake files, executables; tracked files
# when DIR is a git work tree). Idempotent: a file that has the line is left
# alone, so it can be run again after new files are added.
#   *.c *.h *.c.in *.h.in   '/* SPDX-License-Identifier: Apache-2.0 */' as line 1
#   everything else         '# SPDX-License-Identifier: Apache-2.0' as line 1,
#                           or line 2 when line 1 is a #! line
# A file of another kind with no #! line (an executable that is not a script)
# is reported and left alone; the exit status is then 1.
set -u

case "${1:-}" in
    -h | --help)
        sed -n '3,/^set -u/{/^set -u/d;s/^# \{0,1\}//;p}' "$0"
        exit 0
        ;;
    -*)
        echo "usage: $0 [DIR]" >&2
        exit 2
        ;;
esac
here=$(cd "$(dirname "$0")" && pwd)
root=${1:-$(cd "$here/.." && pwd)}
cd "$root" || exit 2

c_line='/* SPDX-License-Identifier: Apache-2.0 */'
hash_line='# SPDX-License-Identifier: Apache-2.0'
nl='
'
missing=$(sh "$here/check-spdx.sh" --missing "$root") || exit 2
status=0
added=0
IFS=$nl
for f in $missing; do
    case "$f" in
        *.c | *.h | *.c.in | *.h.in) line=$c_line ;;
        *.sh | *.py | *.cmake | CMakeLists.txt | */CMakeLists.txt | *.in | *.gp) line=$hash_line ;;
        *)
            if head -n 1 "$f" | grep -q '^#!'; then
                line=$hash_line
            else
                echo "add-spdx: $f: not a script (no #! line) and of no known kind; add the line by hand" >&2
                status=1
                continue
            fi
            ;;
    esac
    tmp=$(mktemp "${TMPDIR:-/tmp}/add-spdx.XXXXXX") || exit 2
    # After a #! line, else first; an empty file gets the line alone.
    awk -v l="$line" 'NR == 1 && /^#!/ { print; print l; next } NR == 1 { print l } { print }
                      END { if (NR == 0) print l }' "$f" > "$tmp" &&
        cat "$tmp" > "$f" # cat keeps the file's mode
    rm -f "$tmp"
    added=$((added + 1))
done
echo "add-spdx: added the line to $added files"
exit "$status"
