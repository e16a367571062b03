/* column_writes: a deflate-compressed 768x512 float dataset chunked by rows (16x512
 * chunks of 32 KiB, 48 chunks: 1.5 MiB) is written column block by column block (768x32):
 * every block touches all 48 chunks, more than the default 1 MiB chunk cache holds, so
 * each write evicts the chunks the next one needs: every chunk is read, decompressed,
 * modified, recompressed and written again 16 times. With --fixed the dataset is opened
 * with a 4 MiB chunk cache (H5Pset_chunk_cache(dapl, 521, 4 MiB, 1.0)): every chunk is
 * compressed and written once, at close.
 *
 * Usage: column_writes [--fixed]. Writes column_writes.h5 in the current directory; exits
 * non-zero on any HDF5 error. */
#include "fixture.h"

enum { ROWS = 768, COLS = 512, CH = 16, WCOLS = 32 };

int main(int argc, char **argv)
{
    fixture_init(&argc, &argv);
    int     fixed    = fixture_fixed(argc, argv);
    hid_t   fapl     = fixture_fapl();
    hsize_t dims[2]  = {ROWS, COLS}, chunk[2] = {CH, COLS}, block[2] = {ROWS, WCOLS};
    float  *buf      = malloc(sizeof(float) * ROWS * WCOLS);
    if (!buf)
        return 1;
    hid_t f, space, dcpl, dapl, d, mem;
    CHECK(f = H5Fcreate("column_writes.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl));
    CHECK(space = H5Screate_simple(2, dims, NULL));
    CHECK(dcpl = H5Pcreate(H5P_DATASET_CREATE));
    CHECK(H5Pset_chunk(dcpl, 2, chunk));
    CHECK(H5Pset_deflate(dcpl, 1));
    CHECK(dapl = H5Pcreate(H5P_DATASET_ACCESS));
    if (fixed)
        CHECK(H5Pset_chunk_cache(dapl, 521, 4 << 20, 1.0));
    CHECK(d = H5Dcreate2(f, "field", H5T_NATIVE_FLOAT, space, H5P_DEFAULT, dcpl, dapl));
    CHECK(mem = H5Screate_simple(2, block, NULL));
    for (hsize_t c = 0; c < COLS; c += WCOLS) {
        hsize_t start[2] = {0, c};
        for (size_t r = 0; r < ROWS; r++)
            for (size_t j = 0; j < WCOLS; j++)
                buf[r * WCOLS + j] = (float)((r * COLS + c + j) % 1000);
        CHECK(H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, block, NULL));
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
