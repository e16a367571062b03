/* Pathology (MPI): every rank writes its part of a shared dataset as many small independent
 * writes (64 bytes each): MPI-IO cannot aggregate them, every one is its own file-system
 * request. `--fixed`: each rank writes its whole part in one collective write
 * (H5Pset_dxpl_mpio(H5FD_MPIO_COLLECTIVE)), which MPI-IO's two-phase I/O aggregates.
 * `h5prov` insight `independent_small_io`. */
#ifndef FIXTURE_MPI
#error "an MPI fixture: build with mpicc -DFIXTURE_MPI"
#endif
#include "fixture.h"

#define PER_RANK 32768 /* doubles: 4096 writes of 64 bytes per rank */
#define PIECE 8       /* doubles per small write: 64 bytes */

int main(int argc, char **argv)
{
    struct fixture_ranks me = fixture_init(&argc, &argv);
    int rank = me.rank, size = me.size;
    int fixed = fixture_fixed(argc, argv);
    static double v[PER_RANK];
    for (int i = 0; i < PER_RANK; i++)
        v[i] = rank * PER_RANK + i;
    hid_t fapl = fixture_fapl();
    hid_t f = H5Fcreate("indep.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    CHECK(f);
    hsize_t dims[1] = {(hsize_t)size * PER_RANK};
    hid_t fs = H5Screate_simple(1, dims, NULL);
    CHECK(fs);
    hid_t d = H5Dcreate2(f, "x", H5T_NATIVE_DOUBLE, fs, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    CHECK(d);
    hid_t dxpl = fixture_dxpl(fixed);
    if (fixed) {
        hsize_t start[1] = {(hsize_t)rank * PER_RANK}, count[1] = {PER_RANK};
        CHECK(H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL));
        hid_t ms = H5Screate_simple(1, count, NULL);
        CHECK(ms);
        CHECK(H5Dwrite(d, H5T_NATIVE_DOUBLE, ms, fs, dxpl, v));
        CHECK(H5Sclose(ms));
    } else {
        hsize_t count[1] = {PIECE};
        hid_t ms = H5Screate_simple(1, count, NULL);
        CHECK(ms);
        for (int i = 0; i < PER_RANK; i += PIECE) {
            hsize_t start[1] = {(hsize_t)rank * PER_RANK + i};
            CHECK(H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL));
            CHECK(H5Dwrite(d, H5T_NATIVE_DOUBLE, ms, fs, dxpl, v + i));
        }
        CHECK(H5Sclose(ms));
    }
    CHECK(H5Pclose(dxpl));
    CHECK(H5Dclose(d));
    CHECK(H5Sclose(fs));
    CHECK(fixture_close(f));
    CHECK(H5Pclose(fapl));
    fixture_finish();
    return 0;
}
