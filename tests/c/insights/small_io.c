/* small_io: 4000 one-element (4-byte) writes to a contiguous dataset, as a simulation
 * writing one record at a time; then one read of the whole dataset. With --fixed the
 * records are gathered in memory and written with one H5Dwrite.
 *
 * MPI build (-DFIXTURE_MPI): every rank writes and reads its own 4000 records of one
 * MPI-IO file (the dataset is 4000 x ranks), as above; the pathology's transfers are
 * independent (HDF5's default), the fixed variant's one write and one read collective.
 *
 * Usage: small_io [--fixed]. Writes small_io.h5 in the current directory; exits non-zero
 * on any HDF5 error. */
#include "fixture.h"

enum { N = 4000 };

int main(int argc, char **argv)
{
    struct fixture_ranks me = fixture_init(&argc, &argv);
    hid_t   fapl    = fixture_fapl();
    hsize_t first   = (hsize_t)me.rank * N; /* this process's records */
    int     fixed   = fixture_fixed(argc, argv);
    hid_t   dxpl    = fixture_dxpl(fixed);
    int    *all     = malloc(sizeof(int) * N);
    hsize_t dims[1] = {(hsize_t)me.size * N}, one[1] = {1}, part[1] = {N}, start[1] = {first};
    hid_t   f, space, d, mem;
    CHECK(f = H5Fcreate("small_io.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl));
    CHECK(space = H5Screate_simple(1, dims, NULL));
    CHECK(d = H5Dcreate2(f, "records", H5T_NATIVE_INT, space, H5P_DEFAULT, H5P_DEFAULT,
                         H5P_DEFAULT));
    for (int i = 0; i < N; i++)
        all[i] = i * 7;
    if (fixed) {
        CHECK(mem = H5Screate_simple(1, part, NULL));
        CHECK(H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, part, NULL));
        CHECK(H5Dwrite(d, H5T_NATIVE_INT, mem, space, dxpl, all));
    }
    else {
        CHECK(mem = H5Screate_simple(1, one, NULL));
        for (int i = 0; i < N; i++) {
            hsize_t at[1] = {first + i};
            CHECK(H5Sselect_hyperslab(space, H5S_SELECT_SET, at, NULL, one, NULL));
            CHECK(H5Dwrite(d, H5T_NATIVE_INT, mem, space, dxpl, &all[i]));
        }
        CHECK(H5Sclose(mem));
        CHECK(mem = H5Screate_simple(1, part, NULL));
    }
    memset(all, 0, sizeof(int) * N);
    CHECK(H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, part, NULL));
    CHECK(H5Dread(d, H5T_NATIVE_INT, mem, space, dxpl, all));
    if (all[N - 1] != (N - 1) * 7)
        return 2;
    CHECK(H5Sclose(mem));
    CHECK(H5Dclose(d));
    CHECK(H5Sclose(space));
    CHECK(fixture_close(f));
    CHECK(H5Pclose(dxpl));
    CHECK(H5Pclose(fapl));
    free(all);
    fixture_finish();
    return 0;
}
