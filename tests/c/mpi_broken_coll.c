/* Collective transfers that parallel HDF5 performs independently ("broken collective I/O"),
 * and ones it keeps collective, each followed by what HDF5 itself reports about it.
 *
 * Usage: mpirun -np N mpi_broken_coll FILE
 * Every rank opens FILE with the MPI-IO driver; every transfer asks for collective I/O
 * (H5Pset_dxpl_mpio(H5FD_MPIO_COLLECTIVE)):
 *   control    contiguous, each rank its slab: written twice and read once (collective);
 *   transform  contiguous, written three times with a data transform "x+1" on the DXPL
 *              and selection I/O off (HDF5 breaks collective: H5D_MPIO_DATA_TRANSFORMS),
 *              read once without either;
 *   transform_sel  the same with HDF5's default selection I/O, with which HDF5 1.14.5's
 *              MPI-IO driver applies the transform and stays collective;
 *   compact    compact layout, every rank writes the same whole dataset twice and reads it
 *              once (H5D_MPIO_NOT_CONTIGUOUS_OR_CHUNKED_DATASET);
 *   multi_a, multi_b  one H5Dwrite_multi of a contiguous and a compact dataset: HDF5 decides
 *              once for the call, so both are written independently;
 *   unwritten  chunked with a filter, so no storage is allocated until written; read once,
 *              with the DXPL whose last transfer was broken: HDF5 skips the I/O (fill values)
 *              and reports what the DXPL still holds.
 * After each transfer it prints one line per dataset:
 *   io RANK OP DATASET MODE CAUSE
 * OP is write or read, MODE H5Pget_mpio_actual_io_mode's value (no_collective,
 * chunk_independent, chunk_collective, chunk_mixed, contiguous_collective), CAUSE the global
 * cause of H5Pget_mpio_no_collective_cause (hex). Then it checks the data it reads back.
 * Exit 0 when every call succeeded and every value read is right. */
#include "hdf5.h"
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define N 100 /* elements per rank in the contiguous datasets */
#define C 16  /* elements of a compact dataset */

static int rank;

static const char *mode_name(H5D_mpio_actual_io_mode_t m)
{
    switch (m) {
        case H5D_MPIO_NO_COLLECTIVE:
            return "no_collective";
        case H5D_MPIO_CHUNK_INDEPENDENT:
            return "chunk_independent";
        case H5D_MPIO_CHUNK_COLLECTIVE:
            return "chunk_collective";
        case H5D_MPIO_CHUNK_MIXED:
            return "chunk_mixed";
        case H5D_MPIO_CONTIGUOUS_COLLECTIVE:
            return "contiguous_collective";
    }
    return "unknown";
}

/* What HDF5 reports on `dxpl` about the transfer that just returned. */
static int report(hid_t dxpl, const char *op, const char *dset)
{
    H5D_mpio_actual_io_mode_t mode  = H5D_MPIO_NO_COLLECTIVE;
    uint32_t                  local = 0, global = 0;
    int bad = H5Pget_mpio_actual_io_mode(dxpl, &mode) < 0;
    bad |= H5Pget_mpio_no_collective_cause(dxpl, &local, &global) < 0;
    printf("io %d %s %s %s 0x%x\n", rank, op, dset, mode_name(mode), (unsigned)global);
    fflush(stdout);
    return bad;
}

