/* attribute_storage_compact: 2000 attributes (one double each, e.g. per-channel
 * calibration constants) written on one dataset and read back by name, in a file of the
 * earliest format (HDF5's default): all of them live as messages in the dataset's object
 * header, so every H5Acreate2 and H5Aopen_by_name scans the messages before it, quadratic
 * in their number. With --fixed the file allows the 1.8 format
 * (H5Pset_libver_bounds(fapl, H5F_LIBVER_V18, H5F_LIBVER_LATEST)): beyond 8 attributes
 * HDF5 keeps them in dense storage (a fractal heap with a B-tree name index).
 *
 * Usage: attrs_many [--fixed]. Writes attrs_many.h5 in the current directory; exits
 * non-zero on any HDF5 error. */
#include "fixture.h"

enum { NATTR = 2000, N = 1024 };

int main(int argc, char **argv)
{
    fixture_init(&argc, &argv);
    int     fixed   = fixture_fixed(argc, argv);
    hid_t   fapl    = fixture_fapl();
    hsize_t dims[1] = {N};
    double  v[N];
    for (int i = 0; i < N; i++)
        v[i] = i;
    if (fixed)
        CHECK(H5Pset_libver_bounds(fapl, H5F_LIBVER_V18, H5F_LIBVER_LATEST));
    hid_t f, space, scalar, d, a;
    CHECK(f = H5Fcreate("attrs_many.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl));
    CHECK(space = H5Screate_simple(1, dims, NULL));
    CHECK(scalar = H5Screate(H5S_SCALAR));
    CHECK(d = H5Dcreate2(f, "signal", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, H5P_DEFAULT,
                         H5P_DEFAULT));
    CHECK(H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v));
    for (int i = 0; i < NATTR; i++) {
        char   name[32];
        double c = 1.0 + i * 1e-3;
        snprintf(name, sizeof name, "gain_channel_%04d", i);
        CHECK(a = H5Acreate2(d, name, H5T_NATIVE_DOUBLE, scalar, H5P_DEFAULT, H5P_DEFAULT));
        CHECK(H5Awrite(a, H5T_NATIVE_DOUBLE, &c));
        CHECK(H5Aclose(a));
    }
    double sum = 0;
    for (int i = 0; i < NATTR; i++) {
        char   name[32];
        double c;
        snprintf(name, sizeof name, "gain_channel_%04d", i);
        CHECK(a = H5Aopen_by_name(d, ".", name, H5P_DEFAULT, H5P_DEFAULT));
        CHECK(H5Aread(a, H5T_NATIVE_DOUBLE, &c));
        CHECK(H5Aclose(a));
        sum += c;
    }
    if (sum < NATTR)
        return 2;
    CHECK(H5Dclose(d));
    CHECK(H5Sclose(scalar));
    CHECK(H5Sclose(space));
    CHECK(fixture_close(f));
    CHECK(H5Pclose(fapl));
    fixture_finish();
    return 0;
}
