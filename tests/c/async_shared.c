/* A synchronous and two asynchronous opens of one dataset, all open at once: h5prov must
 * keep ONE state node for the dataset, as for synchronous opens (tests/c/two_opens.c),
 * though it asks nothing about an object whose open is still in flight (docs/ASYNC.md,
 * "h5prov keeps the overlap").
 *
 *   async_shared FILE
 *
 * Creates FILE with a dataset "data" of 8 doubles (synchronously, closed), then: H5Fopen
 * of FILE; H5Dopen2 of "data" (a); two H5Dopen_async of "data" (b, c); an H5Dwrite_async
 * through b and c; every close async; H5ESwait. So the dataset has 3 opens and 2 writes.
 * (A second, asynchronous open of the file while it is open makes vol-async 1.8.1 fail the
 * event set and hang at exit, without h5prov too: not done here.)
 * Exit status 0 when every call and the event set succeeded, else 1 (the step on stderr). */
#include "hdf5.h"
#include <stdio.h>

#define CHECK(c, what)                                                                          \
    do {                                                                                        \
        if (!(c)) {                                                                             \
            fprintf(stderr, "async_shared: %s failed\n", what);                                 \
            return 1;                                                                           \
        }                                                                                       \
    } while (0)

int main(int argc, char **argv) {
    const char *path = argc > 1 ? argv[1] : "async_shared.h5";
    hsize_t dims[1] = {8};
    double buf[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    hid_t s = H5Screate_simple(1, dims, NULL);
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    CHECK(s >= 0 && f >= 0, "H5Fcreate");
    hid_t d = H5Dcreate2(f, "data", H5T_NATIVE_DOUBLE, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    CHECK(d >= 0, "H5Dcreate2");
    CHECK(H5Dclose(d) >= 0 && H5Fclose(f) >= 0, "closing the new file");

    hid_t es = H5EScreate();
    CHECK(es >= 0, "H5EScreate");
    f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    CHECK(f >= 0, "H5Fopen");
    hid_t a = H5Dopen2(f, "data", H5P_DEFAULT);
    CHECK(a >= 0, "H5Dopen2");
    hid_t b = H5Dopen_async(f, "data", H5P_DEFAULT, es);
    CHECK(b >= 0, "the first H5Dopen_async");
    hid_t c = H5Dopen_async(f, "data", H5P_DEFAULT, es);
    CHECK(c >= 0, "the second H5Dopen_async");
    CHECK(H5Dwrite_async(b, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf, es) >= 0,
          "H5Dwrite_async through b");
    CHECK(H5Dwrite_async(c, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf, es) >= 0,
          "H5Dwrite_async through c");
    CHECK(H5Dclose_async(a, es) >= 0 && H5Dclose_async(b, es) >= 0 &&
              H5Dclose_async(c, es) >= 0,
          "closing the datasets");
    CHECK(H5Fclose_async(f, es) >= 0, "closing the file");
    size_t in_progress = 0;
    hbool_t failed = 0;
    CHECK(H5ESwait(es, H5ES_WAIT_FOREVER, &in_progress, &failed) >= 0 && !failed &&
              in_progress == 0,
          "H5ESwait");
    CHECK(H5ESclose(es) >= 0 && H5Sclose(s) >= 0, "H5ESclose");
    printf("done=1\n");
    return 0;
}
