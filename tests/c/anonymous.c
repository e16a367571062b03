/* Objects created without a name and linked afterwards, as h5py's f[name] = x does:
 * - a dataset made with H5Dcreate_anon, written, then linked with H5Olink as /grp/d;
 * - a group made with H5Gcreate_anon, then linked with H5Lcreate_hard(g, ".", f, "g2");
 * - a datatype committed with H5Tcommit_anon, then linked with H5Olink as /t;
 * - a second anonymous dataset written and closed without a link (HDF5 frees it).
 * Then /grp/d is written again through its handle and read through a new open by name. */
#include "hdf5.h"
#include <stdio.h>

int main(int argc, char **argv)
{
    const char *path    = argc > 1 ? argv[1] : "anonymous.h5";
    hsize_t     dims[1] = {8};
    int         buf[8]  = {0, 1, 2, 3, 4, 5, 6, 7};
    int         back[8] = {0};
    hid_t       f       = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hid_t       s       = H5Screate_simple(1, dims, NULL);
    hid_t       grp     = H5Gcreate2(f, "grp", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (f < 0 || s < 0 || grp < 0)
        return 2;

    hid_t d = H5Dcreate_anon(f, H5T_NATIVE_INT, s, H5P_DEFAULT, H5P_DEFAULT);
    if (d < 0 || H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0)
        return 3;
    if (H5Olink(d, grp, "d", H5P_DEFAULT, H5P_DEFAULT) < 0)
        return 4;
    if (H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0)
        return 5;

    hid_t g = H5Gcreate_anon(f, H5P_DEFAULT, H5P_DEFAULT);
    if (g < 0 || H5Lcreate_hard(g, ".", f, "g2", H5P_DEFAULT, H5P_DEFAULT) < 0)
        return 6;

    hid_t t = H5Tcopy(H5T_NATIVE_DOUBLE);
    if (t < 0 || H5Tcommit_anon(f, t, H5P_DEFAULT, H5P_DEFAULT) < 0)
        return 7;
    if (H5Olink(t, f, "t", H5P_DEFAULT, H5P_DEFAULT) < 0)
        return 8;

    hid_t lost = H5Dcreate_anon(f, H5T_NATIVE_INT, s, H5P_DEFAULT, H5P_DEFAULT);
    if (lost < 0 || H5Dwrite(lost, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0)
        return 9;
    if (H5Dclose(lost) < 0)
        return 10;

    hid_t again = H5Dopen2(f, "/grp/d", H5P_DEFAULT);
    if (again < 0 || H5Dread(again, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, back) < 0)
        return 11;
    for (int i = 0; i < 8; i++)
        if (back[i] != buf[i])
            return 12;
    H5Dclose(again);
    H5Dclose(d);
    H5Gclose(g);
    H5Tclose(t);
    H5Gclose(grp);
    H5Sclose(s);
    printf("done\n");
    return H5Fclose(f) < 0 ? 13 : 0;
}
