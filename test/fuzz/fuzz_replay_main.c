/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A main() for builds without libFuzzer (gcc, valgrind, plain CI): runs
 * LLVMFuzzerTestOneInput once over every file named on the command line or
 * found directly inside a named directory. The seed corpora are replayed
 * this way in ordinary builds, and a crash file from a fuzzing run can be
 * replayed under a debugger or valgrind without clang.
 */
/*
 * 64-bit inode numbers and directory offsets on 32-bit targets (i386,
 * armhf): without it readdir and stat fail with EOVERFLOW where the file
 * system hands out 64-bit ones (under qemu-user on a 64-bit host every
 * directory did, and no input was replayed).
 */
#define _FILE_OFFSET_BITS 64
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static unsigned long ran;

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    uint8_t *buf;
    long n;

    if (f == NULL || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
        fprintf(stderr, "cannot read %s\n", path);
        if (f != NULL)
            fclose(f);
        return 0;
    }
    buf = malloc(n > 0 ? (size_t)n : 1);
    if (buf == NULL || fread(buf, 1, (size_t)n, f) != (size_t)n) {
        fprintf(stderr, "cannot read %s\n", path);
        free(buf);
        fclose(f);
        return 0;
    }
    fclose(f);
    LLVMFuzzerTestOneInput(buf, (size_t)n);
    free(buf);
    ran++;
    return 1;
}

int main(int argc, char **argv)
{
    int ok = 1;

    LLVMFuzzerInitialize(&argc, &argv);
    for (int i = 1; i < argc; i++) {
        struct stat st;

        if (stat(argv[i], &st) != 0) {
            fprintf(stderr, "cannot stat %s\n", argv[i]);
            ok = 0;
        } else if (S_ISDIR(st.st_mode)) {
            DIR *d = opendir(argv[i]);
            struct dirent *e;

            while (d != NULL && (e = readdir(d)) != NULL) {
                char path[4096];
                struct stat fst;

                snprintf(path, sizeof(path), "%s/%s", argv[i], e->d_name);
                if (e->d_name[0] != '.' && stat(path, &fst) == 0 && S_ISREG(fst.st_mode))
                    ok &= run_file(path);
            }
            if (d != NULL)
                closedir(d);
        } else {
            ok &= run_file(argv[i]);
        }
    }
    printf("%s: %lu inputs replayed without a failure\n", argv[0], ran);
    return ok && ran > 0 ? 0 : 1;
}
