# SPDX-License-Identifier: Apache-2.0
# Cross build for Debian's armhf (32-bit ARM (hard float)) on an x86-64 Debian host:
#   cmake -S . -B build-armhf --toolchain cmake/arm-linux-gnueabihf.cmake
# Everything else is in cmake/debian-cross.cmake.
set(CHAPOLY_CROSS_ARCH armhf)
include("${CMAKE_CURRENT_LIST_DIR}/debian-cross.cmake")
