#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Every source, script and CMake file of the repository carries an SPDX line
# (scripts/check-spdx.sh). First the checker itself, on scratch trees: a file
# without the line, one with it too late, an executable without an
# extension are named; good files, test/vectors/ and build trees are not;
# tracked files only in a git work tree, everything in a tarball without
# .git; scripts/add-spdx.sh fixes exactly what the checker names, keeps #!
# lines first and changes nothing the second time. Then the real tree.
#
# Environment (CTest): CHAPOLY_SOURCE_DIR. Prints "N passed, N failed".
set -u
SRC=${CHAPOLY_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
CHECK=$SRC/scripts/check-spdx.sh
ADD=$SRC/scripts/add-spdx.sh
. "$SRC/test/common/check.sh"

T=$(mktemp -d "${TMPDIR:-/tmp}/chapoly-spdx.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
trap 'exit 130' INT TERM

# plant DIR: a small tree with good and bad files.
plant() {
    mkdir -p "$1/src" "$1/test/vectors" "$1/build-x" "$1/cmake"
    printf '/* SPDX-License-Identifier: Apache-2.0 */\nint good;\n' > "$1/src/good.c"
    printf '/* no licence line */\nint bad;\n' > "$1/src/bad.c"
    printf '#!/bin/sh\n# SPDX-License-Identifier: Apache-2.0\necho ok\n' > "$1/run.sh"
    printf '#!/bin/sh\necho tool\n' > "$1/tool"
    chmod +x "$1/run.sh" "$1/tool"
    printf '# one\n#\n#\n#\n#\n# SPDX-License-Identifier: Apache-2.0\n' > "$1/cmake/late.cmake"
    printf 'cmake_minimum_required(VERSION 3.20)\n' > "$1/CMakeLists.txt"
    printf 'print(1)\n' > "$1/test/vectors/gen.py"
    printf 'int generated;\n' > "$1/build-x/gen.c"
    printf '# notes\n' > "$1/notes.md"
}
# named OUTPUT PATH: the checker's output lists PATH on a line of its own.
named() { grep -qx "  $2" "$1"; }

# ---- a tarball without .git: find --------------------------------------------
plant "$T/tar"
sh "$CHECK" "$T/tar" > "$T/out" 2>&1
check "tarball: exit 1 with files missing the line" [ $? -eq 1 ]
check "tarball: read with find" grep -q "via find" "$T/out"
for f in src/bad.c tool cmake/late.cmake CMakeLists.txt; do
    check "tarball: $f named" named "$T/out" "$f"
done
for f in src/good.c run.sh test/vectors/gen.py build-x/gen.c notes.md; do
    check "tarball: $f not named" sh -c '! grep -q "  $1\$" "$2"' _ "$f" "$T/out"
done
check "tarball: 4 of 6 files" grep -q "4 of 6 files" "$T/out"

sh "$ADD" "$T/tar" > "$T/add" 2>&1
check "add-spdx: exit 0 ($(cat "$T/add"))" [ $? -eq 0 ]
check "add-spdx: C line first" [ "$(head -n 1 "$T/tar/src/bad.c")" = "/* SPDX-License-Identifier: Apache-2.0 */" ]
check "add-spdx: #! line stays first" [ "$(head -n 1 "$T/tar/tool")" = "#!/bin/sh" ]
check "add-spdx: hash line after #!" [ "$(sed -n 2p "$T/tar/tool")" = "# SPDX-License-Identifier: Apache-2.0" ]
check "add-spdx: the rest kept" [ "$(sed -n 3p "$T/tar/tool")" = "echo tool" ]
check "add-spdx: executable stays executable" [ -x "$T/tar/tool" ]
check "add-spdx: late.cmake gets a first line" \
    [ "$(head -n 1 "$T/tar/cmake/late.cmake")" = "# SPDX-License-Identifier: Apache-2.0" ]
check "add-spdx: vectors untouched" [ "$(cat "$T/tar/test/vectors/gen.py")" = "print(1)" ]
sh "$CHECK" "$T/tar" > "$T/out" 2>&1
check "after add-spdx: exit 0 ($(head -n 3 "$T/out"))" [ $? -eq 0 ]
find "$T/tar" -type f -exec cksum {} + | sort > "$T/sum1"
sh "$ADD" "$T/tar" > "$T/add" 2>&1
find "$T/tar" -type f -exec cksum {} + | sort > "$T/sum2"
check "add-spdx again: nothing changed" cmp -s "$T/sum1" "$T/sum2"
check "add-spdx again: says 0 files" grep -q "added the line to 0 files" "$T/add"

# An empty tree is a failure, not a pass.
mkdir "$T/empty"
sh "$CHECK" "$T/empty" > "$T/out" 2>&1
check "empty tree: exit 1" [ $? -eq 1 ]

# ---- a git work tree: tracked files only ------------------------------------
if command -v git > /dev/null 2>&1; then
    plant "$T/git"
    (cd "$T/git" && git init -q . && git add src/good.c src/bad.c run.sh tool test notes.md) ||
        bad "git init/add in $T/git"
    sh "$CHECK" "$T/git" > "$T/out" 2>&1
    check "git: exit 1" [ $? -eq 1 ]
    check "git: read with git ls-files" grep -q "via git ls-files" "$T/out"
    check "git: tracked src/bad.c named" named "$T/out" src/bad.c
    check "git: tracked tool named" named "$T/out" tool
    check "git: untracked CMakeLists.txt not named" sh -c '! grep -q "  CMakeLists.txt$" "$1"' _ "$T/out"
    check "git: 2 of 4 files" grep -q "2 of 4 files" "$T/out"
else
    echo "git not installed: the git work tree case is not checked"
fi

# ---- the repository ----------------------------------------------------------
sh "$CHECK" "$SRC" > "$T/out" 2>&1
r=$?
cat "$T/out"
check "the repository: every file has the line" [ "$r" -eq 0 ]

echo "test_spdx"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
