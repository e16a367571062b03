/*
 * common.h - shared helpers for the h5prov benchmark and test workloads.
 *
 * Every workload is plain C99 against the HDF5 C API. This header gives them:
 *   - rank and world size from the launcher environment (serial build) or from
 *     MPI (build with -DH5PROV_MPI and mpicc against a parallel HDF5);
 *   - CHECK macros that test every HDF5 return value and exit(1) with the file,
 *     line and failing expression on error;
 *   - an API-call counter (H5CALL) for workloads that report per-call time;
 *   - a monotonic clock in ns;
 *   - file-access / transfer property lists for the serial or MPI variant.
 *
 * Output convention: workloads that report anything print exactly one line on
 * stdout made of space-separated key=value pairs (e.g. "calls=123 ns=456"), so
 * a driver can parse it without knowing the workload.
 */
#ifndef H5PROV_WORKLOADS_COMMON_H
#define H5PROV_WORKLOADS_COMMON_H

#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <hdf5.h>

#ifdef H5PROV_MPI
#include <mpi.h>
#ifndef H5_HAVE_PARALLEL
#error "H5PROV_MPI needs an HDF5 built with parallel support (H5_HAVE_PARALLEL)"
#endif
#endif

/* ------------------------------------------------------------------------ */
/* Error handling                                                            */
/* ------------------------------------------------------------------------ */

/* Abort the workload with a message naming the failed expression. */
static inline void wl_die(const char *file, int line, const char *what)
{
    fprintf(stderr, "%s:%d: HDF5 call failed: %s\n", file, line, what);
    H5Eprint2(H5E_DEFAULT, stderr);
#ifdef H5PROV_MPI
    MPI_Abort(MPI_COMM_WORLD, 1);
#endif
    exit(1);
}

/* Number of HDF5 API calls made through H5CALL/H5CALL_TRI. */
static unsigned long long wl_calls;
/* Number of those calls that reach the VOL connector (H5CALL_VOL variants). */
static unsigned long long wl_vol_calls;

