/* sieve_off: a program that turned data sieving off (H5Pset_sieve_buf_size(fapl, 0), as
 * some tuning recipes do for "direct" I/O) reads the first 8 values of each of 32 Ki
 * records of 128 doubles in a contiguous dataset (a 32768x8 column block of a 32768x128
 * array, 2 MiB in 32 Ki pieces of 64 bytes, 1 KiB apart): without the sieve buffer every
 * piece is its own read system call. 4 such reads (4 column blocks). With --fixed the
 * FAPL keeps a 1 MiB sieve buffer (H5Pset_sieve_buf_size(fapl, 1 MiB)): each 1 MiB of
 * the file is read once and the pieces copied out of it.
 *
 * Usage: sieve_off [--fixed]. Writes sieve_off.h5 in the current directory; exits non-zero
 * on any HDF5 error. */
#include "fixture.h"

enum { ROWS = 32 * 1024, COLS = 128, W = 8, BLOCKS = 4 };

int main(int argc, char **argv)
{
    fixture_init(&argc, &argv);
    int     fixed   = fixture_fixed(argc, argv);
    hid_t   fapl    = fixture_fapl();
    hsize_t dims[2] = {ROWS, COLS}, count[2] = {ROWS, W};
    CHECK(H5Pset_sieve_buf_size(fapl, fixed ? 1024 * 1024 : 0));
    double *buf = malloc(sizeof(double) * ROWS * COLS);
    if (!buf)
        return 1;
    for (size_t i = 0; i < (size_t)ROWS * COLS; i++)
        buf[i] = (double)(i % COLS);
    hid_t f, space, mem, d;
    CHECK(f = H5Fcreate("sieve_off.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl));
    CHECK(space = H5Screate_simple(2, dims, NULL));
    CHECK(d = H5Dcreate2(f, "records", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, H5P_DEFAULT,
                         H5P_DEFAULT));
    CHECK(H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf));
    CHECK(mem = H5Screate_simple(2, count, NULL));
    double sum = 0;
    for (hsize_t b = 0; b < BLOCKS; b++) {
        hsize_t start[2] = {0, b * W};
        CHECK(H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL));
        CHECK(H5Dread(d, H5T_NATIVE_DOUBLE, mem, space, H5P_DEFAULT, buf));
        sum += buf[ROWS * W - 1];
    }
    if (sum != (double)(W - 1 + 2 * W - 1 + 3 * W - 1 + 4 * W - 1))
        return 2;
    CHECK(H5Sclose(mem));
    CHECK(H5Dclose(d));
    CHECK(H5Sclose(space));
    CHECK(fixture_close(f));
    CHECK(H5Pclose(fapl));
    free(buf);
    fixture_finish();
    return 0;
}
