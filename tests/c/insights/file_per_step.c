/* file_per_step: a simulation writes each output step to a new file (netCDF's "one file
 * per time step", h5py `h5py.File(f"out_{i}.h5", "w")` in the loop): 300 files, each
 * created (superblock, root group), given one 8 KiB dataset and closed (metadata flush,
 * file close), to store 2.4 MiB. With --fixed one file holds a 300x1024 dataset and each
 * step writes its row (H5Sselect_hyperslab), the file created once and closed at the end.
 * The step files are removed as they are made (H5Fdelete would need HDF5 1.14.4+; remove
 * after close), so only the last one is left.
 *
 * Usage: file_per_step [--fixed]. Writes file_per_step*.h5 in the current directory;
 * exits non-zero on any HDF5 error. */
#include "fixture.h"

enum { STEPS = 300, M = 1024 };

int main(int argc, char **argv)
{
    fixture_init(&argc, &argv);
    int    fixed = fixture_fixed(argc, argv);
    hid_t  fapl  = fixture_fapl();
    double row[M];
    if (fixed) {
        hsize_t dims[2] = {STEPS, M}, one[2] = {1, M};
        hid_t   f, space, mem, d;
        CHECK(f = H5Fcreate("file_per_step.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl));
        CHECK(space = H5Screate_simple(2, dims, NULL));
        CHECK(mem = H5Screate_simple(2, one, NULL));
        CHECK(d = H5Dcreate2(f, "state", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, H5P_DEFAULT,
                             H5P_DEFAULT));
        for (hsize_t s = 0; s < STEPS; s++) {
            for (int i = 0; i < M; i++)
                row[i] = (double)(s * M + i);
            hsize_t start[2] = {s, 0};
            CHECK(H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, one, NULL));
            CHECK(H5Dwrite(d, H5T_NATIVE_DOUBLE, mem, space, H5P_DEFAULT, row));
        }
        CHECK(H5Dclose(d));
        CHECK(H5Sclose(mem));
        CHECK(H5Sclose(space));
        CHECK(fixture_close(f));
    }
    else {
        hsize_t dims[1] = {M};
        hid_t   space;
        CHECK(space = H5Screate_simple(1, dims, NULL));
        for (int s = 0; s < STEPS; s++) {
            char name[64];
            snprintf(name, sizeof name, "file_per_step_%d.h5", s);
            for (int i = 0; i < M; i++)
                row[i] = (double)(s * M + i);
            hid_t f, d;
            CHECK(f = H5Fcreate(name, H5F_ACC_TRUNC, H5P_DEFAULT, fapl));
            CHECK(d = H5Dcreate2(f, "state", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT,
                                 H5P_DEFAULT, H5P_DEFAULT));
            CHECK(H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, row));
            CHECK(H5Dclose(d));
            CHECK(fixture_close(f));
            if (s + 1 < STEPS)
                remove(name);
        }
        CHECK(H5Sclose(space));
    }
    CHECK(H5Pclose(fapl));
    fixture_finish();
    return 0;
}
