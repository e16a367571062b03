/* The clean control: nothing an insight should complain about. One file, opened once;
 * a contiguous 8 MiB dataset written and read in two 4 MiB halves, and a chunked 8 MiB
 * dataset (1 MiB chunks, no filter, the shape of the accesses) written and read chunk by
 * chunk; memory types equal to the file types; every selection read once.
 *
 * Usage: control. Writes control.h5 in the current directory; exits non-zero on any HDF5
 * error. */
#include "fixture.h"

enum { ROWS = 2048, COLS = 1024, CH = 256 };

static int pass_over(hid_t d, hsize_t block, double *buf, int write)
{
    hsize_t dims[2] = {ROWS, COLS}, count[2] = {block, COLS};
    hid_t   space, mem;
    CHECK(space = H5Screate_simple(2, dims, NULL));
    CHECK(mem = H5Screate_simple(2, count, NULL));
    for (hsize_t r = 0; r < ROWS; r += block) {
        hsize_t start[2] = {r, 0};
        CHECK(H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL));
        if (write) {
            for (size_t i = 0; i < block * COLS; i++)
                buf[i] = (double)(r * COLS + i);
            CHECK(H5Dwrite(d, H5T_NATIVE_DOUBLE, mem, space, H5P_DEFAULT, buf));
        }
        else {
            CHECK(H5Dread(d, H5T_NATIVE_DOUBLE, mem, space, H5P_DEFAULT, buf));
            if (buf[block * COLS - 1] != (double)(r * COLS + block * COLS - 1))
                return -1;
        }
    }
    CHECK(H5Sclose(mem));
    CHECK(H5Sclose(space));
    return 0;
}

int main(int argc, char **argv)
{
    fixture_init(&argc, &argv);
    hid_t fapl = fixture_fapl();
    hsize_t dims[2] = {ROWS, COLS}, chunk[2] = {CH / 2, COLS};
    double *buf     = malloc(sizeof(double) * (ROWS / 2) * COLS);
    hid_t   f, space, dcpl, contig, chunked;
    CHECK(f = H5Fcreate("control.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl));
    CHECK(space = H5Screate_simple(2, dims, NULL));
    CHECK(contig = H5Dcreate2(f, "contiguous", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT,
                              H5P_DEFAULT, H5P_DEFAULT));
    CHECK(dcpl = H5Pcreate(H5P_DATASET_CREATE));
    CHECK(H5Pset_chunk(dcpl, 2, chunk));
    CHECK(chunked = H5Dcreate2(f, "chunked", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, dcpl,
                               H5P_DEFAULT));
    CHECK(pass_over(contig, ROWS / 2, buf, 1));
    CHECK(pass_over(chunked, CH / 2, buf, 1));
    CHECK(pass_over(contig, ROWS / 2, buf, 0));
    CHECK(pass_over(chunked, CH / 2, buf, 0));
    CHECK(H5Dclose(chunked));
    CHECK(H5Dclose(contig));
    CHECK(H5Pclose(dcpl));
    CHECK(H5Sclose(space));
    CHECK(H5Fclose(f));
    CHECK(H5Pclose(fapl));
    free(buf);
    fixture_finish();
    return 0;
}
