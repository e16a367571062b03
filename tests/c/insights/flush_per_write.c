/* flush_per_write: a time-stepping program that calls H5Fflush after every step's write,
 * "to be safe": every flush writes the dirty metadata cache (dataset header, chunk
 * index, superblock) and flushes the file driver, for one 64 KiB row of data. 500 steps
 * serially. With --fixed the program flushes once, after the last step (H5Fclose would
 * do it anyway).
 *
 * MPI build (-DFIXTURE_MPI): every rank writes its own row of each step with a collective
 * transfer, 100 steps, and H5Fflush is collective (a metadata flush and MPI_File_sync).
 * The fill time is never, so that parallel HDF5's early chunk allocation writes no fill
 * values (another problem: mpi_fill.c) in either variant.
 *
 * Usage: flush_per_write [--fixed]. Writes flush_per_write.h5 in the current directory;
 * exits non-zero on any HDF5 error. */
#include "fixture.h"

enum { COLS = 8192 };
#ifdef FIXTURE_MPI
enum { STEPS = 100 };
#else
enum { STEPS = 500 };
#endif

int main(int argc, char **argv)
{
    struct fixture_ranks me = fixture_init(&argc, &argv);
    int     fixed = fixture_fixed(argc, argv);
    hid_t   fapl  = fixture_fapl();
    hid_t   dxpl  = fixture_dxpl(1);
    hsize_t dims[2] = {(hsize_t)STEPS * me.size, COLS}, chunk[2] = {1, COLS};
    hsize_t count[2] = {1, COLS};
    double *row = malloc(sizeof(double) * COLS);
    if (!row)
        return 1;
    hid_t f, space, mem, dcpl, d;
    CHECK(f = H5Fcreate("flush_per_write.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl));
    CHECK(space = H5Screate_simple(2, dims, NULL));
    CHECK(mem = H5Screate_simple(2, count, NULL));
    CHECK(dcpl = H5Pcreate(H5P_DATASET_CREATE));
    CHECK(H5Pset_chunk(dcpl, 2, chunk));
#ifdef FIXTURE_MPI
    CHECK(H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER));
#endif
    CHECK(d = H5Dcreate2(f, "steps", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT));
    for (int s = 0; s < STEPS; s++) {
        hsize_t start[2] = {(hsize_t)s * me.size + me.rank, 0};
        for (int i = 0; i < COLS; i++)
            row[i] = s + i * 1e-4;
        CHECK(H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL));
        CHECK(H5Dwrite(d, H5T_NATIVE_DOUBLE, mem, space, dxpl, row));
        if (!fixed)
            CHECK(H5Fflush(f, H5F_SCOPE_LOCAL));
    }
    if (fixed)
        CHECK(H5Fflush(f, H5F_SCOPE_LOCAL));
    CHECK(H5Dclose(d));
    CHECK(H5Pclose(dcpl));
    CHECK(H5Sclose(mem));
    CHECK(H5Sclose(space));
    CHECK(fixture_close(f));
    CHECK(H5Pclose(dxpl));
    CHECK(H5Pclose(fapl));
    free(row);
    fixture_finish();
    return 0;
}
