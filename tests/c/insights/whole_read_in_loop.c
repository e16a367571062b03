/* repeated whole-dataset reads: the h5py idiom `for i in range(n): v = dset[:][i]` (or
 * `dset[()]` inside a loop): each of 256 iterations reads the whole 1 MiB dataset to use
 * one element (256 MiB read to deliver 2 KiB). With --fixed the dataset is read once
 * before the loop (`data = dset[:]`), and the loop indexes the array in memory.
 *
 * Usage: whole_read_in_loop [--fixed]. Writes whole_read_in_loop.h5 in the current
 * directory; exits non-zero on any HDF5 error. */
#include "fixture.h"

enum { N = 128 * 1024, ITERATIONS = 256 };

int main(int argc, char **argv)
{
    fixture_init(&argc, &argv);
    int     fixed   = fixture_fixed(argc, argv);
    hid_t   fapl    = fixture_fapl();
    hsize_t dims[1] = {N};
    double *buf     = malloc(sizeof(double) * N);
    if (!buf)
        return 1;
    for (size_t i = 0; i < N; i++)
        buf[i] = (double)i;
    hid_t f, space, d;
    CHECK(f = H5Fcreate("whole_read_in_loop.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl));
    CHECK(space = H5Screate_simple(1, dims, NULL));
    CHECK(d = H5Dcreate2(f, "values", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, H5P_DEFAULT,
                         H5P_DEFAULT));
    CHECK(H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf));
    double sum = 0;
    if (fixed)
        CHECK(H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf));
    for (int i = 0; i < ITERATIONS; i++) {
        if (!fixed)
            CHECK(H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf));
        sum += buf[(size_t)i * 512];
    }
    if (sum != 512.0 * ITERATIONS * (ITERATIONS - 1) / 2)
        return 2;
    CHECK(H5Dclose(d));
    CHECK(H5Sclose(space));
    CHECK(fixture_close(f));
    CHECK(H5Pclose(fapl));
    free(buf);
    fixture_finish();
    return 0;
}
