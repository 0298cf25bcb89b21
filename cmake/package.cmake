# SPDX-License-Identifier: Apache-2.0
# Install rules and the Debian package (included by the top-level CMakeLists.txt).
#
#   cmake --install build                    chapoly.so into CHAPOLY_MODULES_DIR, as
#                                            always (component module), nothing else
#   cmake --install build --component doc    README.md, CHANGELOG.md, LICENSE, copyright
#                                            and openssl.cnf.example in
#                                            <prefix>/share/doc/chapoly, docs/*.md and
#                                            the pipeline example under its docs/ (the
#                                            README's links hold there too),
#                                            the example also as <prefix>/share/chapoly/chapoly.cnf
#   (cd build && cpack -G DEB)               chapoly_<version>_<arch>.deb with both
#
# The version is project(VERSION) alone: the module's "version" parameter and
# buildinfo (provider/CMakeLists.txt passes it as CHAPOLY_VERSION) and the
# package's Version field. docs/packaging.md is the user's side of this.
include(GNUInstallDirs)

# Mode 0644 like OpenSSL's own modules (a shared object needs no execute bit).
install(TARGETS chapoly
  LIBRARY DESTINATION "${CHAPOLY_MODULES_DIR}" COMPONENT module
  PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)

# Debian's machine-readable copyright file, /usr/share/doc/chapoly/copyright.
file(CONFIGURE OUTPUT "${CMAKE_BINARY_DIR}/package/copyright" @ONLY CONTENT
"Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: chapoly
Comment: The licence text is also in /usr/share/doc/chapoly/LICENSE.

Files: *
Copyright: 2026 The chapoly authors
License: Apache-2.0

License: Apache-2.0
 Licensed under the Apache License, Version 2.0 (the \"License\");
 you may not use this file except in compliance with the License.
 You may obtain a copy of the License at
 .
 https://www.apache.org/licenses/LICENSE-2.0
 .
 Unless required by applicable law or agreed to in writing, software
 distributed under the License is distributed on an \"AS IS\" BASIS,
 WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
 See the License for the specific language governing permissions and
 limitations under the License.
 .
 On Debian systems, the complete text of the Apache License, Version 2.0
 can be found in \"/usr/share/common-licenses/Apache-2.0\".
")

# Not part of a plain `cmake --install` (which installs the module only, as
# before 0.2.0); the package and `--component doc` install them.
install(FILES README.md CHANGELOG.md LICENSE openssl.cnf.example
              "${CMAKE_BINARY_DIR}/package/copyright"
  DESTINATION "${CMAKE_INSTALL_DOCDIR}" COMPONENT doc EXCLUDE_FROM_ALL)
# docs/ as in the repository, so that README.md's links to docs/*.md resolve in
# /usr/share/doc/chapoly too; of docs/examples/ the program and its output (its
# CMake files build it as a test and mean nothing outside the source tree).
file(GLOB CHAPOLY_DOC_PAGES CONFIGURE_DEPENDS "${CMAKE_SOURCE_DIR}/docs/*.md")
install(FILES ${CHAPOLY_DOC_PAGES}
  DESTINATION "${CMAKE_INSTALL_DOCDIR}/docs" COMPONENT doc EXCLUDE_FROM_ALL)
install(FILES docs/examples/pipeline_seal.c docs/examples/pipeline_seal.expected
  DESTINATION "${CMAKE_INSTALL_DOCDIR}/docs/examples" COMPONENT doc EXCLUDE_FROM_ALL)
# The same example outside /usr/share/doc for `.include`: Debian lets an
# administrator (or a slim image) leave /usr/share/doc out, so a configuration
# must not name a file there (Debian policy 12.3).
install(FILES openssl.cnf.example RENAME chapoly.cnf
  DESTINATION "${CMAKE_INSTALL_DATADIR}/chapoly" COMPONENT doc EXCLUDE_FROM_ALL)

# ---- cpack -G DEB ------------------------------------------------------------
set(CHAPOLY_PACKAGE_MAINTAINER
    "Seed b58c3299 maintainers <maintainers@users.noreply.a-seed-b58c3299.example>"
    CACHE STRING "The Maintainer field of the Debian package")

# Architecture: the target's, not necessarily the build machine's.
if(NOT CPACK_DEBIAN_PACKAGE_ARCHITECTURE)
  set(_deb_arch "")
  if(NOT CMAKE_CROSSCOMPILING)
    execute_process(COMMAND dpkg --print-architecture OUTPUT_VARIABLE _deb_arch
                    OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE _rc)
  else()
    # Cross trees: from the multiarch triplet (the arm64 toolchain file sets
    # CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu) or the processor.
    set(_triplet "${CMAKE_LIBRARY_ARCHITECTURE}")
    if(NOT _triplet)
      set(_triplet "${CMAKE_SYSTEM_PROCESSOR}-linux-gnu")
    endif()
    set(_deb_arch_map
        aarch64-linux-gnu=arm64 x86_64-linux-gnu=amd64 i386-linux-gnu=i386 i686-linux-gnu=i386
        arm-linux-gnueabihf=armhf arm-linux-gnueabi=armel powerpc64le-linux-gnu=ppc64el
        s390x-linux-gnu=s390x riscv64-linux-gnu=riscv64)
    foreach(_m IN LISTS _deb_arch_map)
      if(_m MATCHES "^${_triplet}=(.*)$")
        set(_deb_arch "${CMAKE_MATCH_1}")
      endif()
    endforeach()
  endif()
  if(_deb_arch)
    set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE "${_deb_arch}")
  else()
    message(STATUS "chapoly: no Debian architecture for this target; `cpack -G DEB` needs "
                   "-DCPACK_DEBIAN_PACKAGE_ARCHITECTURE=<arch>")
  endif()
endif()

# Depends: computed by dpkg-shlibdeps from the module's own imports, as a
# Debian package build does: libc6 alone, with its minimum version from the
# symbols files (the module links no libcrypto: one package serves OpenSSL
# 3.0 to 4.0, libssl3, libssl3t64 and libssl4 alike). A cross tree gets the
# target's answer: cpack runs dpkg-shlibdeps with DEB_HOST_ARCH set, so it
# reads the target's symbols files and runs the target's objdump. Without
# dpkg-shlibdeps (dpkg-dev) or file: libc6 with no version.
find_program(CHAPOLY_DPKG_SHLIBDEPS dpkg-shlibdeps)
find_program(CHAPOLY_FILE_PROGRAM file)
mark_as_advanced(CHAPOLY_DPKG_SHLIBDEPS CHAPOLY_FILE_PROGRAM)
set(CHAPOLY_DEB_SHLIBDEPS OFF)
if(CHAPOLY_DPKG_SHLIBDEPS AND CHAPOLY_FILE_PROGRAM AND CPACK_DEBIAN_PACKAGE_ARCHITECTURE)
  set(CHAPOLY_DEB_SHLIBDEPS ON)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
  if(CMAKE_CROSSCOMPILING)
    file(CONFIGURE OUTPUT "${CMAKE_BINARY_DIR}/package/cpack-cross.cmake" @ONLY CONTENT
"# Written by cmake/package.cmake: dpkg-shlibdeps, run by cpack, answers for the target.
set(ENV{DEB_HOST_ARCH} \"@CPACK_DEBIAN_PACKAGE_ARCHITECTURE@\")
")
    set(CPACK_PROJECT_CONFIG_FILE "${CMAKE_BINARY_DIR}/package/cpack-cross.cmake")
    # A tree built against a sysroot (cmake/debian-cross.cmake) has the target's
    # libc6, libssl3 and libsodium23 not installed but unpacked, one directory
    # per package with its DEBIAN/symbols and shlibs. dpkg-shlibdeps takes
    # debian/*/ in its working directory (cpack's staging directory) for the
    # trees of packages being built, and reads a library's Depends from the
    # tree it finds the library in: the trees are linked there just before
    # (cpack removes debian/ afterwards: the links only, not what they point to).
    if(CHAPOLY_SHLIBDEPS_TREES)
      file(CONFIGURE OUTPUT "${CMAKE_BINARY_DIR}/package/cpack-shlibdeps-trees.cmake" @ONLY CONTENT
"# Written by cmake/package.cmake: the target's library packages, for dpkg-shlibdeps.
file(GLOB _trees LIST_DIRECTORIES true \"@CHAPOLY_SHLIBDEPS_TREES@/*\")
foreach(_t IN LISTS _trees)
  if(EXISTS \"\${_t}/DEBIAN/control\")
    get_filename_component(_n \"\${_t}\" NAME)
    file(MAKE_DIRECTORY \"\${CPACK_TEMPORARY_DIRECTORY}/debian\")
    file(CREATE_LINK \"\${_t}\" \"\${CPACK_TEMPORARY_DIRECTORY}/debian/\${_n}\" SYMBOLIC)
  endif()
endforeach()
")
      set(CPACK_PRE_BUILD_SCRIPTS "${CMAKE_BINARY_DIR}/package/cpack-shlibdeps-trees.cmake")
    endif()
  endif()
else()
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "libc6")
  message(STATUS "chapoly: dpkg-shlibdeps or file not found (apt-get install dpkg-dev file): "
                 "the Debian package will depend on ${CPACK_DEBIAN_PACKAGE_DEPENDS} alone")
endif()

set(CPACK_PACKAGE_NAME chapoly)
set(CPACK_PACKAGE_VENDOR "The chapoly authors")
set(CPACK_PACKAGE_CONTACT "${CHAPOLY_PACKAGE_MAINTAINER}")
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${CHAPOLY_PACKAGE_MAINTAINER}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "OpenSSL 3 provider: SIMD ChaCha20-Poly1305, XChaCha20-Poly1305 and Poly1305")
set(CPACK_PACKAGE_DESCRIPTION
"chapoly is an OpenSSL 3 provider module (chapoly.so) with AVX2, AVX-512 and
NEON kernels for ChaCha20-Poly1305, XChaCha20-Poly1305, ChaCha20 and the
POLY1305 MAC. Loaded through openssl.cnf, it serves existing applications
(the openssl command, TLS 1.2 and 1.3 through libssl) without changes.
One module serves OpenSSL 3.0 to 4.0: it links no libcrypto.
The package installs the module into OpenSSL's module directory and never
edits the system's openssl.cnf: /usr/share/doc/chapoly/docs/packaging.md says
how to enable it.")
set(CPACK_DEBIAN_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT) # chapoly_<version>_<arch>.deb
set(CPACK_STRIP_FILES ON)
set(CPACK_GENERATOR DEB)
# The module, and the doc component that a plain install leaves out.
set(CPACK_INSTALL_CMAKE_PROJECTS
    "${CMAKE_BINARY_DIR};${PROJECT_NAME};module;/"
    "${CMAKE_BINARY_DIR};${PROJECT_NAME};doc;/")
set(CPACK_SOURCE_GENERATOR TGZ)
set(CPACK_SOURCE_IGNORE_FILES "/\\\\.git(/|$)" "/build[^/]*/" "/_build[^/]*/" "/cmake-build[^/]*/"
    "/\\\\.cache/" "/bench/out/")
include(CPack)
