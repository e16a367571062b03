/* compound_field_subset: a table of 256 Ki records of 8 doubles (64 bytes, 16 MiB) stored
 * as one compound dataset, from which an analysis reads 4 fields ("x", "y", "z", "mass")
 * one at a time, each with a memory type holding that member only: HDF5 reads every whole
 * record and converts it to pick 8 of its 64 bytes (64 MiB read to deliver 8 MiB). With
 * --fixed the table is stored column-wise, one dataset per field (the same 16 MiB
 * written), and the analysis reads the 4 fields' datasets (8 MiB).
 *
 * Usage: compound_field [--fixed]. Writes compound_field.h5 in the current directory;
 * exits non-zero on any HDF5 error. */
#include "fixture.h"

enum { N = 256 * 1024, NF = 8 };

static const char *FIELDS[NF] = {"x", "y", "z", "vx", "vy", "vz", "mass", "charge"};

/* The fields the analysis reads. */
enum { NREAD = 4 };
static const int READ[NREAD] = {0, 1, 2, 6};

int main(int argc, char **argv)
{
    fixture_init(&argc, &argv);
    int     fixed   = fixture_fixed(argc, argv);
    hid_t   fapl    = fixture_fapl();
    hsize_t dims[1] = {N};
    double *rec     = malloc(sizeof(double) * N * NF);
    double *col     = malloc(sizeof(double) * N);
    if (!rec || !col)
        return 1;
    hid_t f, space;
    CHECK(f = H5Fcreate("compound_field.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl));
    CHECK(space = H5Screate_simple(1, dims, NULL));
    if (fixed) {
        for (int k = 0; k < NF; k++) {
            hid_t d;
            for (size_t i = 0; i < N; i++)
                col[i] = (double)(i * NF + k);
            CHECK(d = H5Dcreate2(f, FIELDS[k], H5T_NATIVE_DOUBLE, space, H5P_DEFAULT,
                                 H5P_DEFAULT, H5P_DEFAULT));
            CHECK(H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, col));
            CHECK(H5Dclose(d));
        }
        for (int r = 0; r < NREAD; r++) {
            hid_t d;
            CHECK(d = H5Dopen2(f, FIELDS[READ[r]], H5P_DEFAULT));
            CHECK(H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, col));
            CHECK(H5Dclose(d));
            if (col[N - 1] != (double)((N - 1) * NF + READ[r]))
                return 2;
        }
    }
    else {
        hid_t rtype, xtype, d;
        CHECK(rtype = H5Tcreate(H5T_COMPOUND, sizeof(double) * NF));
        for (int k = 0; k < NF; k++)
            CHECK(H5Tinsert(rtype, FIELDS[k], sizeof(double) * k, H5T_NATIVE_DOUBLE));
        for (size_t i = 0; i < (size_t)N * NF; i++)
            rec[i] = (double)i;
        CHECK(d = H5Dcreate2(f, "particles", rtype, space, H5P_DEFAULT, H5P_DEFAULT,
                             H5P_DEFAULT));
        CHECK(H5Dwrite(d, rtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, rec));
        CHECK(H5Dclose(d));
        CHECK(d = H5Dopen2(f, "particles", H5P_DEFAULT));
        for (int r = 0; r < NREAD; r++) {
            CHECK(xtype = H5Tcreate(H5T_COMPOUND, sizeof(double)));
            CHECK(H5Tinsert(xtype, FIELDS[READ[r]], 0, H5T_NATIVE_DOUBLE));
            CHECK(H5Dread(d, xtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, col));
            CHECK(H5Tclose(xtype));
            if (col[N - 1] != (double)((N - 1) * NF + READ[r]))
                return 2;
        }
        CHECK(H5Dclose(d));
        CHECK(H5Tclose(rtype));
    }
    CHECK(H5Sclose(space));
    CHECK(fixture_close(f));
    CHECK(H5Pclose(fapl));
    free(col);
    free(rec);
    fixture_finish();
    return 0;
}
