/* path_traversal: 20 datasets of 4096 doubles in /run/level1/.../level6/data (8 levels
 * deep), updated in 24 iterations: each update checks every prefix of the dataset's path
 * with H5Lexists (as careful code and h5py's `name in group` do), opens the dataset by
 * its absolute path, reads it, writes it back and closes it, so every update costs 9
 * existence checks and an open that each walk the groups from the root again. With
 * --fixed the datasets are opened once, by name in their group (H5Gopen2 then
 * H5Dopen2(group, name)), and stay open for the 24 iterations.
 *
 * Usage: deep_path [--fixed]. Writes deep_path.h5 in the current directory; exits
 * non-zero on any HDF5 error. */
#include "fixture.h"

enum { NSETS = 20, DEPTH = 8, VALUES = 4096, ITERATIONS = 24 };

static const char *LEVELS[DEPTH] = {"run",    "level1", "level2", "level3",
                                    "level4", "level5", "level6", "data"};

int main(int argc, char **argv)
{
    fixture_init(&argc, &argv);
    int     fixed   = fixture_fixed(argc, argv);
    hid_t   fapl    = fixture_fapl();
    hsize_t dims[1] = {VALUES};
    static double v[VALUES];
    char    path[256] = "";
    hid_t   f, g, space, d[NSETS];
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
        snprintf(name, sizeof name, "set%02d", i);
        for (int k = 0; k < VALUES; k++)
            v[k] = i;
        CHECK(d[i] = H5Dcreate2(g, name, H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, H5P_DEFAULT,
                                H5P_DEFAULT));
        CHECK(H5Dwrite(d[i], H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v));
        if (!fixed)
            CHECK(H5Dclose(d[i]));
    }
    for (int it = 0; it < ITERATIONS; it++)
        for (int i = 0; i < NSETS; i++) {
            hid_t ds = d[i];
            if (!fixed) {
                char prefix[256] = "", full[300];
                for (int l = 0; l < DEPTH; l++) {
                    strcat(prefix, "/");
                    strcat(prefix, LEVELS[l]);
                    if (H5Lexists(f, prefix, H5P_DEFAULT) <= 0)
                        return 2;
                }
                snprintf(full, sizeof full, "%s/set%02d", prefix, i);
                if (H5Lexists(f, full, H5P_DEFAULT) <= 0)
                    return 2;
                CHECK(ds = H5Dopen2(f, full, H5P_DEFAULT));
            }
            CHECK(H5Dread(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v));
            if (v[VALUES - 1] != i + it)
                return 3;
            for (int k = 0; k < VALUES; k++)
                v[k] += 1;
            CHECK(H5Dwrite(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v));
            if (!fixed)
                CHECK(H5Dclose(ds));
        }
    if (fixed)
        for (int i = 0; i < NSETS; i++)
            CHECK(H5Dclose(d[i]));
    CHECK(H5Gclose(g));
    CHECK(H5Sclose(space));
    CHECK(fixture_close(f));
    CHECK(H5Pclose(fapl));
    fixture_finish();
    return 0;
}
