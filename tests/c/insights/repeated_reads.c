/* repeated_reads: a loop that reads the same 1 MiB hyperslab (rows 8-263) of a 1.06 MiB
 * contiguous dataset 1000 times (as an analysis re-reading its input every iteration).
 * With --fixed it reads the hyperslab once and reuses the buffer for the 1000 iterations.
 * (1000, not fewer: 200 page-cache reads take 5 ms, and one preempted file create on a
 * busy machine then moved the re-reads' share across the HIGH threshold.)
 *
 * MPI build (-DFIXTURE_MPI): every rank writes its own 272 rows of one MPI-IO file (the
 * dataset is 272 x ranks rows) and re-reads its own hyperslab as above, independently.
 *
 * Usage: repeated_reads [--fixed]. Writes repeated_reads.h5 in the current directory;
 * exits non-zero on any HDF5 error. */
#include "fixture.h"

enum { ROWS = 272, COLS = 1024, BLOCK = 256, ITERS = 1000 };

int main(int argc, char **argv)
{
    struct fixture_ranks me = fixture_init(&argc, &argv);
    hid_t    fapl    = fixture_fapl();
    hsize_t  first   = (hsize_t)me.rank * ROWS; /* this process's rows */
    int      fixed   = fixture_fixed(argc, argv);
    int     *all     = malloc(sizeof(int) * ROWS * COLS);
    int     *buf     = malloc(sizeof(int) * BLOCK * COLS);
    hsize_t  dims[2] = {(hsize_t)me.size * ROWS, COLS}, rows[2] = {ROWS, COLS};
    hsize_t  count[2] = {BLOCK, COLS}, start[2] = {first + 8, 0}, at[2] = {first, 0};
    hid_t    f, space, d, mem;
    long     sum = 0;
    for (size_t i = 0; i < (size_t)ROWS * COLS; i++)
        all[i] = (int)(i % 977);
    CHECK(f = H5Fcreate("repeated_reads.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl));
    CHECK(space = H5Screate_simple(2, dims, NULL));
    CHECK(d = H5Dcreate2(f, "input", H5T_NATIVE_INT, space, H5P_DEFAULT, H5P_DEFAULT,
                         H5P_DEFAULT));
    CHECK(mem = H5Screate_simple(2, rows, NULL));
    CHECK(H5Sselect_hyperslab(space, H5S_SELECT_SET, at, NULL, rows, NULL));
    CHECK(H5Dwrite(d, H5T_NATIVE_INT, mem, space, H5P_DEFAULT, all));
    CHECK(H5Sclose(mem));
    CHECK(mem = H5Screate_simple(2, count, NULL));
    CHECK(H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL));
    for (int it = 0; it < ITERS; it++) {
        if (!fixed || it == 0)
            CHECK(H5Dread(d, H5T_NATIVE_INT, mem, space, H5P_DEFAULT, buf));
        sum += buf[it % BLOCK];
    }
    if (sum == 0)
        return 2;
    CHECK(H5Sclose(mem));
    CHECK(H5Dclose(d));
    CHECK(H5Sclose(space));
    CHECK(fixture_close(f));
    CHECK(H5Pclose(fapl));
    free(buf);
    free(all);
    fixture_finish();
    return 0;
}
