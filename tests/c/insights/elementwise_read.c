/* elementwise_read: h5py's `for i in range(n): v = dset[i]` (or netCDF's nc_get_var1 in a
 * loop): a 1-D contiguous dataset of 64 Ki doubles, written in one call, is read back one
 * element at a time, 32 Ki reads of 8 bytes, each a full pass through the VOL, the
 * dataspace selection code and the file driver. With --fixed the same 32 Ki elements are
 * read in one H5Dread (h5py `dset[:n]`).
 *
 * Usage: elementwise_read [--fixed]. Writes elementwise_read.h5 in the current directory;
 * exits non-zero on any HDF5 error. */
#include "fixture.h"

enum { N = 64 * 1024, READ = 32 * 1024 };

int main(int argc, char **argv)
{
    fixture_init(&argc, &argv);
    int     fixed   = fixture_fixed(argc, argv);
    hid_t   fapl    = fixture_fapl();
    hsize_t dims[1] = {N};
    double *buf     = malloc(sizeof(double) * N);
    if (!buf)
        return 1;
    for (size_t i = 0; i < N; i++)
        buf[i] = (double)i;
    hid_t f, space, d;
    CHECK(f = H5Fcreate("elementwise_read.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl));
    CHECK(space = H5Screate_simple(1, dims, NULL));
    CHECK(d = H5Dcreate2(f, "values", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, H5P_DEFAULT,
                         H5P_DEFAULT));
    CHECK(H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf));
    memset(buf, 0, sizeof(double) * N);
    double sum = 0;
    if (fixed) {
        hsize_t start[1] = {0}, count[1] = {READ};
        hid_t   mem;
        CHECK(mem = H5Screate_simple(1, count, NULL));
        CHECK(H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL));
        CHECK(H5Dread(d, H5T_NATIVE_DOUBLE, mem, space, H5P_DEFAULT, buf));
        CHECK(H5Sclose(mem));
        for (size_t i = 0; i < READ; i++)
            sum += buf[i];
    }
    else {
        hsize_t one[1] = {1};
        hid_t   mem;
        CHECK(mem = H5Screate_simple(1, one, NULL));
        for (hsize_t i = 0; i < READ; i++) {
            double v;
            CHECK(H5Sselect_hyperslab(space, H5S_SELECT_SET, &i, NULL, one, NULL));
            CHECK(H5Dread(d, H5T_NATIVE_DOUBLE, mem, space, H5P_DEFAULT, &v));
            sum += v;
        }
        CHECK(H5Sclose(mem));
    }
    if (sum != (double)READ * (READ - 1) / 2)
        return 2;
    CHECK(H5Dclose(d));
    CHECK(H5Sclose(space));
    CHECK(fixture_close(f));
    CHECK(H5Pclose(fapl));
    free(buf);
    fixture_finish();
    return 0;
}
