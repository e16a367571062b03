/* Parallel HDF5 with attributes, groups, links and datasets, for comparing the stderr of a
 * traced run with a native one: h5prov must print nothing into the application's stderr.
 *
 * Usage: mpirun -np N mpi_attrs FILE NATTR
 * Every rank: opens FILE with the MPI-IO driver and collective metadata, creates a group
 * per rank and NATTR attributes on it (collectively: metadata operations are collective),
 * writes its slab of a shared dataset collectively, creates soft links, then reopens, reads
 * every attribute (through the links) and its slab back. Exit 0 on success. */
#include "hdf5.h"
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 3) {
        if (rank == 0)
            fprintf(stderr, "usage: mpi_attrs FILE NATTR\n");
        MPI_Finalize();
        return 2;
    }
    int   nattr = atoi(argv[2]);
    hid_t fapl  = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL);
    H5Pset_all_coll_metadata_ops(fapl, 1);
    H5Pset_coll_metadata_write(fapl, 1);
    hid_t   f       = H5Fcreate(argv[1], H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    hsize_t dims[1] = {(hsize_t)size * 100};
    hid_t   fspace  = H5Screate_simple(1, dims, NULL);
    hid_t   d = H5Dcreate2(f, "data", H5T_NATIVE_INT, fspace, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    hid_t   scalar = H5Screate(H5S_SCALAR);
    char    name[64];
    for (int r = 0; r < size; r++) { /* metadata is collective: every rank creates all */
        snprintf(name, sizeof name, "rank%d", r);
        hid_t g = H5Gcreate2(f, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        for (int i = 0; i < nattr; i++) {
            snprintf(name, sizeof name, "a%d", i);
            hid_t a = H5Acreate2(g, name, H5T_NATIVE_INT, scalar, H5P_DEFAULT, H5P_DEFAULT);
            int   v = r * 1000 + i;
            H5Awrite(a, H5T_NATIVE_INT, &v);
            H5Aclose(a);
        }
        H5Gclose(g);
        snprintf(name, sizeof name, "link%d", r);
        char target[64];
        snprintf(target, sizeof target, "/rank%d", r);
        H5Lcreate_soft(target, f, name, H5P_DEFAULT, H5P_DEFAULT);
    }
    hsize_t start[1] = {(hsize_t)rank * 100}, count[1] = {100};
    H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, count, NULL);
    hid_t mspace = H5Screate_simple(1, count, NULL);
    int   buf[100], back[100];
    for (int i = 0; i < 100; i++)
        buf[i] = rank * 100 + i;
    hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
    H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE);
    int bad = H5Dwrite(d, H5T_NATIVE_INT, mspace, fspace, dxpl, buf) < 0;
    H5Dclose(d);
    H5Fclose(f);

    f = H5Fopen(argv[1], H5F_ACC_RDONLY, fapl);
    for (int r = 0; r < size; r++) { /* collective metadata reads: every rank reads all */
        snprintf(name, sizeof name, "link%d", r);
        hid_t g = H5Gopen2(f, name, H5P_DEFAULT);
        for (int i = 0; i < nattr; i++) {
            snprintf(name, sizeof name, "a%d", i);
            hid_t a = H5Aopen(g, name, H5P_DEFAULT);
            int   v = -1;
            bad |= H5Aread(a, H5T_NATIVE_INT, &v) < 0 || v != r * 1000 + i;
            H5Aclose(a);
        }
        H5Gclose(g);
    }
    d = H5Dopen2(f, "data", H5P_DEFAULT);
    bad |= H5Dread(d, H5T_NATIVE_INT, mspace, fspace, dxpl, back) < 0;
    for (int i = 0; i < 100; i++)
        bad |= back[i] != buf[i];
    H5Dclose(d);
    H5Fclose(f);
    H5Pclose(dxpl);
    H5Pclose(fapl);
    H5Sclose(mspace);
    H5Sclose(fspace);
    H5Sclose(scalar);
    int any = 0;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    MPI_Finalize();
    return any;
}
