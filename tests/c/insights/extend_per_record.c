/* extend_per_record: a logger appending to an unlimited dataset one record at a time: for
 * each of 4000 records (16 doubles, 128 bytes) it grows the dataset by one row
 * (H5Dset_extent) and writes that row, so every record costs an extent change (dataspace
 * and layout messages rewritten, chunk index updated) and a small write. With --fixed the
 * records are buffered and appended 1000 at a time: one H5Dset_extent and one H5Dwrite
 * per block. Chunks of 1024 rows (128 KiB) in both.
 *
 * MPI build (-DFIXTURE_MPI): the ranks append together, each its own record per step
 * (H5Dset_extent is collective: every rank takes part in every extent change), 200 steps
 * with collective writes; --fixed appends 50 steps per block. The fill time is never, so
 * that parallel HDF5's early chunk allocation writes no fill values in either variant.
 *
 * Usage: extend_per_record [--fixed]. Writes extend_per_record.h5 in the current
 * directory; exits non-zero on any HDF5 error. */
#include "fixture.h"

#ifdef FIXTURE_MPI
enum { RECORDS = 200, COLS = 16, BLOCK = 50 };
#else
enum { RECORDS = 4000, COLS = 16, BLOCK = 1000 };
#endif

int main(int argc, char **argv)
{
    struct fixture_ranks me = fixture_init(&argc, &argv);
    int     fixed = fixture_fixed(argc, argv);
    hid_t   fapl  = fixture_fapl();
    hid_t   dxpl  = fixture_dxpl(1);
    hsize_t dims[2] = {0, COLS}, maxdims[2] = {H5S_UNLIMITED, COLS}, chunk[2] = {1024, COLS};
    hsize_t per     = fixed ? BLOCK : 1;
    double *buf     = malloc(sizeof(double) * BLOCK * COLS);
    if (!buf)
        return 1;
    hid_t f, space, dcpl, d, mem;
    CHECK(f = H5Fcreate("extend_per_record.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl));
    CHECK(space = H5Screate_simple(2, dims, maxdims));
    CHECK(dcpl = H5Pcreate(H5P_DATASET_CREATE));
    CHECK(H5Pset_chunk(dcpl, 2, chunk));
#ifdef FIXTURE_MPI
    CHECK(H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER));
#endif
    CHECK(d = H5Dcreate2(f, "log", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT));
    CHECK(H5Sclose(space));
    hsize_t count[2] = {per, COLS};
    CHECK(mem = H5Screate_simple(2, count, NULL));
    for (hsize_t r = 0; r < RECORDS; r += per) {
        for (size_t i = 0; i < per * COLS; i++)
            buf[i] = (double)(r * COLS + i);
        /* Serially rows r..r+per; under MPI steps r..r+per, a row per rank each. */
        hsize_t grown[2] = {(r + per) * me.size, COLS}, start[2] = {r * me.size, 0};
        hsize_t stride[2] = {(hsize_t)me.size, 1}, one[2] = {1, COLS};
        start[0] += me.rank;
        CHECK(H5Dset_extent(d, grown));
        hid_t fs;
        CHECK(fs = H5Dget_space(d));
        hsize_t blocks[2] = {per, 1};
        CHECK(H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, stride, blocks, one));
        CHECK(H5Dwrite(d, H5T_NATIVE_DOUBLE, mem, fs, dxpl, buf));
        CHECK(H5Sclose(fs));
    }
    CHECK(H5Sclose(mem));
    CHECK(H5Dclose(d));
    CHECK(H5Pclose(dcpl));
    CHECK(fixture_close(f));
    CHECK(H5Pclose(dxpl));
    CHECK(H5Pclose(fapl));
    free(buf);
    fixture_finish();
    return 0;
}
