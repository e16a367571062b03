/* write_multi_steps: eight scalar diagnostics of a simulation (energy, mass, ...) kept as
 * eight 1-D datasets of 4000 steps, written at every step with one H5Dwrite_multi of
 * eight one-element (8-byte) selections: 4000 calls, 32000 pieces of 8 bytes, each piece a
 * selection, a dataspace check and a file-driver write. With --fixed the steps are
 * buffered in memory and written 1000 at a time: 4 H5Dwrite_multi of eight 8 KiB blocks.
 *
 * Usage: write_multi_steps [--fixed]. Writes write_multi_steps.h5 in the current
 * directory; exits non-zero on any HDF5 error. */
#include "fixture.h"

enum { VARS = 8, STEPS = 4000, BLOCK = 1000 };

int main(int argc, char **argv)
{
    fixture_init(&argc, &argv);
    int     fixed   = fixture_fixed(argc, argv);
    hsize_t dims[1] = {STEPS};
    hid_t   f, space, d[VARS], fs[VARS], ms[VARS], mt[VARS];
    static double buf[VARS][STEPS];
    const void   *bufs[VARS];
    CHECK(f = H5Fcreate("write_multi_steps.h5", H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
    CHECK(space = H5Screate_simple(1, dims, NULL));
    for (int k = 0; k < VARS; k++) {
        char name[16];
        snprintf(name, sizeof name, "diag%d", k);
        CHECK(d[k] = H5Dcreate2(f, name, H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, H5P_DEFAULT,
                                H5P_DEFAULT));
        CHECK(fs[k] = H5Scopy(space));
        mt[k] = H5T_NATIVE_DOUBLE;
    }
    hsize_t n = fixed ? BLOCK : 1;
    hid_t   mem;
    CHECK(mem = H5Screate_simple(1, &n, NULL));
    for (int k = 0; k < VARS; k++)
        ms[k] = mem;
    for (hsize_t t = 0; t < STEPS; t++) {
        for (int k = 0; k < VARS; k++)
            buf[k][t] = (double)(k * STEPS + t);
        if (fixed && (t + 1) % BLOCK != 0)
            continue;
        hsize_t start = t + 1 - n;
        for (int k = 0; k < VARS; k++) {
            CHECK(H5Sselect_hyperslab(fs[k], H5S_SELECT_SET, &start, NULL, &n, NULL));
            bufs[k] = &buf[k][start];
        }
        CHECK(H5Dwrite_multi(VARS, d, mt, ms, fs, H5P_DEFAULT, bufs));
    }
    for (int k = 0; k < VARS; k++) {
        CHECK(H5Sclose(fs[k]));
        CHECK(H5Dclose(d[k]));
    }
    CHECK(H5Sclose(mem));
    CHECK(H5Sclose(space));
    CHECK(fixture_close(f));
    fixture_finish();
    return 0;
}
