/* A simulation's asynchronous checkpoint, for HDF5's async I/O connector (vol-async):
 *
 *   async_write FILE MIB COMPUTE_MS
 *
 * With one event set: H5Fcreate_async, H5Dcreate_async (a 1-D dataset of MIB MiB of
 * doubles, contiguous), H5Dwrite_async of the whole buffer; then COMPUTE_MS milliseconds of
 * computation (a busy loop on the CPU, as a simulation's next step would be); then H5ESwait,
 * H5ESget_err_status; then H5Dclose_async, H5Fclose_async and a second H5ESwait. Then the
 * file is reopened synchronously and read back, every value checked.
 *
 * Output, one "key=value" a line:
 *   in_flight=N       H5ESget_count right after the write was issued (0 natively: nothing
 *                     runs asynchronously; vol-async holds the operations not yet done)
 *   exists_after_issue=0|1  whether FILE existed right after the three calls were issued
 *                     (with HDF5_ASYNC_EXE_FCLOSE=1 vol-async runs nothing before the file
 *                     is closed or waited for, unless a query of a connector above it
 *                     needs an answer from an operation still queued)
 *   issue_create_us=T the wall time of H5Fcreate_async + H5Dcreate_async
 *   issue_write_us=T  the wall time of H5Dwrite_async
 *   wait_us=T         the wall time of the first H5ESwait (after the computation)
 *   err=0             H5ESget_err_status (must be 0)
 *   read_back=ok
 *   traces_before_create=0|1  only when the variable ASYNC_WRITE_TRACES names a directory:
 *                     whether it existed after the library started (H5EScreate) and
 *                     before the first H5Fcreate_async (h5prov's trace directory: made
 *                     when its session starts)
 *   sidecar_pages_before_create=N  also only then: how many pages of the files named
 *                     "*.pending" in that directory, past each file's first (its header),
 *                     were in memory (mincore) before the first H5Fcreate_async: h5prov's
 *                     crash sidecar, whose slots hold the threads' record buffers; the
 *                     first page of the starting thread's slot is touched when the session
 *                     starts (a write fault on a shared file mapping), not by the first
 *                     record, inside the first create's issue
 *   trace_growth_at_close_issue=B  also only then: how many bytes the regular files in
 *                     that directory (and its subdirectories) grew by while
 *                     H5Dclose_async + H5Fclose_async were issued (h5prov drains its record
 *                     buffers to the trace at a file close, which an asynchronous close
 *                     leaves for the close's completion)
 * Exit status 0 when every call succeeded and every value read back is right; 1 otherwise
 * (the reason on stderr). */
#define _DEFAULT_SOURCE
#define _POSIX_C_SOURCE 200809L
#include "hdf5.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <dirent.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The bytes of the regular files under DIR (0 when it cannot be read). */
static long long dir_bytes(const char *dir) {
    long long sum = 0;
    DIR *d = opendir(dir);
    if (d == NULL)
        return 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat(path, &st) != 0)
            continue;
        if (S_ISDIR(st.st_mode))
            sum += dir_bytes(path);
        else if (S_ISREG(st.st_mode))
            sum += (long long)st.st_size;
    }
    closedir(d);
    return sum;
}

/* The pages of the files named "*.pending" directly in DIR, past each file's first, that
 * are in memory (mincore of a read-only mapping, which touches nothing). */
static long pending_pages_resident(const char *dir) {
    long sum = 0;
    DIR *d = opendir(dir);
    if (d == NULL)
        return 0;
    long page = sysconf(_SC_PAGESIZE);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len < 8 || strcmp(e->d_name + len - 8, ".pending") != 0)
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        FILE *fp = fopen(path, "r");
        if (fp == NULL)
            continue;
        struct stat st;
        if (fstat(fileno(fp), &st) == 0 && st.st_size > page) {
            size_t size = (size_t)st.st_size;
            void *map = mmap(NULL, size, PROT_READ, MAP_SHARED, fileno(fp), 0);
            if (map != MAP_FAILED) {
                size_t pages = (size + (size_t)page - 1) / (size_t)page;
                unsigned char *vec = malloc(pages);
                if (vec != NULL && mincore(map, size, vec) == 0)
                    for (size_t i = 1; i < pages; i++)
                        sum += vec[i] & 1;
                free(vec);
                munmap(map, size);
            }
        }
        fclose(fp);
    }
    closedir(d);
    return sum;
}

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

