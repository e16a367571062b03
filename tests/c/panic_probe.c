/* Writes one dataset twice. With H5PROV_TEST_PANIC=dataset.write the connector panics inside
 * its callback: H5Dwrite must fail with an HDF5 error (not abort the process), and the
 * program must be able to go on: close everything and exit 0. Prints "write=<status>". */
#include "hdf5.h"
#include <stdio.h>

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "panic_probe.h5";
    hsize_t     dims[1] = {16};
    int         data[16];
    for (int i = 0; i < 16; i++)
        data[i] = i;
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (f < 0)
        return 2;
    hid_t s = H5Screate_simple(1, dims, NULL);
    hid_t d = H5Dcreate2(f, "d", H5T_NATIVE_INT, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (d < 0)
        return 3;
    herr_t w = H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, data);
    printf("write=%d\n", (int)w);
    if (H5Dclose(d) < 0 || H5Sclose(s) < 0 || H5Fclose(f) < 0)
        return 4;
    printf("closed\n");
    return 0;
}
