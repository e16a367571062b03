/* The clean control: nothing an insight should complain about. One file, opened once;
 * a contiguous 16 MiB dataset written and read in two 8 MiB halves, and a chunked 16 MiB
 * dataset (1 MiB chunks, no filter, the shape of the accesses) written and read chunk by
 * chunk; memory types equal to the file types; every selection read once.
 *
 * MPI build (-DFIXTURE_MPI): every rank writes and reads its own 2048 rows of one MPI-IO
 * file (the datasets are 2048 x ranks rows), as above, with collective transfers.
 *
 * Usage: control. Writes control.h5 in the current directory; exits non-zero on any HDF5
 * error. */
#include "fixture.h"

enum { ROWS = 2048, COLS = 1024, CH = 256 };

/* Writes (or reads back and checks) this process's rows of `d`, `block` rows a call. */
static int pass_over(hid_t d, struct fixture_ranks me, hsize_t block, double *buf, int write,
                     hid_t dxpl)
{
    hsize_t dims[2] = {(hsize_t)me.size * ROWS, COLS}, count[2] = {block, COLS};
    hsize_t first   = (hsize_t)me.rank * ROWS;
    hid_t   space, mem;
    CHECK(space = H5Screate_simple(2, dims, NULL));
    CHECK(mem = H5Screate_simple(2, count, NULL));
    for (hsize_t r = first; r < first + ROWS; r += block) {
        hsize_t start[2] = {r, 0};
        CHECK(H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL));
        if (write) {
            for (size_t i = 0; i < block * COLS; i++)
                buf[i] = (double)(r * COLS + i);
            CHECK(H5Dwrite(d, H5T_NATIVE_DOUBLE, mem, space, dxpl, buf));
        }
        else {
            CHECK(H5Dread(d, H5T_NATIVE_DOUBLE, mem, space, dxpl, buf));
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
    struct fixture_ranks me = fixture_init(&argc, &argv);
    hid_t   fapl    = fixture_fapl();
    hid_t   dxpl    = fixture_dxpl(1);
    hsize_t dims[2] = {(hsize_t)me.size * ROWS, COLS}, chunk[2] = {CH / 2, COLS};
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
    CHECK(pass_over(contig, me, ROWS / 2, buf, 1, dxpl));
    CHECK(pass_over(chunked, me, CH / 2, buf, 1, dxpl));
    CHECK(pass_over(contig, me, ROWS / 2, buf, 0, dxpl));
    CHECK(pass_over(chunked, me, CH / 2, buf, 0, dxpl));
    CHECK(H5Dclose(chunked));
    CHECK(H5Dclose(contig));
    CHECK(H5Pclose(dcpl));
    CHECK(H5Sclose(space));
    CHECK(fixture_close(f));
    CHECK(H5Pclose(dxpl));
    CHECK(H5Pclose(fapl));
    free(buf);
    fixture_finish();
    return 0;
}
