/*
 * sample.c - a small, representative HDF5 program for h5prov's demo.
 *
 * Usage: sample -d DIR
 *
 * Writes <DIR>/sample-r<rank>.h5 and runs in well under a second:
 *   1. create the file; groups /experiment, /experiment/raw, /experiment/derived
 *      and /meta;
 *   2. datasets of different sizes and layouts:
 *        /meta/config            int[16]             contiguous, 64 B
 *        /experiment/raw/image   float[512][512]     contiguous, 1 MiB, written in
 *                                                    4 row blocks (hyperslabs)
 *        /experiment/raw/signal  double[200000]      chunked (10000) + gzip level 4
 *        /experiment/derived/mean    double[512]     } written together with one
 *        /experiment/derived/counts  int[512]        } H5Dwrite_multi
 *   3. attributes: a string "title" on the file's root group, an int[3]
 *      "shape" and a double "scale" on image;
 *   4. read back: a 64-row hyperslab of image, the whole signal (through the
 *      gzip filter), mean; the "scale" attribute;
 *   5. close everything, reopen the file read-only, check H5Lexists, open
 *      image and read 16 elements, read "title", close.
 * Prints nothing; exits non-zero if any HDF5 call fails or data read back
 * differs.
 */
#include "common.h"

#define IMG 512
#define SIG 200000

static void usage(const char *argv0)
{
    fprintf(stderr, "usage: %s -d DIR\n", argv0);
    exit(2);
}

