/*
 * known_sequence.c - a precisely documented sequence of HDF5 operations, so
 * tests can check h5prov's trace rows against exact expected counts.
 *
 * Usage: known_sequence -d DIR [-n N]
 *
 *   -d DIR   output directory (must exist); the file is <DIR>/known-r<rank>.h5
 *   -n N     number of hyperslab writes in step 4, 1 <= N <= 13 (default 4)
 *
 * Prints nothing. Exits 0 on success, 1 if any HDF5 call fails or data read
 * back differs, 2 on a usage error.
 *
 * THE SEQUENCE (API call -> VOL operation)
 *
 *  1  H5Fcreate("<DIR>/known-r<rank>.h5", H5F_ACC_TRUNC)  file.create
 *  2  H5Gcreate2(file, "grp_a")                          group.create  /grp_a
 *     H5Gcreate2(grp_a, "grp_b")                         group.create  /grp_a/grp_b
 *  3  H5Dcreate2(grp_a, "ints",  int32 [1000])           dataset.create /grp_a/ints        4000 B
 *     H5Dcreate2(grp_b, "doubles", double [20][50])      dataset.create /grp_a/grp_b/doubles 8000 B
 *     H5Dcreate2(file, "bytes", uint8 [64])              dataset.create /bytes              64 B
 *  4  for k in 0..N-1: H5Dwrite(ints, hyperslab start = 5*k*(k+1), count = 10*(k+1))
 *                                                        dataset.write  bytes = 40*(k+1)
 *     (k=0: 40 B, k=1: 80 B, k=2: 120 B, k=3: 160 B, ...; disjoint, sum 20*N*(N+1))
 *  5  H5Dwrite(doubles, 2-D hyperslab start {5,10} count {3,4})
 *                                                        dataset.write  96 B (12 points)
 *  6  H5Dwrite(bytes, H5S_ALL)                           dataset.write  64 B
 *     H5Dclose(bytes)                                    dataset.close
 *  7  H5Dread(ints, hyperslab start 0 count 100)         dataset.read   400 B
 *     H5Dread(doubles, H5S_ALL)                          dataset.read   8000 B
 *  8  H5Acreate2(ints, "units", int32 [3])               attr.create
 *     H5Awrite(units)                                    attr.write     12 B
 *     H5Aclose(units)                                    attr.close
 *     H5Aopen(ints, "units")                             attr.open
 *     H5Aread(units)                                     attr.read      12 B
 *     H5Aclose(units)                                    attr.close
 *  9  two concurrent opens of /bytes:
 *     H5Dopen2(file, "bytes") -> h1                      dataset.open
 *     H5Dopen2(file, "bytes") -> h2                      dataset.open
 *     H5Dwrite(h1, hyperslab start 0 count 8)            dataset.write  8 B
 *     H5Dwrite(h2, hyperslab start 8 count 16)           dataset.write  16 B
 *     H5Dclose(h1)                                       dataset.close
 *     H5Dclose(h2)                                       dataset.close
 * 10  H5Dwrite_multi(count = 2):                         ONE dataset.write callback with
 *       ints:    hyperslab start 900 count 100  (400 B)  2 datasets -> h5prov writes 2
 *       doubles: hyperslab start {18,0} count {2,50} (800 B)  records, batch = 2
 * 11  H5Dclose(ints), H5Dclose(doubles)                  dataset.close x2
 *     H5Gclose(grp_b), H5Gclose(grp_a)                   group.close x2
 *     H5Fclose(file)                                     file.close
 *
 * EXPECTED h5prov TRACE RECORDS (one record per dataset for multi-dataset
 * calls; N = -n value, default 4). Checked against a logging build of HDF5
 * 1.14.5's H5VLpassthru.c (ENABLE_PASSTHRU_LOGGING) on this program.
 *
 * | op              | records           | bytes per record (in order)                  |
 * |-----------------|-------------------|----------------------------------------------|
 * | file.create     | 1                 | 0                                            |
 * | group.create    | 2                 | 0                                            |
 * | dataset.create  | 3                 | 0                                            |
 * | dataset.write   | N + 6 (10 at N=4) | 40,80,..,40*N; 96; 64; 8; 16; 400,800        |
 * |                 |                   |   (last two: batch = 2, the H5Dwrite_multi;  |
 * |                 |                   |   N + 5 dataset.write *callbacks*)           |
 * | dataset.read    | 2                 | 400; 8000                                    |
 * | dataset.open    | 2                 | 0                                            |
 * | dataset.close   | 5                 | 0                                            |
 * | attr.create     | 1                 | 0                                            |
 * | attr.write      | 1                 | 12                                           |
 * | attr.open       | 1                 | 0                                            |
 * | attr.read       | 1                 | 12                                           |
 * | attr.close      | 2                 | 0                                            |
 * | group.close     | 2                 | 0                                            |
 * | file.close      | 1                 | 0                                            |
 * Total data bytes: written 20*N*(N+1) + 96 + 64 + 8 + 16 + 400 + 800 (= 1784 at
 * N=4), read 8400; attribute bytes 12 written, 12 read.
 * Data-transfer npoints: bytes / 4 for ints (int32), bytes / 8 for doubles,
 * bytes for /bytes (uint8). sel = "hyperslab" for every transfer except the
 * two H5S_ALL ones in steps 6 and 7 (sel = "all").
 *
 * OTHER VOL CALLBACKS HDF5 1.14.5 MAKES ON A PASS-THROUGH CONNECTOR in this
 * program (whether h5prov records them is its choice; they are listed so a
 * test can account for every row):
 *   file.optional:post_open  1   (H5Fcreate's "post open" step)
 *   introspect.opt_query     1   (H5Fcreate asks whether post_open is supported)
 *   wrap ctx get/free, info copy/free, connector init/term: bookkeeping, count
 *   not part of the contract.
 * No dataset.get, link.* or object.* callbacks occur.
 */
