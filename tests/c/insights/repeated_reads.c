/* repeated_reads: a loop that reads the same 1 MiB hyperslab (rows 8-263) of a 1.06 MiB
 * contiguous dataset 200 times (as an analysis re-reading its input every iteration).
 * With --fixed it reads the hyperslab once and reuses the buffer for the 200 iterations.
 *
 * Usage: repeated_reads [--fixed]. Writes repeated_reads.h5 in the current directory;
 * exits non-zero on any HDF5 error. */
#include "hdf5.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CK(x)                                                                              \
    do {                                                                                   \
        if ((x) < 0) {                                                                     \
            fprintf(stderr, "%s:%d: %s failed\n", __FILE__, __LINE__, #x);                 \
            exit(1);                                                                       \
        }                                                                                  \
    } while (0)

enum { ROWS = 272, COLS = 1024, BLOCK = 256, ITERS = 200 };

int main(int argc, char **argv)
{
    int      fixed   = argc > 1 && strcmp(argv[1], "--fixed") == 0;
    int     *all     = malloc(sizeof(int) * ROWS * COLS);
    int     *buf     = malloc(sizeof(int) * BLOCK * COLS);
    hsize_t  dims[2] = {ROWS, COLS}, count[2] = {BLOCK, COLS}, start[2] = {8, 0};
    hid_t    f, space, d, mem;
    long     sum = 0;
    for (size_t i = 0; i < (size_t)ROWS * COLS; i++)
        all[i] = (int)(i % 977);
    CK(f = H5Fcreate("repeated_reads.h5", H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
    CK(space = H5Screate_simple(2, dims, NULL));
    CK(d = H5Dcreate2(f, "input", H5T_NATIVE_INT, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    CK(H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, all));
    CK(mem = H5Screate_simple(2, count, NULL));
    CK(H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL));
    for (int it = 0; it < ITERS; it++) {
        if (!fixed || it == 0)
            CK(H5Dread(d, H5T_NATIVE_INT, mem, space, H5P_DEFAULT, buf));
        sum += buf[it % BLOCK];
    }
    if (sum == 0)
        return 2;
    CK(H5Sclose(mem));
    CK(H5Dclose(d));
    CK(H5Sclose(space));
    CK(H5Fclose(f));
    free(buf);
    free(all);
    return 0;
}
