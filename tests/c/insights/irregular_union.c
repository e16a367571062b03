/* irregular_selection: 16 contiguous 4096x8 double datasets (256 KiB each, rows of 64
 * bytes) from which a program reads about half the rows, picked irregularly (a fixed
 * pseudo-random mask), as h5py does for a list index: the selection is a union of
 * single-row hyperslabs (H5Sselect_hyperslab with H5S_SELECT_OR, one per row), built once
 * and read from every dataset, so HDF5 walks some 2000 separate 64-byte pieces per read.
 * With --fixed each dataset is read whole in one contiguous read (twice the bytes) and the
 * rows are picked in memory.
 *
 * Usage: irregular_union [--fixed]. Writes irregular_union.h5 in the current directory;
 * exits non-zero on any HDF5 error. */
#include "fixture.h"

enum { ROWS = 4096, COLS = 8, FIELDS = 16 };

int main(int argc, char **argv)
{
    fixture_init(&argc, &argv);
    int     fixed   = fixture_fixed(argc, argv);
    hid_t   fapl    = fixture_fapl();
    hsize_t dims[2] = {ROWS, COLS};
    double *buf     = malloc(sizeof(double) * ROWS * COLS);
    double *picked  = malloc(sizeof(double) * ROWS * COLS);
    char   *want    = malloc(ROWS);
    if (!buf || !picked || !want)
        return 1;
    unsigned x = 12345, n = 0;
    for (size_t r = 0; r < ROWS; r++) {
        x = x * 1103515245u + 12345u;
        want[r] = (x >> 16) & 1;
        n += want[r];
    }
    size_t last = ROWS - 1;
    while (!want[last])
        last--;
    hid_t f, space, d[FIELDS], mem;
    CHECK(f = H5Fcreate("irregular_union.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl));
    CHECK(space = H5Screate_simple(2, dims, NULL));
    for (int k = 0; k < FIELDS; k++) {
        char name[16];
        snprintf(name, sizeof name, "field%d", k);
        for (size_t i = 0; i < (size_t)ROWS * COLS; i++)
            buf[i] = (double)(k * ROWS * COLS + i);
        CHECK(d[k] = H5Dcreate2(f, name, H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, H5P_DEFAULT,
                                H5P_DEFAULT));
        CHECK(H5Dwrite(d[k], H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf));
    }
    if (!fixed) {
        CHECK(H5Sselect_none(space));
        hsize_t count[2] = {1, COLS};
        for (hsize_t r = 0; r < ROWS; r++)
            if (want[r]) {
                hsize_t start[2] = {r, 0};
                CHECK(H5Sselect_hyperslab(space, H5S_SELECT_OR, start, NULL, count, NULL));
            }
    }
    hsize_t mdims[1] = {(hsize_t)n * COLS};
    CHECK(mem = H5Screate_simple(1, mdims, NULL));
    for (int k = 0; k < FIELDS; k++) {
        if (fixed) {
            CHECK(H5Dread(d[k], H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf));
            size_t j = 0;
            for (size_t r = 0; r < ROWS; r++)
                if (want[r])
                    memcpy(picked + COLS * j++, buf + COLS * r, sizeof(double) * COLS);
        }
        else
            CHECK(H5Dread(d[k], H5T_NATIVE_DOUBLE, mem, space, H5P_DEFAULT, picked));
        if (picked[(size_t)(n - 1) * COLS] != (double)(k * ROWS * COLS + last * COLS))
            return 2;
        CHECK(H5Dclose(d[k]));
    }
    CHECK(H5Sclose(mem));
    CHECK(H5Sclose(space));
    CHECK(fixture_close(f));
    CHECK(H5Pclose(fapl));
    free(want);
    free(picked);
    free(buf);
    fixture_finish();
    return 0;
}
