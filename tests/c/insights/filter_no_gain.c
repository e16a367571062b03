/* filter_no_gain: deflate (level 4, h5py's gzip default) on data that does not compress:
 * 2 MiB of random doubles in 256 KiB chunks, written chunk by chunk and read back. Every
 * chunk goes through zlib both ways and the stored size stays that of the data
 * (ratio ~1.0). With --fixed the same chunks have no filter.
 *
 * Usage: filter_no_gain [--fixed]. Writes filter_no_gain.h5 in the current directory;
 * exits non-zero on any HDF5 error. */
#include "fixture.h"

enum { N = 256 * 1024, CHUNK = 32 * 1024 };

int main(int argc, char **argv)
{
    fixture_init(&argc, &argv);
    int     fixed   = fixture_fixed(argc, argv);
    hid_t   fapl    = fixture_fapl();
    hsize_t dims[1] = {N}, chunk[1] = {CHUNK};
    double *buf     = malloc(sizeof(double) * N);
    if (!buf)
        return 1;
    unsigned long long x = 88172645463325252ull; /* xorshift64: random mantissas */
    for (size_t i = 0; i < N; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        buf[i] = (double)(x >> 11) / 9007199254740992.0;
    }
    double check = buf[N - 1];
    hid_t  f, space, mem, dcpl, d;
    CHECK(f = H5Fcreate("filter_no_gain.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl));
    CHECK(space = H5Screate_simple(1, dims, NULL));
    CHECK(mem = H5Screate_simple(1, chunk, NULL));
    CHECK(dcpl = H5Pcreate(H5P_DATASET_CREATE));
    CHECK(H5Pset_chunk(dcpl, 1, chunk));
    if (!fixed)
        CHECK(H5Pset_deflate(dcpl, 4));
    CHECK(d = H5Dcreate2(f, "noise", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT));
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
