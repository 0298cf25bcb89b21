/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ctgrind: memcheck's definedness tracking doubles as a secret tracker.
 * Bytes marked "undefined" are secrets; memcheck then reports every
 * conditional branch ("Conditional jump or move depends on uninitialised
 * value(s)") and every address ("Use of uninitialised value of size 8")
 * computed from them, while plain arithmetic on them stays silent. Values
 * that are public by design (ciphertext, tags, the verification verdict)
 * are marked defined again before the code branches on them.
 *
 * Outside valgrind the client requests are no-ops and the programs only
 * check correctness.
 */
#ifndef CHAPOLY_CT_COMMON_H
#define CHAPOLY_CT_COMMON_H

#include <valgrind/memcheck.h>

#define CT_SECRET(p, n) VALGRIND_MAKE_MEM_UNDEFINED((p), (n))
#define CT_PUBLIC(p, n) VALGRIND_MAKE_MEM_DEFINED((p), (n))

#endif
