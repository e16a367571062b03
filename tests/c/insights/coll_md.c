/* Pathology (MPI): a metadata-heavy parallel run with collective metadata off (HDF5's
 * default). Rank-collective creates of many groups and datasets, then every rank reopens
 * the file and walks every group (link lookup, group info) and dataset: each rank reads the same object headers and
 * link storage from the file on its own. `--fixed`: H5Pset_all_coll_metadata_ops(fapl, 1)
 * and H5Pset_coll_metadata_write(fapl, 1): rank 0 reads and broadcasts, metadata writes
 * are collective. `h5prov` insight `collective_metadata_off`. */
#ifndef FIXTURE_MPI
#error "an MPI fixture: build with mpicc -DFIXTURE_MPI"
#endif
#include "fixture.h"

#define NGROUPS 800

int main(int argc, char **argv)
{
    fixture_init(&argc, &argv);
    int fixed = fixture_fixed(argc, argv);
    hid_t fapl = fixture_fapl();
    if (fixed) {
        CHECK(H5Pset_all_coll_metadata_ops(fapl, 1));
        CHECK(H5Pset_coll_metadata_write(fapl, 1));
    }
    hid_t f = H5Fcreate("md.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    CHECK(f);
    hsize_t dims[1] = {4};
    hid_t s = H5Screate_simple(1, dims, NULL);
    CHECK(s);
    for (int i = 0; i < NGROUPS; i++) {
        char name[32];
        snprintf(name, sizeof name, "g%03d", i);
        hid_t g = H5Gcreate2(f, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        CHECK(g);
        hid_t d = H5Dcreate2(g, "d", H5T_NATIVE_INT, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        CHECK(d);
        CHECK(H5Dclose(d));
        CHECK(H5Gclose(g));
    }
    CHECK(H5Sclose(s));
    CHECK(H5Fclose(f));
    /* Every rank walks the whole file. */
    f = H5Fopen("md.h5", H5F_ACC_RDONLY, fapl);
    CHECK(f);
    for (int i = 0; i < NGROUPS; i++) {
        char name[32];
        snprintf(name, sizeof name, "g%03d", i);
        if (H5Lexists(f, name, H5P_DEFAULT) <= 0)
            FIXTURE_FAIL();
        hid_t g = H5Gopen2(f, name, H5P_DEFAULT);
        CHECK(g);
        H5G_info_t info;
        CHECK(H5Gget_info(g, &info));
        hid_t d = H5Dopen2(g, "d", H5P_DEFAULT);
        CHECK(d);
        hid_t ds = H5Dget_space(d);
        CHECK(ds);
        CHECK(H5Sclose(ds));
        CHECK(H5Dclose(d));
        CHECK(H5Gclose(g));
    }
    CHECK(H5Fclose(f));
    CHECK(H5Pclose(fapl));
    fixture_finish();
    return 0;
}
