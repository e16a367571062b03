/* vds_reopen: a virtual dataset (VDS) of 16x1024 doubles whose rows are 16 source files
 * (one per instrument), opened, read one column of (16 values) and closed at each of 100
 * steps: every open of the VDS reopens, at its first read, all 16 source files and their
 * datasets, and its close closes them again: 1600 file opens by HDF5 itself for 100 reads
 * of 128 bytes. With --fixed the VDS is opened once before the loop and closed after it:
 * the source files are opened once.
 *
 * Usage: vds_reopen [--fixed]. Writes vds_reopen.h5 and vds_src_*.h5 in the current
 * directory; exits non-zero on any HDF5 error. */
#include "fixture.h"

enum { SRC = 16, LEN = 1024, STEPS = 100 };

int main(int argc, char **argv)
{
    fixture_init(&argc, &argv);
    int     fixed   = fixture_fixed(argc, argv);
    hsize_t sdims[1] = {LEN}, vdims[2] = {SRC, LEN};
    hid_t   f, sspace, vspace, dcpl, d;
    static double row[LEN];
    CHECK(sspace = H5Screate_simple(1, sdims, NULL));
    for (int s = 0; s < SRC; s++) {
        char name[32];
        snprintf(name, sizeof name, "vds_src_%02d.h5", s);
        for (int i = 0; i < LEN; i++)
            row[i] = s * 1000.0 + i;
        CHECK(f = H5Fcreate(name, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
        CHECK(d = H5Dcreate2(f, "signal", H5T_NATIVE_DOUBLE, sspace, H5P_DEFAULT, H5P_DEFAULT,
                             H5P_DEFAULT));
        CHECK(H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, row));
        CHECK(H5Dclose(d));
        CHECK(fixture_close(f));
    }
    CHECK(vspace = H5Screate_simple(2, vdims, NULL));
    CHECK(dcpl = H5Pcreate(H5P_DATASET_CREATE));
    for (int s = 0; s < SRC; s++) {
        char    name[32];
        hsize_t start[2] = {(hsize_t)s, 0}, count[2] = {1, LEN};
        snprintf(name, sizeof name, "vds_src_%02d.h5", s);
        CHECK(H5Sselect_hyperslab(vspace, H5S_SELECT_SET, start, NULL, count, NULL));
        CHECK(H5Pset_virtual(dcpl, vspace, name, "signal", sspace));
    }
    CHECK(H5Sselect_all(vspace));
    CHECK(f = H5Fcreate("vds_reopen.h5", H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
    CHECK(d = H5Dcreate2(f, "all", H5T_NATIVE_DOUBLE, vspace, H5P_DEFAULT, dcpl, H5P_DEFAULT));
    CHECK(H5Dclose(d));
    CHECK(fixture_close(f));

    CHECK(f = H5Fopen("vds_reopen.h5", H5F_ACC_RDONLY, H5P_DEFAULT));
    hsize_t col[2] = {SRC, 1}, n = SRC;
    hid_t   mem;
    double  out[SRC], sum = 0;
    CHECK(mem = H5Screate_simple(1, &n, NULL));
    d = -1;
    if (fixed)
        CHECK(d = H5Dopen2(f, "all", H5P_DEFAULT));
    for (int t = 0; t < STEPS; t++) {
        hsize_t start[2] = {0, (hsize_t)t};
        if (!fixed)
            CHECK(d = H5Dopen2(f, "all", H5P_DEFAULT));
        CHECK(H5Sselect_hyperslab(vspace, H5S_SELECT_SET, start, NULL, col, NULL));
        CHECK(H5Dread(d, H5T_NATIVE_DOUBLE, mem, vspace, H5P_DEFAULT, out));
        sum += out[SRC - 1];
        if (!fixed)
            CHECK(H5Dclose(d));
    }
    if (fixed)
        CHECK(H5Dclose(d));
    CHECK(H5Sclose(mem));
    CHECK(H5Pclose(dcpl));
    CHECK(H5Sclose(vspace));
    CHECK(H5Sclose(sspace));
    CHECK(fixture_close(f));
    fixture_finish();
    return sum > 0 ? 0 : 1;
}
