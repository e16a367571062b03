/* Attributes are not datasets: 1500 small attributes (one int each) written on a dataset,
 * plus one 4 MiB dataset write and read. Attribute I/O lives in the object header
 * (metadata); counted as dataset accesses it would make 1500 of 1502 "dataset accesses"
 * small and trip small_io.
 *
 * Usage: attrs. Writes attrs.h5 in the current directory; exits non-zero on any HDF5
 * error. */
#include "fixture.h"

enum { N = 1 << 20, NATTR = 1500 };

int main(int argc, char **argv)
{
    fixture_init(&argc, &argv);
    hid_t fapl = fixture_fapl();
    int    *all     = malloc(sizeof(int) * N);
    hsize_t dims[1] = {N};
    hid_t   f, space, scalar, d, a;
    for (int i = 0; i < N; i++)
        all[i] = i;
    CHECK(f = H5Fcreate("attrs.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl));
    CHECK(space = H5Screate_simple(1, dims, NULL));
    CHECK(scalar = H5Screate(H5S_SCALAR));
    CHECK(d = H5Dcreate2(f, "data", H5T_NATIVE_INT, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    CHECK(H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, all));
    for (int i = 0; i < NATTR; i++) {
        char name[32];
        snprintf(name, sizeof name, "a%d", i);
        CHECK(a = H5Acreate2(d, name, H5T_NATIVE_INT, scalar, H5P_DEFAULT, H5P_DEFAULT));
        CHECK(H5Awrite(a, H5T_NATIVE_INT, &i));
        CHECK(H5Aclose(a));
    }
    CHECK(H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, all));
    if (all[N - 1] != N - 1)
        return 2;
    CHECK(H5Dclose(d));
    CHECK(H5Sclose(scalar));
    CHECK(H5Sclose(space));
    CHECK(fixture_close(f));
    CHECK(H5Pclose(fapl));
    free(all);
    fixture_finish();
    return 0;
}
