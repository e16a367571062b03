/* datatype_conversion: doubles in memory written to (and read back from) a dataset stored
 * as 32-bit floats, so HDF5 converts every element of every transfer (in pieces of its
 * 1 MiB type-conversion buffer). 4 Mi elements in 4 writes and 4 reads of 1 Mi each.
 * With --fixed the program keeps its data as floats, the file's datatype: no conversion.
 *
 * MPI build (-DFIXTURE_MPI): every rank converts its own 4 Mi elements of one MPI-IO file
 * (the dataset is 4 Mi x ranks), as above, with independent transfers.
 *
 * Usage: conversion [--fixed]. Writes conversion.h5 in the current directory; exits
 * non-zero on any HDF5 error. */
#include "fixture.h"

enum { N = 4 << 20, PART = 1 << 20 };

int main(int argc, char **argv)
{
    struct fixture_ranks me = fixture_init(&argc, &argv);
    hid_t   fapl    = fixture_fapl();
    hsize_t first   = (hsize_t)me.rank * N; /* this process's part */
    int     fixed   = fixture_fixed(argc, argv);
    hid_t   mtype   = fixed ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE;
    size_t  esize   = fixed ? sizeof(float) : sizeof(double);
    char   *buf     = malloc(esize * PART);
    hsize_t dims[1] = {(hsize_t)me.size * N}, count[1] = {PART};
    hid_t   f, space, d, mem;
    CHECK(f = H5Fcreate("conversion.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl));
    CHECK(space = H5Screate_simple(1, dims, NULL));
    CHECK(d = H5Dcreate2(f, "values", H5T_IEEE_F32LE, space, H5P_DEFAULT, H5P_DEFAULT,
                         H5P_DEFAULT));
    CHECK(mem = H5Screate_simple(1, count, NULL));
    for (int pass = 0; pass < 2; pass++)
        for (hsize_t s = first; s < first + N; s += PART) {
            hsize_t start[1] = {s};
            CHECK(H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL));
            if (pass == 0) {
                for (size_t i = 0; i < PART; i++) {
                    if (fixed)
                        ((float *)buf)[i] = (float)((s + i) % 4096);
                    else
                        ((double *)buf)[i] = (double)((s + i) % 4096);
                }
                CHECK(H5Dwrite(d, mtype, mem, space, H5P_DEFAULT, buf));
            }
            else {
                CHECK(H5Dread(d, mtype, mem, space, H5P_DEFAULT, buf));
                double last = fixed ? ((float *)buf)[PART - 1] : ((double *)buf)[PART - 1];
                if (last != (double)((s + PART - 1) % 4096))
                    return 2;
            }
        }
    CHECK(H5Sclose(mem));
    CHECK(H5Dclose(d));
    CHECK(H5Sclose(space));
    CHECK(fixture_close(f));
    CHECK(H5Pclose(fapl));
    free(buf);
    fixture_finish();
    return 0;
}
