/* How long asynchronous calls take to *issue* (to return to the application), for the
 * benchmark in docs/ASYNC.md ("h5prov keeps the overlap"):
 *
 *   async_issue DIR ROUNDS
 *
 * Each round, with one event set: H5Fcreate_async DIR/r<i>.h5 + H5Dcreate_async (a 1-D
 * dataset of 64 Ki doubles), timed together ("create"); H5Dwrite_async of the whole buffer
 * ("write"); H5Dclose_async + H5Fclose_async ("close"), H5ESwait; then H5Fopen_async + H5Dopen_async
 * of the same file, timed together ("open"); H5Dclose_async, H5Fclose_async, H5ESwait.
 * Round 1 is cold (the first file of the process: connectors set themselves up); the
 * others are warm.
 *
 * Output, one line a round: "round=<i> create_us=<t> write_us=<t> open_us=<t> close_us=<t>".
 * Exit status 0 when every call and every event set succeeded; 1 otherwise (the reason on
 * stderr). */
#define _POSIX_C_SOURCE 200809L
#include "hdf5.h"
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

#define CHECK(c, what)                                                                          \
    do {                                                                                        \
        if (!(c)) {                                                                             \
            fprintf(stderr, "async_issue: %s failed\n", what);                                  \
            return 1;                                                                           \
        }                                                                                       \
    } while (0)

static int wait_all(hid_t es) {
    size_t in_progress = 0;
    hbool_t failed = 0;
    return H5ESwait(es, H5ES_WAIT_FOREVER, &in_progress, &failed) >= 0 && !failed &&
           in_progress == 0;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: async_issue DIR ROUNDS\n");
        return 2;
    }
    int rounds = atoi(argv[2]);
    hsize_t n = 64 * 1024;
    double *buf = malloc(n * sizeof(double));
    CHECK(buf != NULL, "malloc");
    for (hsize_t i = 0; i < n; i++)
        buf[i] = (double)i;
    hid_t es = H5EScreate();
    CHECK(es >= 0, "H5EScreate");
    hid_t space = H5Screate_simple(1, &n, NULL);
    CHECK(space >= 0, "H5Screate_simple");
    for (int r = 1; r <= rounds; r++) {
        char name[4096];
        snprintf(name, sizeof name, "%s/r%d.h5", argv[1], r);
        double t0 = now_us();
        hid_t f = H5Fcreate_async(name, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT, es);
        CHECK(f >= 0, "H5Fcreate_async");
        hid_t d = H5Dcreate_async(f, "data", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, H5P_DEFAULT,
                                  H5P_DEFAULT, es);
        CHECK(d >= 0, "H5Dcreate_async");
        double t1 = now_us();
        CHECK(H5Dwrite_async(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf, es) >= 0,
              "H5Dwrite_async");
        double t2 = now_us();
        CHECK(H5Dclose_async(d, es) >= 0 && H5Fclose_async(f, es) >= 0, "closing");
        double t2c = now_us();
        CHECK(wait_all(es), "waiting for the create and write");
        double t3 = now_us();
        f = H5Fopen_async(name, H5F_ACC_RDONLY, H5P_DEFAULT, es);
        CHECK(f >= 0, "H5Fopen_async");
        d = H5Dopen_async(f, "data", H5P_DEFAULT, es);
        CHECK(d >= 0, "H5Dopen_async");
        double t4 = now_us();
        CHECK(H5Dclose_async(d, es) >= 0 && H5Fclose_async(f, es) >= 0, "closing");
        CHECK(wait_all(es), "waiting for the open");
        printf("round=%d create_us=%.1f write_us=%.1f open_us=%.1f close_us=%.1f\n", r, t1 - t0,
               t2 - t1, t4 - t3, t2c - t2);
    }
    H5Sclose(space);
    H5ESclose(es);
    free(buf);
    return 0;
}
