/* A few thousand one-element writes, as a simulation writing small records does.
 *
 * Usage: small_writes FILE N [fork|system]
 * Creates FILE with a dataset "d" of N ints and writes it one element per H5Dwrite, then
 * reads it back and checks it. With "fork", it forks after the writes while FILE is still
 * open (so the parent has records buffered): the child creates FILE.child, makes its own N
 * writes there and exits; the parent waits for it, then closes FILE. Prints "parent PID" and
 * "child PID". With "system", it runs system("true") (a fork that only execs) while FILE is
 * open. Exit 0 on success. */
#include "hdf5.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int write_file(const char *path, int n, hid_t *file_out)
{
    hsize_t dims[1] = {(hsize_t)n};
    hid_t   f       = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (f < 0)
        return -1;
    hid_t space = H5Screate_simple(1, dims, NULL);
    hid_t d     = H5Dcreate2(f, "d", H5T_NATIVE_INT, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    hsize_t one[1] = {1};
    hid_t   mem    = H5Screate_simple(1, one, NULL);
    for (int i = 0; i < n; i++) {
        hsize_t start[1] = {(hsize_t)i};
        int     v        = i * 3;
        H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, one, NULL);
        if (H5Dwrite(d, H5T_NATIVE_INT, mem, space, H5P_DEFAULT, &v) < 0)
            return -1;
    }
    int *back = malloc(sizeof(int) * (size_t)n);
    if (H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, back) < 0)
        return -1;
    for (int i = 0; i < n; i++)
        if (back[i] != i * 3)
            return -1;
    free(back);
    H5Sclose(mem);
    H5Sclose(space);
    H5Dclose(d);
    *file_out = f;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: small_writes FILE N [fork]\n");
        return 2;
    }
    int   n       = atoi(argv[2]);
    int   do_fork = argc > 3 && strcmp(argv[3], "fork") == 0;
    int   do_sys  = argc > 3 && strcmp(argv[3], "system") == 0;
    hid_t f;
    if (write_file(argv[1], n, &f) < 0)
        return 1;
    printf("parent %d\n", (int)getpid());
    fflush(stdout);
    if (do_sys && system("true") != 0)
        return 1;
    if (do_fork) {
        pid_t pid = fork();
        if (pid < 0)
            return 1;
        if (pid == 0) {
            char child_path[4096];
            snprintf(child_path, sizeof child_path, "%s.child", argv[1]);
            hid_t cf;
            if (write_file(child_path, n, &cf) < 0)
                _exit(1);
            H5Fclose(cf);
            printf("child %d\n", (int)getpid());
            fflush(stdout);
            exit(0); /* HDF5's atexit handler runs in the child too */
        }
        int st = 0;
        if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
            return 1;
    }
    return H5Fclose(f) < 0;
}
