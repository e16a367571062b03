/* H5Dwrite_multi and H5Dread_multi on three datasets of different types and selections,
 * then verifies the data read back. Object times are off so the file is reproducible.
 * Exit 0 on success. */
#include "hdf5.h"
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "write_multi.h5";
    hsize_t     n[3] = {100, 50, 10};
    int         a[100], ra[100];
    double      b[50], rb[50];
    short       c[10], rc[10];
    for (int i = 0; i < 100; i++)
        a[i] = i;
    for (int i = 0; i < 50; i++)
        b[i] = i * 0.5;
    for (int i = 0; i < 10; i++)
        c[i] = (short)(100 - i);
    hid_t f    = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_obj_track_times(dcpl, 0);
    hid_t types[3] = {H5T_NATIVE_INT, H5T_NATIVE_DOUBLE, H5T_NATIVE_SHORT};
    hid_t dsets[3], mspace[3], fspace[3];
    const char *names[3] = {"ints", "doubles", "shorts"};
    for (int i = 0; i < 3; i++) {
        hid_t s  = H5Screate_simple(1, &n[i], NULL);
        dsets[i] = H5Dcreate2(f, names[i], types[i], s, H5P_DEFAULT, dcpl, H5P_DEFAULT);
        if (dsets[i] < 0)
            return 2;
        mspace[i] = H5S_ALL;
        fspace[i] = H5S_ALL;
        H5Sclose(s);
    }
    /* The second dataset: only its first 20 elements, through a hyperslab. */
    hsize_t start = 0, count = 20;
    fspace[1]     = H5Screate_simple(1, &n[1], NULL);
    H5Sselect_hyperslab(fspace[1], H5S_SELECT_SET, &start, NULL, &count, NULL);
    mspace[1] = H5Screate_simple(1, &count, NULL);
    const void *wbuf[3] = {a, b, c};
    if (H5Dwrite_multi(3, dsets, types, mspace, fspace, H5P_DEFAULT, wbuf) < 0)
        return 3;
    void *rbuf[3] = {ra, rb, rc};
    memset(rb, 0, sizeof(rb));
    if (H5Dread_multi(3, dsets, types, mspace, fspace, H5P_DEFAULT, rbuf) < 0)
        return 4;
    if (memcmp(a, ra, sizeof(a)) || memcmp(b, rb, 20 * sizeof(double)) || memcmp(c, rc, sizeof(c)))
        return 5;
    H5Sclose(fspace[1]);
    H5Sclose(mspace[1]);
    for (int i = 0; i < 3; i++)
        H5Dclose(dsets[i]);
    H5Pclose(dcpl);
    if (H5Fclose(f) < 0)
        return 6;
    printf("ok\n");
    return 0;
}
