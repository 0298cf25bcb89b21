# SPDX-License-Identifier: Apache-2.0
# Cross build for another Debian architecture on an x86-64 Debian host, included
# by the per-architecture toolchain files (cmake/s390x-linux-gnu.cmake,
# arm-linux-gnueabihf.cmake, i686-linux-gnu.cmake, powerpc64le-linux-gnu.cmake,
# riscv64-linux-gnu.cmake), which set CHAPOLY_CROSS_ARCH to the Debian name:
#   cmake -S . -B build-s390x --toolchain cmake/s390x-linux-gnu.cmake
# (the presets build-s390x, build-armhf, build-i386; build-ppc64el and
# build-riscv64 for the optional run, docs/testing.md).
#
# The compiler and C library are Debian's cross packages (gcc-TRIPLET,
# libc6-dev-ARCH-cross, under /usr/TRIPLET; scripts/install-test-deps.sh
# installs them). OpenSSL and libsodium of the target come from a sysroot that
# scripts/cross-sysroot.sh prepares in the repository's .cache/ (Debian's
# packages of that architecture unpacked, nothing installed system-wide); a
# sysroot that is not complete yet is prepared here first (a download of a
# few seconds). Programs run under qemu-user (qemu-user-static) with the
# sysroot as the root of their absolute paths (qemu -L): the target's own C
# library and loader from its libc6 package, its libcrypto and libsodium at
# their multiarch paths (a path the sysroot lacks falls through to the host's:
# the build tree, /tmp, /dev/null). i386 programs run natively on the x86-64
# kernel through the cross C library's loader (ld-linux.so.2 of
# libc6-dev-i386-cross) with the sysroot's libraries on its library path,
# which is much faster than qemu-i386 (two tests ran past 600 s under it).
if(NOT CHAPOLY_CROSS_ARCH)
  message(FATAL_ERROR "cmake/debian-cross.cmake: set CHAPOLY_CROSS_ARCH (use a per-architecture toolchain file)")
endif()
# try_compile projects read the toolchain file again: they get the variables passed on.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES CHAPOLY_CROSS_ARCH CHAPOLY_CROSS_SYSROOT)
list(REMOVE_DUPLICATES CMAKE_TRY_COMPILE_PLATFORM_VARIABLES)

# Debian architecture: multiarch triplet, compiler prefix, processor, qemu-user name
set(_x_rows s390x armhf i386 ppc64el riscv64)
set(_x_s390x s390x-linux-gnu s390x-linux-gnu s390x s390x)
set(_x_armhf arm-linux-gnueabihf arm-linux-gnueabihf arm arm)
set(_x_i386 i386-linux-gnu i686-linux-gnu i686 "")
set(_x_ppc64el powerpc64le-linux-gnu powerpc64le-linux-gnu ppc64le ppc64le)
set(_x_riscv64 riscv64-linux-gnu riscv64-linux-gnu riscv64 riscv64)
if(NOT CHAPOLY_CROSS_ARCH IN_LIST _x_rows)
  message(FATAL_ERROR "cmake/debian-cross.cmake: unknown architecture ${CHAPOLY_CROSS_ARCH} (known: ${_x_rows})")
endif()
list(GET _x_${CHAPOLY_CROSS_ARCH} 0 _x_multiarch)
list(GET _x_${CHAPOLY_CROSS_ARCH} 1 _x_gnu)
list(GET _x_${CHAPOLY_CROSS_ARCH} 2 _x_processor)
list(GET _x_${CHAPOLY_CROSS_ARCH} 3 _x_qemu)

set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR ${_x_processor})
find_program(CMAKE_C_COMPILER ${_x_gnu}-gcc)
if(NOT CMAKE_C_COMPILER)
  message(FATAL_ERROR "${_x_gnu}-gcc not found (apt-get install gcc-${_x_gnu} "
                      "libc6-dev-${CHAPOLY_CROSS_ARCH}-cross; scripts/install-test-deps.sh --cross)")
endif()
set(_x_libc "/usr/${_x_gnu}")

# The sysroot: the environment's CHAPOLY_SYSROOT_DIR (its sysroot-ARCH), the
# cache's (the tree's first configure stores it), or the repository's .cache/.
get_filename_component(_x_repo "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)
if(NOT CHAPOLY_CROSS_SYSROOT)
  if(DEFINED ENV{CHAPOLY_SYSROOT_DIR} AND NOT "$ENV{CHAPOLY_SYSROOT_DIR}" STREQUAL "")
    set(CHAPOLY_CROSS_SYSROOT "$ENV{CHAPOLY_SYSROOT_DIR}/sysroot-${CHAPOLY_CROSS_ARCH}")
  else()
    set(CHAPOLY_CROSS_SYSROOT "${_x_repo}/.cache/sysroot-${CHAPOLY_CROSS_ARCH}")
  endif()
endif()
set(CHAPOLY_CROSS_SYSROOT "${CHAPOLY_CROSS_SYSROOT}" CACHE PATH
    "The target's libraries (scripts/cross-sysroot.sh ${CHAPOLY_CROSS_ARCH})" FORCE)
if(CHAPOLY_CROSS_SYSROOT MATCHES "[ ;]")
  message(FATAL_ERROR "the sysroot path must not contain spaces or ';': ${CHAPOLY_CROSS_SYSROOT}")
endif()
if(NOT EXISTS "${CHAPOLY_CROSS_SYSROOT}/.complete")
  message(STATUS "${CHAPOLY_CROSS_ARCH}: preparing ${CHAPOLY_CROSS_SYSROOT} (scripts/cross-sysroot.sh)")
  get_filename_component(_x_parent "${CHAPOLY_CROSS_SYSROOT}" DIRECTORY)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env "CHAPOLY_SYSROOT_DIR=${_x_parent}"
                          "${_x_repo}/scripts/cross-sysroot.sh" ${CHAPOLY_CROSS_ARCH} --prefix
                  RESULT_VARIABLE _x_rc OUTPUT_QUIET)
  if(NOT _x_rc EQUAL 0)
    message(FATAL_ERROR "scripts/cross-sysroot.sh could not prepare ${CHAPOLY_CROSS_SYSROOT} "
                        "(its messages are above)")
  endif()
