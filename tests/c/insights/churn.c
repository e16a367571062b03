/* Pathology: open/close churn. One dataset is opened, read and closed again thousands of
 * times in a loop: every open walks the group's link storage and reads the object header,
 * every close drops the cached object. `--fixed`: open it once, read in the loop, close
 * once. Serial only (`h5prov` insight `open_close_churn`). */
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(x)                                                        \
    do {                                                                \
        if ((x) < 0) {                                                  \
            fprintf(stderr, "%s:%d: %s failed\n", __FILE__, __LINE__, #x); \
            exit(1);                                                    \
        }                                                               \
    } while (0)

#define N 1024
#define LOOPS 5000

int main(int argc, char **argv)
{
    int fixed = argc > 1 && strcmp(argv[1], "--fixed") == 0;
    static double v[N];
    for (int i = 0; i < N; i++)
        v[i] = i;
    hid_t f = H5Fcreate("churn.h5", H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
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
    double sum = 0;
    if (fixed) {
        d = H5Dopen2(f, "grid/x", H5P_DEFAULT);
        CHECK(d);
    }
    for (int i = 0; i < LOOPS; i++) {
        if (!fixed) {
            d = H5Dopen2(f, "grid/x", H5P_DEFAULT);
            CHECK(d);
        }
        CHECK(H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v));
        sum += v[i % N];
        if (!fixed)
            CHECK(H5Dclose(d));
    }
    if (fixed)
        CHECK(H5Dclose(d));
    CHECK(H5Fclose(f));
    return sum < 0;
}
