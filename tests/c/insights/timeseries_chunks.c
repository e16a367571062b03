/* timeseries_chunks: a (time, y, x) = 1024x64x64 float field written map by map, chunked
 * one map per chunk (1x64x64, 16 KiB, deflated), then read as time series at 8 grid
 * points of one tile: each series (1024x1x1) touches all 1024 chunks, which do not fit the
 * default 1 MiB chunk cache (64 chunks), so every series reads and inflates every chunk
 * again: 8192 chunk loads (128 MiB inflated) to deliver 32 KiB. With --fixed the dataset is
 * reopened for the series with H5Pset_chunk_cache(dapl, 12421, 32 MiB, 1.0): the 16 MiB of
 * chunks are loaded once (Unidata's "Chunking Data: Why it Matters" case of a map-chunked
 * variable read as time series).
 *
 * Usage: timeseries_chunks [--fixed]. Writes timeseries_chunks.h5 in the current
 * directory; exits non-zero on any HDF5 error. */
#include "fixture.h"

enum { T = 1024, Y = 64, X = 64, SERIES = 8 };

int main(int argc, char **argv)
{
    fixture_init(&argc, &argv);
    int     fixed    = fixture_fixed(argc, argv);
    hsize_t dims[3]  = {T, Y, X}, chunk[3] = {1, Y, X};
    hsize_t map[3]   = {1, Y, X}, series[3] = {T, 1, 1}, n = T;
    hid_t   f, space, dcpl, dapl, d, mem;
    static float buf[Y * X], ts[T];
    CHECK(f = H5Fcreate("timeseries_chunks.h5", H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
    CHECK(space = H5Screate_simple(3, dims, NULL));
    CHECK(dcpl = H5Pcreate(H5P_DATASET_CREATE));
    CHECK(H5Pset_chunk(dcpl, 3, chunk));
    CHECK(H5Pset_deflate(dcpl, 1));
    CHECK(d = H5Dcreate2(f, "temperature", H5T_NATIVE_FLOAT, space, H5P_DEFAULT, dcpl,
                         H5P_DEFAULT));
    CHECK(mem = H5Screate_simple(3, map, NULL));
    for (hsize_t t = 0; t < T; t++) {
        hsize_t start[3] = {t, 0, 0};
        for (int i = 0; i < Y * X; i++)
            buf[i] = (float)(280.0 + 0.01 * (double)t + 0.001 * (double)(i % 97));
        CHECK(H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, map, NULL));
        CHECK(H5Dwrite(d, H5T_NATIVE_FLOAT, mem, space, H5P_DEFAULT, buf));
    }
    CHECK(H5Sclose(mem));
    CHECK(H5Dclose(d));
    CHECK(dapl = H5Pcreate(H5P_DATASET_ACCESS));
    if (fixed)
        CHECK(H5Pset_chunk_cache(dapl, 12421, 32u << 20, 1.0));
    CHECK(d = H5Dopen2(f, "temperature", dapl));
    CHECK(mem = H5Screate_simple(1, &n, NULL));
    double sum = 0;
    for (int s = 0; s < SERIES; s++) {
        hsize_t start[3] = {0, (hsize_t)s, (hsize_t)s};
        CHECK(H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, series, NULL));
        CHECK(H5Dread(d, H5T_NATIVE_FLOAT, mem, space, H5P_DEFAULT, ts));
        sum += ts[T - 1];
    }
    CHECK(H5Sclose(mem));
    CHECK(H5Dclose(d));
    CHECK(H5Pclose(dapl));
    CHECK(H5Pclose(dcpl));
    CHECK(H5Sclose(space));
    CHECK(fixture_close(f));
    fixture_finish();
    return sum > 0 ? 0 : 1;
}
