# SPDX-License-Identifier: Apache-2.0
# Cross build for Debian's ppc64el (64-bit POWER, little-endian) on an x86-64 Debian host:
#   cmake -S . -B build-ppc64el --toolchain cmake/powerpc64le-linux-gnu.cmake
# Everything else is in cmake/debian-cross.cmake.
set(CHAPOLY_CROSS_ARCH ppc64el)
include("${CMAKE_CURRENT_LIST_DIR}/debian-cross.cmake")
