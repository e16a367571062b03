/* One step of a lineage workflow on file argv[2] (issue 34): what h5prov must record of
 * the file per process (device, inode, size and mtime at open and at last close, and the
 * open intent).
 *   create  H5Fcreate(H5F_ACC_TRUNC), writes dataset /d (a create, or a truncate when the
 *           file exists)
 *   read    H5Fopen read-only, reads /d
 *   rw      H5Fopen read-write, rewrites /d
 *   twice   opens the file read-only, then again read-write while the first is open,
 *           reads through one and writes through the other: one file, intent rw */
#include "hdf5.h"
#include <stdio.h>
#include <string.h>

static int rw_data(hid_t f, int write)
{
    int   buf[16];
    hid_t d = H5Dopen2(f, "d", H5P_DEFAULT);
    if (d < 0)
        return -1;
    for (int i = 0; i < 16; i++)
        buf[i] = i * 3;
    herr_t r = write ? H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf)
                     : H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf);
    return (H5Dclose(d) < 0 || r < 0) ? -1 : 0;
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 1;
    const char *mode = argv[1], *path = argv[2];
    if (strcmp(mode, "create") == 0) {
        hsize_t dims[1] = {16};
        hid_t   f       = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
        hid_t   s       = H5Screate_simple(1, dims, NULL);
        hid_t   d = H5Dcreate2(f, "d", H5T_NATIVE_INT, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        if (f < 0 || s < 0 || d < 0 || H5Dclose(d) < 0 || H5Sclose(s) < 0)
            return 2;
        if (rw_data(f, 1) < 0)
            return 3;
        return H5Fclose(f) < 0 ? 4 : 0;
    }
    if (strcmp(mode, "read") == 0 || strcmp(mode, "rw") == 0) {
        int   w = strcmp(mode, "rw") == 0;
        hid_t f = H5Fopen(path, w ? H5F_ACC_RDWR : H5F_ACC_RDONLY, H5P_DEFAULT);
        if (f < 0 || rw_data(f, w) < 0)
            return 5;
        return H5Fclose(f) < 0 ? 6 : 0;
    }
    if (strcmp(mode, "twice") == 0) {
        hid_t a = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
        if (a < 0 || rw_data(a, 0) < 0 || H5Fclose(a) < 0)
            return 7;
        hid_t b = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
        if (b < 0 || rw_data(b, 1) < 0)
            return 8;
        return H5Fclose(b) < 0 ? 9 : 0;
    }
    return 1;
}
