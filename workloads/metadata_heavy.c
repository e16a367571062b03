/*
 * metadata_heavy.c - many small HDF5 metadata operations, for per-call overhead.
 *
 * Usage: metadata_heavy -d DIR [-n ITERATIONS] [-e ELEMENTS]
 *
 *   -d DIR   output directory (must exist); file <DIR>/meta-r<rank>.h5
 *            (MPI build: one shared file <DIR>/meta.h5)
 *   -n N     loop iterations (default 5000)
 *   -e E     elements of the 1-D int dataset /data (default 1024)
 *
 * Setup (untimed): create the file, the 1-D int dataset /data, a scalar memory
 * space and a copy of the file space for the hyperslab.
 *
 * Each iteration i (timed) makes these HDF5 calls, V = reaches the VOL connector:
 *   V  H5Lexists(file, "g<i>")          -> false
 *   V  H5Gcreate2(file, "g<i>")
 *   V  H5Acreate2(group, "a", int, scalar)
 *   V  H5Awrite(attr, i)
 *   V  H5Aclose(attr)
 *   V  H5Aopen(group, "a")
 *   V  H5Aread(attr) (checked == i)
 *   V  H5Aclose(attr)
 *   V  H5Gclose(group)
 *   V  H5Lexists(file, "data")          -> true
 *   V  H5Dopen2(file, "data")
 *      H5Sselect_hyperslab(fspace, start = i % E, count = 1)
 *   V  H5Dwrite(one int)
 *   V  H5Dread(one int) (checked)
 *   V  H5Dclose(dset)
 * = 15 API calls, 14 through the VOL, per iteration.
 *
 * Output: one line "calls=<C> vol_calls=<V> ns=<elapsed ns of the loop>
 * cpu_ns=<the process's CPU time in the loop> iters=<N> rank=<r> size=<s>".
 */
#include "common.h"

static void usage(const char *argv0)
{
    fprintf(stderr, "usage: %s -d DIR [-n ITERATIONS] [-e ELEMENTS]\n", argv0);
    exit(2);
}

int main(int argc, char **argv)
{
    wl_world_t w = wl_init(&argc, &argv);
    const char *dir = NULL;
    unsigned long long iters = 5000, elems = 1024, i;
    char fname[4096];
    hid_t fapl, dxpl, file, dcpl, space, dset, mspace, fspace, aspace;
    unsigned long long t0, t1, c0, c1;
    int opt;

    while ((opt = getopt(argc, argv, "d:n:e:h")) != -1) {
        switch (opt) {
        case 'd': dir = optarg; break;
        case 'n': iters = wl_parse_u64("-n", optarg); break;
        case 'e': elems = wl_parse_u64("-e", optarg); break;
        default: usage(argv[0]);
        }
    }
    if (dir == NULL || elems == 0)
        usage(argv[0]);

#ifdef H5PROV_MPI
    wl_path(fname, sizeof fname, dir, "meta.h5");
#else
    {
        char base[64];
        snprintf(base, sizeof base, "meta-r%d.h5", w.rank);
        wl_path(fname, sizeof fname, dir, base);
    }
#endif

    /* Setup, not timed, not counted. */
    fapl = wl_fapl(1);
    dxpl = wl_dxpl(0);
    CHECK_ID(file, H5Fcreate(fname, H5F_ACC_TRUNC, H5P_DEFAULT, fapl));
    {
        hsize_t dims[1];
        dims[0] = (hsize_t)elems;
        CHECK_ID(space, H5Screate_simple(1, dims, NULL));
    }
    CHECK_ID(dcpl, H5Pcreate(H5P_DATASET_CREATE));
    CHECK(H5Pset_fill_time(dcpl, H5D_FILL_TIME_ALLOC));
    CHECK_ID(dset, H5Dcreate2(file, "data", H5T_NATIVE_INT, space, H5P_DEFAULT, dcpl, H5P_DEFAULT));
    CHECK(H5Dclose(dset));
    CHECK(H5Pclose(dcpl));
    CHECK_ID(fspace, H5Scopy(space));
    CHECK(H5Sclose(space));
    CHECK_ID(mspace, H5Screate(H5S_SCALAR));
    CHECK_ID(aspace, H5Screate(H5S_SCALAR));
    wl_barrier();

    wl_reset_calls();
    c0 = wl_cpu_ns();
    t0 = wl_now_ns();
    for (i = 0; i < iters; i++) {
        char gname[32];
        hid_t grp, attr, d;
        int v = (int)(i & 0x7fffffff), back = -1;
        hsize_t start[1], count[1];

        snprintf(gname, sizeof gname, "g%llu", i);
        H5CALL_VOL_TRI(H5Lexists(file, gname, H5P_DEFAULT), 0);
        H5CALL_VOL_ID(grp, H5Gcreate2(file, gname, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
        H5CALL_VOL_ID(attr, H5Acreate2(grp, "a", H5T_NATIVE_INT, aspace, H5P_DEFAULT, H5P_DEFAULT));
        H5CALL_VOL(H5Awrite(attr, H5T_NATIVE_INT, &v));
        H5CALL_VOL(H5Aclose(attr));
        H5CALL_VOL_ID(attr, H5Aopen(grp, "a", H5P_DEFAULT));
        H5CALL_VOL(H5Aread(attr, H5T_NATIVE_INT, &back));
        if (back != v) {
            fprintf(stderr, "attribute read back %d, wrote %d\n", back, v);
            return 1;
        }
        H5CALL_VOL(H5Aclose(attr));
        H5CALL_VOL(H5Gclose(grp));

        H5CALL_VOL_TRI(H5Lexists(file, "data", H5P_DEFAULT), 1);
        H5CALL_VOL_ID(d, H5Dopen2(file, "data", H5P_DEFAULT));
        /* MPI: every rank writes its own element (distinct when size <= E). */
        start[0] = (hsize_t)((i + (unsigned long long)w.rank) % elems);
        count[0] = 1;
        H5CALL(H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, count, NULL));
        H5CALL_VOL(H5Dwrite(d, H5T_NATIVE_INT, mspace, fspace, dxpl, &v));
        back = -1;
        H5CALL_VOL(H5Dread(d, H5T_NATIVE_INT, mspace, fspace, dxpl, &back));
        if (back != v) {
            fprintf(stderr, "dataset read back %d, wrote %d\n", back, v);
            return 1;
        }
        H5CALL_VOL(H5Dclose(d));
    }
    t1 = wl_now_ns();
    c1 = wl_cpu_ns();

    CHECK(H5Sclose(aspace));
    CHECK(H5Sclose(mspace));
    CHECK(H5Sclose(fspace));
    CHECK(H5Pclose(dxpl));
    CHECK(H5Pclose(fapl));
    CHECK(H5Fclose(file));

    printf("calls=%llu vol_calls=%llu ns=%llu cpu_ns=%llu iters=%llu rank=%d size=%d\n", wl_calls,
           wl_vol_calls, t1 - t0, c1 - c0, iters, w.rank, w.size);
    wl_finish();
    return 0;
}