endif()
set(_x_root "${CHAPOLY_CROSS_SYSROOT}/root")
set(_x_libdir "${_x_root}/usr/lib/${_x_multiarch}")

# Target libraries and headers: the sysroot, then the cross C library;
# programs (sh, cmake, the x86 openssl command) from the host.
set(CMAKE_LIBRARY_ARCHITECTURE ${_x_multiarch})
set(CMAKE_FIND_ROOT_PATH "${_x_root}" "${_x_libc}")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
set(OPENSSL_ROOT_DIR "${_x_root}/usr" CACHE PATH "" FORCE)
set(OPENSSL_INCLUDE_DIR "${_x_root}/usr/include" CACHE PATH "" FORCE)
set(OPENSSL_CRYPTO_LIBRARY "${_x_libdir}/libcrypto.so" CACHE FILEPATH "" FORCE)
set(OPENSSL_SSL_LIBRARY "${_x_libdir}/libssl.so" CACHE FILEPATH "" FORCE)
# configuration.h sits in the multiarch include directory.
set(CMAKE_C_STANDARD_INCLUDE_DIRECTORIES "${_x_root}/usr/include/${_x_multiarch}")
# libssl.so's own dependency (libcrypto.so.3) is found at link time there.
foreach(_x_kind EXE SHARED MODULE)
  set(CMAKE_${_x_kind}_LINKER_FLAGS_INIT "-Wl,-rpath-link,${_x_libdir}")
endforeach()
# riscv64's libraries are Debian 13's (scripts/cross-sysroot.sh): they need
# its newer glibc symbols, which the linker cannot resolve against bookworm's
# cross C library; at run time the sysroot's own C library is there.
if(CHAPOLY_CROSS_ARCH STREQUAL "riscv64")
  string(APPEND CMAKE_EXE_LINKER_FLAGS_INIT " -Wl,--allow-shlib-undefined")
endif()
# pkg-config (libcrypto's modulesdir, libsodium) reads the target's .pc files
# only, its paths prefixed with the sysroot; the top-level CMakeLists.txt
# takes that prefix off the module directory again (CHAPOLY_TARGET_ROOT).
set(ENV{PKG_CONFIG_LIBDIR} "${_x_libdir}/pkgconfig:${_x_root}/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_PATH} "")
set(ENV{PKG_CONFIG_SYSROOT_DIR} "${_x_root}")
set(CHAPOLY_TARGET_ROOT "${_x_root}")
# cpack's dpkg-shlibdeps reads the Depends of the target's libc6, libssl3 and
# libsodium23 from these package trees (cmake/package.cmake).
set(CHAPOLY_SHLIBDEPS_TREES "${CHAPOLY_CROSS_SYSROOT}/pkg")

# CTest (and try_run) start every program of the tree through this.
if(_x_qemu)
  find_program(CHAPOLY_QEMU_${CHAPOLY_CROSS_ARCH} NAMES qemu-${_x_qemu}-static qemu-${_x_qemu})
  if(NOT CHAPOLY_QEMU_${CHAPOLY_CROSS_ARCH})
    message(FATAL_ERROR "qemu-${_x_qemu}-static not found (apt-get install qemu-user-static)")
  endif()
  set(CMAKE_CROSSCOMPILING_EMULATOR "${CHAPOLY_QEMU_${CHAPOLY_CROSS_ARCH}};-L;${_x_root}")
else()
  # i386: the cross C library's loader, run by the x86-64 kernel itself,
  # when this kernel runs 32-bit programs at all: a kernel built without
  # CONFIG_IA32_EMULATION, or booted with ia32_emulation=off (this project's
  # CI machines: "32-bit emulation disabled" in dmesg, exec gives ENOEXEC),
  # does not, and then qemu-i386 runs them like the other architectures.
  if(NOT EXISTS "${_x_libc}/lib/ld-linux.so.2")
    message(FATAL_ERROR "${_x_libc}/lib/ld-linux.so.2 not found (apt-get install libc6-dev-i386-cross)")
  endif()
  execute_process(COMMAND "${_x_libc}/lib/ld-linux.so.2" --version RESULT_VARIABLE _x_native
                  OUTPUT_QUIET ERROR_QUIET)
  if(_x_native EQUAL 0)
    set(CMAKE_CROSSCOMPILING_EMULATOR "${_x_libc}/lib/ld-linux.so.2;--library-path;${_x_libc}/lib:${_x_libdir}")
  else()
    find_program(CHAPOLY_QEMU_i386 NAMES qemu-i386-static qemu-i386)
    if(NOT CHAPOLY_QEMU_i386)
      message(FATAL_ERROR "this kernel does not run 32-bit x86 programs and qemu-i386-static is "
                          "not found (apt-get install qemu-user-static)")
    endif()
    set(CMAKE_CROSSCOMPILING_EMULATOR "${CHAPOLY_QEMU_i386};-L;${_x_root}")
  endif()
endif()
