/* append_small_chunks: a table of 64-double rows in an extendible dataset whose chunks are
 * one row (512 bytes: the chunk shape a PyTables table made with a tiny `expectedrows`,
 * or an h5py `chunks=(1, 64)`, gets), appended correctly in blocks of 1000 rows (one
 * H5Dset_extent and one H5Dwrite per block): every append still touches 1000 chunks, a
 * chunk-index insertion and a separate I/O each, 32000 chunks for 16 MiB. With --fixed
 * the chunks are 1000x64 (512 KiB), one per append.
 *
 * Usage: append_small_chunks [--fixed]. Writes append_small_chunks.h5 in the current
 * directory; exits non-zero on any HDF5 error. */
#include "fixture.h"

enum { COLS = 64, BLOCK = 1000, BLOCKS = 32 };

int main(int argc, char **argv)
{
    fixture_init(&argc, &argv);
    int     fixed      = fixture_fixed(argc, argv);
    hsize_t dims[2]    = {0, COLS};
    hsize_t maxdims[2] = {H5S_UNLIMITED, COLS};
    hsize_t chunk[2]   = {fixed ? BLOCK : 1, COLS};
    hsize_t count[2]   = {BLOCK, COLS};
    hid_t   f, space, dcpl, d, mem;
    double *buf = malloc(sizeof(double) * BLOCK * COLS);
    if (!buf)
        return 1;
    CHECK(f = H5Fcreate("append_small_chunks.h5", H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
    CHECK(space = H5Screate_simple(2, dims, maxdims));
    CHECK(dcpl = H5Pcreate(H5P_DATASET_CREATE));
    CHECK(H5Pset_chunk(dcpl, 2, chunk));
    CHECK(d = H5Dcreate2(f, "table", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT));
    CHECK(H5Sclose(space));
    CHECK(mem = H5Screate_simple(2, count, NULL));
    for (int b = 0; b < BLOCKS; b++) {
        for (size_t i = 0; i < (size_t)BLOCK * COLS; i++)
            buf[i] = (double)b * BLOCK * COLS + (double)i;
        hsize_t start[2] = {(hsize_t)b * BLOCK, 0};
        dims[0]          = (hsize_t)(b + 1) * BLOCK;
        CHECK(H5Dset_extent(d, dims));
        CHECK(space = H5Dget_space(d));
        CHECK(H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL));
        CHECK(H5Dwrite(d, H5T_NATIVE_DOUBLE, mem, space, H5P_DEFAULT, buf));
        CHECK(H5Sclose(space));
    }
    CHECK(H5Sclose(mem));
    CHECK(H5Dclose(d));
    CHECK(H5Pclose(dcpl));
    CHECK(fixture_close(f));
    free(buf);
    fixture_finish();
    return 0;
}
