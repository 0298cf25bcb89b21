# SPDX-License-Identifier: Apache-2.0
# Cross build for Debian's i386 (32-bit x86) on an x86-64 Debian host:
#   cmake -S . -B build-i386 --toolchain cmake/i686-linux-gnu.cmake
# Everything else is in cmake/debian-cross.cmake.
set(CHAPOLY_CROSS_ARCH i386)
include("${CMAKE_CURRENT_LIST_DIR}/debian-cross.cmake")
