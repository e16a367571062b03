/* attr_read_in_loop: CF-style decoding done per block, as netCDF/h5py code often does
 * (`scale = var.attrs["scale_factor"]` inside the loop): a 1-D dataset of 512 Ki doubles
 * is read in 1024 blocks of 4 KiB, and before every block the program opens and reads the
 * dataset's three attributes by name (scale_factor, add_offset, valid_max): 3072
 * attribute lookups in the object header, for three values that never change. With
 * --fixed the attributes are read once, before the loop.
 *
 * Usage: attr_read_in_loop [--fixed]. Writes attr_read_in_loop.h5 in the current
 * directory; exits non-zero on any HDF5 error. */
#include "fixture.h"

enum { N = 512 * 1024, BLOCK = 512 };

static const char *names[3] = {"scale_factor", "add_offset", "valid_max"};

static void read_attrs(hid_t d, double out[3])
{
    for (int a = 0; a < 3; a++) {
        hid_t at;
        CHECK(at = H5Aopen(d, names[a], H5P_DEFAULT));
        CHECK(H5Aread(at, H5T_NATIVE_DOUBLE, &out[a]));
        CHECK(H5Aclose(at));
    }
}

int main(int argc, char **argv)
{
    fixture_init(&argc, &argv);
    int     fixed   = fixture_fixed(argc, argv);
    hid_t   fapl    = fixture_fapl();
    hsize_t dims[1] = {N}, count[1] = {BLOCK};
    double *buf     = malloc(sizeof(double) * N);
    if (!buf)
        return 1;
    for (size_t i = 0; i < N; i++)
        buf[i] = (double)(i % 1000);
    hid_t f, space, scalar, d, mem;
    CHECK(f = H5Fcreate("attr_read_in_loop.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl));
    CHECK(space = H5Screate_simple(1, dims, NULL));
    CHECK(scalar = H5Screate(H5S_SCALAR));
    CHECK(d = H5Dcreate2(f, "temperature", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT,
                         H5P_DEFAULT, H5P_DEFAULT));
    CHECK(H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf));
    double vals[3] = {0.01, 273.15, 1000.0};
    for (int a = 0; a < 3; a++) {
        hid_t at;
        CHECK(at = H5Acreate2(d, names[a], H5T_NATIVE_DOUBLE, scalar, H5P_DEFAULT, H5P_DEFAULT));
        CHECK(H5Awrite(at, H5T_NATIVE_DOUBLE, &vals[a]));
        CHECK(H5Aclose(at));
    }
    CHECK(H5Dclose(d));
    CHECK(d = H5Dopen2(f, "temperature", H5P_DEFAULT));
    CHECK(mem = H5Screate_simple(1, count, NULL));
    double attrs[3], sum = 0;
    if (fixed)
        read_attrs(d, attrs);
    for (hsize_t s = 0; s < N; s += BLOCK) {
        if (!fixed)
            read_attrs(d, attrs);
        CHECK(H5Sselect_hyperslab(space, H5S_SELECT_SET, &s, NULL, count, NULL));
        CHECK(H5Dread(d, H5T_NATIVE_DOUBLE, mem, space, H5P_DEFAULT, buf));
        for (size_t i = 0; i < BLOCK; i++)
            sum += buf[i] * attrs[0] + attrs[1];
    }
    if (sum <= 0)
        return 2;
    CHECK(H5Sclose(mem));
    CHECK(H5Dclose(d));
    CHECK(H5Sclose(scalar));
    CHECK(H5Sclose(space));
    CHECK(fixture_close(f));
    CHECK(H5Pclose(fapl));
    free(buf);
    fixture_finish();
    return 0;
}
