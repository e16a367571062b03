/* point_selection: an 8 MiB contiguous dataset (1 Mi doubles, written in one call) read
 * back in 4 blocks of 256 Ki elements, each block selected as a list of points
 * (H5Sselect_elements with every coordinate), as a program does that turns an index array
 * into a selection: HDF5 iterates the selection point by point instead of copying one
 * contiguous run. With --fixed each block is one hyperslab (H5Sselect_hyperslab).
 *
 * Usage: point_selection [--fixed]. Writes point_selection.h5 in the current directory;
 * exits non-zero on any HDF5 error. */
#include "fixture.h"

enum { N = 1 << 20, BLOCKS = 4, PER = N / BLOCKS };

int main(int argc, char **argv)
{
    fixture_init(&argc, &argv);
    int      fixed  = fixture_fixed(argc, argv);
    hid_t    fapl   = fixture_fapl();
    hsize_t  dims[1] = {N}, count[1] = {PER};
    double  *buf    = malloc(sizeof(double) * N);
    hsize_t *coords = malloc(sizeof(hsize_t) * PER);
    if (!buf || !coords)
        return 1;
    for (size_t i = 0; i < N; i++)
        buf[i] = (double)i;
    hid_t f, space, mem, d;
    CHECK(f = H5Fcreate("point_selection.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl));
    CHECK(space = H5Screate_simple(1, dims, NULL));
    CHECK(d = H5Dcreate2(f, "values", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, H5P_DEFAULT,
                         H5P_DEFAULT));
    CHECK(H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf));
    CHECK(mem = H5Screate_simple(1, count, NULL));
    for (hsize_t b = 0; b < BLOCKS; b++) {
        hsize_t start[1] = {b * PER};
        if (fixed)
            CHECK(H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL));
        else {
            for (hsize_t i = 0; i < PER; i++)
                coords[i] = start[0] + i;
            CHECK(H5Sselect_elements(space, H5S_SELECT_SET, PER, coords));
        }
        CHECK(H5Dread(d, H5T_NATIVE_DOUBLE, mem, space, H5P_DEFAULT, buf));
        if (buf[PER - 1] != (double)(start[0] + PER - 1))
            return 2;
    }
    CHECK(H5Sclose(mem));
    CHECK(H5Dclose(d));
    CHECK(H5Sclose(space));
    CHECK(fixture_close(f));
    CHECK(H5Pclose(fapl));
    free(coords);
    free(buf);
    fixture_finish();
    return 0;
}
