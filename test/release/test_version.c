/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The module reports the project's version, from its one source: CMake's
 * project(VERSION), which CTest passes here as CHAPOLY_PROJECT_VERSION. The
 * "version" provider parameter must be exactly that, and the buildinfo line
 * must start "chapoly <version> (". A build that dropped the definition, kept
 * a stale copy or typed the number by hand fails here.
 */
#include <stdlib.h>
#include <string.h>
#include <openssl/core_names.h>
#include <openssl/params.h>
#include "test_common.h"

int main(void)
{
    const char *want = getenv("CHAPOLY_PROJECT_VERSION");
    char *version = NULL, *buildinfo = NULL;
    char prefix[96];

    t_setup();
    T_OK(want != NULL && *want != '\0', "CHAPOLY_PROJECT_VERSION is not set (CTest sets it)");
    if (want == NULL)
        want = "";
    OSSL_PARAM p[3] = { OSSL_PARAM_construct_utf8_ptr(OSSL_PROV_PARAM_VERSION, &version, 0),
                        OSSL_PARAM_construct_utf8_ptr(OSSL_PROV_PARAM_BUILDINFO, &buildinfo, 0),
                        OSSL_PARAM_construct_end() };
    T_OK(OSSL_PROVIDER_get_params(t_prov, p), "OSSL_PROVIDER_get_params");
    T_OK(version != NULL && strcmp(version, want) == 0,
         "provider version \"%s\", project(VERSION) \"%s\"", version ? version : "(null)", want);
    snprintf(prefix, sizeof(prefix), "chapoly %s (", want);
    T_OK(buildinfo != NULL && strncmp(buildinfo, prefix, strlen(prefix)) == 0,
         "buildinfo \"%s\" does not start \"%s\"", buildinfo ? buildinfo : "(null)", prefix);
    printf("chapoly version %s, buildinfo: %s\n", version ? version : "(null)",
           buildinfo ? buildinfo : "(null)");
    t_teardown();
    return t_finish("test_version");
}
