/* path_traversal: 600 small datasets in /run/level1/.../level6/data (8 levels deep),
 * each read by a loop that first checks every prefix of its path with H5Lexists (as
 * careful code and h5py's `name in group` do) and then opens it by its absolute path:
 * every dataset costs 8 existence checks and an open that each walk the groups from the
 * root again. With --fixed the loop opens the leaf group once (H5Gopen2) and opens each
 * dataset by its name in that group. 600 datasets stay below the tiny-dataset storm.
 *
 * Usage: deep_path [--fixed]. Writes deep_path.h5 in the current directory; exits
 * non-zero on any HDF5 error. */
#include "fixture.h"

enum { NSETS = 600, DEPTH = 8, VALUES = 8 };

static const char *LEVELS[DEPTH] = {"run",    "level1", "level2", "level3",
                                    "level4", "level5", "level6", "data"};

int main(int argc, char **argv)
{
    fixture_init(&argc, &argv);
    int     fixed   = fixture_fixed(argc, argv);
    hid_t   fapl    = fixture_fapl();
    hsize_t dims[1] = {VALUES};
    double  v[VALUES];
    char    path[256] = "";
    hid_t   f, g, space, d;
    CHECK(f = H5Fcreate("deep_path.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl));
    CHECK(space = H5Screate_simple(1, dims, NULL));
    for (int l = 0; l < DEPTH; l++) {
        strcat(path, "/");
        strcat(path, LEVELS[l]);
        CHECK(g = H5Gcreate2(f, path, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
        CHECK(H5Gclose(g));
    }
    CHECK(g = H5Gopen2(f, path, H5P_DEFAULT));
    for (int i = 0; i < NSETS; i++) {
        char name[32];
        snprintf(name, sizeof name, "set%04d", i);
        for (int k = 0; k < VALUES; k++)
            v[k] = i * VALUES + k;
        CHECK(d = H5Dcreate2(g, name, H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, H5P_DEFAULT,
                             H5P_DEFAULT));
        CHECK(H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v));
        CHECK(H5Dclose(d));
    }
    CHECK(H5Gclose(g));
    double sum = 0;
    if (fixed)
        CHECK(g = H5Gopen2(f, path, H5P_DEFAULT));
    for (int i = 0; i < NSETS; i++) {
        char name[32];
        snprintf(name, sizeof name, "set%04d", i);
        if (fixed)
            CHECK(d = H5Dopen2(g, name, H5P_DEFAULT));
        else {
            char prefix[256] = "";
            for (int l = 0; l < DEPTH; l++) {
                strcat(prefix, "/");
                strcat(prefix, LEVELS[l]);
                if (H5Lexists(f, prefix, H5P_DEFAULT) <= 0)
                    return 2;
            }
            char full[300];
            snprintf(full, sizeof full, "%s/%s", prefix, name);
            if (H5Lexists(f, full, H5P_DEFAULT) <= 0)
                return 2;
            CHECK(d = H5Dopen2(f, full, H5P_DEFAULT));
        }
        CHECK(H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v));
        sum += v[VALUES - 1];
        CHECK(H5Dclose(d));
    }
    if (fixed)
        CHECK(H5Gclose(g));
    if (sum <= 0)
        return 2;
    CHECK(H5Sclose(space));
    CHECK(fixture_close(f));
    CHECK(H5Pclose(fapl));
    fixture_finish();
    return 0;
}
