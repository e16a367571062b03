/* compound_reorder: a table of 1 Mi records stored as a packed compound {t: double,
 * id: int, v: float} (16 bytes, as PyTables and h5py write a numpy record array with
 * those fields in that order) is written and read through a C struct that declares
 * the same fields in another order {id, v, t} (16 bytes, different offsets): the types
 * differ, so HDF5's compound conversion path moves every field of every record, member by
 * member, through its type-conversion buffer, in 4 writes and 4 reads of 4 MiB. With
 * --fixed the struct declares the fields in the file's order and the file type is the
 * struct's own (H5Tcreate with HOFFSET): no conversion.
 *
 * Usage: compound_reorder [--fixed]. Writes compound_reorder.h5 in the current directory;
 * exits non-zero on any HDF5 error. */
#include "fixture.h"
#include <stddef.h>

enum { N = 1024 * 1024, PARTS = 4 };

struct rec_file {
    double t;
    int    id;
    float  v;
};
struct rec_other {
    int    id;
    float  v;
    double t;
};

int main(int argc, char **argv)
{
    fixture_init(&argc, &argv);
    int     fixed   = fixture_fixed(argc, argv);
    hid_t   fapl    = fixture_fapl();
    hsize_t dims[1] = {N}, part[1] = {N / PARTS};
    hid_t   ftype, mtype;
    CHECK(ftype = H5Tcreate(H5T_COMPOUND, sizeof(struct rec_file)));
    CHECK(H5Tinsert(ftype, "t", HOFFSET(struct rec_file, t), H5T_NATIVE_DOUBLE));
    CHECK(H5Tinsert(ftype, "id", HOFFSET(struct rec_file, id), H5T_NATIVE_INT));
    CHECK(H5Tinsert(ftype, "v", HOFFSET(struct rec_file, v), H5T_NATIVE_FLOAT));
    size_t size;
    if (fixed) {
        CHECK(mtype = H5Tcopy(ftype));
        size = sizeof(struct rec_file);
    }
    else {
        CHECK(mtype = H5Tcreate(H5T_COMPOUND, sizeof(struct rec_other)));
        CHECK(H5Tinsert(mtype, "id", HOFFSET(struct rec_other, id), H5T_NATIVE_INT));
        CHECK(H5Tinsert(mtype, "v", HOFFSET(struct rec_other, v), H5T_NATIVE_FLOAT));
        CHECK(H5Tinsert(mtype, "t", HOFFSET(struct rec_other, t), H5T_NATIVE_DOUBLE));
        size = sizeof(struct rec_other);
    }
    unsigned char *buf = malloc(size * (N / PARTS));
    if (!buf)
        return 1;
    hid_t f, space, mem, d;
    CHECK(f = H5Fcreate("compound_reorder.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl));
    CHECK(space = H5Screate_simple(1, dims, NULL));
    CHECK(mem = H5Screate_simple(1, part, NULL));
    CHECK(d = H5Dcreate2(f, "table", ftype, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    for (int p = 0; p < 2 * PARTS; p++) {
        hsize_t start[1] = {(hsize_t)(p % PARTS) * (N / PARTS)};
        CHECK(H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, part, NULL));
        if (p < PARTS) {
            for (size_t i = 0; i < N / PARTS; i++) {
                int    id = (int)(start[0] + i);
                double t  = id * 0.5;
                float  v  = (float)(id % 100);
                if (fixed)
                    ((struct rec_file *)buf)[i] = (struct rec_file){t, id, v};
                else
                    ((struct rec_other *)buf)[i] = (struct rec_other){id, v, t};
            }
            CHECK(H5Dwrite(d, mtype, mem, space, H5P_DEFAULT, buf));
        }
        else {
            CHECK(H5Dread(d, mtype, mem, space, H5P_DEFAULT, buf));
            int id = fixed ? ((struct rec_file *)buf)[7].id : ((struct rec_other *)buf)[7].id;
            if (id != (int)start[0] + 7)
                return 2;
        }
    }
    free(buf);
    CHECK(H5Dclose(d));
    CHECK(H5Sclose(mem));
    CHECK(H5Sclose(space));
    CHECK(H5Tclose(mtype));
    CHECK(H5Tclose(ftype));
    CHECK(fixture_close(f));
    CHECK(H5Pclose(fapl));
    fixture_finish();
    return 0;
}
