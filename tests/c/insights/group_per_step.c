/* group_per_step: each output step stored as its own group holding three small variables
 * (h5py `g = f.create_group(f"step_{i:05d}"); g["u"] = u; ...`, a layout many simulation
 * codes use): 1000 groups and 3000 datasets of 256 doubles (2 KiB) each, every one with
 * its object header, link and allocation, to store 6 MiB. With --fixed the three
 * variables are three 1000x256 datasets created once and each step writes its row
 * (H5Sselect_hyperslab) after buffering 100 steps (10 writes per variable).
 *
 * Usage: group_per_step [--fixed]. Writes group_per_step.h5 in the current directory;
 * exits non-zero on any HDF5 error. */
#include "fixture.h"

enum { STEPS = 1000, M = 256, BATCH = 100 };

static const char *VARS[3] = {"u", "v", "p"};

int main(int argc, char **argv)
{
    fixture_init(&argc, &argv);
    int     fixed = fixture_fixed(argc, argv);
    hid_t   fapl  = fixture_fapl();
    double *buf   = malloc(sizeof(double) * 3 * BATCH * M);
    if (!buf)
        return 1;
    hid_t f;
    CHECK(f = H5Fcreate("group_per_step.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl));
    if (fixed) {
        hsize_t dims[2] = {STEPS, M}, count[2] = {BATCH, M};
        hid_t   space, mem, d[3];
        CHECK(space = H5Screate_simple(2, dims, NULL));
        CHECK(mem = H5Screate_simple(2, count, NULL));
        for (int k = 0; k < 3; k++)
            CHECK(d[k] = H5Dcreate2(f, VARS[k], H5T_NATIVE_DOUBLE, space, H5P_DEFAULT,
                                    H5P_DEFAULT, H5P_DEFAULT));
        for (int s = 0; s < STEPS; s++) {
            for (int k = 0; k < 3; k++)
                for (int i = 0; i < M; i++)
                    buf[((size_t)k * BATCH + s % BATCH) * M + i] = (double)(s * k + i);
            if ((s + 1) % BATCH == 0) {
                hsize_t start[2] = {(hsize_t)(s + 1 - BATCH), 0};
                CHECK(H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL));
                for (int k = 0; k < 3; k++)
                    CHECK(H5Dwrite(d[k], H5T_NATIVE_DOUBLE, mem, space, H5P_DEFAULT,
                                   buf + (size_t)k * BATCH * M));
            }
        }
        for (int k = 0; k < 3; k++)
            CHECK(H5Dclose(d[k]));
        CHECK(H5Sclose(mem));
        CHECK(H5Sclose(space));
    }
    else {
        hsize_t dims[1] = {M};
        hid_t   space;
        CHECK(space = H5Screate_simple(1, dims, NULL));
        for (int s = 0; s < STEPS; s++) {
            char name[32];
            snprintf(name, sizeof name, "step_%05d", s);
            hid_t g;
            CHECK(g = H5Gcreate2(f, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
            for (int k = 0; k < 3; k++) {
                for (int i = 0; i < M; i++)
                    buf[i] = (double)(s * k + i);
                hid_t d;
                CHECK(d = H5Dcreate2(g, VARS[k], H5T_NATIVE_DOUBLE, space, H5P_DEFAULT,
                                     H5P_DEFAULT, H5P_DEFAULT));
                CHECK(H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf));
                CHECK(H5Dclose(d));
            }
            CHECK(H5Gclose(g));
        }
        CHECK(H5Sclose(space));
    }
    CHECK(fixture_close(f));
    CHECK(H5Pclose(fapl));
    free(buf);
    fixture_finish();
    return 0;
}
