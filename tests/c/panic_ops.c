/* Creates an extendible dataset, writes it, extends it and closes everything, printing the
 * status of each step ("write=0 extend=0 dclose=0 fclose=0") and always exiting 0. With
 * H5PROV_TEST_PANIC=<op> the connector panics inside that callback: the matching step must
 * fail with an HDF5 error, and the program must go on to the end. */
#include "hdf5.h"
#include <stdio.h>

int main(int argc, char **argv)
{
    const char *path    = argc > 1 ? argv[1] : "panic_ops.h5";
    hsize_t     dims[1] = {16}, max[1] = {H5S_UNLIMITED}, chunk[1] = {8}, bigger[1] = {32};
    int         data[16];
    for (int i = 0; i < 16; i++)
        data[i] = i;
    hid_t f    = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hid_t s    = H5Screate_simple(1, dims, max);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, 1, chunk);
    hid_t d = H5Dcreate2(f, "d", H5T_NATIVE_INT, s, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    if (f < 0 || d < 0)
        return 2;
    int w = H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, data);
    int e = H5Dset_extent(d, bigger);
    int c = H5Dclose(d);
    H5Sclose(s);
    H5Pclose(dcpl);
    int fc = H5Fclose(f);
    printf("write=%d extend=%d dclose=%d fclose=%d\n", w, e, c, fc);
    printf("done\n");
    return 0;
}
