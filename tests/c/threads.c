/* N threads making HDF5 calls at once, for a thread-safe HDF5 (HDF5_ENABLE_THREADSAFE).
 *
 *   threads MODE NTHREADS NWRITES END
 *
 * MODE  files:  each thread creates its own file t<i>.h5 with group /t<i>, dataset /t<i>/d
 *       shared: each thread creates group /t<i> and dataset /t<i>/d in shared.h5
 * END   clean:  every thread closes what it opened and is joined; main closes its objects
 *       leak:   the threads exit (are joined) without closing anything; main returns with its
 *               objects open too (HDF5's atexit handler closes them all)
 *       exit:   the threads do all their work, leave everything open and park for good (they
 *               never exit, so their thread-local state is never destroyed); main calls
 *               exit(0) while they are parked
 *       wexit:  as exit, but thread 0 calls exit(0), while main waits (in pthread_cond_wait)
 *               and the other threads are parked
 *       restart: as leak, but the threads wait (alive) while main calls H5close(), which
 *               closes everything and terminates the connectors; then each thread reopens
 *               its file (files: t<i>.h5, shared: shared.h5, one open per thread), reads its
 *               dataset back with NWRITES reads (16 bytes each), closes it and exits
 *
 * Before the threads start, main creates shared.h5 with dataset /shared (NTHREADS*NWRITES
 * ints). The threads wait at a barrier, then each one, with its own hids:
 *   - creates its group and on it the attribute "tid" (a long long, written once),
 *   - creates its dataset (NWRITES*4 ints) and opens /shared of shared.h5 (a second handle
 *     on one object: h5prov must sum the threads' I/O in one summary row),
 *   - NWRITES times: writes 4 ints (16 bytes) into its dataset and 1 int (4 bytes) into its
 *     element of /shared, one hyperslab each,
 *   - reads every one of them back and checks the values, reads the attribute back.
 *
 * Output: "main tid=T", then per thread "thread I tid=T" and
 * "thread I ops <op>=<n>..." (the VOL operations its calls map to one to one, named as
 * h5prov names them) "bytes_written=B bytes_read=B sum=S", and with restart
 * "thread I ops2 ..." for what it did after H5close(). Exit status 0 when every call
 * succeeded and every value read back is right; 1 otherwise (the reasons on stderr). */
#define _GNU_SOURCE
#include "hdf5.h"
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MAX_THREADS 64
#define K 4 /* ints per write into a thread's own dataset */

enum { M_FILES, M_SHARED };
enum { E_CLEAN, E_LEAK, E_EXIT, E_WEXIT, E_RESTART };

/* Calls a thread made, counted by the VOL operation each maps to one to one. */
enum {
    OP_FILE_CREATE,
    OP_FILE_CLOSE,
    OP_GROUP_CREATE,
    OP_GROUP_CLOSE,
    OP_DATASET_CREATE,
    OP_DATASET_OPEN,
    OP_DATASET_WRITE,
    OP_DATASET_READ,
    OP_DATASET_CLOSE,
    OP_ATTR_CREATE,
    OP_ATTR_OPEN,
    OP_ATTR_WRITE,
    OP_ATTR_READ,
    OP_ATTR_CLOSE,
    OP_FILE_OPEN,
    NOPS
};
static const char *op_names[NOPS] = {
    "file.create",    "file.close",   "group.create",  "group.close",  "dataset.create",
    "dataset.open",   "dataset.write", "dataset.read", "dataset.close", "attr.create",
    "attr.open",      "attr.write",   "attr.read",     "attr.close",    "file.open",
};

struct worker {
    int       idx;
    pthread_t thread;
    long long tid;
    long      ops[NOPS], ops2[NOPS]; /* ops2: after H5close() (restart) */
    long long bytes_written, bytes_read, sum, bytes_read2;
    int       failed;
    char      why[256];
};

static int               mode, end_mode, nthreads, nwrites;
static hid_t             shared_file = H5I_INVALID_HID;
static pthread_barrier_t start_line;
static pthread_mutex_t   done_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t    done_cond = PTHREAD_COND_INITIALIZER;
static int               done, go_exit, go_on;
static long long         main_tid;
static struct worker     workers[MAX_THREADS];

static long long gettid_ll(void) { return (long long)syscall(SYS_gettid); }

#define CHECK(w, cond, ...)                                                                  \
    do {                                                                                     \
        if (!(cond)) {                                                                       \
            (w)->failed = 1;                                                                 \
            snprintf((w)->why, sizeof((w)->why), __VA_ARGS__);                               \
            return;                                                                          \
        }                                                                                    \
    } while (0)

