/* chunk_too_small: chunks of 2 KiB (16x16 doubles) under 1 MiB row-block accesses, so
 * every write and read touches 512 chunks (each an index lookup and a separate I/O).
 * With --fixed the chunks are 256x512 doubles (1 MiB), the shape of the access.
 *
 * MPI build (-DFIXTURE_MPI): every rank writes and reads its own 1024 rows of one MPI-IO
 * file (the dataset is 1024 x ranks rows), as above, with independent transfers.
 *
 * Usage: chunk_small [--fixed]. Writes chunk_small.h5 in the current directory; exits
 * non-zero on any HDF5 error. */
#include "fixture.h"

enum { ROWS = 1024, COLS = 512, BLOCK = 256 };

int main(int argc, char **argv)
{
    struct fixture_ranks me = fixture_init(&argc, &argv);
    hid_t    fapl    = fixture_fapl();
    hsize_t  first   = (hsize_t)me.rank * ROWS; /* this process's rows */
    int      fixed   = fixture_fixed(argc, argv);
    hsize_t  dims[2] = {(hsize_t)me.size * ROWS, COLS};
    hsize_t  chunk[2] = {16, 16};
    double  *buf     = malloc(sizeof(double) * BLOCK * COLS);
    if (fixed) {
        chunk[0] = BLOCK;
        chunk[1] = COLS;
    }
    hid_t f;
    CHECK(f = H5Fcreate("chunk_small.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl));
    hid_t space, dcpl, d, mem;
    CHECK(space = H5Screate_simple(2, dims, NULL));
    CHECK(dcpl = H5Pcreate(H5P_DATASET_CREATE));
    CHECK(H5Pset_chunk(dcpl, 2, chunk));
    CHECK(d = H5Dcreate2(f, "grid", H5T_IEEE_F64LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT));
    hsize_t count[2] = {BLOCK, COLS};
    CHECK(mem = H5Screate_simple(2, count, NULL));
    for (int pass = 0; pass < 2; pass++)
        for (hsize_t r = first; r < first + ROWS; r += BLOCK) {
            hsize_t start[2] = {r, 0};
            CHECK(H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL));
            if (pass == 0) {
                for (size_t i = 0; i < (size_t)BLOCK * COLS; i++)
                    buf[i] = (double)(r * COLS + i);
                CHECK(H5Dwrite(d, H5T_NATIVE_DOUBLE, mem, space, H5P_DEFAULT, buf));
            }
            else {
                CHECK(H5Dread(d, H5T_NATIVE_DOUBLE, mem, space, H5P_DEFAULT, buf));
                if (buf[BLOCK * COLS - 1] != (double)(r * COLS + BLOCK * COLS - 1))
                    return 2;
            }
        }
    CHECK(H5Sclose(mem));
    CHECK(H5Dclose(d));
    CHECK(H5Pclose(dcpl));
    CHECK(H5Sclose(space));
    CHECK(fixture_close(f));
    CHECK(H5Pclose(fapl));
    free(buf);
    fixture_finish();
    return 0;
}
