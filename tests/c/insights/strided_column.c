/* strided_read_contiguous: a contiguous 2048x2048 double dataset (32 MiB, row-major,
 * written in 4 row blocks) from which a program reads 16 columns one at a time, each a
 * 2048x1 hyperslab: 8 bytes of every 16 KiB row, so every column read goes through the
 * whole dataset in 64 KiB sieve-buffer reads (32 MiB read to deliver 16 KiB). With
 * --fixed the 16 columns are read in one 2048x16 hyperslab.
 *
 * Usage: strided_column [--fixed]. Writes strided_column.h5 in the current directory;
 * exits non-zero on any HDF5 error. */
#include "fixture.h"

enum { N = 2048, NCOLS = 16, PIECES = 4 };

int main(int argc, char **argv)
{
    fixture_init(&argc, &argv);
    int     fixed   = fixture_fixed(argc, argv);
    hid_t   fapl    = fixture_fapl();
    hsize_t dims[2] = {N, N};
    double *buf     = malloc(sizeof(double) * N * (N / PIECES));
    if (!buf)
        return 1;
    hid_t f, space, d, mem;
    CHECK(f = H5Fcreate("strided_column.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl));
    CHECK(space = H5Screate_simple(2, dims, NULL));
    CHECK(d = H5Dcreate2(f, "grid", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, H5P_DEFAULT,
                         H5P_DEFAULT));
    hsize_t wcount[2] = {N / PIECES, N};
    CHECK(mem = H5Screate_simple(2, wcount, NULL));
    for (hsize_t p = 0; p < PIECES; p++) {
        hsize_t start[2] = {p * (N / PIECES), 0};
        for (size_t i = 0; i < (size_t)N * (N / PIECES); i++)
            buf[i] = (double)(start[0] * N + i);
        CHECK(H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, wcount, NULL));
        CHECK(H5Dwrite(d, H5T_NATIVE_DOUBLE, mem, space, H5P_DEFAULT, buf));
    }
    CHECK(H5Sclose(mem));
    hsize_t per = fixed ? NCOLS : 1, count[2] = {N, per};
    CHECK(mem = H5Screate_simple(2, count, NULL));
    for (hsize_t c = 0; c < NCOLS; c += per) {
        hsize_t start[2] = {0, c};
        CHECK(H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL));
        CHECK(H5Dread(d, H5T_NATIVE_DOUBLE, mem, space, H5P_DEFAULT, buf));
        if (buf[per * (N - 1)] != (double)((N - 1) * N + c))
            return 2;
    }
    CHECK(H5Sclose(mem));
    CHECK(H5Dclose(d));
    CHECK(H5Sclose(space));
    CHECK(fixture_close(f));
    CHECK(H5Pclose(fapl));
    free(buf);
    fixture_finish();
    return 0;
}
