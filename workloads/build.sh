#!/bin/sh
# build.sh - compile the h5prov workloads against the project's HDF5.
#
# Usage: workloads/build.sh [--mpi] OUTDIR
#
#   OUTDIR   where the executables go (created if missing)
#   --mpi    build the MPI variants (-DH5PROV_MPI, CC defaults to mpicc) against a
#            parallel HDF5; executables get the suffix "-mpi"
#
# Environment:
#   HDF5_DIR  HDF5 installation (default: <repo>/.deps/hdf5, the bootstrap's link; with
#             --mpi, <repo>/.deps/hdf5-parallel, the link of `build-hdf5 --variant parallel`)
#   CC        C compiler (default gcc, or mpicc with --mpi)
#   CFLAGS    extra flags (appended)
#
# The rpath is the resolved (realpath) HDF5 lib dir, so the programs run without
# LD_LIBRARY_PATH. Programs: metadata_heavy vpic_write bdcats_read sample known_sequence.
set -eu

mpi=0
if [ "${1:-}" = "--mpi" ]; then
    mpi=1
    shift
fi
if [ $# -ne 1 ]; then
    echo "usage: $0 [--mpi] OUTDIR" >&2
    exit 2
fi
out=$1

here=$(cd "$(dirname "$0")" && pwd)
if [ $mpi -eq 1 ]; then
    hdf5=${HDF5_DIR:-$here/../.deps/hdf5-parallel}
else
    hdf5=${HDF5_DIR:-$here/../.deps/hdf5}
fi
if [ ! -f "$hdf5/include/hdf5.h" ]; then
    echo "build.sh: no HDF5 at $hdf5 (set HDF5_DIR or run the bootstrap)" >&2
    exit 1
fi
hdf5=$(realpath "$hdf5")
libdir=$(realpath "$hdf5/lib")

if [ $mpi -eq 1 ]; then
    cc=${CC:-mpicc}
    defs="-DH5PROV_MPI"
    suffix="-mpi"
    if ! grep -q '^#define H5_HAVE_PARALLEL 1' "$hdf5/include/H5pubconf.h"; then
        echo "build.sh: --mpi needs a parallel HDF5; $hdf5 is serial" >&2
        exit 1
    fi
else
    cc=${CC:-gcc}
    defs=""
    suffix=""
fi

mkdir -p "$out"
for prog in metadata_heavy vpic_write bdcats_read sample known_sequence; do
    # shellcheck disable=SC2086  # word splitting of $defs / $CFLAGS is intended
    $cc -std=c99 -O2 -g -Wall -Wextra -Werror $defs \
        -I"$hdf5/include" -o "$out/$prog$suffix" "$here/$prog.c" \
        -L"$libdir" -Wl,-rpath,"$libdir" -lhdf5 ${CFLAGS:-}
done
echo "build.sh: built 5 workloads in $out"
