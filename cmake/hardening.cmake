# SPDX-License-Identifier: Apache-2.0
# Hardening flags for the code that ships: chapoly.so, its test twin and the
# static libraries they are made of (included by the top-level CMakeLists.txt
# after cmake/package.cmake, which knows the target's Debian architecture).
#
# On Debian (dpkg-buildflags, package dpkg-dev) the flags are the ones a
# Debian package build gets with DEB_BUILD_MAINT_OPTIONS=hardening=+all (the
# stack protector, _FORTIFY_SOURCE, format checks, RELRO and BIND_NOW on
# Debian 12), for the target's architecture; a DEB_BUILD_MAINT_OPTIONS or
# DEB_*FLAGS_* of the environment is honoured as dpkg-buildflags honours it.
# Left out of what it prints: -g, -O<n> and the prefix maps, which the build
# type and provider/CMakeLists.txt set. Elsewhere: the same Debian 12 set,
# each flag the compiler and linker take.
#
# The kernels get them too, but for the stack protector (see below).
# _FORTIFY_SOURCE needs optimisation: not in a Debug build (the provider and
# core are -O0 there, and glibc warns). ON by default except in the
# instrumented trees (CHAPOLY_SANITIZE, CHAPOLY_TSAN, CHAPOLY_FUZZ), which
# are never packaged. test/release/test_package.sh checks the packaged module
# (readelf: BIND_NOW, GNU_RELRO, __stack_chk_fail).
if(CHAPOLY_SANITIZE OR CHAPOLY_TSAN OR CHAPOLY_FUZZ)
  set(_harden_default OFF)
else()
  set(_harden_default ON)
endif()
option(CHAPOLY_HARDENING
       "Build the module with the distribution's hardening flags (dpkg-buildflags hardening=+all)"
       ${_harden_default})
set(CHAPOLY_HARDENING_FLAGS "")
if(NOT CHAPOLY_HARDENING)
  message(STATUS "chapoly: no hardening flags (CHAPOLY_HARDENING=OFF)")
  return()
endif()

find_program(CHAPOLY_DPKG_BUILDFLAGS dpkg-buildflags)
mark_as_advanced(CHAPOLY_DPKG_BUILDFLAGS)
set(_harden_c "")
set(_harden_cpp "")
set(_harden_ld "")
set(_harden_from "")
if(CHAPOLY_DPKG_BUILDFLAGS)
  set(_env "DEB_BUILD_MAINT_OPTIONS=hardening=+all $ENV{DEB_BUILD_MAINT_OPTIONS}")
  if(CMAKE_CROSSCOMPILING AND CPACK_DEBIAN_PACKAGE_ARCHITECTURE)
    list(APPEND _env "DEB_HOST_ARCH=${CPACK_DEBIAN_PACKAGE_ARCHITECTURE}")
  endif()
  set(_ok 1)
  foreach(_var CFLAGS CPPFLAGS LDFLAGS)
    execute_process(COMMAND "${CMAKE_COMMAND}" -E env ${_env} "${CHAPOLY_DPKG_BUILDFLAGS}" --get ${_var}
                    OUTPUT_VARIABLE _out OUTPUT_STRIP_TRAILING_WHITESPACE
                    RESULT_VARIABLE _rc ERROR_VARIABLE _err)
    if(NOT _rc EQUAL 0)
      message(WARNING "chapoly: dpkg-buildflags --get ${_var} failed (${_err}); "
                      "using the built-in hardening flags")
      set(_ok 0)
      break()
    endif()
    separate_arguments(_out UNIX_COMMAND "${_out}")
    set(_flags_${_var} ${_out})
  endforeach()
  if(_ok)
    foreach(_f IN LISTS _flags_CFLAGS)
      if(NOT _f MATCHES "^-(g|O)" AND NOT _f MATCHES "^-f(file|debug|macro)-prefix-map=")
        list(APPEND _harden_c "${_f}")
      endif()
    endforeach()
    set(_harden_cpp ${_flags_CPPFLAGS})
    set(_harden_ld ${_flags_LDFLAGS})
    set(_harden_from "dpkg-buildflags")
  endif()
endif()
if(NOT _harden_from)
  include(CheckCCompilerFlag)
  include(CheckLinkerFlag)
  # -Werror=format-security with the -Wformat it needs
  foreach(_f -fstack-protector-strong -Wformat "-Wformat -Werror=format-security")
    string(MAKE_C_IDENTIFIER "CHAPOLY_CC${_f}" _id)
    check_c_compiler_flag("${_f}" ${_id})
    if(${_id})
      separate_arguments(_f UNIX_COMMAND "${_f}")
      list(APPEND _harden_c ${_f})
    endif()
  endforeach()
  list(REMOVE_DUPLICATES _harden_c)
  list(APPEND _harden_cpp -D_FORTIFY_SOURCE=2)
  foreach(_f -Wl,-z,relro -Wl,-z,now)
    string(MAKE_C_IDENTIFIER "CHAPOLY_LD${_f}" _id)
    check_linker_flag(C "${_f}" ${_id})
    if(${_id})
      list(APPEND _harden_ld "${_f}")
    endif()
  endforeach()
  set(_harden_from "built-in list")
endif()

# _FORTIFY_SOURCE (and its -U) only where the code is optimised.
set(_harden_cpp_cfg "")
foreach(_f IN LISTS _harden_cpp)
  if(_f MATCHES "_FORTIFY_SOURCE")
    list(APPEND _harden_cpp_cfg "$<$<NOT:$<CONFIG:Debug>>:${_f}>")
  else()
    list(APPEND _harden_cpp_cfg "${_f}")
  endif()
endforeach()

foreach(_t chapoly chapoly_hooks chapoly_kernels chapoly_kernels_poly32 chapoly_core
           chapoly_core_poly32)
  if(TARGET ${_t})
    target_compile_options(${_t} PRIVATE ${_harden_c} ${_harden_cpp_cfg})
  endif()
endforeach()
# The kernels without the stack protector: their dead-stack scrubs
# (CHAPOLY_DEFINE_SCRUB, poly1305_avx2.c's) are sized to their frames, which
# a canary enlarges and rearranges, so key and hash words would stay on the
# stack below the scrubbed bytes (test_secrets finds them). The rest of the
# hardening applies to them; the provider and core keep the canaries.
set(CHAPOLY_HARDENING_KERNEL_FLAGS "")
if(_harden_c MATCHES "-fstack-protector")
  set(CHAPOLY_HARDENING_KERNEL_FLAGS -fno-stack-protector)
  foreach(_t chapoly_kernels chapoly_kernels_poly32)
    target_compile_options(${_t} PRIVATE ${CHAPOLY_HARDENING_KERNEL_FLAGS})
  endforeach()
endif()
foreach(_t chapoly chapoly_hooks)
  if(TARGET ${_t})
    target_link_options(${_t} PRIVATE ${_harden_ld})
  endif()
endforeach()
string(JOIN " " CHAPOLY_HARDENING_FLAGS ${_harden_c} ${_harden_cpp} ${_harden_ld})
message(STATUS "chapoly: hardening flags (${_harden_from}): ${CHAPOLY_HARDENING_FLAGS}"
               "; kernels/ adds ${CHAPOLY_HARDENING_KERNEL_FLAGS}")