#define CHECK(c, what)                                                                          \
    do {                                                                                        \
        if (!(c)) {                                                                             \
            fprintf(stderr, "async_write: %s failed\n", what);                                  \
            return 1;                                                                           \
        }                                                                                       \
    } while (0)

/* A computation the compiler cannot drop: COMPUTE_MS of arithmetic. */
static volatile double sink;
static void compute(double ms) {
    double end = now_us() + ms * 1e3, x = 1.0;
    while (now_us() < end)
        for (int i = 0; i < 1000; i++)
            x = x * 1.0000001 + 1e-9;
    sink = x;
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: async_write FILE MIB COMPUTE_MS\n");
        return 2;
    }
    const char *name = argv[1];
    hsize_t n = (hsize_t)atoi(argv[2]) * 1024 * 1024 / sizeof(double);
    double compute_ms = atof(argv[3]);
    double *buf = malloc(n * sizeof(double));
    CHECK(buf != NULL, "malloc");
    for (hsize_t i = 0; i < n; i++)
        buf[i] = (double)i * 0.5;

    hid_t es = H5EScreate();
    CHECK(es >= 0, "H5EScreate");
    const char *traces = getenv("ASYNC_WRITE_TRACES");
    int traces_before = traces != NULL && access(traces, F_OK) == 0;
    long sidecar_pages = traces != NULL ? pending_pages_resident(traces) : 0;
    double t0 = now_us();
    hid_t f = H5Fcreate_async(name, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT, es);
    CHECK(f >= 0, "H5Fcreate_async");
    hid_t space = H5Screate_simple(1, &n, NULL);
    hid_t d = H5Dcreate_async(f, "data", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, H5P_DEFAULT,
                              H5P_DEFAULT, es);
    CHECK(d >= 0, "H5Dcreate_async");
    double t1 = now_us();
    CHECK(H5Dwrite_async(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf, es) >= 0,
          "H5Dwrite_async");
    double t2 = now_us();
    size_t count = 0;
    CHECK(H5ESget_count(es, &count) >= 0, "H5ESget_count");
    int exists = access(name, F_OK) == 0;

    compute(compute_ms);

    size_t in_progress = 0;
    hbool_t failed = 0;
    double t3 = now_us();
    CHECK(H5ESwait(es, H5ES_WAIT_FOREVER, &in_progress, &failed) >= 0, "H5ESwait");
    double t4 = now_us();
    hbool_t err = 1;
    CHECK(H5ESget_err_status(es, &err) >= 0, "H5ESget_err_status");
    CHECK(!failed && !err && in_progress == 0, "the asynchronous operations");

    long long before_close = traces != NULL ? dir_bytes(traces) : 0;
    CHECK(H5Dclose_async(d, es) >= 0, "H5Dclose_async");
    CHECK(H5Fclose_async(f, es) >= 0, "H5Fclose_async");
    long long after_close = traces != NULL ? dir_bytes(traces) : 0;
    CHECK(H5ESwait(es, H5ES_WAIT_FOREVER, &in_progress, &failed) >= 0 && !failed,
          "the second H5ESwait");
    CHECK(H5ESclose(es) >= 0, "H5ESclose");
    H5Sclose(space);

    printf("in_flight=%zu\n", count);
    printf("exists_after_issue=%d\n", exists);
    printf("issue_create_us=%.0f\n", t1 - t0);
    printf("issue_write_us=%.0f\n", t2 - t1);
    printf("wait_us=%.0f\n", t4 - t3);
    printf("err=%d\n", (int)err);
    if (traces != NULL) {
        printf("traces_before_create=%d\n", traces_before);
        printf("sidecar_pages_before_create=%ld\n", sidecar_pages);
        printf("trace_growth_at_close_issue=%lld\n", after_close - before_close);
    }

    for (hsize_t i = 0; i < n; i++)
        buf[i] = -1.0;
    f = H5Fopen(name, H5F_ACC_RDONLY, H5P_DEFAULT);
    CHECK(f >= 0, "H5Fopen");
    d = H5Dopen2(f, "data", H5P_DEFAULT);
    CHECK(d >= 0, "H5Dopen2");
    CHECK(H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) >= 0, "H5Dread");
    H5Dclose(d);
    H5Fclose(f);
    for (hsize_t i = 0; i < n; i++)
        CHECK(buf[i] == (double)i * 0.5, "reading the data back");
    printf("read_back=ok\n");
    free(buf);
    return 0;
}
