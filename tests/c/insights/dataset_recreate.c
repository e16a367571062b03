/* dataset_recreate: a program that keeps the "latest" state in a dataset it deletes and
 * creates again at every step (h5py `del f["latest"]; f["latest"] = arr`, a common way to
 * "overwrite" a dataset): 300 steps, each an H5Ldelete, an H5Dcreate2 of a 64 KiB
 * contiguous dataset (a new object header, link and data allocation; the freed space is
 * only reused within the session, and leaks in the file after it) and the write. With
 * --fixed the dataset is created once and overwritten in place (h5py `f["latest"][...] =
 * arr`).
 *
 * Usage: dataset_recreate [--fixed]. Writes dataset_recreate.h5 in the current directory;
 * exits non-zero on any HDF5 error. */
#include "fixture.h"

enum { STEPS = 300, N = 8192 };

int main(int argc, char **argv)
{
    fixture_init(&argc, &argv);
    int     fixed   = fixture_fixed(argc, argv);
    hid_t   fapl    = fixture_fapl();
    hsize_t dims[1] = {N};
    double *buf     = malloc(sizeof(double) * N);
    if (!buf)
        return 1;
    hid_t f, space, d = -1;
    CHECK(f = H5Fcreate("dataset_recreate.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl));
    CHECK(space = H5Screate_simple(1, dims, NULL));
    for (int s = 0; s < STEPS; s++) {
        for (size_t i = 0; i < N; i++)
            buf[i] = s + i * 1e-3;
        if (!fixed || s == 0) {
            if (s > 0)
                CHECK(H5Ldelete(f, "latest", H5P_DEFAULT));
            CHECK(d = H5Dcreate2(f, "latest", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT,
                                 H5P_DEFAULT, H5P_DEFAULT));
        }
        CHECK(H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf));
        if (!fixed)
            CHECK(H5Dclose(d));
    }
    if (fixed)
        CHECK(H5Dclose(d));
    CHECK(H5Sclose(space));
    CHECK(fixture_close(f));
    CHECK(H5Pclose(fapl));
    free(buf);
    fixture_finish();
    return 0;
}
