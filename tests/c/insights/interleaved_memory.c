/* interleaved_memory: two variables x and y (1 Mi doubles each) read straight into an
 * array of (x, y) pairs by a strided memory selection (stride 2, block 1: the C version of
 * reading into `pairs[:, 0]` with h5py's read_direct, or a Fortran-minded
 * "read into every other element"): HDF5 scatters the 2 Mi elements one at a time through
 * its hyperslab iterator. With --fixed each variable is read into a contiguous buffer in
 * one transfer and the application interleaves them (or the file stores a compound
 * dataset of pairs).
 *
 * Usage: interleaved_memory [--fixed]. Writes interleaved_memory.h5 in the current
 * directory; exits non-zero on any HDF5 error. */
#include "fixture.h"

enum { N = 1 << 20 };

int main(int argc, char **argv)
{
    fixture_init(&argc, &argv);
    int     fixed   = fixture_fixed(argc, argv);
    hid_t   fapl    = fixture_fapl();
    hsize_t dims[1] = {N}, pdims[1] = {2 * (hsize_t)N};
    double *pairs   = malloc(sizeof(double) * 2 * N);
    double *tmp     = malloc(sizeof(double) * N);
    if (!pairs || !tmp)
        return 1;
    hid_t f, space, d[2];
    CHECK(f = H5Fcreate("interleaved_memory.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl));
    CHECK(space = H5Screate_simple(1, dims, NULL));
    const char *names[2] = {"x", "y"};
    for (int k = 0; k < 2; k++) {
        for (size_t i = 0; i < N; i++)
            tmp[i] = (double)i + k * 0.5;
        CHECK(d[k] = H5Dcreate2(f, names[k], H5T_NATIVE_DOUBLE, space, H5P_DEFAULT,
                                H5P_DEFAULT, H5P_DEFAULT));
        CHECK(H5Dwrite(d[k], H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, tmp));
    }
    for (int pass = 0; pass < 4; pass++)
        for (int k = 0; k < 2; k++) {
            if (fixed) {
                CHECK(H5Dread(d[k], H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, tmp));
                for (size_t i = 0; i < N; i++)
                    pairs[2 * i + k] = tmp[i];
            }
            else {
                hid_t   mem;
                hsize_t start[1] = {(hsize_t)k}, stride[1] = {2}, count[1] = {N};
                CHECK(mem = H5Screate_simple(1, pdims, NULL));
                CHECK(H5Sselect_hyperslab(mem, H5S_SELECT_SET, start, stride, count, NULL));
                CHECK(H5Dread(d[k], H5T_NATIVE_DOUBLE, mem, H5S_ALL, H5P_DEFAULT, pairs));
                CHECK(H5Sclose(mem));
            }
        }
    if (pairs[2 * 7] != 7.0 || pairs[2 * 7 + 1] != 7.5)
        return 2;
    for (int k = 0; k < 2; k++)
        CHECK(H5Dclose(d[k]));
    CHECK(H5Sclose(space));
    CHECK(fixture_close(f));
    CHECK(H5Pclose(fapl));
    free(tmp);
    free(pairs);
    fixture_finish();
    return 0;
}
