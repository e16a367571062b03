/* file_open_close_churn: a logger that opens the file, opens the dataset, writes one
 * record and closes both again for each of 500 records (16 KiB rows of a chunked
 * dataset): every record pays the superblock and root-group reads of H5Fopen, the object
 * header read of H5Dopen2 and the metadata-cache flush of H5Fclose. With --fixed the file
 * and the dataset are opened once and closed after the last record.
 *
 * Usage: file_reopen [--fixed]. Writes file_reopen.h5 in the current directory; exits
 * non-zero on any HDF5 error. */
#include "fixture.h"

enum { RECORDS = 500, COLS = 2048 };

int main(int argc, char **argv)
{
    fixture_init(&argc, &argv);
    int     fixed   = fixture_fixed(argc, argv);
    hid_t   fapl    = fixture_fapl();
    hsize_t dims[2] = {RECORDS, COLS}, chunk[2] = {1, COLS}, count[2] = {1, COLS};
    double *row     = malloc(sizeof(double) * COLS);
    if (!row)
        return 1;
    hid_t f, space, dcpl, d, mem;
    CHECK(f = H5Fcreate("file_reopen.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl));
    CHECK(space = H5Screate_simple(2, dims, NULL));
    CHECK(dcpl = H5Pcreate(H5P_DATASET_CREATE));
    CHECK(H5Pset_chunk(dcpl, 2, chunk));
    CHECK(d = H5Dcreate2(f, "records", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, dcpl,
                         H5P_DEFAULT));
    CHECK(H5Pclose(dcpl));
    CHECK(H5Dclose(d));
    CHECK(H5Fclose(f));
    CHECK(mem = H5Screate_simple(2, count, NULL));
    if (fixed) {
        CHECK(f = H5Fopen("file_reopen.h5", H5F_ACC_RDWR, fapl));
        CHECK(d = H5Dopen2(f, "records", H5P_DEFAULT));
    }
    for (hsize_t r = 0; r < RECORDS; r++) {
        if (!fixed) {
            CHECK(f = H5Fopen("file_reopen.h5", H5F_ACC_RDWR, fapl));
            CHECK(d = H5Dopen2(f, "records", H5P_DEFAULT));
        }
        hsize_t start[2] = {r, 0};
        for (int i = 0; i < COLS; i++)
            row[i] = r + i * 1e-4;
        CHECK(H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL));
        CHECK(H5Dwrite(d, H5T_NATIVE_DOUBLE, mem, space, H5P_DEFAULT, row));
        if (!fixed) {
            CHECK(H5Dclose(d));
            CHECK(H5Fclose(f));
        }
    }
    if (fixed) {
        CHECK(H5Dclose(d));
        CHECK(H5Fclose(f));
    }
    CHECK(H5Sclose(mem));
    CHECK(H5Sclose(space));
    CHECK(H5Pclose(fapl));
    free(row);
    fixture_finish();
    return 0;
}
