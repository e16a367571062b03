/* Prints the name of the VOL connector of a file created with default properties, so a
 * test can prove which connector HDF5 really loaded (it falls back to native silently). */
#include "hdf5.h"
#include <stdio.h>

int main(int argc, char **argv)
{
    const char *path     = argc > 1 ? argv[1] : "vol_name.h5";
    char        name[64] = "";
    hid_t       f        = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (f < 0)
        return 3;
    if (H5VLget_connector_name(f, name, sizeof(name)) < 0)
        return 4;
    printf("file=%s\n", name);
    return H5Fclose(f) < 0 ? 5 : 0;
}
