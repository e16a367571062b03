/* chunk_cache_thrash: a deflate-compressed 4096x512 float dataset in 128x128 chunks
 * (64 KiB) is written by rows, then read by column blocks (4096x16, 256 KiB). A column
 * block spans 32 chunks (2 MiB), more than the default 1 MiB chunk cache: every read
 * evicts the chunks the next one needs, so each chunk is read and decompressed 8 times.
 * With --fixed the dataset is reopened for reading with a 4 MiB chunk cache
 * (H5Pset_chunk_cache) that holds a whole column of chunks; with --fixed-fapl the file
 * gets that cache for all its datasets (H5Pset_cache on the FAPL) instead.
 *
 * Usage: chunk_thrash [--fixed | --fixed-fapl]. Writes chunk_thrash.h5 in the current directory; exits
 * non-zero on any HDF5 error. */
#include "fixture.h"

enum { ROWS = 4096, COLS = 512, CH = 128, WCOLS = 16 };

int main(int argc, char **argv)
{
    fixture_init(&argc, &argv);
    hid_t fapl = fixture_fapl();
    int      fixed    = fixture_fixed(argc, argv);
    int      fixed_fapl = argc > 1 && strcmp(argv[1], "--fixed-fapl") == 0;
    hsize_t  dims[2]  = {ROWS, COLS};
    hsize_t  chunk[2] = {CH, CH};
    float   *buf      = malloc(sizeof(float) * CH * COLS);
    hid_t    f, space, dcpl, d, mem, dapl;
    if (fixed_fapl)
        CHECK(H5Pset_cache(fapl, 0, 12421, 4 << 20, 1.0));
    CHECK(f = H5Fcreate("chunk_thrash.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl));
    CHECK(space = H5Screate_simple(2, dims, NULL));
    CHECK(dcpl = H5Pcreate(H5P_DATASET_CREATE));
    CHECK(H5Pset_chunk(dcpl, 2, chunk));
    CHECK(H5Pset_deflate(dcpl, 1));
    CHECK(d = H5Dcreate2(f, "field", H5T_NATIVE_FLOAT, space, H5P_DEFAULT, dcpl, H5P_DEFAULT));
    hsize_t rows[2] = {CH, COLS};
    CHECK(mem = H5Screate_simple(2, rows, NULL));
    for (hsize_t r = 0; r < ROWS; r += CH) {
        hsize_t start[2] = {r, 0};
        for (size_t i = 0; i < (size_t)CH * COLS; i++)
            buf[i] = (float)((r * COLS + i) % 1000);
        CHECK(H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, rows, NULL));
        CHECK(H5Dwrite(d, H5T_NATIVE_FLOAT, mem, space, H5P_DEFAULT, buf));
    }
    CHECK(H5Sclose(mem));
    CHECK(H5Dclose(d));

    CHECK(dapl = H5Pcreate(H5P_DATASET_ACCESS));
    if (fixed)
        CHECK(H5Pset_chunk_cache(dapl, 12421, 4 << 20, 1.0));
    CHECK(d = H5Dopen2(f, "field", dapl));
    hsize_t cols[2] = {ROWS, WCOLS};
    float  *col     = malloc(sizeof(float) * ROWS * WCOLS);
    CHECK(mem = H5Screate_simple(2, cols, NULL));
    for (hsize_t c = 0; c < COLS; c += WCOLS) {
        hsize_t start[2] = {0, c};
        CHECK(H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, cols, NULL));
        CHECK(H5Dread(d, H5T_NATIVE_FLOAT, mem, space, H5P_DEFAULT, col));
        if (col[WCOLS + 1] != (float)((COLS + c + 1) % 1000))
            return 2;
    }
    CHECK(H5Sclose(mem));
    CHECK(H5Dclose(d));
    CHECK(H5Pclose(dapl));
    CHECK(H5Pclose(dcpl));
    CHECK(H5Sclose(space));
    CHECK(fixture_close(f));
    CHECK(H5Pclose(fapl));
    free(col);
    free(buf);
    fixture_finish();
    return 0;
}
