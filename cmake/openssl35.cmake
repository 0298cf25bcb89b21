# SPDX-License-Identifier: Apache-2.0
# A tree built against the private OpenSSL 3.5 (Debian trixie's packages):
# cmake/openssl-prefix.cmake with CHAPOLY_OPENSSL_SERIES=3.5 (its comments say
# how; CHAPOLY_OPENSSL35_PREFIX names another prefix). Kept so that existing
# command lines work.
set(CHAPOLY_OPENSSL_SERIES 3.5)
include("${CMAKE_CURRENT_LIST_DIR}/openssl-prefix.cmake")
