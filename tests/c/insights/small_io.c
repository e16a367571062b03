/* small_io: 4000 one-element (4-byte) writes to a contiguous dataset, as a simulation
 * writing one record at a time; then one read of the whole dataset. With --fixed the
 * records are gathered in memory and written with one H5Dwrite.
 *
 * Usage: small_io [--fixed]. Writes small_io.h5 in the current directory; exits non-zero
 * on any HDF5 error. */
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

enum { N = 4000 };

int main(int argc, char **argv)
{
    int     fixed   = argc > 1 && strcmp(argv[1], "--fixed") == 0;
    int    *all     = malloc(sizeof(int) * N);
    hsize_t dims[1] = {N}, one[1] = {1};
    hid_t   f, space, d, mem;
    CK(f = H5Fcreate("small_io.h5", H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
    CK(space = H5Screate_simple(1, dims, NULL));
    CK(d = H5Dcreate2(f, "records", H5T_NATIVE_INT, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    for (int i = 0; i < N; i++)
        all[i] = i * 7;
    if (fixed)
        CK(H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, all));
    else {
        CK(mem = H5Screate_simple(1, one, NULL));
        for (int i = 0; i < N; i++) {
            hsize_t start[1] = {(hsize_t)i};
            CK(H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, one, NULL));
            CK(H5Dwrite(d, H5T_NATIVE_INT, mem, space, H5P_DEFAULT, &all[i]));
        }
        CK(H5Sclose(mem));
    }
    memset(all, 0, sizeof(int) * N);
    CK(H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, all));
    if (all[N - 1] != (N - 1) * 7)
        return 2;
    CK(H5Dclose(d));
    CK(H5Sclose(space));
    CK(H5Fclose(f));
    free(all);
    return 0;
}
