/* mpi_points: each of 4 ranks reads its 256x1024 row block of a 1024x1024 double dataset
 * (contiguous, 8 MiB) as 16 point selections of 16 Ki elements (H5Sselect_elements:
 * h5py's or netCDF's index-list reads, `dset[idx]`, of what are 16 consecutive rows):
 * every element is a point, iterated and transferred on its own, 256 Ki points per rank.
 * With --fixed the same 16 blocks of 16 rows are read as hyperslabs (one contiguous
 * 128 KiB extent each), also independent.
 *
 * Usage: mpirun -np 4 mpi_points [--fixed]. Writes mpi_points.h5 in the current directory;
 * exits non-zero on any HDF5 error. */
#ifndef FIXTURE_MPI
#error "an MPI fixture: build with mpicc -DFIXTURE_MPI"
#endif
#include "fixture.h"

enum { N = 1024, PIECE = 16 };

int main(int argc, char **argv)
{
    struct fixture_ranks me = fixture_init(&argc, &argv);
    int     fixed = fixture_fixed(argc, argv);
    hid_t   fapl  = fixture_fapl();
    hid_t   coll  = fixture_dxpl(1);
    hid_t   indep = fixture_dxpl(0);
    hsize_t dims[2] = {N, N};
    hsize_t mine    = N / (hsize_t)me.size, first = mine * (hsize_t)me.rank;
    size_t  npts    = PIECE * N;
    double  *buf    = malloc(sizeof(double) * mine * N);
    hsize_t *coords = malloc(sizeof(hsize_t) * 2 * npts);
    if (!buf || !coords)
        return 1;
    hid_t f, space, mem, d;
    CHECK(f = H5Fcreate("mpi_points.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl));
    CHECK(space = H5Screate_simple(2, dims, NULL));
    CHECK(d = H5Dcreate2(f, "grid", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, H5P_DEFAULT,
                         H5P_DEFAULT));
    {
        hsize_t start[2] = {first, 0}, count[2] = {mine, N};
        for (size_t i = 0; i < mine * N; i++)
            buf[i] = (double)(first * N + i);
        CHECK(mem = H5Screate_simple(2, count, NULL));
        CHECK(H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL));
        CHECK(H5Dwrite(d, H5T_NATIVE_DOUBLE, mem, space, coll, buf));
        CHECK(H5Sclose(mem));
    }
    hsize_t m = npts;
    CHECK(mem = H5Screate_simple(1, &m, NULL));
    for (hsize_t p = 0; p < mine / PIECE; p++) {
        hsize_t row0 = first + p * PIECE;
        if (fixed) {
            hsize_t start[2] = {row0, 0}, count[2] = {PIECE, N};
            CHECK(H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL));
        }
        else {
            for (size_t i = 0; i < npts; i++) {
                coords[2 * i]     = row0 + i / N;
                coords[2 * i + 1] = i % N;
            }
            CHECK(H5Sselect_elements(space, H5S_SELECT_SET, npts, coords));
        }
        CHECK(H5Dread(d, H5T_NATIVE_DOUBLE, mem, space, indep, buf + p * npts));
    }
    double last = buf[mine * N - 1];
    CHECK(H5Sclose(mem));
    CHECK(H5Dclose(d));
    CHECK(H5Sclose(space));
    CHECK(fixture_close(f));
    CHECK(H5Pclose(indep));
    CHECK(H5Pclose(coll));
    CHECK(H5Pclose(fapl));
    free(coords);
    free(buf);
    fixture_finish();
    return last == (double)((first + mine) * N - 1) ? 0 : 1;
}