#include "common.h"

#define NINTS 1000
#define ROWS 20
#define COLS 50
#define NBYTES 64

static void usage(const char *argv0)
{
    fprintf(stderr, "usage: %s -d DIR [-n N (1..13)]\n", argv0);
    exit(2);
}

static void mismatch(const char *what)
{
    fprintf(stderr, "known_sequence: data mismatch: %s\n", what);
    exit(1);
}

int main(int argc, char **argv)
{
    wl_world_t w = wl_init(&argc, &argv);
    const char *dir = NULL;
    unsigned long long n = 4, k;
    char fname[4096], base[64];
    int opt, i;
    hid_t file, grp_a, grp_b, ints, doubles, bytes, h1, h2, space, attr;
    int ibuf[NINTS], iback[NINTS];
    double dbuf[ROWS * COLS], dback[ROWS * COLS];
    uint8_t bbuf[NBYTES];
    int units[3] = {1, 2, 3}, units_back[3] = {0, 0, 0};

    while ((opt = getopt(argc, argv, "d:n:h")) != -1) {
        switch (opt) {
        case 'd': dir = optarg; break;
        case 'n': n = wl_parse_u64("-n", optarg); break;
        default: usage(argv[0]);
        }
    }
    if (dir == NULL || n < 1 || n > 13)
        usage(argv[0]);
    snprintf(base, sizeof base, "known-r%d.h5", w.rank);
    wl_path(fname, sizeof fname, dir, base);

    for (i = 0; i < NINTS; i++)
        ibuf[i] = i;
    for (i = 0; i < ROWS * COLS; i++)
        dbuf[i] = i * 0.5;
    for (i = 0; i < NBYTES; i++)
        bbuf[i] = (uint8_t)i;

    /* Dataspaces are built with H5Screate_simple, never H5Dget_space, so the
     * sequence makes no dataset.get callbacks. */
    /* 1-3: file, groups, datasets. */
    CHECK_ID(file, H5Fcreate(fname, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
    CHECK_ID(grp_a, H5Gcreate2(file, "grp_a", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    CHECK_ID(grp_b, H5Gcreate2(grp_a, "grp_b", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    {
        hsize_t d1[1] = {NINTS}, d2[2] = {ROWS, COLS}, d3[1] = {NBYTES};
        CHECK_ID(space, H5Screate_simple(1, d1, NULL));
        CHECK_ID(ints, H5Dcreate2(grp_a, "ints", H5T_STD_I32LE, space, H5P_DEFAULT, H5P_DEFAULT,
                                  H5P_DEFAULT));
        CHECK(H5Sclose(space));
        CHECK_ID(space, H5Screate_simple(2, d2, NULL));
        CHECK_ID(doubles, H5Dcreate2(grp_b, "doubles", H5T_IEEE_F64LE, space, H5P_DEFAULT,
                                     H5P_DEFAULT, H5P_DEFAULT));
        CHECK(H5Sclose(space));
        CHECK_ID(space, H5Screate_simple(1, d3, NULL));
        CHECK_ID(bytes, H5Dcreate2(file, "bytes", H5T_STD_U8LE, space, H5P_DEFAULT, H5P_DEFAULT,
                                   H5P_DEFAULT));
        CHECK(H5Sclose(space));
    }

    /* 4: N hyperslab writes to ints, write k: start 5k(k+1), count 10(k+1). */
    {
        hsize_t d1[1] = {NINTS};
        hid_t fs, ms;
        CHECK_ID(fs, H5Screate_simple(1, d1, NULL));
        for (k = 0; k < n; k++) {
            hsize_t start = (hsize_t)(5 * k * (k + 1)), count = (hsize_t)(10 * (k + 1));
            CHECK(H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, NULL, &count, NULL));
            CHECK_ID(ms, H5Screate_simple(1, &count, NULL));
            CHECK(H5Dwrite(ints, H5T_NATIVE_INT, ms, fs, H5P_DEFAULT, ibuf + start));
            CHECK(H5Sclose(ms));
        }
        CHECK(H5Sclose(fs));
    }

    /* 5: doubles, 2-D hyperslab {5,10} + {3,4} = 12 points. */
    {
        hsize_t d2[2] = {ROWS, COLS}, start[2] = {5, 10}, count[2] = {3, 4};
        hid_t fs, ms;
        CHECK_ID(fs, H5Screate_simple(2, d2, NULL));
        CHECK(H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL));
        CHECK_ID(ms, H5Screate_simple(2, count, NULL));
        CHECK(H5Dwrite(doubles, H5T_NATIVE_DOUBLE, ms, fs, H5P_DEFAULT, dbuf));
        CHECK(H5Sclose(ms));
        CHECK(H5Sclose(fs));
    }

    /* 6: bytes, whole dataset; close it. */
    CHECK(H5Dwrite(bytes, H5T_NATIVE_UINT8, H5S_ALL, H5S_ALL, H5P_DEFAULT, bbuf));
    CHECK(H5Dclose(bytes));

    /* 7: reads. */
    {
        hsize_t d1[1] = {NINTS}, start = 0, count = 100;
        hid_t fs, ms;
        CHECK_ID(fs, H5Screate_simple(1, d1, NULL));
        CHECK(H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, NULL, &count, NULL));
        CHECK_ID(ms, H5Screate_simple(1, &count, NULL));
        CHECK(H5Dread(ints, H5T_NATIVE_INT, ms, fs, H5P_DEFAULT, iback));
        CHECK(H5Sclose(ms));
        CHECK(H5Sclose(fs));
        /* Step 4 wrote [0, 5N(N+1)); the rest still holds the fill value 0. */
        for (i = 0; i < 100; i++)
            if (iback[i] != ((unsigned long long)i < 5 * n * (n + 1) ? i : 0))
                mismatch("ints[0..100)");
        CHECK(H5Dread(doubles, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, dback));
        if (dback[5 * COLS + 10] != dbuf[0])
            mismatch("doubles[5][10]");
    }

    /* 8: attribute write and read. */
    {
        hsize_t d[1] = {3};
        CHECK_ID(space, H5Screate_simple(1, d, NULL));
        CHECK_ID(attr, H5Acreate2(ints, "units", H5T_STD_I32LE, space, H5P_DEFAULT, H5P_DEFAULT));
        CHECK(H5Sclose(space));
        CHECK(H5Awrite(attr, H5T_NATIVE_INT, units));
        CHECK(H5Aclose(attr));
        CHECK_ID(attr, H5Aopen(ints, "units", H5P_DEFAULT));
        CHECK(H5Aread(attr, H5T_NATIVE_INT, units_back));
        CHECK(H5Aclose(attr));
        if (units_back[0] != 1 || units_back[2] != 3)
            mismatch("attribute units");
    }

    /* 9: two concurrent opens of /bytes, a write through each. */
    CHECK_ID(h1, H5Dopen2(file, "bytes", H5P_DEFAULT));
    CHECK_ID(h2, H5Dopen2(file, "bytes", H5P_DEFAULT));
    {
        hsize_t d3[1] = {NBYTES}, start, count;
        hid_t fs, ms;
        CHECK_ID(fs, H5Screate_simple(1, d3, NULL));
        start = 0;
        count = 8;
        CHECK(H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, NULL, &count, NULL));
        CHECK_ID(ms, H5Screate_simple(1, &count, NULL));
        CHECK(H5Dwrite(h1, H5T_NATIVE_UINT8, ms, fs, H5P_DEFAULT, bbuf));
        CHECK(H5Sclose(ms));
        start = 8;
        count = 16;
        CHECK(H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, NULL, &count, NULL));
        CHECK_ID(ms, H5Screate_simple(1, &count, NULL));
        CHECK(H5Dwrite(h2, H5T_NATIVE_UINT8, ms, fs, H5P_DEFAULT, bbuf + 8));
        CHECK(H5Sclose(ms));
        CHECK(H5Sclose(fs));
    }
    CHECK(H5Dclose(h1));
    CHECK(H5Dclose(h2));

    /* 10: H5Dwrite_multi on ints and doubles. */
    {
        hsize_t d1[1] = {NINTS}, d2[2] = {ROWS, COLS};
        hsize_t s1 = 900, c1 = 100, s2[2] = {18, 0}, c2[2] = {2, COLS};
        hid_t ids[2], mt[2], ms[2], fs[2];
        const void *bufs[2];
        CHECK_ID(fs[0], H5Screate_simple(1, d1, NULL));
        CHECK(H5Sselect_hyperslab(fs[0], H5S_SELECT_SET, &s1, NULL, &c1, NULL));
        CHECK_ID(ms[0], H5Screate_simple(1, &c1, NULL));
        CHECK_ID(fs[1], H5Screate_simple(2, d2, NULL));
        CHECK(H5Sselect_hyperslab(fs[1], H5S_SELECT_SET, s2, NULL, c2, NULL));
        CHECK_ID(ms[1], H5Screate_simple(2, c2, NULL));
        ids[0] = ints;
        ids[1] = doubles;
        mt[0] = H5T_NATIVE_INT;
        mt[1] = H5T_NATIVE_DOUBLE;
        bufs[0] = ibuf + 900;
        bufs[1] = dbuf + 18 * COLS;
        CHECK(H5Dwrite_multi(2, ids, mt, ms, fs, H5P_DEFAULT, bufs));
        for (i = 0; i < 2; i++) {
            CHECK(H5Sclose(ms[i]));
            CHECK(H5Sclose(fs[i]));
        }
    }

    /* 11: close everything. */
    CHECK(H5Dclose(ints));
    CHECK(H5Dclose(doubles));
    CHECK(H5Gclose(grp_b));
    CHECK(H5Gclose(grp_a));
    CHECK(H5Fclose(file));

    wl_finish();
    return 0;
}
