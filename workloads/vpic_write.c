/*
 * vpic_write.c - VPIC-IO-like particle write kernel (the H5Prov paper's kernel).
 *
 * Usage: vpic_write -d DIR [-p PARTICLES] [-t TIMESTEPS] [-x coll|ind] [-c] [-s RANK:FACTOR]
 *
 *   -d DIR   output directory (must exist)
 *   -p N     particles per process (default 4194304 = 4 Mi, 128 MiB per timestep)
 *   -t T     timesteps (default 3)
 *   -x MODE  MPI build only: transfer mode, coll (default) or ind
 *   -c       MPI build only: collective metadata operations on the FAPL
 *   -s R:F   slow rank R down: it writes F times the particles (F >= 1), the
 *            others N each; a known straggler for the analyzer's tests
 *
 * Serial build: each process writes its own file <DIR>/vpic-r<rank>.h5 with
 * 1-D datasets of N elements. MPI build: all ranks share <DIR>/vpic.h5, the
 * datasets have N * size elements and rank r writes the hyperslab
 * [r * N, (r + 1) * N). With -s R:F, rank R writes F * N particles, the
 * datasets have N * (size + F - 1) elements and the slices stay contiguous.
 *
 * Layout, per timestep t in 0..T-1: group /Timestep_<t> holding the 8
 * contiguous 1-D datasets x, y, z (float), id1, id2 (int), px, py, pz (float),
 * written in that order with one H5Dwrite each (4 bytes x N per write).
 * The particle data is generated once before the timed loop, as in VPIC-IO.
 *
 * Output: one line "ns=<ns of the write loop incl. file create/close>
 * cpu_ns=<the process's CPU time over the same section> bytes=<bytes written by this process> vol_calls=<HDF5 calls made that reach
 * the VOL connector: 3 + 26 T> particles=<N, or F * N for a rank slowed by -s>
 * timesteps=<T> rank=<r> size=<s>".
 */
#include "common.h"

#define NVARS 8
static const char *const var_names[NVARS] = {"x", "y", "z", "id1", "id2", "px", "py", "pz"};
static const int var_is_int[NVARS] = {0, 0, 0, 1, 1, 0, 0, 0};

static void usage(const char *argv0)
{
    fprintf(stderr,
            "usage: %s -d DIR [-p PARTICLES] [-t TIMESTEPS] [-x coll|ind] [-c] [-s RANK:FACTOR]\n",
            argv0);
    exit(2);
}

/* Deterministic data, like VPIC-IO's uniform random fill. */
static void fill(void **bufs, unsigned long long n, int rank)
{
    unsigned long long i;
    float *x = (float *)bufs[0], *y = (float *)bufs[1], *z = (float *)bufs[2];
    int *id1 = (int *)bufs[3], *id2 = (int *)bufs[4];
    float *px = (float *)bufs[5], *py = (float *)bufs[6], *pz = (float *)bufs[7];
    unsigned int s = 12345u + (unsigned int)rank * 7919u;
    for (i = 0; i < n; i++) {
        s = s * 1103515245u + 12345u;
        x[i] = (float)(s >> 8) / 16777216.0f * 1000.0f;
        y[i] = (float)i / (float)n * 500.0f;
        z[i] = (float)(i % 1000) * 0.1f;
        id1[i] = (int)(i & 0x7fffffff);
        id2[i] = rank;
        px[i] = x[i] * 0.5f;
        py[i] = y[i] * 0.25f;
        pz[i] = z[i] * 2.0f;
    }
}

