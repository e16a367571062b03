/* chunk cache too small for row iteration: a deflated 24x8192 double dataset stored as
 * one 1.5 MiB chunk, read row by row (`for row in dset` in h5py): the chunk is larger
 * than the default 1 MiB chunk cache, so HDF5 does not keep it and every 64 KiB row read
 * decompresses the whole 1.5 MiB chunk again (24 rows: 36 MiB inflated to deliver
 * 1.5 MiB). With --fixed the dataset is opened with a 4 MiB chunk cache
 * (H5Pset_chunk_cache(dapl, 521, 4 MiB, 1.0), h5py's rdcc_nbytes): the chunk is inflated
 * once.
 *
 * Usage: row_iteration_cache [--fixed]. Writes row_iteration_cache.h5 in the current
 * directory; exits non-zero on any HDF5 error. */
#include "fixture.h"

enum { ROWS = 24, COLS = 8192 };

int main(int argc, char **argv)
{
    fixture_init(&argc, &argv);
    int     fixed   = fixture_fixed(argc, argv);
    hid_t   fapl    = fixture_fapl();
    hsize_t dims[2] = {ROWS, COLS}, count[2] = {1, COLS};
    double *buf     = malloc(sizeof(double) * ROWS * COLS);
    if (!buf)
        return 1;
    for (size_t i = 0; i < (size_t)ROWS * COLS; i++)
        buf[i] = (double)(i % 1000);
    hid_t f, space, dcpl, dapl, d, mem;
    CHECK(f = H5Fcreate("row_iteration_cache.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl));
    CHECK(space = H5Screate_simple(2, dims, NULL));
    CHECK(dcpl = H5Pcreate(H5P_DATASET_CREATE));
    CHECK(H5Pset_chunk(dcpl, 2, dims));
    CHECK(H5Pset_deflate(dcpl, 1));
    CHECK(d = H5Dcreate2(f, "frames", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, dcpl,
                         H5P_DEFAULT));
    CHECK(H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf));
    CHECK(H5Dclose(d));
    CHECK(dapl = H5Pcreate(H5P_DATASET_ACCESS));
    if (fixed)
        CHECK(H5Pset_chunk_cache(dapl, 521, 4 << 20, 1.0));
    CHECK(d = H5Dopen2(f, "frames", dapl));
    CHECK(mem = H5Screate_simple(2, count, NULL));
    for (hsize_t r = 0; r < ROWS; r++) {
        hsize_t start[2] = {r, 0};
        CHECK(H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL));
        CHECK(H5Dread(d, H5T_NATIVE_DOUBLE, mem, space, H5P_DEFAULT, buf));
        if (buf[COLS - 1] != (double)((r * COLS + COLS - 1) % 1000))
            return 2;
    }
    CHECK(H5Sclose(mem));
    CHECK(H5Dclose(d));
    CHECK(H5Pclose(dapl));
    CHECK(H5Pclose(dcpl));
    CHECK(H5Sclose(space));
    CHECK(fixture_close(f));
    CHECK(H5Pclose(fapl));
    free(buf);
    fixture_finish();
    return 0;
}