static void work(struct worker *w)
{
    int     i = w->idx;
    char    name[64];
    hid_t   loc = shared_file, f = H5I_INVALID_HID;
    hsize_t one = 1, four = K, start, count;

    if (mode == M_FILES) {
        snprintf(name, sizeof(name), "t%d.h5", i);
        f = H5Fcreate(name, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
        CHECK(w, f >= 0, "H5Fcreate %s", name);
        w->ops[OP_FILE_CREATE]++;
        loc = f;
    }
    snprintf(name, sizeof(name), "t%d", i);
    hid_t g = H5Gcreate2(loc, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    CHECK(w, g >= 0, "H5Gcreate2 %s", name);
    w->ops[OP_GROUP_CREATE]++;

    hid_t scalar = H5Screate(H5S_SCALAR);
    hid_t a      = H5Acreate2(g, "tid", H5T_NATIVE_LLONG, scalar, H5P_DEFAULT, H5P_DEFAULT);
    CHECK(w, a >= 0, "H5Acreate2");
    w->ops[OP_ATTR_CREATE]++;
    CHECK(w, H5Awrite(a, H5T_NATIVE_LLONG, &w->tid) >= 0, "H5Awrite");
    w->ops[OP_ATTR_WRITE]++;
    CHECK(w, H5Aclose(a) >= 0, "H5Aclose");
    w->ops[OP_ATTR_CLOSE]++;

    hsize_t dims = (hsize_t)nwrites * K;
    hid_t   fs   = H5Screate_simple(1, &dims, NULL);
    hid_t   d    = H5Dcreate2(g, "d", H5T_NATIVE_INT, fs, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    CHECK(w, d >= 0, "H5Dcreate2");
    w->ops[OP_DATASET_CREATE]++;
    hid_t sd = H5Dopen2(shared_file, "/shared", H5P_DEFAULT);
    CHECK(w, sd >= 0, "H5Dopen2 /shared");
    w->ops[OP_DATASET_OPEN]++;

    hsize_t sdims = (hsize_t)nthreads * nwrites;
    hid_t   sfs   = H5Screate_simple(1, &sdims, NULL);
    hid_t   m4    = H5Screate_simple(1, &four, NULL);
    hid_t   m1    = H5Screate_simple(1, &one, NULL);
    CHECK(w, fs >= 0 && sfs >= 0 && m4 >= 0 && m1 >= 0 && scalar >= 0, "H5Screate");

    for (int pass = 0; pass < 2; pass++) {
        for (int j = 0; j < nwrites; j++) {
            int buf[K], v;
            start = (hsize_t)j * K;
            count = K;
            CHECK(w, H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, NULL, &count, NULL) >= 0,
                  "select");
            if (pass == 0) {
                for (int k = 0; k < K; k++)
                    buf[k] = i * 1000000 + j * K + k;
                CHECK(w, H5Dwrite(d, H5T_NATIVE_INT, m4, fs, H5P_DEFAULT, buf) >= 0, "H5Dwrite");
                w->ops[OP_DATASET_WRITE]++;
                w->bytes_written += sizeof(buf);
            }
            else {
                memset(buf, 0, sizeof(buf));
                CHECK(w, H5Dread(d, H5T_NATIVE_INT, m4, fs, H5P_DEFAULT, buf) >= 0, "H5Dread");
                w->ops[OP_DATASET_READ]++;
                w->bytes_read += sizeof(buf);
                for (int k = 0; k < K; k++) {
                    CHECK(w, buf[k] == i * 1000000 + j * K + k, "read %d at %d+%d", buf[k], j, k);
                    w->sum += buf[k];
                }
            }
            /* Let the others in: HDF5's global lock is not fair, and a thread that releases
             * and retakes it at once would run alone for hundreds of calls. */
            sched_yield();
            start = (hsize_t)i * nwrites + j;
            count = 1;
            CHECK(w, H5Sselect_hyperslab(sfs, H5S_SELECT_SET, &start, NULL, &count, NULL) >= 0,
                  "select");
            if (pass == 0) {
                v = i * 1000000 + j;
                CHECK(w, H5Dwrite(sd, H5T_NATIVE_INT, m1, sfs, H5P_DEFAULT, &v) >= 0,
                      "H5Dwrite /shared");
                w->ops[OP_DATASET_WRITE]++;
                w->bytes_written += sizeof(v);
            }
            else {
                v = -1;
                CHECK(w, H5Dread(sd, H5T_NATIVE_INT, m1, sfs, H5P_DEFAULT, &v) >= 0,
                      "H5Dread /shared");
                w->ops[OP_DATASET_READ]++;
                w->bytes_read += sizeof(v);
                CHECK(w, v == i * 1000000 + j, "read %d from /shared at %d", v, j);
                w->sum += v;
            }
            sched_yield();
        }
    }

    long long back = 0;
    a              = H5Aopen(g, "tid", H5P_DEFAULT);
    CHECK(w, a >= 0, "H5Aopen");
    w->ops[OP_ATTR_OPEN]++;
    CHECK(w, H5Aread(a, H5T_NATIVE_LLONG, &back) >= 0 && back == w->tid, "H5Aread");
    w->ops[OP_ATTR_READ]++;
    CHECK(w, H5Aclose(a) >= 0, "H5Aclose");
    w->ops[OP_ATTR_CLOSE]++;

    /* Dataspaces are not VOL objects; closing them changes nothing h5prov sees. */
    H5Sclose(fs);
    H5Sclose(sfs);
    H5Sclose(m4);
    H5Sclose(m1);
    H5Sclose(scalar);
    if (end_mode != E_CLEAN)
        return; /* d, sd, g (and f) stay open */
    CHECK(w, H5Dclose(d) >= 0 && H5Dclose(sd) >= 0, "H5Dclose");
    w->ops[OP_DATASET_CLOSE] += 2;
    CHECK(w, H5Gclose(g) >= 0, "H5Gclose");
    w->ops[OP_GROUP_CLOSE]++;
    if (f >= 0) {
        CHECK(w, H5Fclose(f) >= 0, "H5Fclose");
        w->ops[OP_FILE_CLOSE]++;
    }
}

static int report(void);

/* restart: after H5close(), reopen and read back the thread's dataset. */
static void work_again(struct worker *w)
{
    int     i = w->idx;
    char    name[64];
    hsize_t start, count = K, four = K;
    snprintf(name, sizeof(name), mode == M_FILES ? "t%d.h5" : "shared.h5", i);
    hid_t f = H5Fopen(name, H5F_ACC_RDONLY, H5P_DEFAULT);
    CHECK(w, f >= 0, "H5Fopen %s after H5close", name);
    w->ops2[OP_FILE_OPEN]++;
    snprintf(name, sizeof(name), "t%d/d", i);
    hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
    CHECK(w, d >= 0, "H5Dopen2 %s after H5close", name);
    w->ops2[OP_DATASET_OPEN]++;
    hid_t fs = H5Dget_space(d), m4 = H5Screate_simple(1, &four, NULL);
    for (int j = 0; j < nwrites; j++) {
        int buf[K];
        start = (hsize_t)j * K;
        CHECK(w, H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, NULL, &count, NULL) >= 0,
              "select");
        CHECK(w, H5Dread(d, H5T_NATIVE_INT, m4, fs, H5P_DEFAULT, buf) >= 0, "H5Dread again");
        w->ops2[OP_DATASET_READ]++;
        w->bytes_read2 += sizeof(buf);
        for (int k = 0; k < K; k++)
            CHECK(w, buf[k] == i * 1000000 + j * K + k, "read again %d at %d+%d", buf[k], j, k);
        sched_yield();
    }
    H5Sclose(fs);
    H5Sclose(m4);
    CHECK(w, H5Dclose(d) >= 0, "H5Dclose");
    w->ops2[OP_DATASET_CLOSE]++;
    CHECK(w, H5Fclose(f) >= 0, "H5Fclose");
    w->ops2[OP_FILE_CLOSE]++;
}

static void *run(void *arg)
{
    struct worker *w = arg;
    w->tid           = gettid_ll();
    pthread_barrier_wait(&start_line);
    work(w);
    pthread_mutex_lock(&done_lock);
    done++;
    pthread_cond_broadcast(&done_cond);
    pthread_mutex_unlock(&done_lock);
    if (end_mode == E_WEXIT && w->idx == 0) {
        pthread_mutex_lock(&done_lock);
        while (!go_exit)
            pthread_cond_wait(&done_cond, &done_lock);
        pthread_mutex_unlock(&done_lock);
        exit(report()); /* from this thread, with main and the others blocked */
    }
    if (end_mode == E_EXIT || end_mode == E_WEXIT)
        for (;;)
            pause(); /* parked: never exits, its thread-local state is never destroyed */
    if (end_mode == E_RESTART) {
        pthread_mutex_lock(&done_lock);
        while (!go_on)
            pthread_cond_wait(&done_cond, &done_lock);
        pthread_mutex_unlock(&done_lock);
        if (!w->failed)
            work_again(w);
    }
    return NULL;
}

static int report(void)
{
    int failed = 0;
    printf("main tid=%lld\n", main_tid);
    for (int i = 0; i < nthreads; i++) {
        struct worker *w = &workers[i];
        printf("thread %d tid=%lld\n", i, w->tid);
        printf("thread %d ops", i);
        for (int o = 0; o < NOPS; o++)
            if (w->ops[o])
                printf(" %s=%ld", op_names[o], w->ops[o]);
        printf(" bytes_written=%lld bytes_read=%lld sum=%lld\n", w->bytes_written, w->bytes_read,
               w->sum);
        if (end_mode == E_RESTART) {
            printf("thread %d ops2", i);
            for (int o = 0; o < NOPS; o++)
                if (w->ops2[o])
                    printf(" %s=%ld", op_names[o], w->ops2[o]);
            printf(" bytes_read=%lld\n", w->bytes_read2);
        }
        if (w->failed) {
            fprintf(stderr, "thread %d failed: %s\n", i, w->why);
            failed = 1;
        }
    }
    fflush(stdout);
    return failed;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr,
                "usage: %s files|shared NTHREADS NWRITES clean|leak|exit|wexit|restart\n",
                argv[0]);
        return 2;
    }
    mode     = strcmp(argv[1], "files") == 0 ? M_FILES : M_SHARED;
    nthreads = atoi(argv[2]);
    nwrites  = atoi(argv[3]);
    end_mode = strcmp(argv[4], "clean") == 0     ? E_CLEAN
               : strcmp(argv[4], "leak") == 0    ? E_LEAK
               : strcmp(argv[4], "exit") == 0    ? E_EXIT
               : strcmp(argv[4], "restart") == 0 ? E_RESTART
                                                 : E_WEXIT;
    main_tid = gettid_ll();
    if ((strcmp(argv[1], "files") && strcmp(argv[1], "shared")) || nthreads < 1 ||
        nthreads > MAX_THREADS || nwrites < 1 ||
        (strcmp(argv[4], "clean") && strcmp(argv[4], "leak") && strcmp(argv[4], "exit") &&
         strcmp(argv[4], "wexit") && strcmp(argv[4], "restart"))) {
        fprintf(stderr, "bad arguments\n");
        return 2;
    }
    hbool_t ts = 0;
    if (H5is_library_threadsafe(&ts) < 0 || !ts) {
        fprintf(stderr, "this HDF5 is not thread-safe\n");
        return 3;
    }

    shared_file = H5Fcreate("shared.h5", H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hsize_t sdims = (hsize_t)nthreads * nwrites;
    hid_t   s     = H5Screate_simple(1, &sdims, NULL);
    hid_t   sd = H5Dcreate2(shared_file, "/shared", H5T_NATIVE_INT, s, H5P_DEFAULT, H5P_DEFAULT,
                            H5P_DEFAULT);
    if (shared_file < 0 || s < 0 || sd < 0) {
        fprintf(stderr, "main: cannot create shared.h5\n");
        return 1;
    }
    H5Sclose(s);

    pthread_barrier_init(&start_line, NULL, (unsigned)nthreads);
    for (int i = 0; i < nthreads; i++) {
        workers[i].idx = i;
        if (pthread_create(&workers[i].thread, NULL, run, &workers[i]) != 0) {
            fprintf(stderr, "pthread_create failed\n");
            return 1;
        }
    }
    if (end_mode == E_EXIT || end_mode == E_WEXIT) {
        pthread_mutex_lock(&done_lock);
        while (done < nthreads)
            pthread_cond_wait(&done_cond, &done_lock);
        if (end_mode == E_EXIT) {
            pthread_mutex_unlock(&done_lock);
            /* The workers are parked with everything open: exit() runs HDF5's atexit
             * handler (which closes it all and terminates the connectors) while they
             * still exist. */
            exit(report());
        }
        /* Thread 0 exits the process; main stays blocked here. */
        go_exit = 1;
        pthread_cond_broadcast(&done_cond);
        for (;;)
            pthread_cond_wait(&done_cond, &done_lock);
    }
    if (end_mode == E_RESTART) {
        pthread_mutex_lock(&done_lock);
        while (done < nthreads)
            pthread_cond_wait(&done_cond, &done_lock);
        pthread_mutex_unlock(&done_lock);
        /* Everything is open and the threads are alive, waiting: close the library. */
        if (H5close() < 0) {
            fprintf(stderr, "main: H5close failed\n");
            return 1;
        }
        pthread_mutex_lock(&done_lock);
        go_on = 1;
        pthread_cond_broadcast(&done_cond);
        pthread_mutex_unlock(&done_lock);
    }
    for (int i = 0; i < nthreads; i++)
        pthread_join(workers[i].thread, NULL);
    int failed = report();
    if (end_mode == E_CLEAN) {
        if (H5Dclose(sd) < 0 || H5Fclose(shared_file) < 0) {
            fprintf(stderr, "main: close failed\n");
            failed = 1;
        }
    }
    return failed;
}
