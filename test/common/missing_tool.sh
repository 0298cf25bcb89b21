#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# missing_tool.sh WHAT HINT
# Registered by CMake (chapoly_missing_tool in test/CMakeLists.txt) in place of
# a test whose external tool was not found when configuring. A developer's
# plain `ctest` reports it as skipped (exit 77); with CHAPOLY_REQUIRE_TOOLS=1
# in the environment (scripts/test-all.sh sets it) it is a failure, so the
# full suite can never shrink silently.
echo "$1 was not found when configuring, so this test was not built ($2)"
if [ "${CHAPOLY_REQUIRE_TOOLS:-0}" = 1 ]; then
    echo "FAIL: CHAPOLY_REQUIRE_TOOLS=1: a missing test tool is a failure"
    echo "0 passed, 1 failed"
    exit 1
fi
echo "skipped"
exit 77
