/* Pathology: open/close churn. One dataset is opened, asked for its extent and closed
 * again thousands of times in a loop: every open walks the group's link storage and reads
 * the object header, every close drops the cached object. `--fixed`: open it once and ask
 * once. Serial only (`h5prov` insight `open_close_churn`). */
#include "fixture.h"

#define N 1024
#define LOOPS 5000

int main(int argc, char **argv)
{
    fixture_init(&argc, &argv);
    hid_t fapl = fixture_fapl();
    int fixed = fixture_fixed(argc, argv);
    static double v[N];
    for (int i = 0; i < N; i++)
        v[i] = i;
    hid_t f = H5Fcreate("churn.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    CHECK(f);
    hsize_t dims[1] = {N};
    hid_t s = H5Screate_simple(1, dims, NULL);
    CHECK(s);
    CHECK(H5Gclose(H5Gcreate2(f, "grid", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)));
    hid_t d = H5Dcreate2(f, "grid/x", H5T_NATIVE_DOUBLE, s, H5P_DEFAULT, H5P_DEFAULT,
                         H5P_DEFAULT);
    CHECK(d);
    CHECK(H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v));
    CHECK(H5Dclose(d));
    CHECK(H5Sclose(s));
    /* The loop asks for the dataset's extent, as a time-step loop that looks a dataset up
     * by name on every step does. */
    hsize_t total = 0, n[1];
    if (fixed) {
        d = H5Dopen2(f, "grid/x", H5P_DEFAULT);
        CHECK(d);
        s = H5Dget_space(d);
        CHECK(s);
        CHECK(H5Sget_simple_extent_dims(s, n, NULL));
        CHECK(H5Sclose(s));
    }
    for (int i = 0; i < LOOPS; i++) {
        if (!fixed) {
            d = H5Dopen2(f, "grid/x", H5P_DEFAULT);
            CHECK(d);
            s = H5Dget_space(d);
            CHECK(s);
            CHECK(H5Sget_simple_extent_dims(s, n, NULL));
            CHECK(H5Sclose(s));
            CHECK(H5Dclose(d));
        }
        total += n[0];
    }
    if (fixed)
        CHECK(H5Dclose(d));
    /* Both variants read the data once. */
    d = H5Dopen2(f, "grid/x", H5P_DEFAULT);
    CHECK(d);
    CHECK(H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v));
    CHECK(H5Dclose(d));
    double sum = v[N - 1] + (double)total;
    CHECK(fixture_close(f));
    CHECK(H5Pclose(fapl));
    fixture_finish();
    return sum < 0;
}
