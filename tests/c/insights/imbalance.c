/* Pathology (MPI): rank imbalance. Rank 0 writes four times the data of every other rank
 * (independent writes of 16 MiB pieces into its own part of a shared dataset), so the
 * others wait for it at the collective file close. `--fixed`: the same kind of writes,
 * balanced (every rank writes two pieces). `h5prov` insights `straggler_ranks`,
 * `rank_imbalance_bytes`. */
#ifndef FIXTURE_MPI
#error "an MPI fixture: build with mpicc -DFIXTURE_MPI"
#endif
#include "fixture.h"

#define PIECE (2 * 1024 * 1024) /* doubles: 16 MiB */
#define SLOTS 4            /* pieces reserved per rank */

int main(int argc, char **argv)
{
    struct fixture_ranks me = fixture_init(&argc, &argv);
    int rank = me.rank, size = me.size;
    int fixed = fixture_fixed(argc, argv);
    int pieces = fixed ? 2 : (rank == 0 ? 4 : 1);
    double *v = malloc(PIECE * sizeof *v);
    if (!v)
        FIXTURE_FAIL();
    for (int i = 0; i < PIECE; i++)
        v[i] = rank + i;
    hid_t fapl = fixture_fapl();
    hid_t f = H5Fcreate("imbalance.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    CHECK(f);
    hsize_t dims[1] = {(hsize_t)size * SLOTS * PIECE};
    hid_t fs = H5Screate_simple(1, dims, NULL);
    CHECK(fs);
    hid_t d = H5Dcreate2(f, "x", H5T_NATIVE_DOUBLE, fs, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    CHECK(d);
    hsize_t count[1] = {PIECE};
    hid_t ms = H5Screate_simple(1, count, NULL);
    CHECK(ms);
    for (int p = 0; p < pieces; p++) {
        hsize_t start[1] = {((hsize_t)rank * SLOTS + p) * PIECE};
        CHECK(H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL));
        CHECK(H5Dwrite(d, H5T_NATIVE_DOUBLE, ms, fs, H5P_DEFAULT, v));
    }
    CHECK(H5Sclose(ms));
    CHECK(H5Dclose(d));
    CHECK(H5Sclose(fs));
    CHECK(H5Fclose(f));
    CHECK(H5Pclose(fapl));
    free(v);
    fixture_finish();
    return 0;
}
