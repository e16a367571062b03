/* A small application for `h5prov run` (tests/tests/run_cmd.rs): creates FILE with the
 * dataset /run/temperature (100 doubles), writes it, reads it back and checks it, closes
 * everything, then ends as MODE says:
 *   a number  returns it as the exit status;
 *   term      raises SIGTERM (the shell reports 143).
 * usage: run_app FILE MODE */
#include "hdf5.h"
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: run_app FILE MODE\n");
        return 64;
    }
    hsize_t n = 100;
    double  t[100], back[100];
    for (int i = 0; i < 100; i++)
        t[i] = 20.0 + i * 0.25;
    hid_t f = H5Fcreate(argv[1], H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (f < 0)
        return 65;
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_obj_track_times(dcpl, 0);
    hid_t g = H5Gcreate2(f, "run", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    hid_t s = H5Screate_simple(1, &n, NULL);
    hid_t d = H5Dcreate2(g, "temperature", H5T_NATIVE_DOUBLE, s, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    if (g < 0 || d < 0 || H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, t) < 0)
        return 66;
    if (H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, back) < 0 ||
        memcmp(t, back, sizeof t) != 0)
        return 67;
    H5Dclose(d);
    H5Sclose(s);
    H5Gclose(g);
    H5Pclose(dcpl);
    if (H5Fclose(f) < 0)
        return 68;
    if (strcmp(argv[2], "term") == 0) {
        /* HDF5's own atexit handler does not run: the library is closed first. */
        H5close();
        raise(SIGTERM);
        return 69;
    }
    return atoi(argv[2]);
}
