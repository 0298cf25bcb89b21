# SPDX-License-Identifier: Apache-2.0
# A tree built against the private OpenSSL 3.5 of scripts/openssl35.sh (Debian
# trixie's packages unpacked into one prefix), its programs run through that
# prefix's loader (trixie's glibc):
#   cmake -S . -B build-openssl35 --toolchain cmake/openssl35.cmake
# (the presets build-openssl35 and build-openssl35-asan; scripts/openssl35.sh
# --cmake-args prints the same). The prefix is, in this order, the environment's
# CHAPOLY_OPENSSL35_PREFIX, the cache's (the tree's first configure stores it),
# or the repository's .cache/openssl-3.5; a prefix that is not complete yet is
# prepared first (scripts/openssl35.sh --prefix: a download of a few seconds).
# The processor is the host's: this is not another CPU (CHAPOLY_FOREIGN_CPU
# stays off), only another C library and OpenSSL.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR ${CMAKE_HOST_SYSTEM_PROCESSOR})
if(CMAKE_HOST_SYSTEM_PROCESSOR STREQUAL "x86_64")
  set(_o35_triplet x86_64-linux-gnu)
  set(_o35_loader ld-linux-x86-64.so.2)
elseif(CMAKE_HOST_SYSTEM_PROCESSOR STREQUAL "aarch64")
  set(_o35_triplet aarch64-linux-gnu)
  set(_o35_loader ld-linux-aarch64.so.1)
else()
  message(FATAL_ERROR "cmake/openssl35.cmake: unsupported host ${CMAKE_HOST_SYSTEM_PROCESSOR}")
endif()

get_filename_component(_o35_repo "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)
if(DEFINED ENV{CHAPOLY_OPENSSL35_PREFIX} AND NOT "$ENV{CHAPOLY_OPENSSL35_PREFIX}" STREQUAL "")
  set(_o35_prefix "$ENV{CHAPOLY_OPENSSL35_PREFIX}")
elseif(CHAPOLY_OPENSSL35_PREFIX)
  set(_o35_prefix "${CHAPOLY_OPENSSL35_PREFIX}")
else()
  set(_o35_prefix "${_o35_repo}/.cache/openssl-3.5")
endif()
# try_compile projects read this file again: they get the prefix passed on.
set(CHAPOLY_OPENSSL35_PREFIX "${_o35_prefix}" CACHE PATH
    "The private OpenSSL 3.5 prefix (scripts/openssl35.sh)" FORCE)
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES CHAPOLY_OPENSSL35_PREFIX)
list(REMOVE_DUPLICATES CMAKE_TRY_COMPILE_PLATFORM_VARIABLES)

if(NOT EXISTS "${_o35_prefix}/.complete")
  message(STATUS "OpenSSL 3.5: preparing ${_o35_prefix} (scripts/openssl35.sh)")
  execute_process(COMMAND ${CMAKE_COMMAND} -E env "CHAPOLY_OPENSSL35_PREFIX=${_o35_prefix}"
                          "${_o35_repo}/scripts/openssl35.sh" --prefix
                  RESULT_VARIABLE _o35_rc OUTPUT_QUIET)
  if(NOT _o35_rc EQUAL 0)
    message(FATAL_ERROR "scripts/openssl35.sh could not prepare OpenSSL 3.5 in ${_o35_prefix} "
                        "(its messages are above)")
  endif()
endif()
if(_o35_prefix MATCHES "[ ;]")
  message(FATAL_ERROR "the OpenSSL 3.5 prefix must not contain spaces or ';': ${_o35_prefix}")
endif()

set(_o35_libdir "${_o35_prefix}/usr/lib/${_o35_triplet}")
# The tree must be built against and run with 3.5 (test/CMakeLists.txt).
set(CHAPOLY_EXPECT_OPENSSL 3.5 CACHE STRING "" FORCE)
set(OPENSSL_ROOT_DIR "${_o35_prefix}/usr" CACHE PATH "" FORCE)
set(OPENSSL_INCLUDE_DIR "${_o35_prefix}/usr/include" CACHE PATH "" FORCE)
set(OPENSSL_CRYPTO_LIBRARY "${_o35_libdir}/libcrypto.so" CACHE FILEPATH "" FORCE)
set(OPENSSL_SSL_LIBRARY "${_o35_libdir}/libssl.so" CACHE FILEPATH "" FORCE)
set(OPENSSL_EXECUTABLE_PATH "${_o35_prefix}/usr/bin/openssl" CACHE FILEPATH "" FORCE)
# configuration.h sits in the multiarch include directory.
set(CMAKE_C_STANDARD_INCLUDE_DIRECTORIES "${_o35_prefix}/usr/include/${_o35_triplet}")
# Every program starts through trixie's loader with the prefix's libraries.
set(CMAKE_CROSSCOMPILING_EMULATOR "${_o35_libdir}/${_o35_loader};--library-path;${_o35_libdir}")
# 3.5's libcrypto needs trixie's newer glibc symbols, which this system's
# linker cannot resolve.
set(CMAKE_EXE_LINKER_FLAGS_INIT "-Wl,--allow-shlib-undefined")
