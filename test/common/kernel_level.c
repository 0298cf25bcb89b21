/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kernel_level NAME: exit 0 if this CPU runs kernel level NAME in this build,
 * 77 (CTest's "skipped") otherwise. Lets the shell and Python tests skip a
 * level exactly as the C tests do, from the same dispatch code.
 * kernel_level --list: the levels compiled into this build, one per line
 * (from kernels.h's CHAPOLY_LEVEL_LIST), for scripts that walk them.
 */
#include <stdio.h>
#include <string.h>
#include "kernels.h"

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: kernel_level NAME | --list\n");
        return 2;
    }
    if (strcmp(argv[1], "--list") == 0) {
        for (const char *const *n = chapoly_kernels_compiled(); *n != NULL; n++)
            printf("%s\n", *n);
        return 0;
    }
    if (argv[1][0] == '\0' || strcmp(argv[1], "best") == 0 ||
        chapoly_kernels_by_name(argv[1]) != NULL)
        return 0;
    printf("kernel level %s not available here: skipped\n", argv[1]);
    return 77;
}
