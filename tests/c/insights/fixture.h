/* What every insight fixture (the programs in this directory) shares: the includes, one
 * CHECK, the `--fixed` flag, MPI start and end, and the property lists that differ between
 * the serial build and the MPI one (`mpicc -DFIXTURE_MPI`, run under mpirun).
 *
 * Serially the program is rank 0 of 1, its FAPL and DXPLs are default lists, and
 * fixture_init/fixture_finish do nothing. Under FIXTURE_MPI the file is opened with MPI-IO
 * on MPI_COMM_WORLD, and a failed CHECK aborts every rank (one rank's exit would leave the
 * others waiting in a collective call). */
#ifndef FIXTURE_H
#define FIXTURE_H

#include <hdf5.h>
#ifdef FIXTURE_MPI
#include <mpi.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef FIXTURE_MPI
#define FIXTURE_FAIL() MPI_Abort(MPI_COMM_WORLD, 1)
#else
#define FIXTURE_FAIL() exit(1)
#endif

/* HDF5 calls return a negative value on failure. */
#define CHECK(x)                                                                           \
    do {                                                                                   \
        if ((x) < 0) {                                                                     \
            fprintf(stderr, "%s:%d: %s failed\n", __FILE__, __LINE__, #x);                 \
            FIXTURE_FAIL();                                                                \
        }                                                                                  \
    } while (0)

/* This process's place among the program's processes. */
struct fixture_ranks {
    int rank, size;
};

/* Starts MPI under FIXTURE_MPI; rank 0 of 1 serially. */
static inline struct fixture_ranks fixture_init(int *argc, char ***argv)
{
    struct fixture_ranks r = {0, 1};
#ifdef FIXTURE_MPI
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &r.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &r.size);
#else
    (void)argc;
    (void)argv;
#endif
    return r;
}

/* Ends MPI under FIXTURE_MPI. */
static inline void fixture_finish(void)
{
#ifdef FIXTURE_MPI
    MPI_Finalize();
#endif
}

/* Closes file `f` (H5Fclose). Under FIXTURE_MPI the ranks meet at a barrier first: on an
 * oversubscribed test machine a descheduled rank otherwise keeps the others waiting inside
 * the collective close, time that says nothing about the program's I/O yet counts as HDF5
 * time and moved the pathologies' shares across severity thresholds from run to run.
 * (imbalance.c and coll_md.c close without it: there the waiting, and the close's metadata
 * flush, are part of what the rules judge.) */
static inline herr_t fixture_close(hid_t f)
{
#ifdef FIXTURE_MPI
    MPI_Barrier(MPI_COMM_WORLD);
#endif
    return H5Fclose(f);
}

/* Whether the program runs its `--fixed` variant (the first argument). */
static inline int fixture_fixed(int argc, char **argv)
{
    return argc > 1 && strcmp(argv[1], "--fixed") == 0;
}

/* A new file access property list (the caller closes it): the defaults serially, the
 * MPI-IO driver on MPI_COMM_WORLD under FIXTURE_MPI. */
static inline hid_t fixture_fapl(void)
{
    hid_t fapl;
    CHECK(fapl = H5Pcreate(H5P_FILE_ACCESS));
#ifdef FIXTURE_MPI
    CHECK(H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL));
#endif
    return fapl;
}

/* A new data transfer property list (the caller closes it): the defaults serially; under
 * FIXTURE_MPI collective transfers when `collective`, else independent (HDF5's default). */
static inline hid_t fixture_dxpl(int collective)
{
    hid_t dxpl;
    CHECK(dxpl = H5Pcreate(H5P_DATASET_XFER));
#ifdef FIXTURE_MPI
    CHECK(H5Pset_dxpl_mpio(dxpl, collective ? H5FD_MPIO_COLLECTIVE : H5FD_MPIO_INDEPENDENT));
#else
    (void)collective;
#endif
    return dxpl;
}

#endif
