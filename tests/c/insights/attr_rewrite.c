/* attr_rewrite: h5py's `dset.attrs["step"] = i` inside the time loop: assigning an
 * attribute that exists deletes it and creates it again (H5Adelete, H5Acreate2, H5Awrite),
 * so each of 2000 steps rewrites three attributes' messages in the dataset's object header,
 * around a 4 KiB row write (H5Sselect_hyperslab + H5Dwrite). With --fixed the three
 * attributes are created once, before the loop, and updated in place after it
 * (H5Aopen + H5Awrite, h5py `attrs.modify`): the last values are what is kept.
 *
 * Usage: attr_rewrite [--fixed]. Writes attr_rewrite.h5 in the current directory; exits
 * non-zero on any HDF5 error. */
#include "fixture.h"

enum { STEPS = 2000, M = 512 };

static const char *NAMES[3] = {"step", "time", "energy"};

/* Writes `v` to attribute `name` of `d`, creating it when `create` (after deleting the
 * old one when `replace`), else opening it. */
static void put(hid_t d, const char *name, double v, int create, int replace)
{
    hid_t a, s;
    CHECK(s = H5Screate(H5S_SCALAR));
    if (create) {
        if (replace)
            CHECK(H5Adelete(d, name));
        CHECK(a = H5Acreate2(d, name, H5T_NATIVE_DOUBLE, s, H5P_DEFAULT, H5P_DEFAULT));
    }
    else
        CHECK(a = H5Aopen(d, name, H5P_DEFAULT));
    CHECK(H5Awrite(a, H5T_NATIVE_DOUBLE, &v));
    CHECK(H5Aclose(a));
    CHECK(H5Sclose(s));
}

int main(int argc, char **argv)
{
    fixture_init(&argc, &argv);
    int     fixed   = fixture_fixed(argc, argv);
    hid_t   fapl    = fixture_fapl();
    hsize_t dims[2] = {STEPS, M}, one[2] = {1, M};
    double  row[M];
    hid_t   f, space, mem, d;
    CHECK(f = H5Fcreate("attr_rewrite.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl));
    CHECK(space = H5Screate_simple(2, dims, NULL));
    CHECK(mem = H5Screate_simple(2, one, NULL));
    CHECK(d = H5Dcreate2(f, "state", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, H5P_DEFAULT,
                         H5P_DEFAULT));
    if (fixed)
        for (int k = 0; k < 3; k++)
            put(d, NAMES[k], 0, 1, 0);
    for (hsize_t s = 0; s < STEPS; s++) {
        for (int i = 0; i < M; i++)
            row[i] = (double)(s + i);
        hsize_t start[2] = {s, 0};
        CHECK(H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, one, NULL));
        CHECK(H5Dwrite(d, H5T_NATIVE_DOUBLE, mem, space, H5P_DEFAULT, row));
        if (!fixed)
            for (int k = 0; k < 3; k++)
                put(d, NAMES[k], (double)s * (k + 1), 1, s > 0);
    }
    if (fixed)
        for (int k = 0; k < 3; k++)
            put(d, NAMES[k], (double)(STEPS - 1) * (k + 1), 0, 0);
    double v;
    hid_t  a;
    CHECK(a = H5Aopen(d, "energy", H5P_DEFAULT));
    CHECK(H5Aread(a, H5T_NATIVE_DOUBLE, &v));
    CHECK(H5Aclose(a));
    if (v != (double)(STEPS - 1) * 3)
        return 2;
    CHECK(H5Dclose(d));
    CHECK(H5Sclose(mem));
    CHECK(H5Sclose(space));
    CHECK(fixture_close(f));
    CHECK(H5Pclose(fapl));
    fixture_finish();
    return 0;
}
