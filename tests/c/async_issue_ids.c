/* How many HDF5 error stacks the *issue* of H5Fcreate_async + H5Dcreate_async +
 * H5Dwrite_async makes, for tests/tests/async_vol.rs
 * (`h5prov_over_vol_async_asks_vol_async_for_no_wrap_contexts_at_issue`):
 *
 *   async_issue_ids FILE
 *
 * HDF5 gives ids of one type from a counter that only grows (H5I_register), so the
 * difference of two probe ids (an error stack made and closed at once) counts the error
 * stacks made between them: vol-async's wrap context free saves and restores the error
 * stack (H5Eget_current_stack, an error-stack id) every time it is asked, which is once for
 * every API call on one of its objects. Run with HDF5_ASYNC_EXE_FCLOSE=1, so vol-async's
 * background thread runs nothing before the file close and every id between the probes is
 * the application thread's.
 *
 * Output: "issue_error_stacks=<n>" then "read_back=ok|bad".
 * Exit status 0 when every call and the event set succeeded; 1 otherwise (the reason on
 * stderr). */
#include "hdf5.h"
#include <stdio.h>
#include <stdlib.h>

#define CHECK(c, what)                                                                          \
    do {                                                                                        \
        if (!(c)) {                                                                             \
            fprintf(stderr, "async_issue_ids: %s failed\n", what);                              \
            return 1;                                                                           \
        }                                                                                       \
    } while (0)

/* A fresh error-stack id (made and closed at once): the counter's current value. */
static hid_t probe(void) {
    hid_t e = H5Ecreate_stack();
    if (e >= 0)
        H5Eclose_stack(e);
    return e;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: async_issue_ids FILE\n");
        return 2;
    }
    hsize_t n = 1024;
    int *buf = malloc(n * sizeof *buf), *back = malloc(n * sizeof *back);
    CHECK(buf != NULL && back != NULL, "malloc");
    for (hsize_t i = 0; i < n; i++)
        buf[i] = (int)i;
    hid_t es = H5EScreate();
    CHECK(es >= 0, "H5EScreate");
    hid_t space = H5Screate_simple(1, &n, NULL);
    CHECK(space >= 0, "H5Screate_simple");

    hid_t e0 = probe();
    hid_t f = H5Fcreate_async(argv[1], H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT, es);
    CHECK(f >= 0, "H5Fcreate_async");
    hid_t d = H5Dcreate_async(f, "data", H5T_NATIVE_INT, space, H5P_DEFAULT, H5P_DEFAULT,
                              H5P_DEFAULT, es);
    CHECK(d >= 0, "H5Dcreate_async");
    CHECK(H5Dwrite_async(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf, es) >= 0,
          "H5Dwrite_async");
    hid_t e1 = probe();
    CHECK(e0 >= 0 && e1 > e0, "H5Ecreate_stack");
    printf("issue_error_stacks=%lld\n", (long long)(e1 - e0 - 1));

    CHECK(H5Dclose_async(d, es) >= 0 && H5Fclose_async(f, es) >= 0, "closing");
    size_t in_progress = 0;
    hbool_t failed = 0;
    CHECK(H5ESwait(es, H5ES_WAIT_FOREVER, &in_progress, &failed) >= 0 && !failed &&
              in_progress == 0,
          "H5ESwait");
    f = H5Fopen(argv[1], H5F_ACC_RDONLY, H5P_DEFAULT);
    CHECK(f >= 0, "H5Fopen");
    d = H5Dopen2(f, "data", H5P_DEFAULT);
    CHECK(d >= 0, "H5Dopen2");
    CHECK(H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, back) >= 0, "H5Dread");
    int same = 1;
    for (hsize_t i = 0; i < n; i++)
        same &= back[i] == buf[i];
    printf("read_back=%s\n", same ? "ok" : "bad");
    CHECK(H5Dclose(d) >= 0 && H5Fclose(f) >= 0, "closing after reading");
    H5Sclose(space);
    H5ESclose(es);
    free(buf);
    free(back);
    return 0;
}