static hid_t mkgroup(hid_t loc, const char *name)
{
    hid_t g;
    CHECK_ID(g, H5Gcreate2(loc, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    return g;
}

static hid_t mkdset(hid_t loc, const char *name, hid_t type, int rank, const hsize_t *dims,
                    hid_t dcpl)
{
    hid_t space, d;
    CHECK_ID(space, H5Screate_simple(rank, dims, NULL));
    CHECK_ID(d, H5Dcreate2(loc, name, type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT));
    CHECK(H5Sclose(space));
    return d;
}

static void fail(const char *what)
{
    fprintf(stderr, "sample: data mismatch: %s\n", what);
    exit(1);
}

int main(int argc, char **argv)
{
    wl_world_t w = wl_init(&argc, &argv);
    const char *dir = NULL;
    char fname[4096], base[64];
    int opt, i;
    hid_t file, exp, raw, derived, meta, cfg, img, sig, mean, counts, dcpl, space, attr, atype;
    float *image = wl_xmalloc(sizeof(float) * IMG * IMG);
    double *signal = wl_xmalloc(sizeof(double) * SIG), *back = wl_xmalloc(sizeof(double) * SIG);
    double meanv[IMG];
    int countv[IMG], config[16];

    while ((opt = getopt(argc, argv, "d:h")) != -1) {
        switch (opt) {
        case 'd': dir = optarg; break;
        default: usage(argv[0]);
        }
    }
    if (dir == NULL)
        usage(argv[0]);
    snprintf(base, sizeof base, "sample-r%d.h5", w.rank);
    wl_path(fname, sizeof fname, dir, base);

    for (i = 0; i < IMG * IMG; i++)
        image[i] = (float)(i % 977) * 0.5f;
    for (i = 0; i < SIG; i++)
        signal[i] = (double)(i % 1000) * 0.001; /* compressible */
    for (i = 0; i < IMG; i++) {
        meanv[i] = i * 0.25;
        countv[i] = i * 3;
    }
    for (i = 0; i < 16; i++)
        config[i] = i * i;

    /* 1. File and groups. */
    CHECK_ID(file, H5Fcreate(fname, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
    exp = mkgroup(file, "experiment");
    raw = mkgroup(exp, "raw");
    derived = mkgroup(exp, "derived");
    meta = mkgroup(file, "meta");

    /* 2. Datasets. */
    {
        hsize_t d16[1] = {16}, dimg[2] = {IMG, IMG}, dsig[1] = {SIG}, chunk[1] = {10000},
                dimgv[1] = {IMG};
        cfg = mkdset(meta, "config", H5T_NATIVE_INT, 1, d16, H5P_DEFAULT);
        CHECK(H5Dwrite(cfg, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, config));

        img = mkdset(raw, "image", H5T_NATIVE_FLOAT, 2, dimg, H5P_DEFAULT);
        {
            hid_t fs, ms;
            hsize_t blk[2] = {IMG / 4, IMG};
            int b;
            CHECK_ID(fs, H5Dget_space(img));
            CHECK_ID(ms, H5Screate_simple(2, blk, NULL));
            for (b = 0; b < 4; b++) {
                hsize_t start[2];
                start[0] = (hsize_t)b * (IMG / 4);
                start[1] = 0;
                CHECK(H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, blk, NULL));
                CHECK(H5Dwrite(img, H5T_NATIVE_FLOAT, ms, fs, H5P_DEFAULT,
                               image + (size_t)b * (IMG / 4) * IMG));
            }
            CHECK(H5Sclose(ms));
            CHECK(H5Sclose(fs));
        }

        CHECK_ID(dcpl, H5Pcreate(H5P_DATASET_CREATE));
        CHECK(H5Pset_chunk(dcpl, 1, chunk));
        CHECK(H5Pset_deflate(dcpl, 4));
        sig = mkdset(raw, "signal", H5T_NATIVE_DOUBLE, 1, dsig, dcpl);
        CHECK(H5Pclose(dcpl));
        CHECK(H5Dwrite(sig, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, signal));

        mean = mkdset(derived, "mean", H5T_NATIVE_DOUBLE, 1, dimgv, H5P_DEFAULT);
        counts = mkdset(derived, "counts", H5T_NATIVE_INT, 1, dimgv, H5P_DEFAULT);
        {
            hid_t ids[2], mt[2], ms[2], fs[2];
            const void *bufs[2];
            ids[0] = mean;
            ids[1] = counts;
            mt[0] = H5T_NATIVE_DOUBLE;
            mt[1] = H5T_NATIVE_INT;
            ms[0] = ms[1] = H5S_ALL;
            fs[0] = fs[1] = H5S_ALL;
            bufs[0] = meanv;
            bufs[1] = countv;
            CHECK(H5Dwrite_multi(2, ids, mt, ms, fs, H5P_DEFAULT, bufs));
        }
    }

    /* 3. Attributes. */
    {
        const char *title = "h5prov sample run";
        int shape[3] = {IMG, IMG, 1};
        double scale = 0.5;
        hsize_t d3[1] = {3};
        CHECK_ID(atype, H5Tcopy(H5T_C_S1));
        CHECK(H5Tset_size(atype, strlen(title) + 1));
        CHECK_ID(space, H5Screate(H5S_SCALAR));
        CHECK_ID(attr, H5Acreate2(file, "title", atype, space, H5P_DEFAULT, H5P_DEFAULT));
        CHECK(H5Awrite(attr, atype, title));
        CHECK(H5Aclose(attr));
        CHECK_ID(attr, H5Acreate2(img, "scale", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, H5P_DEFAULT));
        CHECK(H5Awrite(attr, H5T_NATIVE_DOUBLE, &scale));
        CHECK(H5Aclose(attr));
        CHECK(H5Sclose(space));
        CHECK_ID(space, H5Screate_simple(1, d3, NULL));
        CHECK_ID(attr, H5Acreate2(img, "shape", H5T_NATIVE_INT, space, H5P_DEFAULT, H5P_DEFAULT));
        CHECK(H5Awrite(attr, H5T_NATIVE_INT, shape));
        CHECK(H5Aclose(attr));
        CHECK(H5Sclose(space));
    }

    /* 4. Read some back. */
    {
        hid_t fs, ms;
        hsize_t start[2] = {100, 0}, cnt[2] = {64, IMG};
        double scale = 0.0;
        CHECK_ID(fs, H5Dget_space(img));
        CHECK_ID(ms, H5Screate_simple(2, cnt, NULL));
        CHECK(H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, cnt, NULL));
        CHECK(H5Dread(img, H5T_NATIVE_FLOAT, ms, fs, H5P_DEFAULT, back));
        if (((float *)back)[0] != image[100 * IMG])
            fail("image");
        CHECK(H5Sclose(ms));
        CHECK(H5Sclose(fs));

        CHECK(H5Dread(sig, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, back));
        if (memcmp(back, signal, sizeof(double) * SIG) != 0)
            fail("signal");
        CHECK(H5Dread(mean, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, back));
        if (back[IMG - 1] != meanv[IMG - 1])
            fail("mean");
        CHECK_ID(attr, H5Aopen(img, "scale", H5P_DEFAULT));
        CHECK(H5Aread(attr, H5T_NATIVE_DOUBLE, &scale));
        CHECK(H5Aclose(attr));
        if (scale != 0.5)
            fail("scale");
    }

    /* 5. Close, then reopen read-only. */
    CHECK(H5Dclose(counts));
    CHECK(H5Dclose(mean));
    CHECK(H5Dclose(sig));
    CHECK(H5Dclose(img));
    CHECK(H5Dclose(cfg));
    CHECK(H5Gclose(meta));
    CHECK(H5Gclose(derived));
    CHECK(H5Gclose(raw));
    CHECK(H5Gclose(exp));
    CHECK(H5Fclose(file));

    CHECK_ID(file, H5Fopen(fname, H5F_ACC_RDONLY, H5P_DEFAULT));
    CHECK_TRI(H5Lexists(file, "experiment", H5P_DEFAULT), 1);
    CHECK_ID(img, H5Dopen2(file, "/experiment/raw/image", H5P_DEFAULT));
    {
        hid_t fs, ms;
        hsize_t start[2] = {0, 0}, cnt[2] = {1, 16};
        float row[16];
        char title[64];
        CHECK_ID(fs, H5Dget_space(img));
        CHECK_ID(ms, H5Screate_simple(2, cnt, NULL));
        CHECK(H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, cnt, NULL));
        CHECK(H5Dread(img, H5T_NATIVE_FLOAT, ms, fs, H5P_DEFAULT, row));
        if (row[15] != image[15])
            fail("image (reopened)");
        CHECK(H5Sclose(ms));
        CHECK(H5Sclose(fs));
        CHECK_ID(attr, H5Aopen(file, "title", H5P_DEFAULT));
        memset(title, 0, sizeof title);
        CHECK(H5Aread(attr, atype, title));
        CHECK(H5Aclose(attr));
        if (strcmp(title, "h5prov sample run") != 0)
            fail("title");
    }
    CHECK(H5Tclose(atype));
    CHECK(H5Dclose(img));
    CHECK(H5Fclose(file));

    free(image);
    free(signal);
    free(back);
    wl_finish();
    return 0;
}
