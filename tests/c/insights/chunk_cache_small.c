/* chunk_cache_small: a deflate-compressed 1-D dataset of 1 Mi floats in 256 KiB chunks,
 * opened with a 64 KiB chunk cache (h5py `rdcc_nbytes=64*1024`, netCDF
 * nc_set_var_chunk_cache, set "to save memory"), is read front to back in 16 KiB pieces:
 * no chunk fits in the cache, so each of the 256 reads reads and decompresses a whole
 * 256 KiB chunk to deliver 16 KiB (x16). With --fixed the dataset is opened with a 1 MiB
 * cache (H5Pset_chunk_cache(dapl, 521, 1 MiB, 1.0)): each chunk is decompressed once.
 *
 * Usage: chunk_cache_small [--fixed]. Writes chunk_cache_small.h5 in the current
 * directory; exits non-zero on any HDF5 error. */
#include "fixture.h"

enum { N = 1 << 20, CHUNK = 64 * 1024, PIECE = 4096 };

int main(int argc, char **argv)
{
    fixture_init(&argc, &argv);
    int     fixed   = fixture_fixed(argc, argv);
    hid_t   fapl    = fixture_fapl();
    hsize_t dims[1] = {N}, chunk[1] = {CHUNK}, count[1] = {PIECE};
    float  *buf     = malloc(sizeof(float) * N);
    if (!buf)
        return 1;
    for (size_t i = 0; i < N; i++)
        buf[i] = (float)(i % 977);
    hid_t f, space, dcpl, dapl, d, mem;
    CHECK(f = H5Fcreate("chunk_cache_small.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl));
    CHECK(space = H5Screate_simple(1, dims, NULL));
    CHECK(dcpl = H5Pcreate(H5P_DATASET_CREATE));
    CHECK(H5Pset_chunk(dcpl, 1, chunk));
    CHECK(H5Pset_deflate(dcpl, 1));
    CHECK(d = H5Dcreate2(f, "signal", H5T_NATIVE_FLOAT, space, H5P_DEFAULT, dcpl, H5P_DEFAULT));
    CHECK(H5Dwrite(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf));
    CHECK(H5Dclose(d));
    CHECK(dapl = H5Pcreate(H5P_DATASET_ACCESS));
    CHECK(H5Pset_chunk_cache(dapl, 521, fixed ? (1 << 20) : (64 << 10), 1.0));
    CHECK(d = H5Dopen2(f, "signal", dapl));
    CHECK(mem = H5Screate_simple(1, count, NULL));
    for (hsize_t s = 0; s < N; s += PIECE) {
        CHECK(H5Sselect_hyperslab(space, H5S_SELECT_SET, &s, NULL, count, NULL));
        CHECK(H5Dread(d, H5T_NATIVE_FLOAT, mem, space, H5P_DEFAULT, buf));
        if (buf[1] != (float)((s + 1) % 977))
            return 2;
    }
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
