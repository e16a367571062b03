/* mpi_whole_read: every rank of a parallel analysis reads the whole dataset and keeps its
 * own quarter (h5py `data = dset[:]` then a slice, the netCDF "read all, then decompose"
 * pattern): 8 datasets of 4 MiB each, written by row blocks, are read whole by each of the
 * 4 ranks, 128 MiB read to use 32 MiB (x4). With --fixed every rank reads only its own
 * row block (H5Sselect_hyperslab on the file space). Transfers are independent in both
 * variants: on the oversubscribed test machine collective ones cost more than they save.
 *
 * Usage: mpirun -np 4 mpi_whole_read [--fixed]. Writes mpi_whole_read.h5 in the current
 * directory; exits non-zero on any HDF5 error. */
#ifndef FIXTURE_MPI
#error "an MPI fixture: build with mpicc -DFIXTURE_MPI"
#endif
#include "fixture.h"

enum { ROWS = 512, COLS = 1024, DSETS = 8 };

int main(int argc, char **argv)
{
    struct fixture_ranks me = fixture_init(&argc, &argv);
    int     fixed   = fixture_fixed(argc, argv);
    hid_t   fapl    = fixture_fapl();
    hid_t   indep   = fixture_dxpl(0);
    hsize_t mine    = ROWS / (hsize_t)me.size;
    hsize_t dims[2] = {ROWS, COLS}, count[2] = {mine, COLS}, start[2] = {mine * me.rank, 0};
    double *buf     = malloc(sizeof(double) * ROWS * COLS);
    if (!buf)
        return 1;
    hid_t f, space, mem, d[DSETS];
    CHECK(f = H5Fcreate("mpi_whole_read.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl));
    CHECK(space = H5Screate_simple(2, dims, NULL));
    CHECK(mem = H5Screate_simple(2, count, NULL));
    CHECK(H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL));
    for (int k = 0; k < DSETS; k++) {
        char name[16];
        snprintf(name, sizeof name, "var%d", k);
        CHECK(d[k] = H5Dcreate2(f, name, H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, H5P_DEFAULT,
                                H5P_DEFAULT));
        for (size_t i = 0; i < mine * COLS; i++)
            buf[i] = (double)(k + (start[0] * COLS + i));
        CHECK(H5Dwrite(d[k], H5T_NATIVE_DOUBLE, mem, space, indep, buf));
    }
    double sum = 0;
    for (int k = 0; k < DSETS; k++) {
        if (fixed) {
            CHECK(H5Dread(d[k], H5T_NATIVE_DOUBLE, mem, space, indep, buf));
            sum += buf[0];
        }
        else {
            CHECK(H5Dread(d[k], H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, indep, buf));
            sum += buf[start[0] * COLS];
        }
    }
    if (sum != (double)(DSETS * start[0] * COLS) + DSETS * (DSETS - 1) / 2)
        return 2;
    for (int k = 0; k < DSETS; k++)
        CHECK(H5Dclose(d[k]));
    CHECK(H5Sclose(mem));
    CHECK(H5Sclose(space));
    CHECK(fixture_close(f));
    CHECK(H5Pclose(indep));
    CHECK(H5Pclose(fapl));
    free(buf);
    fixture_finish();
    return 0;
}
