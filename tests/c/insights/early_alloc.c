/* early_allocation: a chunked 4096x4096 double dataset (128 MiB logical, 64 KiB chunks)
 * with a user fill value (NaN-like -1) and early allocation (H5Pset_alloc_time(dcpl,
 * H5D_ALLOC_TIME_EARLY)), of which the program writes only one 256-row band (8 MiB):
 * HDF5 allocates all 2048 chunks and writes the fill value into every one of them when it
 * creates the dataset (128 MiB written to store 8 MiB). With --fixed the allocation is
 * incremental (H5D_ALLOC_TIME_INCR, the default for chunked datasets): only the written
 * chunks are allocated, and unwritten ones read back as the fill value.
 *
 * Usage: early_alloc [--fixed]. Writes early_alloc.h5 in the current directory; exits
 * non-zero on any HDF5 error. */
#include "fixture.h"

enum { N = 4096, BAND = 256, CH = 64 };

int main(int argc, char **argv)
{
    fixture_init(&argc, &argv);
    int     fixed   = fixture_fixed(argc, argv);
    hid_t   fapl    = fixture_fapl();
    double  fill    = -1.0;
    hsize_t dims[2] = {N, N}, chunk[2] = {CH, 128}, count[2] = {BAND, N};
    hsize_t start[2] = {N / 2, 0};
    double *buf = malloc(sizeof(double) * BAND * N);
    if (!buf)
        return 1;
    for (size_t i = 0; i < (size_t)BAND * N; i++)
        buf[i] = (double)i;
    hid_t f, space, mem, dcpl, d;
    CHECK(f = H5Fcreate("early_alloc.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl));
    CHECK(space = H5Screate_simple(2, dims, NULL));
    CHECK(mem = H5Screate_simple(2, count, NULL));
    CHECK(dcpl = H5Pcreate(H5P_DATASET_CREATE));
    CHECK(H5Pset_chunk(dcpl, 2, chunk));
    CHECK(H5Pset_fill_value(dcpl, H5T_NATIVE_DOUBLE, &fill));
    CHECK(H5Pset_alloc_time(dcpl, fixed ? H5D_ALLOC_TIME_INCR : H5D_ALLOC_TIME_EARLY));
    CHECK(d = H5Dcreate2(f, "sparse", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT));
    CHECK(H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL));
    CHECK(H5Dwrite(d, H5T_NATIVE_DOUBLE, mem, space, H5P_DEFAULT, buf));
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
