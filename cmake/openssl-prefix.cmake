# SPDX-License-Identifier: Apache-2.0
# A tree built against a private OpenSSL of scripts/openssl-prefix.sh (Debian's
# packages of another release unpacked into one prefix), its programs run
# through that prefix's loader (that release's glibc):
#   cmake -S . -B build-openssl40 --toolchain cmake/openssl-prefix.cmake -DCHAPOLY_OPENSSL_SERIES=4.0
# (the presets build-openssl35*, build-openssl36 and build-openssl40;
# scripts/openssl-prefix.sh SERIES --cmake-args prints the same). The series
# (3.5, 3.6, 4.0) is CHAPOLY_OPENSSL_SERIES, from the cache or the
# environment. The prefix is, in this order, the environment's
# CHAPOLY_OPENSSL<MAJOR><MINOR>_PREFIX (CHAPOLY_OPENSSL40_PREFIX for 4.0), the
# cache's (the tree's first configure stores it), or the repository's
# .cache/openssl-SERIES; a prefix that is not complete yet is prepared first
# (scripts/openssl-prefix.sh SERIES --prefix: a download of a few seconds).
# The processor is the host's: this is not another CPU (CHAPOLY_FOREIGN_CPU
# stays off), only another C library and OpenSSL.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR ${CMAKE_HOST_SYSTEM_PROCESSOR})
if(CMAKE_HOST_SYSTEM_PROCESSOR STREQUAL "x86_64")
  set(_op_triplet x86_64-linux-gnu)
  set(_op_loader ld-linux-x86-64.so.2)
elseif(CMAKE_HOST_SYSTEM_PROCESSOR STREQUAL "aarch64")
  set(_op_triplet aarch64-linux-gnu)
  set(_op_loader ld-linux-aarch64.so.1)
else()
  message(FATAL_ERROR "cmake/openssl-prefix.cmake: unsupported host ${CMAKE_HOST_SYSTEM_PROCESSOR}")
endif()

if(NOT CHAPOLY_OPENSSL_SERIES AND DEFINED ENV{CHAPOLY_OPENSSL_SERIES})
  set(CHAPOLY_OPENSSL_SERIES "$ENV{CHAPOLY_OPENSSL_SERIES}")
endif()
if(NOT CHAPOLY_OPENSSL_SERIES MATCHES "^(3\\.5|3\\.6|4\\.0)$")
  message(FATAL_ERROR "cmake/openssl-prefix.cmake: CHAPOLY_OPENSSL_SERIES must be 3.5, 3.6 or 4.0 "
                      "(got '${CHAPOLY_OPENSSL_SERIES}')")
endif()
set(CHAPOLY_OPENSSL_SERIES "${CHAPOLY_OPENSSL_SERIES}" CACHE STRING
    "The OpenSSL series of the private prefix (scripts/openssl-prefix.sh)" FORCE)
string(REPLACE "." "" _op_tag "${CHAPOLY_OPENSSL_SERIES}")
set(_op_var CHAPOLY_OPENSSL${_op_tag}_PREFIX)

get_filename_component(_op_repo "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)
if(DEFINED ENV{${_op_var}} AND NOT "$ENV{${_op_var}}" STREQUAL "")
  set(_op_prefix "$ENV{${_op_var}}")
elseif(${_op_var})
  set(_op_prefix "${${_op_var}}")
else()
  set(_op_prefix "${_op_repo}/.cache/openssl-${CHAPOLY_OPENSSL_SERIES}")
endif()
# try_compile projects read this file again: they get the series and prefix passed on.
set(${_op_var} "${_op_prefix}" CACHE PATH
    "The private OpenSSL ${CHAPOLY_OPENSSL_SERIES} prefix (scripts/openssl-prefix.sh)" FORCE)
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES CHAPOLY_OPENSSL_SERIES ${_op_var})
list(REMOVE_DUPLICATES CMAKE_TRY_COMPILE_PLATFORM_VARIABLES)

if(NOT EXISTS "${_op_prefix}/.complete")
  message(STATUS "OpenSSL ${CHAPOLY_OPENSSL_SERIES}: preparing ${_op_prefix} (scripts/openssl-prefix.sh)")
  execute_process(COMMAND ${CMAKE_COMMAND} -E env "${_op_var}=${_op_prefix}"
                          "${_op_repo}/scripts/openssl-prefix.sh" ${CHAPOLY_OPENSSL_SERIES} --prefix
                  RESULT_VARIABLE _op_rc OUTPUT_QUIET)
  if(NOT _op_rc EQUAL 0)
    message(FATAL_ERROR "scripts/openssl-prefix.sh could not prepare OpenSSL ${CHAPOLY_OPENSSL_SERIES} "
                        "in ${_op_prefix} (its messages are above)")
  endif()
endif()
if(_op_prefix MATCHES "[ ;]")
  message(FATAL_ERROR "the OpenSSL ${CHAPOLY_OPENSSL_SERIES} prefix must not contain spaces or ';': ${_op_prefix}")
endif()

set(_op_libdir "${_op_prefix}/usr/lib/${_op_triplet}")
# The tree must be built against and run with the series (test/CMakeLists.txt).
set(CHAPOLY_EXPECT_OPENSSL ${CHAPOLY_OPENSSL_SERIES} CACHE STRING "" FORCE)
set(OPENSSL_ROOT_DIR "${_op_prefix}/usr" CACHE PATH "" FORCE)
set(OPENSSL_INCLUDE_DIR "${_op_prefix}/usr/include" CACHE PATH "" FORCE)
set(OPENSSL_CRYPTO_LIBRARY "${_op_libdir}/libcrypto.so" CACHE FILEPATH "" FORCE)
set(OPENSSL_SSL_LIBRARY "${_op_libdir}/libssl.so" CACHE FILEPATH "" FORCE)
set(OPENSSL_EXECUTABLE_PATH "${_op_prefix}/usr/bin/openssl" CACHE FILEPATH "" FORCE)
# configuration.h sits in the multiarch include directory.
set(CMAKE_C_STANDARD_INCLUDE_DIRECTORIES "${_op_prefix}/usr/include/${_op_triplet}")
# Every program starts through the prefix's loader with the prefix's libraries.
set(CMAKE_CROSSCOMPILING_EMULATOR "${_op_libdir}/${_op_loader};--library-path;${_op_libdir}")
# The prefix's libcrypto needs its newer glibc symbols, which this system's
# linker cannot resolve.
set(CMAKE_EXE_LINKER_FLAGS_INIT "-Wl,--allow-shlib-undefined")
