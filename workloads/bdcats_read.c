/*
 * bdcats_read.c - BDCATS-IO-like read kernel: reads vpic_write's files back in
 * a balanced partition across processes.
 *
 * Usage: bdcats_read -d DIR [-w FILES] [-t TIMESTEPS] [-x coll|ind] [-c]
 *
 *   -d DIR   directory holding vpic_write's output
 *   -w W     serial build: number of files vpic-r0.h5 .. vpic-r<W-1>.h5 to read
 *            (default: the world size, i.e. as many writers as readers)
 *   -t T     timesteps to read (default: every /Timestep_<t> group in the file)
 *   -x MODE  MPI build only: transfer mode, coll (default) or ind
 *   -c       MPI build only: collective metadata operations on the FAPL
 *
 * Balanced partition: every process opens every file (serial: W files; MPI:
 * the shared vpic.h5) read-only, and for each timestep and each of the 8
 * variables reads its share of the dataset with a hyperslab: with L elements
 * and P processes, rank r reads [r * L / P, (r + 1) * L / P). Values of the id1
 * variable are checked (id1[i] == i in the serial layout).
 *
 * Output: one line "ns=<ns of the read loop> cpu_ns=<the process's CPU time
 * over the same section> bytes=<bytes read by this
 * process> vol_calls=<HDF5 calls made that reach the VOL connector> files=<W>
 * timesteps=<T> rank=<r> size=<s>".
 */
#include "common.h"

#define NVARS 8
static const char *const var_names[NVARS] = {"x", "y", "z", "id1", "id2", "px", "py", "pz"};
static const int var_is_int[NVARS] = {0, 0, 0, 1, 1, 0, 0, 0};

static void usage(const char *argv0)
{
    fprintf(stderr, "usage: %s -d DIR [-w FILES] [-t TIMESTEPS] [-x coll|ind] [-c]\n", argv0);
    exit(2);
}

/* Number of /Timestep_<t> groups, counted by probing names in order. */
static unsigned long long count_timesteps(hid_t file)
{
    unsigned long long t = 0;
    for (;;) {
        char gname[64];
        htri_t e;
        snprintf(gname, sizeof gname, "Timestep_%llu", t);
        e = H5Lexists(file, gname, H5P_DEFAULT);
        wl_calls++;
        wl_vol_calls++;
        CHECK(e);
        if (e == 0)
            return t;
        t++;
    }
}

int main(int argc, char **argv)
{
    wl_world_t w = wl_init(&argc, &argv);
    const char *dir = NULL;
    unsigned long long nfiles = 0, nsteps = 0, bytes = 0, f, t;
    int steps_given = 0, collective = 1, coll_md = 0, opt, v;
    void *buf = NULL;
    size_t buf_len = 0;
    hid_t fapl, dxpl;
    unsigned long long t0, t1, c0, c1, init_ns;

    while ((opt = getopt(argc, argv, "d:w:t:x:ch")) != -1) {
        switch (opt) {
        case 'd': dir = optarg; break;
        case 'w': nfiles = wl_parse_u64("-w", optarg); break;
        case 't':
            nsteps = wl_parse_u64("-t", optarg);
            steps_given = 1;
            break;
        case 'x':
            if (strcmp(optarg, "coll") == 0)
                collective = 1;
            else if (strcmp(optarg, "ind") == 0)
                collective = 0;
            else
                usage(argv[0]);
            break;
        case 'c': coll_md = 1; break;
        default: usage(argv[0]);
        }
    }
    if (dir == NULL)
        usage(argv[0]);
#ifdef H5PROV_MPI
    nfiles = 1;
#else
    if (nfiles == 0)
        nfiles = (unsigned long long)w.size;
#endif

    init_ns = wl_hdf5_open();
    wl_barrier();
    c0 = wl_cpu_ns();
    t0 = wl_now_ns();
    fapl = wl_fapl(coll_md);
    dxpl = wl_dxpl(collective);
    for (f = 0; f < nfiles; f++) {
        char fname[4096], base[64];
        hid_t file;
#ifdef H5PROV_MPI
        snprintf(base, sizeof base, "vpic.h5");
#else
        snprintf(base, sizeof base, "vpic-r%llu.h5", f);
#endif
        wl_path(fname, sizeof fname, dir, base);
        H5CALL_VOL_ID(file, H5Fopen(fname, H5F_ACC_RDONLY, fapl));
        if (!steps_given)
            nsteps = count_timesteps(file);
        for (t = 0; t < nsteps; t++) {
            char gname[64];
            hid_t grp;
            snprintf(gname, sizeof gname, "Timestep_%llu", t);
            H5CALL_VOL_ID(grp, H5Gopen2(file, gname, H5P_DEFAULT));
            for (v = 0; v < NVARS; v++) {
                hid_t type = var_is_int[v] ? H5T_NATIVE_INT : H5T_NATIVE_FLOAT;
                hid_t dset, fspace, mspace;
                hsize_t len, start[1], count[1];
                int nd;
                H5CALL_VOL_ID(dset, H5Dopen2(grp, var_names[v], H5P_DEFAULT));
                H5CALL_VOL_ID(fspace, H5Dget_space(dset));
                nd = H5Sget_simple_extent_ndims(fspace);
                if (nd != 1) {
                    fprintf(stderr, "%s/%s/%s: expected a 1-D dataset, got rank %d\n", fname, gname,
                            var_names[v], nd);
                    return 1;
                }
                CHECK(H5Sget_simple_extent_dims(fspace, &len, NULL));
                start[0] = len * (hsize_t)w.rank / (hsize_t)w.size;
                count[0] = len * (hsize_t)(w.rank + 1) / (hsize_t)w.size - start[0];
                if ((size_t)count[0] * 4 > buf_len) {
                    free(buf);
                    buf_len = (size_t)count[0] * 4;
                    buf = wl_xmalloc(buf_len);
                }
                CHECK(H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, count, NULL));
                CHECK_ID(mspace, H5Screate_simple(1, count, NULL));
                H5CALL_VOL(H5Dread(dset, type, mspace, fspace, dxpl, buf));
#ifndef H5PROV_MPI
                if (v == 3 && count[0] > 0) {
                    const int *ids = (const int *)buf;
                    hsize_t last = count[0] - 1;
                    if (ids[0] != (int)start[0] || ids[last] != (int)(start[0] + last)) {
                        fprintf(stderr, "%s/%s/id1: unexpected values\n", fname, gname);
                        return 1;
                    }
                }
#endif
                bytes += (unsigned long long)count[0] * 4;
                CHECK(H5Sclose(mspace));
                CHECK(H5Sclose(fspace));
                H5CALL_VOL(H5Dclose(dset));
            }
            H5CALL_VOL(H5Gclose(grp));
        }
        H5CALL_VOL(H5Fclose(file));
    }
    CHECK(H5Pclose(dxpl));
    CHECK(H5Pclose(fapl));
    wl_barrier();
    t1 = wl_now_ns();
    c1 = wl_cpu_ns();
    free(buf);

    printf("ns=%llu cpu_ns=%llu init_ns=%llu bytes=%llu vol_calls=%llu files=%llu timesteps=%llu rank=%d size=%d\n",
           t1 - t0, c1 - c0, init_ns, bytes, wl_vol_calls, nfiles, nsteps, w.rank, w.size);
    wl_finish();
    return 0;
}
