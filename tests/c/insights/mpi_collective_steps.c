/* mpi_collective_steps: every time step, each of the 4 ranks writes its 16 values of the
 * step (128 bytes) with a collective H5Dwrite into row `step` of a 2000x64 dataset: 2000
 * collective calls, each a synchronisation of all ranks and a two-phase exchange, to move
 * 128 bytes per rank. With --fixed each rank buffers 500 steps and writes them in one
 * collective call (4 calls of 64 KiB per rank).
 *
 * Usage: mpirun -np 4 mpi_collective_steps [--fixed]. Writes mpi_collective_steps.h5 in
 * the current directory; exits non-zero on any HDF5 error. */
#ifndef FIXTURE_MPI
#error "an MPI fixture: build with mpicc -DFIXTURE_MPI"
#endif
#include "fixture.h"

enum { STEPS = 2000, W = 16, BATCH = 500 };

int main(int argc, char **argv)
{
    struct fixture_ranks me = fixture_init(&argc, &argv);
    int     fixed   = fixture_fixed(argc, argv);
    hid_t   fapl    = fixture_fapl();
    hid_t   coll    = fixture_dxpl(1);
    hsize_t batch   = fixed ? BATCH : 1;
    hsize_t dims[2] = {STEPS, W * (hsize_t)me.size}, count[2] = {batch, W};
    double *buf     = malloc(sizeof(double) * BATCH * W);
    if (!buf)
        return 1;
    hid_t f, space, mem, d;
    CHECK(f = H5Fcreate("mpi_collective_steps.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl));
    CHECK(space = H5Screate_simple(2, dims, NULL));
    CHECK(mem = H5Screate_simple(2, count, NULL));
    CHECK(d = H5Dcreate2(f, "series", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, H5P_DEFAULT,
                         H5P_DEFAULT));
    for (hsize_t s = 0; s < STEPS; s++) {
        for (int i = 0; i < W; i++)
            buf[(s % batch) * W + i] = (double)(s + i);
        if ((s + 1) % batch == 0) {
            hsize_t start[2] = {s + 1 - batch, W * (hsize_t)me.rank};
            CHECK(H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL));
            CHECK(H5Dwrite(d, H5T_NATIVE_DOUBLE, mem, space, coll, buf));
        }
    }
    CHECK(H5Dclose(d));
    CHECK(H5Sclose(mem));
    CHECK(H5Sclose(space));
    CHECK(fixture_close(f));
    CHECK(H5Pclose(coll));
    CHECK(H5Pclose(fapl));
    free(buf);
    fixture_finish();
    return 0;
}
