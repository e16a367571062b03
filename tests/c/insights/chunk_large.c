/* chunk_too_large: one deflate-compressed 4 MiB chunk (2048x512 floats, the whole
 * dataset) read in 16 row blocks of 256 KiB. A filtered chunk larger than the 1 MiB
 * default chunk cache is never kept, so every read decompresses all 4 MiB to use 1/16 of
 * it. With --fixed the chunks are 128x512 floats (256 KiB), the shape of the reads.
 *
 * Usage: chunk_large [--fixed]. Writes chunk_large.h5 in the current directory; exits
 * non-zero on any HDF5 error. */
#include "fixture.h"

enum { ROWS = 2048, COLS = 512, BLOCK = 128 };

int main(int argc, char **argv)
{
    fixture_init(&argc, &argv);
    hid_t fapl = fixture_fapl();
    int      fixed    = fixture_fixed(argc, argv);
    hsize_t  dims[2]  = {ROWS, COLS};
    hsize_t  chunk[2] = {ROWS, COLS};
    float   *all      = malloc(sizeof(float) * ROWS * COLS);
    float   *buf      = malloc(sizeof(float) * BLOCK * COLS);
    if (fixed)
        chunk[0] = BLOCK;
    for (size_t i = 0; i < (size_t)ROWS * COLS; i++)
        all[i] = (float)(i % 1000);
    hid_t f;
    CHECK(f = H5Fcreate("chunk_large.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl));
    hid_t space, dcpl, d, mem;
    CHECK(space = H5Screate_simple(2, dims, NULL));
    CHECK(dcpl = H5Pcreate(H5P_DATASET_CREATE));
    CHECK(H5Pset_chunk(dcpl, 2, chunk));
    CHECK(H5Pset_deflate(dcpl, 1));
    CHECK(d = H5Dcreate2(f, "field", H5T_NATIVE_FLOAT, space, H5P_DEFAULT, dcpl, H5P_DEFAULT));
    CHECK(H5Dwrite(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, all));
    hsize_t count[2] = {BLOCK, COLS};
    CHECK(mem = H5Screate_simple(2, count, NULL));
    for (hsize_t r = 0; r < ROWS; r += BLOCK) {
        hsize_t start[2] = {r, 0};
        CHECK(H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL));
        CHECK(H5Dread(d, H5T_NATIVE_FLOAT, mem, space, H5P_DEFAULT, buf));
        if (buf[0] != all[r * COLS])
            return 2;
    }
    CHECK(H5Sclose(mem));
    CHECK(H5Dclose(d));
    CHECK(H5Pclose(dcpl));
    CHECK(H5Sclose(space));
    CHECK(fixture_close(f));
    CHECK(H5Pclose(fapl));
    free(buf);
    free(all);
    fixture_finish();
    return 0;
}
