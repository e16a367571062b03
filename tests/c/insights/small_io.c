/* small_io: 4000 one-element (4-byte) writes to a contiguous dataset, as a simulation
 * writing one record at a time; then one read of the whole dataset. With --fixed the
 * records are gathered in memory and written with one H5Dwrite.
 *
 * Usage: small_io [--fixed]. Writes small_io.h5 in the current directory; exits non-zero
 * on any HDF5 error. */
#include "fixture.h"

enum { N = 4000 };

int main(int argc, char **argv)
{
    fixture_init(&argc, &argv);
    hid_t fapl = fixture_fapl();
    int     fixed   = fixture_fixed(argc, argv);
    int    *all     = malloc(sizeof(int) * N);
    hsize_t dims[1] = {N}, one[1] = {1};
    hid_t   f, space, d, mem;
    CHECK(f = H5Fcreate("small_io.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl));
    CHECK(space = H5Screate_simple(1, dims, NULL));
    CHECK(d = H5Dcreate2(f, "records", H5T_NATIVE_INT, space, H5P_DEFAULT, H5P_DEFAULT,
                         H5P_DEFAULT));
    for (int i = 0; i < N; i++)
        all[i] = i * 7;
    if (fixed)
        CHECK(H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, all));
    else {
        CHECK(mem = H5Screate_simple(1, one, NULL));
        for (int i = 0; i < N; i++) {
            hsize_t start[1] = {(hsize_t)i};
            CHECK(H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, one, NULL));
            CHECK(H5Dwrite(d, H5T_NATIVE_INT, mem, space, H5P_DEFAULT, &all[i]));
        }
        CHECK(H5Sclose(mem));
    }
    memset(all, 0, sizeof(int) * N);
    CHECK(H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, all));
    if (all[N - 1] != (N - 1) * 7)
        return 2;
    CHECK(H5Dclose(d));
    CHECK(H5Sclose(space));
    CHECK(H5Fclose(f));
    CHECK(H5Pclose(fapl));
    free(all);
    fixture_finish();
    return 0;
}
