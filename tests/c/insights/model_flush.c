/* model_flush: writes 400 blocks of 16 rows x 1024 doubles (128 KiB) into a chunked
 * dataset and calls H5Fflush after each, as a simulation that "makes sure" every step is
 * on disk. With --fixed the file is flushed once, when it is closed (the cost model's
 * `frequent_flush`).
 *
 * Usage: model_flush [--fixed]. Writes model_flush.h5 in the current directory. */
#include "fixture.h"

enum { STEPS = 400, ROWS = 16, COLS = 1024 };

int main(int argc, char **argv)
{
    struct fixture_ranks me = fixture_init(&argc, &argv);
    int      fixed = fixture_fixed(argc, argv);
    hsize_t  dims[2] = {(hsize_t)STEPS * ROWS, COLS}, chunk[2] = {ROWS, COLS};
    hsize_t  count[2] = {ROWS, COLS};
    double  *buf = malloc(sizeof(double) * ROWS * COLS);
    hid_t    f, space, dcpl, d, mem;
    (void)me;
    CHECK(f = H5Fcreate("model_flush.h5", H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
    CHECK(space = H5Screate_simple(2, dims, NULL));
    CHECK(dcpl = H5Pcreate(H5P_DATASET_CREATE));
    CHECK(H5Pset_chunk(dcpl, 2, chunk));
    CHECK(d = H5Dcreate2(f, "steps", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, dcpl,
                         H5P_DEFAULT));
    CHECK(mem = H5Screate_simple(2, count, NULL));
    for (int s = 0; s < STEPS; s++) {
        hsize_t start[2] = {(hsize_t)s * ROWS, 0};
        for (size_t i = 0; i < (size_t)ROWS * COLS; i++)
            buf[i] = s + i * 1e-3;
        CHECK(H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL));
        CHECK(H5Dwrite(d, H5T_NATIVE_DOUBLE, mem, space, H5P_DEFAULT, buf));
        if (!fixed)
            CHECK(H5Fflush(f, H5F_SCOPE_LOCAL));
    }
    CHECK(H5Sclose(mem));
    CHECK(H5Dclose(d));
    CHECK(H5Pclose(dcpl));
    CHECK(H5Sclose(space));
    CHECK(H5Fclose(f));
    free(buf);
    fixture_finish();
    return 0;
}
