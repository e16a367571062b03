/* fill_on_allocation (MPI): a contiguous dataset of 2 Mi doubles per rank (16 MiB each)
 * with a user-defined fill value (-1, as netCDF-4 gives every variable a _FillValue).
 * Parallel HDF5 allocates the whole dataset when it creates it and writes the fill value
 * over all of it; then every rank overwrites its own part (one collective write), so the
 * file gets every byte twice. With --fixed the dataset is created with
 * H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER): every element is written by the program.
 *
 * Usage (mpirun): mpi_fill [--fixed]. Writes mpi_fill.h5 in the current directory; exits
 * non-zero on any HDF5 error. */
#ifndef FIXTURE_MPI
#error "an MPI fixture: build with mpicc -DFIXTURE_MPI"
#endif
#include "fixture.h"

enum { PER = 2 << 20 };

int main(int argc, char **argv)
{
    struct fixture_ranks me = fixture_init(&argc, &argv);
    int     fixed   = fixture_fixed(argc, argv);
    hid_t   fapl    = fixture_fapl();
    hid_t   dxpl    = fixture_dxpl(1);
    double  fill    = -1.0;
    hsize_t dims[1] = {(hsize_t)me.size * PER}, count[1] = {PER};
    hsize_t start[1] = {(hsize_t)me.rank * PER};
    double *buf = malloc(sizeof(double) * PER);
    if (!buf)
        return 1;
    for (size_t i = 0; i < PER; i++)
        buf[i] = (double)(start[0] + i);
    hid_t f, space, mem, dcpl, d;
    CHECK(f = H5Fcreate("mpi_fill.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl));
    CHECK(space = H5Screate_simple(1, dims, NULL));
    CHECK(mem = H5Screate_simple(1, count, NULL));
    CHECK(dcpl = H5Pcreate(H5P_DATASET_CREATE));
    CHECK(H5Pset_fill_value(dcpl, H5T_NATIVE_DOUBLE, &fill));
    if (fixed)
        CHECK(H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER));
    CHECK(d = H5Dcreate2(f, "field", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT));
    CHECK(H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL));
    CHECK(H5Dwrite(d, H5T_NATIVE_DOUBLE, mem, space, dxpl, buf));
    CHECK(H5Dclose(d));
    CHECK(H5Pclose(dcpl));
    CHECK(H5Sclose(mem));
    CHECK(H5Sclose(space));
    CHECK(fixture_close(f));
    CHECK(H5Pclose(dxpl));
    CHECK(H5Pclose(fapl));
    free(buf);
    fixture_finish();
    return 0;
}
