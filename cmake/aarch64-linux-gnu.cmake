# SPDX-License-Identifier: Apache-2.0
# Cross build for 64-bit Arm Linux on an x86-64 Debian host; tests run under qemu.
#   cmake -S . -B build-arm64 --toolchain cmake/aarch64-linux-gnu.cmake
# Needs (Debian 12): dpkg --add-architecture arm64 && apt-get update &&
#   apt-get install gcc-aarch64-linux-gnu qemu-user-static libssl-dev:arm64 libsodium-dev:arm64
# (never openssl:arm64: it replaces the x86 openssl command). scripts/test-all.sh installs them.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CHAPOLY_TRIPLET aarch64-linux-gnu)

find_program(CMAKE_C_COMPILER ${CHAPOLY_TRIPLET}-gcc)
if(NOT CMAKE_C_COMPILER)
  message(FATAL_ERROR "${CHAPOLY_TRIPLET}-gcc not found (apt-get install gcc-${CHAPOLY_TRIPLET})")
endif()
# CTest (and try_run) start every aarch64 program through qemu; the arm64
# loader and libraries sit at their multiarch paths, so no -L is needed.
find_program(CHAPOLY_QEMU_AARCH64 NAMES qemu-aarch64-static qemu-aarch64)
if(NOT CHAPOLY_QEMU_AARCH64)
  message(FATAL_ERROR "qemu-aarch64-static not found (apt-get install qemu-user-static)")
endif()
set(CMAKE_CROSSCOMPILING_EMULATOR ${CHAPOLY_QEMU_AARCH64})

# Libraries and headers of the target (libssl-dev:arm64, libsodium-dev:arm64)
# come from the multiarch paths; programs (sh, the x86 openssl command) from the host.
set(CMAKE_LIBRARY_ARCHITECTURE ${CHAPOLY_TRIPLET})
set(CMAKE_FIND_ROOT_PATH /usr/${CHAPOLY_TRIPLET})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
# pkg-config (libcrypto's modulesdir, libsodium) reads the arm64 .pc files only.
set(ENV{PKG_CONFIG_LIBDIR} /usr/lib/${CHAPOLY_TRIPLET}/pkgconfig:/usr/share/pkgconfig)
set(ENV{PKG_CONFIG_PATH} "")
