/* chunk_too_small (chunked per record): a netCDF-style record variable, 1024 records of
 * 1024 doubles in an unlimited dataset chunked one record per chunk (1 x 1024, 8 KiB, the
 * old netCDF-4 default for record variables), written record by record and then read as
 * time series: 8 reads of a 1024 x 128 column block, each touching all 1024 chunks (an
 * index lookup and an I/O per chunk, for 1 KiB of each). With --fixed the chunks are
 * 256 x 64 (128 KiB), balanced between the record writes and the time-series reads, and
 * the records are written 256 at a time (one row of chunks).
 *
 * Usage: record_chunks [--fixed]. Writes record_chunks.h5 in the current directory; exits
 * non-zero on any HDF5 error. */
#include "fixture.h"

enum { RECORDS = 1024, COLS = 1024, SERIES = 128, BATCH = 256 };

int main(int argc, char **argv)
{
    fixture_init(&argc, &argv);
    int     fixed   = fixture_fixed(argc, argv);
    hid_t   fapl    = fixture_fapl();
    hsize_t dims[2] = {RECORDS, COLS}, maxdims[2] = {H5S_UNLIMITED, COLS};
    hsize_t chunk[2] = {1, COLS};
    hsize_t per      = fixed ? BATCH : 1;
    double *buf      = malloc(sizeof(double) * BATCH * COLS);
    if (!buf)
        return 1;
    if (fixed) {
        chunk[0] = 256;
        chunk[1] = 64;
    }
    hid_t f, space, dcpl, d, mem;
    CHECK(f = H5Fcreate("record_chunks.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl));
    CHECK(space = H5Screate_simple(2, dims, maxdims));
    CHECK(dcpl = H5Pcreate(H5P_DATASET_CREATE));
    CHECK(H5Pset_chunk(dcpl, 2, chunk));
    CHECK(d = H5Dcreate2(f, "temperature", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, dcpl,
                         H5P_DEFAULT));
    hsize_t wcount[2] = {per, COLS};
    CHECK(mem = H5Screate_simple(2, wcount, NULL));
    for (hsize_t r = 0; r < RECORDS; r += per) {
        hsize_t start[2] = {r, 0};
        for (size_t i = 0; i < per * COLS; i++)
            buf[i] = (double)(r * COLS + i);
        CHECK(H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, wcount, NULL));
        CHECK(H5Dwrite(d, H5T_NATIVE_DOUBLE, mem, space, H5P_DEFAULT, buf));
    }
    CHECK(H5Sclose(mem));
    hsize_t rcount[2] = {RECORDS, SERIES};
    double *series    = malloc(sizeof(double) * RECORDS * SERIES);
    if (!series)
        return 1;
    CHECK(mem = H5Screate_simple(2, rcount, NULL));
    for (hsize_t c = 0; c < COLS; c += SERIES) {
        hsize_t start[2] = {0, c};
        CHECK(H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, rcount, NULL));
        CHECK(H5Dread(d, H5T_NATIVE_DOUBLE, mem, space, H5P_DEFAULT, series));
        if (series[(RECORDS - 1) * SERIES] != (double)((RECORDS - 1) * COLS + c))
            return 2;
    }
    CHECK(H5Sclose(mem));
    CHECK(H5Dclose(d));
    CHECK(H5Pclose(dcpl));
    CHECK(H5Sclose(space));
    CHECK(fixture_close(f));
    CHECK(H5Pclose(fapl));
    free(series);
    free(buf);
    fixture_finish();
    return 0;
}