/* Check an hid_t / herr_t / ssize_t style result: negative is failure. */
#define CHECK(expr)                                                                                \
    do {                                                                                           \
        if ((expr) < 0)                                                                            \
            wl_die(__FILE__, __LINE__, #expr);                                                     \
    } while (0)

/* Evaluate an hid_t-returning call into `var`, failing on a negative id. */
#define CHECK_ID(var, expr)                                                                        \
    do {                                                                                           \
        (var) = (expr);                                                                            \
        if ((var) < 0)                                                                             \
            wl_die(__FILE__, __LINE__, #expr);                                                     \
    } while (0)

/* Like CHECK/CHECK_ID, and count the call: H5CALL for calls that stay in the
 * library (dataspace selection, ...), H5CALL_VOL for calls that reach the VOL
 * connector. */
#define H5CALL(expr)                                                                               \
    do {                                                                                           \
        wl_calls++;                                                                                \
        CHECK(expr);                                                                               \
    } while (0)
#define H5CALL_VOL(expr)                                                                           \
    do {                                                                                           \
        wl_calls++;                                                                                \
        wl_vol_calls++;                                                                            \
        CHECK(expr);                                                                               \
    } while (0)
#define H5CALL_VOL_ID(var, expr)                                                                   \
    do {                                                                                           \
        wl_calls++;                                                                                \
        wl_vol_calls++;                                                                            \
        CHECK_ID(var, expr);                                                                       \
    } while (0)

/* Check a boolean-valued (htri_t) call and require a given answer. */
#define CHECK_TRI(expr, want)                                                                      \
    do {                                                                                           \
        htri_t wl_tri_ = (expr);                                                                   \
        if (wl_tri_ < 0 || (wl_tri_ > 0) != ((want) != 0))                                         \
            wl_die(__FILE__, __LINE__, #expr " (unexpected answer)");                              \
    } while (0)
#define H5CALL_VOL_TRI(expr, want)                                                                 \
    do {                                                                                           \
        wl_calls++;                                                                                \
        wl_vol_calls++;                                                                            \
        CHECK_TRI(expr, want);                                                                     \
    } while (0)

/* malloc that never returns NULL. */
static inline void *wl_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (p == NULL) {
        fprintf(stderr, "out of memory allocating %zu bytes\n", n);
        exit(1);
    }
    return p;
}

/* ------------------------------------------------------------------------ */
/* Clock, options                                                            */
/* ------------------------------------------------------------------------ */

/* Clock `id` in nanoseconds. */
static inline unsigned long long wl_clock_ns(clockid_t id)
{
    struct timespec ts;
    if (clock_gettime(id, &ts) != 0) {
        perror("clock_gettime");
        exit(1);
    }
    return (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec;
}

/* CLOCK_MONOTONIC in nanoseconds. */
static inline unsigned long long wl_now_ns(void)
{
    return wl_clock_ns(CLOCK_MONOTONIC);
}

/* CPU time of the whole process (all its threads, user and system) in nanoseconds.
 * Unlike wall time it excludes time the CPU was taken away: another process, or on a
 * shared VM the hypervisor's steal, which can double a short run's wall time. */
static inline unsigned long long wl_cpu_ns(void)
{
    return wl_clock_ns(CLOCK_PROCESS_CPUTIME_ID);
}

/* Parse a non-negative decimal option value or exit with a usage error. */
static inline unsigned long long wl_parse_u64(const char *opt, const char *s)
{
    char *end = NULL;
    unsigned long long v;
    errno = 0;
    v = strtoull(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || s[0] == '-') {
        fprintf(stderr, "option %s: expected a non-negative integer, got '%s'\n", opt, s);
        exit(2);
    }
    return v;
}

/* Format "<dir>/<name>" into buf or exit. */
static inline void wl_path(char *buf, size_t len, const char *dir, const char *name)
{
    int n = snprintf(buf, len, "%s/%s", dir, name);
    if (n < 0 || (size_t)n >= len) {
        fprintf(stderr, "path too long: %s/%s\n", dir, name);
        exit(2);
    }
}

/* ------------------------------------------------------------------------ */
/* Rank and world size                                                       */
/* ------------------------------------------------------------------------ */

/* Process placement, from MPI or from the launcher environment. */
typedef struct {
    int rank; /* 0-based rank */
    int size; /* world size >= 1 */
} wl_world_t;

static inline int wl_env_int(const char *const *names, int *out)
{
    size_t i;
    for (i = 0; names[i] != NULL; i++) {
        const char *v = getenv(names[i]);
        if (v != NULL && v[0] != '\0') {
            char *end = NULL;
            long x;
            errno = 0;
            x = strtol(v, &end, 10);
            if (errno == 0 && end != v && *end == '\0' && x >= 0 && x <= 1000000000L) {
                *out = (int)x;
                return 1;
            }
        }
    }
    return 0;
}

/*
 * Serial build: rank = first set of OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK,
 * SLURM_PROCID, MV2_COMM_WORLD_RANK; size = first set of OMPI_COMM_WORLD_SIZE,
 * PMI_SIZE, SLURM_NTASKS, MV2_COMM_WORLD_SIZE; default rank 0 of 1.
 * MPI build: MPI_Init and MPI_COMM_WORLD.
 */
static inline wl_world_t wl_init(int *argc, char ***argv)
{
    wl_world_t w;
    w.rank = 0;
    w.size = 1;
#ifdef H5PROV_MPI
    if (MPI_Init(argc, argv) != MPI_SUCCESS) {
        fprintf(stderr, "MPI_Init failed\n");
        exit(1);
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &w.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &w.size);
#else
    {
        static const char *const rank_vars[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK",
                                                "SLURM_PROCID", "MV2_COMM_WORLD_RANK", NULL};
        static const char *const size_vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS",
                                                "MV2_COMM_WORLD_SIZE", NULL};
        (void)argc;
        (void)argv;
        (void)wl_env_int(rank_vars, &w.rank);
        if (!wl_env_int(size_vars, &w.size) || w.size < 1)
            w.size = 1;
        if (w.rank >= w.size) {
            fprintf(stderr, "rank %d from the environment is not below world size %d\n", w.rank,
                    w.size);
            exit(2);
        }
    }
#endif
    return w;
}

/* Finish: MPI_Finalize in the MPI build. */
static inline void wl_finish(void)
{
#ifdef H5PROV_MPI
    MPI_Finalize();
#endif
}

/* A barrier in the MPI build, nothing otherwise. */
static inline void wl_barrier(void)
{
#ifdef H5PROV_MPI
    MPI_Barrier(MPI_COMM_WORLD);
#endif
}

/* Initialise HDF5 (and so load the VOL connector named by HDF5_VOL_CONNECTOR)
 * and return how long it took, ns. Workloads call it before their timed
 * section so that the kernel measures I/O, not the one-off library start-up;
 * they print the start-up separately as `init_ns=`. */
static inline unsigned long long wl_hdf5_open(void)
{
    unsigned long long t = wl_now_ns();
    CHECK(H5open());
    return wl_now_ns() - t;
}

/* ------------------------------------------------------------------------ */
/* Property lists                                                            */
/* ------------------------------------------------------------------------ */

/* File access property list: default (serial) or MPI-IO on MPI_COMM_WORLD
 * with collective metadata when `coll_md` is set. Close with H5Pclose. */
static inline hid_t wl_fapl(int coll_md)
{
    hid_t fapl;
    CHECK_ID(fapl, H5Pcreate(H5P_FILE_ACCESS));
#ifdef H5PROV_MPI
    CHECK(H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL));
    if (coll_md) {
        CHECK(H5Pset_all_coll_metadata_ops(fapl, 1));
        CHECK(H5Pset_coll_metadata_write(fapl, 1));
    }
#else
    (void)coll_md;
#endif
    return fapl;
}

/* Data transfer property list: default (serial) or MPI-IO collective when
 * `collective` is set, else independent. Close with H5Pclose. */
static inline hid_t wl_dxpl(int collective)
{
    hid_t dxpl;
    CHECK_ID(dxpl, H5Pcreate(H5P_DATASET_XFER));
#ifdef H5PROV_MPI
    CHECK(H5Pset_dxpl_mpio(dxpl, collective ? H5FD_MPIO_COLLECTIVE : H5FD_MPIO_INDEPENDENT));
#else
    (void)collective;
#endif
    return dxpl;
}

/* Reset the call counters (keeps them referenced in every workload). */
static inline void wl_reset_calls(void)
{
    wl_calls = 0;
    wl_vol_calls = 0;
}

#endif /* H5PROV_WORKLOADS_COMMON_H */
