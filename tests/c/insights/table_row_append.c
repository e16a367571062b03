/* table_row_append: PyTables' `row.append()` without batching, or h5py's
 * `dset.resize(n + 1); dset[n] = rec` per record: a table (an extendible 1-D dataset of a
 * 32-byte compound record, 512-record chunks) grows by one record 4000 times, each an
 * H5Dset_extent and a one-record H5Dwrite. With --fixed the records are buffered and
 * appended 1000 at a time (PyTables' Table.append(rows), h5py resize in large steps): 4
 * extents and 4 writes.
 *
 * Usage: table_row_append [--fixed]. Writes table_row_append.h5 in the current directory;
 * exits non-zero on any HDF5 error. */
#include "fixture.h"

enum { RECORDS = 4000, BATCH = 1000 };

struct rec {
    long long id;
    double    t;
    float     x, y, z, w;
};

int main(int argc, char **argv)
{
    fixture_init(&argc, &argv);
    int         fixed  = fixture_fixed(argc, argv);
    hid_t       fapl   = fixture_fapl();
    hsize_t     dims[1] = {0}, maxd[1] = {H5S_UNLIMITED}, chunk[1] = {512};
    struct rec *buf    = malloc(sizeof(struct rec) * BATCH);
    if (!buf)
        return 1;
    hid_t f, space, dcpl, type, d;
    CHECK(type = H5Tcreate(H5T_COMPOUND, sizeof(struct rec)));
    CHECK(H5Tinsert(type, "id", HOFFSET(struct rec, id), H5T_NATIVE_LLONG));
    CHECK(H5Tinsert(type, "t", HOFFSET(struct rec, t), H5T_NATIVE_DOUBLE));
    CHECK(H5Tinsert(type, "x", HOFFSET(struct rec, x), H5T_NATIVE_FLOAT));
    CHECK(H5Tinsert(type, "y", HOFFSET(struct rec, y), H5T_NATIVE_FLOAT));
    CHECK(H5Tinsert(type, "z", HOFFSET(struct rec, z), H5T_NATIVE_FLOAT));
    CHECK(H5Tinsert(type, "w", HOFFSET(struct rec, w), H5T_NATIVE_FLOAT));
    CHECK(f = H5Fcreate("table_row_append.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl));
    CHECK(space = H5Screate_simple(1, dims, maxd));
    CHECK(dcpl = H5Pcreate(H5P_DATASET_CREATE));
    CHECK(H5Pset_chunk(dcpl, 1, chunk));
    CHECK(d = H5Dcreate2(f, "table", type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT));
    CHECK(H5Sclose(space));
    hsize_t n = 0, step = fixed ? BATCH : 1;
    while (n < RECORDS) {
        for (hsize_t i = 0; i < step; i++) {
            buf[i].id = (long long)(n + i);
            buf[i].t  = (double)(n + i) * 0.5;
            buf[i].x = buf[i].y = buf[i].z = buf[i].w = (float)(n + i);
        }
        hsize_t ext[1] = {n + step}, count[1] = {step};
        hid_t   mem;
        CHECK(H5Dset_extent(d, ext));
        CHECK(space = H5Dget_space(d));
        CHECK(mem = H5Screate_simple(1, count, NULL));
        CHECK(H5Sselect_hyperslab(space, H5S_SELECT_SET, &n, NULL, count, NULL));
        CHECK(H5Dwrite(d, type, mem, space, H5P_DEFAULT, buf));
        CHECK(H5Sclose(mem));
        CHECK(H5Sclose(space));
        n += step;
    }
    CHECK(H5Dclose(d));
    CHECK(H5Pclose(dcpl));
    CHECK(H5Tclose(type));
    CHECK(fixture_close(f));
    CHECK(H5Pclose(fapl));
    free(buf);
    fixture_finish();
    return 0;
}
