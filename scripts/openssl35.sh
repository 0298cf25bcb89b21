#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The private OpenSSL 3.5 (Debian trixie's packages) beside the system's 3.0:
# scripts/openssl-prefix.sh 3.5 [MODE] (its --help: modes, the prefix,
# CHAPOLY_OPENSSL35_PREFIX). Kept so that existing command lines work.
exec "$(dirname "$0")/openssl-prefix.sh" 3.5 "$@"
