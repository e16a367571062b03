/* chunk too large for partial writes: a deflated 640x1024 float dataset stored in
 * 320x1024 chunks (1.25 MiB, larger than the 1 MiB default chunk cache) written in 10 row
 * blocks of 64 rows (256 KiB): a chunk the cache cannot hold is not kept between writes,
 * so every block write reads and inflates the chunk written so far, merges the block and
 * deflates and writes the whole chunk again (each chunk compressed 5 times). With --fixed
 * the dataset's chunk cache holds a chunk (H5Pset_chunk_cache(dapl, 521, 4 MiB, 1.0) on
 * H5Dcreate2's DAPL): each chunk is compressed once, when it is evicted.
 *
 * Usage: partial_chunk_writes [--fixed]. Writes partial_chunk_writes.h5 in the current
 * directory; exits non-zero on any HDF5 error. */
#include "fixture.h"

enum { ROWS = 640, COLS = 1024, CH = 320, BLOCK = 64 };

int main(int argc, char **argv)
{
    fixture_init(&argc, &argv);
    int     fixed   = fixture_fixed(argc, argv);
    hid_t   fapl    = fixture_fapl();
    hsize_t dims[2] = {ROWS, COLS}, chunk[2] = {CH, COLS}, count[2] = {BLOCK, COLS};
    float  *buf     = malloc(sizeof(float) * BLOCK * COLS);
    if (!buf)
        return 1;
    hid_t f, space, dcpl, dapl, d, mem;
    CHECK(f = H5Fcreate("partial_chunk_writes.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl));
    CHECK(space = H5Screate_simple(2, dims, NULL));
    CHECK(dcpl = H5Pcreate(H5P_DATASET_CREATE));
    CHECK(H5Pset_chunk(dcpl, 2, chunk));
    CHECK(H5Pset_deflate(dcpl, 1));
    CHECK(dapl = H5Pcreate(H5P_DATASET_ACCESS));
    if (fixed)
        CHECK(H5Pset_chunk_cache(dapl, 521, 4 << 20, 1.0));
    CHECK(d = H5Dcreate2(f, "image", H5T_NATIVE_FLOAT, space, H5P_DEFAULT, dcpl, dapl));
    CHECK(mem = H5Screate_simple(2, count, NULL));
    for (hsize_t r = 0; r < ROWS; r += BLOCK) {
        hsize_t start[2] = {r, 0};
        for (size_t i = 0; i < (size_t)BLOCK * COLS; i++)
            buf[i] = (float)((r * COLS + i) % 4096);
        CHECK(H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL));
        CHECK(H5Dwrite(d, H5T_NATIVE_FLOAT, mem, space, H5P_DEFAULT, buf));
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
