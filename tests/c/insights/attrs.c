/* Attributes are not datasets: 1500 small attributes (one int each) written on a dataset,
 * plus one 4 MiB dataset write and read. Attribute I/O lives in the object header
 * (metadata); counted as dataset accesses it would make 1500 of 1502 "dataset accesses"
 * small and trip small_io.
 *
 * Usage: attrs. Writes attrs.h5 in the current directory; exits non-zero on any HDF5
 * error. */
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

enum { N = 1 << 20, NATTR = 1500 };

int main(void)
{
    int    *all     = malloc(sizeof(int) * N);
    hsize_t dims[1] = {N};
    hid_t   f, space, scalar, d, a;
    for (int i = 0; i < N; i++)
        all[i] = i;
    CK(f = H5Fcreate("attrs.h5", H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
    CK(space = H5Screate_simple(1, dims, NULL));
    CK(scalar = H5Screate(H5S_SCALAR));
    CK(d = H5Dcreate2(f, "data", H5T_NATIVE_INT, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    CK(H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, all));
    for (int i = 0; i < NATTR; i++) {
        char name[32];
        snprintf(name, sizeof name, "a%d", i);
        CK(a = H5Acreate2(d, name, H5T_NATIVE_INT, scalar, H5P_DEFAULT, H5P_DEFAULT));
        CK(H5Awrite(a, H5T_NATIVE_INT, &i));
        CK(H5Aclose(a));
    }
    CK(H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, all));
    if (all[N - 1] != N - 1)
        return 2;
    CK(H5Dclose(d));
    CK(H5Sclose(scalar));
    CK(H5Sclose(space));
    CK(H5Fclose(f));
    free(all);
    return 0;
}
