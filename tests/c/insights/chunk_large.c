/* chunk_too_large: one deflate-compressed 4 MiB chunk (2048x512 floats, the whole
 * dataset) read in 16 row blocks of 256 KiB. A filtered chunk larger than the 1 MiB
 * default chunk cache is never kept, so every read decompresses all 4 MiB to use 1/16 of
 * it. With --fixed the chunks are 128x512 floats (256 KiB), the shape of the reads.
 *
 * Usage: chunk_large [--fixed]. Writes chunk_large.h5 in the current directory; exits
 * non-zero on any HDF5 error. */
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

enum { ROWS = 2048, COLS = 512, BLOCK = 128 };

int main(int argc, char **argv)
{
    int      fixed    = argc > 1 && strcmp(argv[1], "--fixed") == 0;
    hsize_t  dims[2]  = {ROWS, COLS};
    hsize_t  chunk[2] = {ROWS, COLS};
    float   *all      = malloc(sizeof(float) * ROWS * COLS);
    float   *buf      = malloc(sizeof(float) * BLOCK * COLS);
    if (fixed)
        chunk[0] = BLOCK;
    for (size_t i = 0; i < (size_t)ROWS * COLS; i++)
        all[i] = (float)(i % 1000);
    hid_t f;
    CK(f = H5Fcreate("chunk_large.h5", H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
    hid_t space, dcpl, d, mem;
    CK(space = H5Screate_simple(2, dims, NULL));
    CK(dcpl = H5Pcreate(H5P_DATASET_CREATE));
    CK(H5Pset_chunk(dcpl, 2, chunk));
    CK(H5Pset_deflate(dcpl, 1));
    CK(d = H5Dcreate2(f, "field", H5T_NATIVE_FLOAT, space, H5P_DEFAULT, dcpl, H5P_DEFAULT));
    CK(H5Dwrite(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, all));
    hsize_t count[2] = {BLOCK, COLS};
    CK(mem = H5Screate_simple(2, count, NULL));
    for (hsize_t r = 0; r < ROWS; r += BLOCK) {
        hsize_t start[2] = {r, 0};
        CK(H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL));
        CK(H5Dread(d, H5T_NATIVE_FLOAT, mem, space, H5P_DEFAULT, buf));
        if (buf[0] != all[r * COLS])
            return 2;
    }
    CK(H5Sclose(mem));
    CK(H5Dclose(d));
    CK(H5Pclose(dcpl));
    CK(H5Sclose(space));
    CK(H5Fclose(f));
    free(buf);
    free(all);
    return 0;
}
