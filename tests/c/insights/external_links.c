/* external_link_reopen: a "master" file whose 300 entries are external links into a data
 * file (as multi-file collections are built), and a reader that opens each dataset
 * through its link and reads it: HDF5's external-link file cache is off by default, so
 * every traversal opens the data file (superblock, root group) and closes it again when
 * the dataset is closed. With --fixed the master is opened with
 * H5Pset_elink_file_cache_size(fapl, 8): the data file stays open across traversals.
 *
 * Usage: external_links [--fixed]. Writes external_links_data.h5 and
 * external_links_master.h5 in the current directory; exits non-zero on any HDF5 error. */
#include "fixture.h"

enum { NSETS = 300, N = 512 };

int main(int argc, char **argv)
{
    fixture_init(&argc, &argv);
    int     fixed   = fixture_fixed(argc, argv);
    hid_t   fapl    = fixture_fapl();
    hsize_t dims[1] = {N};
    static double v[N];
    hid_t   data, master, space, d;
    CHECK(data = H5Fcreate("external_links_data.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl));
    CHECK(master = H5Fcreate("external_links_master.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl));
    CHECK(space = H5Screate_simple(1, dims, NULL));
    for (int i = 0; i < NSETS; i++) {
        char name[32];
        snprintf(name, sizeof name, "set%03d", i);
        for (int k = 0; k < N; k++)
            v[k] = i;
        CHECK(d = H5Dcreate2(data, name, H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, H5P_DEFAULT,
                             H5P_DEFAULT));
        CHECK(H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v));
        CHECK(H5Dclose(d));
        CHECK(H5Lcreate_external("external_links_data.h5", name, master, name, H5P_DEFAULT,
                                 H5P_DEFAULT));
    }
    CHECK(H5Fclose(master));
    CHECK(H5Fclose(data));
    if (fixed)
        CHECK(H5Pset_elink_file_cache_size(fapl, 8));
    CHECK(master = H5Fopen("external_links_master.h5", H5F_ACC_RDONLY, fapl));
    double sum = 0;
    for (int i = 0; i < NSETS; i++) {
        char name[32];
        snprintf(name, sizeof name, "set%03d", i);
        CHECK(d = H5Dopen2(master, name, H5P_DEFAULT));
        CHECK(H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v));
        CHECK(H5Dclose(d));
        sum += v[N - 1];
    }
    if (sum != (double)NSETS * (NSETS - 1) / 2)
        return 2;
    CHECK(H5Sclose(space));
    CHECK(fixture_close(master));
    CHECK(H5Pclose(fapl));
    fixture_finish();
    return 0;
}
