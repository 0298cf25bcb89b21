#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# host_tool_skip.sh TREE WHY
# Registered by CMake (chapoly_host_tool_skip in test/CMakeLists.txt) in place
# of a test that needs a host program to load this tree's module or run its
# programs, in a tree where it cannot: one built for another CPU than the
# host's (the arm64 tree, run under qemu: the openssl command, curl, nginx,
# python, valgrind), or one whose programs start through an emulator (the
# OpenSSL 3.5 trees, through that OpenSSL's loader: valgrind, a setuid copy).
# CTest reports it as skipped, with the reason; CHAPOLY_REQUIRE_TOOLS does not
# apply: the tool is there, but cannot serve this tree. The native trees run it.
echo "not run in $1: $2"
echo "skipped"
exit 77
