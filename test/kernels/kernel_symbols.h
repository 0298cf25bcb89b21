/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The kernel objects' symbols, read from the built objects by
 * kernel_symbols.sh (kernel_symbols.c in the build directory): which object
 * defines each global function or table, and which symbols of other kernel
 * objects each object refers to. test_cpu_masks uses it to find the objects
 * behind a table's function pointers.
 */
#ifndef CHAPOLY_KERNEL_SYMBOLS_H
#define CHAPOLY_KERNEL_SYMBOLS_H

struct kernel_symbol {
    const void *addr; /* NULL ends the list */
    const char *name, *source; /* source: "chacha20_avx2.c" */
};

struct kernel_ref {
    const char *source, *name; /* 'source' uses 'name', defined in another kernel object */
};

extern const struct kernel_symbol kernel_symbols[];
extern const struct kernel_ref kernel_refs[]; /* ends with { NULL, NULL } */

#endif
