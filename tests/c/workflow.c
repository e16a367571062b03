/* The steps of the provenance workflow of tests/tests/prov_workflow.rs (issue 34), each a
 * process of its own:
 *   sim RANK   one of the two processes of a simulation on sim.h5 (run one after the
 *              other, rank 0 first): rank 0 creates sim.h5 (H5F_ACC_TRUNC, so a re-run
 *              truncates it) with datasets /fields/u and /fields/v of N doubles and writes
 *              the first half of each; rank 1 opens it read-write and writes the second
 *              half of each.
 *   post       reads ana.h5:/stats (what the analysis wrote) and prints its values. */
#include "hdf5.h"
#include <stdio.h>
#include <string.h>

#define N 64

/* Writes the half `rank` of dataset `name` of `f`: value i * scale at element i. */
static int write_half(hid_t f, const char *name, int rank, double scale)
{
    double  buf[N / 2];
    hsize_t start[1] = {(hsize_t)rank * N / 2}, count[1] = {N / 2};
    for (int i = 0; i < N / 2; i++)
        buf[i] = (double)(start[0] + (hsize_t)i) * scale;
    hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
    if (d < 0)
        return -1;
    hid_t fs = H5Dget_space(d);
    hid_t ms = H5Screate_simple(1, count, NULL);
    herr_t r = (fs < 0 || ms < 0) ? -1
                                  : H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL);
    if (r >= 0)
        r = H5Dwrite(d, H5T_NATIVE_DOUBLE, ms, fs, H5P_DEFAULT, buf);
    if (ms >= 0)
        H5Sclose(ms);
    if (fs >= 0)
        H5Sclose(fs);
    return (H5Dclose(d) < 0 || r < 0) ? -1 : 0;
}

static int sim(int rank)
{
    hid_t f;
    if (rank == 0) {
        hsize_t dims[1] = {N};
        f               = H5Fcreate("sim.h5", H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
        hid_t g         = f < 0 ? -1 : H5Gcreate2(f, "fields", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        hid_t s         = H5Screate_simple(1, dims, NULL);
        if (g < 0 || s < 0)
            return 2;
        for (int i = 0; i < 2; i++) {
            hid_t d = H5Dcreate2(g, i ? "v" : "u", H5T_NATIVE_DOUBLE, s, H5P_DEFAULT, H5P_DEFAULT,
                                 H5P_DEFAULT);
            if (d < 0 || H5Dclose(d) < 0)
                return 3;
        }
        if (H5Sclose(s) < 0 || H5Gclose(g) < 0)
            return 4;
    }
    else
        f = H5Fopen("sim.h5", H5F_ACC_RDWR, H5P_DEFAULT);
    if (f < 0)
        return 5;
    if (write_half(f, "/fields/u", rank, 1.0) < 0 || write_half(f, "/fields/v", rank, -2.0) < 0)
        return 6;
    return H5Fclose(f) < 0 ? 7 : 0;
}

static int post(void)
{
    double  buf[16];
    hsize_t dims[1];
    hid_t   f = H5Fopen("ana.h5", H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t   d = f < 0 ? -1 : H5Dopen2(f, "stats", H5P_DEFAULT);
    hid_t   s = d < 0 ? -1 : H5Dget_space(d);
    if (s < 0 || H5Sget_simple_extent_dims(s, dims, NULL) != 1 || dims[0] > 16)
        return 8;
    if (H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0)
        return 9;
    for (hsize_t i = 0; i < dims[0]; i++)
        printf("%s%g", i ? " " : "", buf[i]);
    printf("\n");
    return (H5Sclose(s) < 0 || H5Dclose(d) < 0 || H5Fclose(f) < 0) ? 10 : 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "sim") == 0)
        return sim(argv[2][0] == '1');
    if (argc == 2 && strcmp(argv[1], "post") == 0)
        return post();
    fprintf(stderr, "usage: workflow sim RANK | workflow post\n");
    return 1;
}
