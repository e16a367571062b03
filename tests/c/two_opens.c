/* Two concurrent opens of one dataset (one through a hard link), a write through each,
 * then both closed: h5prov must keep ONE state node (opens=2, writes=2). The dataset is
 * created by its own process step first. Object times are not stored so the file is
 * reproducible byte for byte. */
#include "hdf5.h"
#include <stdio.h>

int main(int argc, char **argv)
{
    const char *path    = argc > 1 ? argv[1] : "two_opens.h5";
    hsize_t     dims[1] = {8};
    double      buf[8]  = {0, 1, 2, 3, 4, 5, 6, 7};
    hid_t       fcpl    = H5P_DEFAULT;
    hid_t       f       = H5Fcreate(path, H5F_ACC_TRUNC, fcpl, H5P_DEFAULT);
    hid_t       dcpl    = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_obj_track_times(dcpl, 0);
    hid_t s = H5Screate_simple(1, dims, NULL);
    hid_t d = H5Dcreate2(f, "data", H5T_NATIVE_DOUBLE, s, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    if (f < 0 || d < 0 || H5Dclose(d) < 0)
        return 2;
    if (H5Lcreate_hard(f, "data", f, "alias", H5P_DEFAULT, H5P_DEFAULT) < 0)
        return 3;
    hid_t a = H5Dopen2(f, "data", H5P_DEFAULT);
    hid_t b = H5Dopen2(f, "alias", H5P_DEFAULT);
    if (a < 0 || b < 0)
        return 4;
    if (H5Dwrite(a, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0)
        return 5;
    if (H5Dwrite(b, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0)
        return 6;
    H5Dclose(a);
    H5Dclose(b);
    H5Sclose(s);
    H5Pclose(dcpl);
    return H5Fclose(f) < 0 ? 7 : 0;
}
