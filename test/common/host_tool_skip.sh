#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# host_tool_skip.sh CPU WHY
# Registered by CMake (chapoly_host_tool_skip in test/CMakeLists.txt) in a tree
# built for another CPU than the host's (the arm64 tree, run under qemu) in
# place of a test that needs a host program to load this tree's module or run
# its programs (the openssl command, curl, nginx, python, valgrind). CTest
# reports it as skipped, with the reason; CHAPOLY_REQUIRE_TOOLS does not apply:
# the tool is there, but for the host's CPU only. The native trees run it.
echo "not run in a $1 tree: $2"
echo "skipped"
exit 77
