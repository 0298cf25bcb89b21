# SPDX-License-Identifier: Apache-2.0
# Cross build for Debian's riscv64 (64-bit RISC-V) on an x86-64 Debian host:
#   cmake -S . -B build-riscv64 --toolchain cmake/riscv64-linux-gnu.cmake
# Everything else is in cmake/debian-cross.cmake.
set(CHAPOLY_CROSS_ARCH riscv64)
include("${CMAKE_CURRENT_LIST_DIR}/debian-cross.cmake")
