# SPDX-License-Identifier: Apache-2.0
# Cross build for Debian's s390x (big-endian, 64-bit) on an x86-64 Debian host:
#   cmake -S . -B build-s390x --toolchain cmake/s390x-linux-gnu.cmake
# Everything else is in cmake/debian-cross.cmake.
set(CHAPOLY_CROSS_ARCH s390x)
include("${CMAKE_CURRENT_LIST_DIR}/debian-cross.cmake")
