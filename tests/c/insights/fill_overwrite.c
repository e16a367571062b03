/* fill_on_allocation: a 32 MiB contiguous dataset with a user-defined fill value (-1, as
 * netCDF-4 gives every variable a _FillValue) and early allocation: HDF5 writes the fill
 * value over the whole dataset when it creates it, then the program overwrites every
 * element (4 writes of 8 MiB), so 64 MiB are written to store 32 MiB. With --fixed the
 * dataset is created with H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER): the program writes
 * every element, so the fill is never needed.
 *
 * Usage: fill_overwrite [--fixed]. Writes fill_overwrite.h5 in the current directory;
 * exits non-zero on any HDF5 error. */
#include "fixture.h"

enum { N = 4 << 20, PIECES = 4 };

int main(int argc, char **argv)
{
    fixture_init(&argc, &argv);
    int     fixed = fixture_fixed(argc, argv);
    hid_t   fapl  = fixture_fapl();
    double  fill  = -1.0;
    hsize_t dims[1] = {N}, count[1] = {N / PIECES};
    double *buf = malloc(sizeof(double) * (N / PIECES));
    if (!buf)
        return 1;
    hid_t f, space, mem, dcpl, d;
    CHECK(f = H5Fcreate("fill_overwrite.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl));
    CHECK(space = H5Screate_simple(1, dims, NULL));
    CHECK(mem = H5Screate_simple(1, count, NULL));
    CHECK(dcpl = H5Pcreate(H5P_DATASET_CREATE));
    CHECK(H5Pset_fill_value(dcpl, H5T_NATIVE_DOUBLE, &fill));
    CHECK(H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_EARLY));
    if (fixed)
        CHECK(H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER));
    CHECK(d = H5Dcreate2(f, "field", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT));
    for (hsize_t p = 0; p < PIECES; p++) {
        hsize_t start[1] = {p * (N / PIECES)};
        for (size_t i = 0; i < N / PIECES; i++)
            buf[i] = (double)(start[0] + i);
        CHECK(H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL));
        CHECK(H5Dwrite(d, H5T_NATIVE_DOUBLE, mem, space, H5P_DEFAULT, buf));
    }
    CHECK(H5Dclose(d));
    CHECK(H5Pclose(dcpl));
    CHECK(H5Sclose(mem));
    CHECK(H5Sclose(space));
    CHECK(fixture_close(f));
    CHECK(H5Pclose(fapl));
    free(buf);
    fixture_finish();
    return 0;
}
