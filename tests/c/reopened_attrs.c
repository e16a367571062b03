/* A dataset's attributes read over and over, as PyTables and netCDF read them: each opened
 * by name, read and closed, in turn, three times (with `H5Aopen_by_name(obj, ".", name)`,
 * as PyTables does, and with `H5Aopen`), and one of them rewritten between rounds (deleted,
 * then created again, as PyTables sets an attribute). h5prov must keep one node per
 * attribute for the file's session: one summary row each, with every open counted. */
#include "hdf5.h"
#include <stdio.h>

#define NATTRS 20
#define ROUNDS 3

int main(int argc, char **argv)
{
    const char *path    = argc > 1 ? argv[1] : "reopened_attrs.h5";
    hsize_t     dims[1] = {1};
    int         v       = 7, r = 0;
    hid_t       f       = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hid_t       s       = H5Screate_simple(1, dims, NULL);
    hid_t       d       = H5Dcreate2(f, "d", H5T_NATIVE_INT, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (f < 0 || s < 0 || d < 0)
        return 2;
    char name[16];
    for (int a = 0; a < NATTRS; a++) {
        snprintf(name, sizeof name, "attr%02d", a);
        hid_t at = H5Acreate2(d, name, H5T_NATIVE_INT, s, H5P_DEFAULT, H5P_DEFAULT);
        if (at < 0 || H5Awrite(at, H5T_NATIVE_INT, &v) < 0 || H5Aclose(at) < 0)
            return 3;
    }
    for (int round = 0; round < ROUNDS; round++) {
        for (int a = 0; a < NATTRS; a++) {
            snprintf(name, sizeof name, "attr%02d", a);
            hid_t at = round % 2 ? H5Aopen(d, name, H5P_DEFAULT)
                                 : H5Aopen_by_name(d, ".", name, H5P_DEFAULT, H5P_DEFAULT);
            if (at < 0 || H5Aread(at, H5T_NATIVE_INT, &r) < 0 || H5Aclose(at) < 0 || r != v)
                return 4;
        }
        /* The last attribute rewritten: a new attribute under the same name. */
        snprintf(name, sizeof name, "attr%02d", NATTRS - 1);
        if (H5Adelete(d, name) < 0)
            return 5;
        hid_t at = H5Acreate2(d, name, H5T_NATIVE_INT, s, H5P_DEFAULT, H5P_DEFAULT);
        if (at < 0 || H5Awrite(at, H5T_NATIVE_INT, &v) < 0 || H5Aclose(at) < 0)
            return 6;
    }
    H5Sclose(s);
    if (H5Dclose(d) < 0 || H5Fclose(f) < 0)
        return 7;
    printf("done\n");
    return 0;
}
