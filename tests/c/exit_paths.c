/* Ends without closing HDF5, for the tests of records that must survive the process
 * (tests/tests/exit_paths.rs).
 *
 * usage: exit_paths FILE N MODE
 *   creates FILE, then N datasets (create, write, close each), then an attribute "done"
 *   on the file: its H5Aclose is the last call of the work, the marker the tests cut at
 *   (not H5Fflush: h5prov writes its buffers at a flush). Then MODE:
 *   close  closes the file and returns (HDF5's atexit runs: the reference run);
 *   exit   calls _exit(0) with the file open (no atexit, no HDF5 terminate);
 *   wait   prints "ready" and waits for a signal (the test sends SIGKILL).
 */
#include "hdf5.h"
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: exit_paths FILE N close|exit|wait\n");
        return 2;
    }
    const char *mode = argv[3];
    int n = atoi(argv[2]);
    hid_t f = H5Fcreate(argv[1], H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (f < 0)
        return 1;
    hsize_t dims[1] = {16};
    hid_t sp = H5Screate_simple(1, dims, NULL);
    int data[16];
    for (int i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof name, "d%d", i);
        for (int k = 0; k < 16; k++)
            data[k] = i + k;
        hid_t d = H5Dcreate2(f, name, H5T_NATIVE_INT, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        if (d < 0 || H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0)
            return 1;
        H5Dclose(d);
    }
    hid_t scalar = H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(f, "done", H5T_NATIVE_INT, scalar, H5P_DEFAULT, H5P_DEFAULT);
    int one = 1;
    if (a < 0 || H5Awrite(a, H5T_NATIVE_INT, &one) < 0 || H5Aclose(a) < 0)
        return 1;
    if (strcmp(mode, "exit") == 0)
        _exit(0);
    if (strcmp(mode, "wait") == 0) {
        printf("ready\n");
        fflush(stdout);
        for (;;)
            pause();
    }
    H5Sclose(sp);
    H5Sclose(scalar);
    return H5Fclose(f) < 0;
}