int main(int argc, char **argv)
{
    wl_world_t w = wl_init(&argc, &argv);
    const char *dir = NULL;
    unsigned long long n = 4194304ULL, nsteps = 3, t, bytes = 0;
    unsigned long long slow_rank = 0, slow_factor = 1, mine;
    int collective = 1, coll_md = 0, opt, v;
    char fname[4096];
    void *bufs[NVARS];
    hid_t fapl, dxpl, file, fspace, mspace;
    hsize_t dims[1], start[1], count[1];
    unsigned long long t0, t1, c0, c1, init_ns;

    while ((opt = getopt(argc, argv, "d:p:t:x:cs:h")) != -1) {
        switch (opt) {
        case 'd': dir = optarg; break;
        case 'p': n = wl_parse_u64("-p", optarg); break;
        case 't': nsteps = wl_parse_u64("-t", optarg); break;
        case 'x':
            if (strcmp(optarg, "coll") == 0)
                collective = 1;
            else if (strcmp(optarg, "ind") == 0)
                collective = 0;
            else
                usage(argv[0]);
            break;
        case 'c': coll_md = 1; break;
        case 's': {
            char spec[64], *colon;
            if (strlen(optarg) >= sizeof spec || (colon = strchr(optarg, ':')) == NULL) {
                fprintf(stderr, "option -s: expected RANK:FACTOR, got '%s'\n", optarg);
                exit(2);
            }
            memcpy(spec, optarg, (size_t)(colon - optarg));
            spec[colon - optarg] = '\0';
            slow_rank = wl_parse_u64("-s (rank)", spec);
            slow_factor = wl_parse_u64("-s (factor)", colon + 1);
            if (slow_factor == 0) {
                fprintf(stderr, "option -s: FACTOR must be >= 1\n");
                exit(2);
            }
            break;
        }
        default: usage(argv[0]);
        }
    }
    if (dir == NULL || n == 0)
        usage(argv[0]);
    /* Particles of this process; with -s, the slowed rank has FACTOR times as many. */
    mine = (unsigned long long)w.rank == slow_rank ? n * slow_factor : n;

    for (v = 0; v < NVARS; v++)
        bufs[v] = wl_xmalloc((size_t)mine * 4);
    fill(bufs, mine, w.rank);

#ifdef H5PROV_MPI
    wl_path(fname, sizeof fname, dir, "vpic.h5");
    /* Ranks below the slowed one start at r * N; those above it are shifted by
     * its extra (F - 1) * N particles. */
    dims[0] = (hsize_t)n * (hsize_t)w.size;
    if (slow_rank < (unsigned long long)w.size)
        dims[0] += (hsize_t)n * (hsize_t)(slow_factor - 1);
    start[0] = (hsize_t)n * (hsize_t)w.rank;
    if (slow_rank < (unsigned long long)w.rank)
        start[0] += (hsize_t)n * (hsize_t)(slow_factor - 1);
#else
    {
        char base[64];
        snprintf(base, sizeof base, "vpic-r%d.h5", w.rank);
        wl_path(fname, sizeof fname, dir, base);
    }
    dims[0] = (hsize_t)mine;
    start[0] = 0;
#endif
    count[0] = (hsize_t)mine;

    init_ns = wl_hdf5_open();
    wl_barrier();
    c0 = wl_cpu_ns();
    t0 = wl_now_ns();
    fapl = wl_fapl(coll_md);
    dxpl = wl_dxpl(collective);
    H5CALL_VOL_ID(file, H5Fcreate(fname, H5F_ACC_TRUNC, H5P_DEFAULT, fapl));
    CHECK_ID(fspace, H5Screate_simple(1, dims, NULL));
    CHECK_ID(mspace, H5Screate_simple(1, count, NULL));
    CHECK(H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, count, NULL));

    for (t = 0; t < nsteps; t++) {
        char gname[64];
        hid_t grp;
        snprintf(gname, sizeof gname, "Timestep_%llu", t);
        H5CALL_VOL_ID(grp, H5Gcreate2(file, gname, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
        for (v = 0; v < NVARS; v++) {
            hid_t type = var_is_int[v] ? H5T_NATIVE_INT : H5T_NATIVE_FLOAT;
            hid_t dset;
            H5CALL_VOL_ID(dset, H5Dcreate2(grp, var_names[v], type, fspace, H5P_DEFAULT, H5P_DEFAULT,
                                      H5P_DEFAULT));
            H5CALL_VOL(H5Dwrite(dset, type, mspace, fspace, dxpl, bufs[v]));
            H5CALL_VOL(H5Dclose(dset));
            bytes += mine * 4;
        }
        H5CALL_VOL(H5Gclose(grp));
    }

    CHECK(H5Sclose(mspace));
    CHECK(H5Sclose(fspace));
    CHECK(H5Pclose(dxpl));
    CHECK(H5Pclose(fapl));
    H5CALL_VOL(H5Fclose(file));
    wl_barrier();
    t1 = wl_now_ns();
    c1 = wl_cpu_ns();

    for (v = 0; v < NVARS; v++)
        free(bufs[v]);
    printf("ns=%llu cpu_ns=%llu init_ns=%llu bytes=%llu vol_calls=%llu particles=%llu timesteps=%llu rank=%d size=%d\n",
           t1 - t0, c1 - c0, init_ns, bytes, wl_vol_calls, mine, nsteps, w.rank, w.size);
    wl_finish();
    return 0;
}
