/* chunk_cache_slots: the chunk cache is given plenty of bytes (64 MiB) but one hash slot
 * (H5Pset_chunk_cache(dapl, 1, 64 MiB, 0.75)): HDF5 keeps one chunk per slot, so every
 * chunk that hashes to an occupied slot evicts the one there. A deflate-compressed
 * 512x512 double dataset in 64x64 chunks (32 KiB) is read row by row (512 reads of
 * 4 KiB, each spanning 8 chunks): each chunk is read and inflated 64 times instead of
 * once. With --fixed the DAPL asks for 64 MiB and 12421 slots (a prime, ~200 x the 64
 * chunks), so every chunk is inflated once.
 *
 * Usage: chunk_cache_slots [--fixed]. Writes chunk_cache_slots.h5 in the current
 * directory; exits non-zero on any HDF5 error. */
#include "fixture.h"

enum { N = 512, C = 64 };

int main(int argc, char **argv)
{
    fixture_init(&argc, &argv);
    int     fixed   = fixture_fixed(argc, argv);
    hid_t   fapl    = fixture_fapl();
    hsize_t dims[2] = {N, N}, chunk[2] = {C, C};
    double *buf     = malloc(sizeof(double) * N * N);
    if (!buf)
        return 1;
    for (size_t i = 0; i < (size_t)N * N; i++)
        buf[i] = (double)(i % 1000);
    hid_t f, space, dcpl, dapl, d;
    CHECK(f = H5Fcreate("chunk_cache_slots.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl));
    CHECK(space = H5Screate_simple(2, dims, NULL));
    CHECK(dcpl = H5Pcreate(H5P_DATASET_CREATE));
    CHECK(H5Pset_chunk(dcpl, 2, chunk));
    CHECK(H5Pset_deflate(dcpl, 1));
    CHECK(d = H5Dcreate2(f, "field", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, dcpl,
                         H5P_DEFAULT));
    CHECK(H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf));
    CHECK(H5Dclose(d));
    CHECK(dapl = H5Pcreate(H5P_DATASET_ACCESS));
    CHECK(H5Pset_chunk_cache(dapl, fixed ? 12421 : 1, 64 * 1024 * 1024, 0.75));
    CHECK(d = H5Dopen2(f, "field", dapl));
    hsize_t one[2] = {1, N};
    hid_t   mem;
    CHECK(mem = H5Screate_simple(2, one, NULL));
    double sum = 0;
    for (hsize_t r = 0; r < N; r++) {
        hsize_t start[2] = {r, 0};
        CHECK(H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, one, NULL));
        CHECK(H5Dread(d, H5T_NATIVE_DOUBLE, mem, space, H5P_DEFAULT, buf));
        sum += buf[N - 1];
    }
    if (sum <= 0)
        return 2;
    CHECK(H5Sclose(mem));
    CHECK(H5Dclose(d));
    CHECK(H5Pclose(dapl));
    CHECK(H5Pclose(dcpl));
    CHECK(H5Sclose(space));
    CHECK(fixture_close(f));
    CHECK(H5Pclose(fapl));
    free(buf);
    fixture_finish();
    return 0;
}
