/* mpi_cyclic_rows: a 32768x64 double dataset (512-byte rows, contiguous, 16 MiB) written
 * collectively by row blocks, then read back with a cyclic decomposition (rank r owns rows
 * r, r+4, r+8, ...), one independent H5Dread per row: 8192 reads of 512 bytes per rank,
 * each its own trip through HDF5 and MPI-IO. With --fixed each rank reads its rows with
 * one H5Dread of a strided hyperslab (start r, stride 4, count 8192, block 1), still
 * independent: one call, and MPI-IO reads the extent in large sieved pieces. (Collective
 * was slower than that on this two-core machine: 4 oversubscribed ranks in two-phase
 * I/O.)
 *
 * Usage: mpirun -np 4 mpi_cyclic_rows [--fixed]. Writes mpi_cyclic_rows.h5 in the current
 * directory; exits non-zero on any HDF5 error. */
#ifndef FIXTURE_MPI
#error "an MPI fixture: build with mpicc -DFIXTURE_MPI"
#endif
#include "fixture.h"

enum { ROWS = 32768, COLS = 64 };

int main(int argc, char **argv)
{
    struct fixture_ranks me = fixture_init(&argc, &argv);
    int     fixed = fixture_fixed(argc, argv);
    hid_t   fapl  = fixture_fapl();
    hid_t   coll  = fixture_dxpl(1);
    hid_t   indep = fixture_dxpl(0);
    hsize_t dims[2] = {ROWS, COLS};
    hsize_t mine    = ROWS / (hsize_t)me.size;
    double *buf     = malloc(sizeof(double) * mine * COLS);
    if (!buf)
        return 1;
    hid_t f, space, mem, d;
    CHECK(f = H5Fcreate("mpi_cyclic_rows.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl));
    CHECK(space = H5Screate_simple(2, dims, NULL));
    CHECK(d = H5Dcreate2(f, "field", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, H5P_DEFAULT,
                         H5P_DEFAULT));
    {
        hsize_t start[2] = {mine * (hsize_t)me.rank, 0}, count[2] = {mine, COLS};
        for (size_t i = 0; i < mine * COLS; i++)
            buf[i] = (double)(start[0] * COLS + i);
        CHECK(mem = H5Screate_simple(2, count, NULL));
        CHECK(H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL));
        CHECK(H5Dwrite(d, H5T_NATIVE_DOUBLE, mem, space, coll, buf));
        CHECK(H5Sclose(mem));
    }
    double sum = 0;
    if (fixed) {
        hsize_t start[2] = {(hsize_t)me.rank, 0}, stride[2] = {(hsize_t)me.size, 1};
        hsize_t count[2] = {mine, 1}, block[2] = {1, COLS}, m[2] = {mine, COLS};
        CHECK(mem = H5Screate_simple(2, m, NULL));
        CHECK(H5Sselect_hyperslab(space, H5S_SELECT_SET, start, stride, count, block));
        CHECK(H5Dread(d, H5T_NATIVE_DOUBLE, mem, space, indep, buf));
        CHECK(H5Sclose(mem));
    }
    else {
        hsize_t count[2] = {1, COLS};
        CHECK(mem = H5Screate_simple(2, count, NULL));
        for (hsize_t i = 0; i < mine; i++) {
            hsize_t start[2] = {i * (hsize_t)me.size + (hsize_t)me.rank, 0};
            CHECK(H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL));
            CHECK(H5Dread(d, H5T_NATIVE_DOUBLE, mem, space, indep, buf + i * COLS));
        }
        CHECK(H5Sclose(mem));
    }
    sum = buf[(mine - 1) * COLS];
    CHECK(H5Dclose(d));
    CHECK(H5Sclose(space));
    CHECK(fixture_close(f));
    CHECK(H5Pclose(indep));
    CHECK(H5Pclose(coll));
    CHECK(H5Pclose(fapl));
    free(buf);
    fixture_finish();
    return sum == (double)(((mine - 1) * (hsize_t)me.size + (hsize_t)me.rank) * COLS) ? 0 : 1;
}
