/* keys_in_loop: h5py's `if name in list(group.keys())` (or a netCDF/PyTables listing of a
 * group's members) inside a time loop: a group of 2000 links (hard links to one dataset,
 * so that creating them is cheap) is listed with H5Literate2 at each of 200 steps to find
 * the step's entry, then one 8 KiB row is read:
 * 400,000 link visits for 200 lookups. With --fixed the program lists the group once
 * before the loop (or opens the known name directly).
 *
 * Usage: keys_in_loop [--fixed]. Writes keys_in_loop.h5 in the current directory; exits
 * non-zero on any HDF5 error. */
#include "fixture.h"

enum { LINKS = 2000, STEPS = 200, COLS = 1024 };

struct find {
    const char *want;
    int         found;
};

static herr_t visit(hid_t g, const char *name, const H5L_info2_t *info, void *data)
{
    (void)g;
    (void)info;
    struct find *fd = data;
    if (strcmp(name, fd->want) == 0)
        fd->found = 1;
    return 0;
}

int main(int argc, char **argv)
{
    fixture_init(&argc, &argv);
    int     fixed   = fixture_fixed(argc, argv);
    hid_t   fapl    = fixture_fapl();
    hsize_t dims[2] = {STEPS, COLS}, count[2] = {1, COLS};
    double *row     = malloc(sizeof(double) * STEPS * COLS);
    if (!row)
        return 1;
    for (size_t i = 0; i < (size_t)STEPS * COLS; i++)
        row[i] = (double)i;
    hid_t f, g, space, mem, d;
    CHECK(f = H5Fcreate("keys_in_loop.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl));
    CHECK(g = H5Gcreate2(f, "runs", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    CHECK(space = H5Screate_simple(2, dims, NULL));
    CHECK(d = H5Dcreate2(f, "data", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, H5P_DEFAULT,
                         H5P_DEFAULT));
    CHECK(H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, row));
    char name[32];
    for (int i = 0; i < LINKS; i++) {
        snprintf(name, sizeof name, "run%05d", i);
        CHECK(H5Lcreate_hard(d, ".", g, name, H5P_DEFAULT, H5P_DEFAULT));
    }
    CHECK(mem = H5Screate_simple(2, count, NULL));
    int found = 0;
    for (int s = 0; s < STEPS; s++) {
        snprintf(name, sizeof name, "run%05d", s * (LINKS / STEPS));
        if (!fixed || s == 0) {
            struct find fd = {name, 0};
            hsize_t     idx = 0;
            CHECK(H5Literate2(g, H5_INDEX_NAME, H5_ITER_NATIVE, &idx, visit, &fd));
            if (!fd.found)
                return 2;
        }
        found++;
        hsize_t start[2] = {(hsize_t)s, 0};
        CHECK(H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL));
        CHECK(H5Dread(d, H5T_NATIVE_DOUBLE, mem, space, H5P_DEFAULT, row));
        if (row[1] != (double)(s * COLS + 1))
            return 3;
    }
    if (found != STEPS)
        return 4;
    CHECK(H5Sclose(mem));
    CHECK(H5Dclose(d));
    CHECK(H5Sclose(space));
    CHECK(H5Gclose(g));
    CHECK(fixture_close(f));
    CHECK(H5Pclose(fapl));
    free(row);
    fixture_finish();
    return 0;
}
