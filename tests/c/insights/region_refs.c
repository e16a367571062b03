/* region_refs: an index of 2000 region references (H5T_STD_REF), one per row of a
 * 2000x64 double dataset, dereferenced one at a time: each reference opens the dataset
 * (H5Ropen_object: the object header looked up by its address and read), opens its region
 * (H5Ropen_region), reads one 512-byte row and closes both: 2000 dataset opens and 2000
 * small reads for 1 MiB. With --fixed the object is opened once (from the first
 * reference), the regions are combined into one selection (H5Sselect_hyperslab with
 * H5S_SELECT_OR of each region's bounds) and read with one H5Dread.
 *
 * Usage: region_refs [--fixed]. Writes region_refs.h5 in the current directory; exits
 * non-zero on any HDF5 error. */
#include "fixture.h"

enum { ROWS = 2000, COLS = 64 };

int main(int argc, char **argv)
{
    fixture_init(&argc, &argv);
    int         fixed   = fixture_fixed(argc, argv);
    hsize_t     dims[2] = {ROWS, COLS}, nrefs = ROWS, row[2] = {1, COLS};
    hid_t       f, space, d, rspace, rd;
    double     *buf  = malloc(sizeof(double) * ROWS * COLS);
    H5R_ref_t  *refs = malloc(sizeof(H5R_ref_t) * ROWS);
    if (!buf || !refs)
        return 1;
    for (size_t i = 0; i < (size_t)ROWS * COLS; i++)
        buf[i] = (double)i;
    CHECK(f = H5Fcreate("region_refs.h5", H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
    CHECK(space = H5Screate_simple(2, dims, NULL));
    CHECK(d = H5Dcreate2(f, "data", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, H5P_DEFAULT,
                         H5P_DEFAULT));
    CHECK(H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf));
    for (hsize_t i = 0; i < ROWS; i++) {
        hsize_t start[2] = {i, 0};
        CHECK(H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, row, NULL));
        CHECK(H5Rcreate_region(f, "data", space, H5P_DEFAULT, &refs[i]));
    }
    CHECK(H5Dclose(d));
    CHECK(rspace = H5Screate_simple(1, &nrefs, NULL));
    CHECK(rd = H5Dcreate2(f, "index", H5T_STD_REF, rspace, H5P_DEFAULT, H5P_DEFAULT,
                          H5P_DEFAULT));
    CHECK(H5Dwrite(rd, H5T_STD_REF, H5S_ALL, H5S_ALL, H5P_DEFAULT, refs));
    for (int i = 0; i < ROWS; i++)
        CHECK(H5Rdestroy(&refs[i]));
    CHECK(H5Dclose(rd));
    CHECK(fixture_close(f));

    /* Read the rows back through the index. */
    CHECK(f = H5Fopen("region_refs.h5", H5F_ACC_RDONLY, H5P_DEFAULT));
    CHECK(rd = H5Dopen2(f, "index", H5P_DEFAULT));
    CHECK(H5Dread(rd, H5T_STD_REF, H5S_ALL, H5S_ALL, H5P_DEFAULT, refs));
    CHECK(H5Dclose(rd));
    double sum = 0;
    if (fixed) {
        hid_t all, mem;
        CHECK(d = H5Ropen_object(&refs[0], H5P_DEFAULT, H5P_DEFAULT));
        CHECK(all = H5Dget_space(d));
        CHECK(H5Sselect_none(all));
        for (int i = 0; i < ROWS; i++) {
            hid_t   reg;
            hsize_t lo[2], hi[2], cnt[2];
            CHECK(reg = H5Ropen_region(&refs[i], H5P_DEFAULT, H5P_DEFAULT));
            CHECK(H5Sget_select_bounds(reg, lo, hi));
            cnt[0] = hi[0] - lo[0] + 1, cnt[1] = hi[1] - lo[1] + 1;
            CHECK(H5Sselect_hyperslab(all, H5S_SELECT_OR, lo, NULL, cnt, NULL));
            CHECK(H5Sclose(reg));
        }
        hsize_t n = (hsize_t)H5Sget_select_npoints(all);
        CHECK(mem = H5Screate_simple(1, &n, NULL));
        CHECK(H5Dread(d, H5T_NATIVE_DOUBLE, mem, all, H5P_DEFAULT, buf));
        sum = buf[(size_t)ROWS * COLS - 1];
        CHECK(H5Sclose(mem));
        CHECK(H5Sclose(all));
        CHECK(H5Dclose(d));
    }
    else {
        hid_t mem;
        CHECK(mem = H5Screate_simple(2, row, NULL));
        for (int i = 0; i < ROWS; i++) {
            hid_t obj, reg;
            CHECK(obj = H5Ropen_object(&refs[i], H5P_DEFAULT, H5P_DEFAULT));
            CHECK(reg = H5Ropen_region(&refs[i], H5P_DEFAULT, H5P_DEFAULT));
            CHECK(H5Dread(obj, H5T_NATIVE_DOUBLE, mem, reg, H5P_DEFAULT, buf + (size_t)i * COLS));
            CHECK(H5Sclose(reg));
            CHECK(H5Dclose(obj));
        }
        sum = buf[(size_t)ROWS * COLS - 1];
        CHECK(H5Sclose(mem));
    }
    for (int i = 0; i < ROWS; i++)
        CHECK(H5Rdestroy(&refs[i]));
    CHECK(H5Sclose(space));
    CHECK(fixture_close(f));
    free(refs);
    free(buf);
    fixture_finish();
    return sum == (double)ROWS * COLS - 1 ? 0 : 1;
}
