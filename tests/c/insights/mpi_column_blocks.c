/* mpi_column_blocks: a 2-D domain decomposed by columns (each of the 4 ranks owns 512 of
 * the 2048 columns) written to a row-major contiguous 2048x2048 double dataset: each
 * rank's selection (2048x512) is 2048 pieces of 4 KiB, 16 KiB apart, and the independent
 * H5Dwrite hands MPI-IO a strided file view, which ROMIO writes by data sieving (read,
 * modify, write back the whole extent under a lock) or piece by piece: 4 such variables.
 * With --fixed the decomposition is by rows (each rank's 512x2048 block is one contiguous
 * 8 MiB extent), the same bytes per rank, independent as well.
 *
 * Usage: mpirun -np 4 mpi_column_blocks [--fixed]. Writes mpi_column_blocks.h5 in the
 * current directory; exits non-zero on any HDF5 error. */
#ifndef FIXTURE_MPI
#error "an MPI fixture: build with mpicc -DFIXTURE_MPI"
#endif
#include "fixture.h"

enum { N = 2048, VARS = 4 };

int main(int argc, char **argv)
{
    struct fixture_ranks me = fixture_init(&argc, &argv);
    int     fixed = fixture_fixed(argc, argv);
    hid_t   fapl  = fixture_fapl();
    hid_t   indep = fixture_dxpl(0);
    hsize_t part  = N / (hsize_t)me.size;
    hsize_t dims[2] = {N, N}, count[2], start[2];
    if (fixed) {
        count[0] = part, count[1] = N;
        start[0] = part * me.rank, start[1] = 0;
    }
    else {
        count[0] = N, count[1] = part;
        start[0] = 0, start[1] = part * me.rank;
    }
    double *buf = malloc(sizeof(double) * part * N);
    if (!buf)
        return 1;
    hid_t f, space, mem;
    CHECK(f = H5Fcreate("mpi_column_blocks.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl));
    CHECK(space = H5Screate_simple(2, dims, NULL));
    CHECK(mem = H5Screate_simple(2, count, NULL));
    CHECK(H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL));
    for (int k = 0; k < VARS; k++) {
        char name[16];
        snprintf(name, sizeof name, "var%d", k);
        for (size_t i = 0; i < part * N; i++)
            buf[i] = (double)(k + me.rank);
        hid_t d;
        CHECK(d = H5Dcreate2(f, name, H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, H5P_DEFAULT,
                             H5P_DEFAULT));
        CHECK(H5Dwrite(d, H5T_NATIVE_DOUBLE, mem, space, indep, buf));
        CHECK(H5Dclose(d));
    }
    CHECK(H5Sclose(mem));
    CHECK(H5Sclose(space));
    CHECK(fixture_close(f));
    CHECK(H5Pclose(indep));
    CHECK(H5Pclose(fapl));
    free(buf);
    fixture_finish();
    return 0;
}