static hid_t create(hid_t f, const char *name, hsize_t n, hid_t dcpl)
{
    hid_t s = H5Screate_simple(1, &n, NULL);
    hid_t d = H5Dcreate2(f, name, H5T_NATIVE_INT, s, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    H5Sclose(s);
    return d;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 2) {
        if (rank == 0)
            fprintf(stderr, "usage: mpi_broken_coll FILE\n");
        MPI_Finalize();
        return 2;
    }
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL);
    hid_t f = H5Fcreate(argv[1], H5F_ACC_TRUNC, H5P_DEFAULT, fapl);

    hid_t compact_dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_layout(compact_dcpl, H5D_COMPACT);
    hid_t   filtered_dcpl = H5Pcreate(H5P_DATASET_CREATE);
    hsize_t chunk         = N;
    H5Pset_chunk(filtered_dcpl, 1, &chunk);
    H5Pset_deflate(filtered_dcpl, 1);

    hid_t control   = create(f, "control", (hsize_t)size * N, H5P_DEFAULT);
    hid_t transform = create(f, "transform", (hsize_t)size * N, H5P_DEFAULT);
    hid_t transform_sel = create(f, "transform_sel", (hsize_t)size * N, H5P_DEFAULT);
    hid_t compact   = create(f, "compact", C, compact_dcpl);
    hid_t multi_a   = create(f, "multi_a", (hsize_t)size * N, H5P_DEFAULT);
    hid_t multi_b   = create(f, "multi_b", C, compact_dcpl);
    hid_t unwritten = create(f, "unwritten", (hsize_t)size * N, filtered_dcpl);

    /* This rank's slab of the contiguous datasets. */
    hsize_t start = (hsize_t)rank * N, count = N, total = (hsize_t)size * N;
    hid_t   slab  = H5Screate_simple(1, &total, NULL);
    H5Sselect_hyperslab(slab, H5S_SELECT_SET, &start, NULL, &count, NULL);
    hid_t mem = H5Screate_simple(1, &count, NULL);
    int   buf[N], back[N], cbuf[C], cback[C];
    for (int i = 0; i < N; i++)
        buf[i] = rank * N + i;
    for (int i = 0; i < C; i++)
        cbuf[i] = 1000 + i; /* the same on every rank */

    hid_t coll = H5Pcreate(H5P_DATASET_XFER);
    H5Pset_dxpl_mpio(coll, H5FD_MPIO_COLLECTIVE);
    hid_t xform = H5Pcreate(H5P_DATASET_XFER);
    H5Pset_dxpl_mpio(xform, H5FD_MPIO_COLLECTIVE);
    H5Pset_data_transform(xform, "x+1");
    hid_t xform_sel = H5Pcopy(xform);
    H5Pset_selection_io(xform, H5D_SELECTION_IO_MODE_OFF);

    int bad = 0;
    for (int k = 0; k < 2; k++) {
        bad |= H5Dwrite(control, H5T_NATIVE_INT, mem, slab, coll, buf) < 0;
        bad |= report(coll, "write", "control");
    }
    for (int k = 0; k < 3; k++) {
        bad |= H5Dwrite(transform, H5T_NATIVE_INT, mem, slab, xform, buf) < 0;
        bad |= report(xform, "write", "transform");
        bad |= H5Dwrite(transform_sel, H5T_NATIVE_INT, mem, slab, xform_sel, buf) < 0;
        bad |= report(xform_sel, "write", "transform_sel");
    }
    for (int k = 0; k < 2; k++) {
        bad |= H5Dwrite(compact, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, coll, cbuf) < 0;
        bad |= report(coll, "write", "compact");
    }
    {
        hid_t       dsets[2]  = {multi_a, multi_b};
        hid_t       types[2]  = {H5T_NATIVE_INT, H5T_NATIVE_INT};
        hid_t       mspaces[2] = {mem, H5S_ALL};
        hid_t       fspaces[2] = {slab, H5S_ALL};
        const void *bufs[2]    = {buf, cbuf};
        bad |= H5Dwrite_multi(2, dsets, types, mspaces, fspaces, coll, bufs) < 0;
        bad |= report(coll, "write", "multi_a");
        bad |= report(coll, "write", "multi_b");
    }

    bad |= H5Dread(control, H5T_NATIVE_INT, mem, slab, coll, back) < 0;
    bad |= report(coll, "read", "control");
    for (int i = 0; i < N; i++)
        bad |= back[i] != buf[i];
    bad |= H5Dread(transform, H5T_NATIVE_INT, mem, slab, coll, back) < 0;
    bad |= report(coll, "read", "transform");
    for (int i = 0; i < N; i++)
        bad |= back[i] != buf[i] + 1;
    bad |= H5Dread(transform_sel, H5T_NATIVE_INT, mem, slab, coll, back) < 0;
    bad |= report(coll, "read", "transform_sel");
    for (int i = 0; i < N; i++)
        bad |= back[i] != buf[i] + 1;
    bad |= H5Dread(compact, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, coll, cback) < 0;
    bad |= report(coll, "read", "compact");
    for (int i = 0; i < C; i++)
        bad |= cback[i] != cbuf[i];
    /* `coll`'s last transfer (the compact read) was broken. */
    for (int i = 0; i < N; i++)
        back[i] = -1;
    bad |= H5Dread(unwritten, H5T_NATIVE_INT, mem, slab, coll, back) < 0;
    bad |= report(coll, "read", "unwritten");
    for (int i = 0; i < N; i++)
        bad |= back[i] != 0;

    H5Dclose(control);
    H5Dclose(transform);
    H5Dclose(transform_sel);
    H5Dclose(compact);
    H5Dclose(multi_a);
    H5Dclose(multi_b);
    H5Dclose(unwritten);
    H5Fclose(f);
    H5Pclose(coll);
    H5Pclose(xform);
    H5Pclose(xform_sel);
    H5Pclose(compact_dcpl);
    H5Pclose(filtered_dcpl);
    H5Pclose(fapl);
    H5Sclose(mem);
    H5Sclose(slab);
    int any = 0;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    if (rank == 0 && any)
        fprintf(stderr, "mpi_broken_coll: a call failed or a value read back is wrong\n");
    MPI_Finalize();
    return any;
}
