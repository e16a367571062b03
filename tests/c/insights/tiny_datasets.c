/* Pathology: a tiny-dataset storm. Thousands of datasets of two doubles each, every one
 * with its own object header, link and raw-data allocation, so the run is all metadata.
 * `--fixed`: the same values in one dataset (one extra dimension), written in one call.
 * Serial only (`h5prov` insights `tiny_datasets` and `metadata_time`). */
#include "fixture.h"

#define NSETS 4000

int main(int argc, char **argv)
{
    fixture_init(&argc, &argv);
    hid_t fapl = fixture_fapl();
    int fixed = fixture_fixed(argc, argv);
    hid_t f = H5Fcreate("tiny.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    CHECK(f);
    if (fixed) {
        static double v[NSETS][2];
        for (int i = 0; i < NSETS; i++) {
            v[i][0] = i;
            v[i][1] = -i;
        }
        hsize_t dims[2] = {NSETS, 2};
        hid_t s = H5Screate_simple(2, dims, NULL);
        CHECK(s);
        hid_t d = H5Dcreate2(f, "values", H5T_NATIVE_DOUBLE, s, H5P_DEFAULT, H5P_DEFAULT,
                             H5P_DEFAULT);
        CHECK(d);
        CHECK(H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v));
        CHECK(H5Dclose(d));
        CHECK(H5Sclose(s));
    } else {
        hsize_t dims[1] = {2};
        hid_t s = H5Screate_simple(1, dims, NULL);
        CHECK(s);
        for (int i = 0; i < NSETS; i++) {
            char name[32];
            double v[2] = {i, -i};
            snprintf(name, sizeof name, "v%05d", i);
            hid_t d = H5Dcreate2(f, name, H5T_NATIVE_DOUBLE, s, H5P_DEFAULT, H5P_DEFAULT,
                                 H5P_DEFAULT);
            CHECK(d);
            CHECK(H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v));
            CHECK(H5Dclose(d));
        }
        CHECK(H5Sclose(s));
    }
    CHECK(fixture_close(f));
    CHECK(H5Pclose(fapl));
    fixture_finish();
    return 0;
}
