/* deflate_level_too_high: deflate at level 9 on smooth measurement data (256 KiB of doubles,
 * a random walk on a 1/1024 grid, 64 KiB chunks) written chunk by chunk and read back: level 9 searches
 * hardest for matches and costs several times level 1 for a few percent more ratio. With
 * --fixed the chunks are shuffled then deflated at level 1 (H5Pset_shuffle,
 * H5Pset_deflate(dcpl, 1)), which compresses such data as well or better.
 *
 * Usage: deflate_level_high [--fixed]. Writes deflate_level_high.h5 in the current directory;
 * exits non-zero on any HDF5 error. */
#include "fixture.h"

enum { N = 32 * 1024, CHUNK = 8 * 1024 };

int main(int argc, char **argv)
{
    fixture_init(&argc, &argv);
    int     fixed   = fixture_fixed(argc, argv);
    hid_t   fapl    = fixture_fapl();
    hsize_t dims[1] = {N}, chunk[1] = {CHUNK};
    double *buf     = malloc(sizeof(double) * N);
    if (!buf)
        return 1;
    unsigned x = 2463534242u;
    long     v = 100 * 1024;
    for (size_t i = 0; i < N; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        v += (long)(x % 33) - 16;
        buf[i] = (double)v / 1024.0;
    }
    double check = buf[N - 1];
    hid_t  f, space, mem, dcpl, d;
    CHECK(f = H5Fcreate("deflate_level_high.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl));
    CHECK(space = H5Screate_simple(1, dims, NULL));
    CHECK(mem = H5Screate_simple(1, chunk, NULL));
    CHECK(dcpl = H5Pcreate(H5P_DATASET_CREATE));
    CHECK(H5Pset_chunk(dcpl, 1, chunk));
    if (fixed)
        CHECK(H5Pset_shuffle(dcpl));
    CHECK(H5Pset_deflate(dcpl, fixed ? 1 : 9));
    CHECK(d = H5Dcreate2(f, "signal", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT));
    for (int pass = 0; pass < 2; pass++)
        for (hsize_t s = 0; s < N; s += CHUNK) {
            hsize_t start[1] = {s};
            CHECK(H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, chunk, NULL));
            if (pass == 0)
                CHECK(H5Dwrite(d, H5T_NATIVE_DOUBLE, mem, space, H5P_DEFAULT, buf + s));
            else
                CHECK(H5Dread(d, H5T_NATIVE_DOUBLE, mem, space, H5P_DEFAULT, buf + s));
        }
    if (buf[N - 1] != check)
        return 2;
    CHECK(H5Dclose(d));
    CHECK(H5Pclose(dcpl));
    CHECK(H5Sclose(mem));
    CHECK(H5Sclose(space));
    CHECK(fixture_close(f));
    CHECK(H5Pclose(fapl));
    free(buf);
    fixture_finish();
    return 0;
}
