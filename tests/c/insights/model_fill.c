/* model_fill: a 32 MiB contiguous dataset created with early allocation and fill values
 * written at allocation (H5Pset_alloc_time EARLY, H5Pset_fill_time ALLOC), then written
 * whole by one H5Dwrite: HDF5 writes 32 MiB of fill values in H5Dcreate, all overwritten.
 * With --fixed the fill time is H5D_FILL_TIME_NEVER (the cost model's
 * `fill_value_writes`). With --ifset-user the fill time is H5D_FILL_TIME_IFSET with a fill
 * value of the program's (H5Pset_fill_value): HDF5 writes it as with ALLOC. With
 * --ifset-default it is IFSET with HDF5's default fill value: nothing is written.
 *
 * Usage: model_fill [--fixed|--ifset-user|--ifset-default]. Writes model_fill.h5 in the
 * current directory. */
#include "fixture.h"

enum { ROWS = 4096, COLS = 1024 };

int main(int argc, char **argv)
{
    struct fixture_ranks me = fixture_init(&argc, &argv);
    int      fixed = fixture_fixed(argc, argv);
    hsize_t  dims[2] = {ROWS, COLS};
    double  *buf = malloc(sizeof(double) * ROWS * COLS);
    hid_t    f, space, dcpl, d;
    (void)me;
    for (size_t i = 0; i < (size_t)ROWS * COLS; i++)
        buf[i] = (double)(i % 1009);
    CHECK(f = H5Fcreate("model_fill.h5", H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
    CHECK(space = H5Screate_simple(2, dims, NULL));
    CHECK(dcpl = H5Pcreate(H5P_DATASET_CREATE));
    CHECK(H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_EARLY));
    if (argc > 1 && strncmp(argv[1], "--ifset", 7) == 0) {
        double fill = -1.0;
        CHECK(H5Pset_fill_time(dcpl, H5D_FILL_TIME_IFSET));
        if (strcmp(argv[1], "--ifset-user") == 0)
            CHECK(H5Pset_fill_value(dcpl, H5T_NATIVE_DOUBLE, &fill));
    }
    else
        CHECK(H5Pset_fill_time(dcpl, fixed ? H5D_FILL_TIME_NEVER : H5D_FILL_TIME_ALLOC));
    CHECK(d = H5Dcreate2(f, "field", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, dcpl,
                         H5P_DEFAULT));
    CHECK(H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf));
    CHECK(H5Dclose(d));
    CHECK(H5Pclose(dcpl));
    CHECK(H5Sclose(space));
    CHECK(H5Fclose(f));
    free(buf);
    fixture_finish();
    return 0;
}
