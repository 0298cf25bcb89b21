# SPDX-License-Identifier: Apache-2.0
# Shared by the shell tests (sourced): pass/fail counters and check().
# Each script prints "$pass passed, $fail failed" itself at the end.
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }
# check DESCRIPTION COMMAND...: the command's exit status is the verdict.
check() {
    _desc=$1
    shift
    if "$@"; then ok; else bad "$_desc"; fi
}
