"""h5py round trip: writes an HDF5 file with h5py, reads all of it back, prints a dump.

Usage: python h5py_roundtrip.py OUTDIR

Writes OUTDIR/h5py_roundtrip.h5: datasets of several types (int32, float64, fixed and
variable-length strings, a compound type), chunked and gzip-compressed ones, a resizable
dataset that is extended, attributes on the file, a group and datasets, nested groups, a
hard and a soft link. Then reopens the file read-only, walks it in name order, reads every
dataset whole and in hyperslabs (blocks, strides, fancy indexing, a compound field, a
read_direct between selections), checks every value against what was written, and prints
one JSON document (tests/python/canon.py) that is the same for every run that reads the
same data: the HDF5 version h5py runs on, the paths of the datasets created, and the dump.
tests/tests/python_wheels.rs runs it natively and with h5prov loaded and compares.
"""

import os
import sys

import numpy as np
import h5py

import canon

out_dir = sys.argv[1]
path = os.path.join(out_dir, "h5py_roundtrip.h5")
rng = np.random.default_rng(20261124)

# --- the data, kept to check the read-back ---------------------------------------------
i32 = rng.integers(-(2**31), 2**31 - 1, size=(120, 70), dtype=np.int32)
f64 = rng.standard_normal(5000)
fixed = np.array([f"name-{i:04d}-{'x' * (i % 5)}".encode() for i in range(300)], dtype="S16")
vlen = [("αβγ-" * (i % 7)) + str(i) for i in range(257)]
vlen[3] = ""  # an empty string among them
first = rng.random((10, 8), dtype=np.float32)
more = rng.random((30, 8), dtype=np.float32)
resized = np.concatenate([first, more])
comp_t = np.dtype([("id", "<i4"), ("x", "<f8"), ("tag", "S6")])
comp = np.zeros(200, dtype=comp_t)
comp["id"] = np.arange(200, dtype=np.int32) * 3 - 50
comp["x"] = rng.standard_normal(200)
comp["tag"] = [f"t{i % 97}".encode() for i in range(200)]

DATASETS = [
    "/grp/int32",
    "/float64",
    "/grp/sub/fixed_str",
    "/vlen_str",
    "/resizable",
    "/compound",
]

# --- write -------------------------------------------------------------------------------
with h5py.File(path, "w") as f:
    f.attrs["title"] = "h5prov wheel round trip"
    f.attrs["run"] = np.int64(7)
    f.attrs["weights"] = np.array([0.5, 1.5, 2.5])
    g = f.create_group("grp")
    g.attrs["units"] = "m"
    g.attrs["code"] = np.bytes_(b"fixed")
    sub = g.create_group("sub")
    sub.attrs["empty_group"] = np.int32(0)

    # Chunked, shuffled, gzip-compressed; written in two hyperslabs.
    d = g.create_dataset(
        "int32",
        shape=i32.shape,
        dtype=np.int32,
        chunks=(16, 16),
        compression="gzip",
        compression_opts=4,
        shuffle=True,
    )
    d[:60] = i32[:60]
    d[60:] = i32[60:]
    d.attrs["scale"] = np.float32(0.25)
    d.attrs["dims"] = np.array(i32.shape, dtype=np.int32)
    d.attrs["note"] = "two hyperslab writes"

    d = f.create_dataset("float64", data=f64, chunks=(512,), compression="gzip")
    d.attrs["mean"] = float(f64.mean())

    # Contiguous fixed-length strings.
    sub.create_dataset("fixed_str", data=fixed)

    # Variable-length UTF-8 strings, chunked and compressed.
    d = f.create_dataset(
        "vlen_str",
        data=np.array(vlen, dtype=object),
        dtype=h5py.string_dtype("utf-8"),
        chunks=(64,),
        compression="gzip",
    )
    d.attrs["count"] = np.int32(len(vlen))

    # Resizable: created with 10 rows, extended to 40, the new rows written.
    d = f.create_dataset(
        "resizable",
        shape=(10, 8),
        maxshape=(None, 8),
        chunks=(16, 8),
        dtype=np.float32,
        compression="gzip",
    )
    d[...] = first
    d.resize((40, 8))
    d[10:40] = more
    d.attrs["rows"] = np.int64(40)

    d = f.create_dataset("compound", data=comp, chunks=(32,), compression="gzip")
    d.attrs["fields"] = np.array([b"id", b"x", b"tag"])

    f["grp/hard_to_int32"] = f["grp/int32"]
    f["soft_to_float64"] = h5py.SoftLink("/float64")

# --- read back ---------------------------------------------------------------------------
expected = {
    "/grp/int32": i32,
    "/grp/hard_to_int32": i32,
    "/float64": f64,
    "/soft_to_float64": f64,
    "/grp/sub/fixed_str": fixed,
    "/resizable": resized,
    "/compound": comp,
    "/vlen_str": np.array(vlen, dtype=object),
}


def slices(d):
    """Hyperslab reads of a dataset: a block, a strided selection, and for 1-D datasets
    fancy indexing (a union of hyperslabs)."""
    n = d.shape
    if len(n) == 1:
        sels = {
            "block": np.s_[n[0] // 3 : n[0] // 3 + n[0] // 4],
            "stride": np.s_[1::5],
            "fancy": np.s_[[0, 2, 7, n[0] // 2, n[0] - 1]],
        }
    else:
        sels = {
            "block": np.s_[5 : n[0] - 3, 1 : n[1] - 2],
            "stride": np.s_[::3, 1::4],
            "row": np.s_[n[0] - 1],
        }
    out = {}
    for name, sel in sels.items():
        if d.dtype.kind == "O":
            a = np.array(d.asstr()[sel], dtype=object)
        else:
            a = d[sel]
        canon.check(np.array_equal(a, expected[d.name][sel]), f"{d.name}[{name}]")
        out[name] = canon.array(a)
    return out


def describe_dataset(d):
    if d.dtype.kind == "O":
        whole = np.array(d.asstr()[...], dtype=object)
    else:
        whole = d[...]
    canon.check(np.array_equal(whole, expected[d.name]), d.name)
    info = {
        "kind": "dataset",
        "shape": list(d.shape),
        "maxshape": [m if m is not None else "unlimited" for m in d.maxshape],
        "dtype": canon.dtype_name(d.dtype),
        "chunks": list(d.chunks) if d.chunks else None,
        "compression": d.compression,
        "compression_opts": d.compression_opts,
        "shuffle": d.shuffle,
        "attrs": {k: canon.value(d.attrs[k]) for k in sorted(d.attrs)},
        "data": canon.array(whole),
        "slices": slices(d),
    }
    if d.dtype.fields:
        x = d.fields("x")[...]
        canon.check(np.array_equal(x, comp["x"]), "compound field x")
        info["field_x"] = canon.array(x)
        tags = d["tag"][10:20]
        canon.check(np.array_equal(tags, comp["tag"][10:20]), "compound field tag")
        info["field_tag_slice"] = canon.array(tags)
    if d.name == "/resizable":
        # read_direct from one hyperslab into another of a preallocated array.
        dest = np.full((12, 8), -1.0, dtype=np.float32)
        d.read_direct(dest, source_sel=np.s_[28:38, :], dest_sel=np.s_[1:11, :])
        canon.check(np.array_equal(dest[1:11], resized[28:38]), "read_direct")
        info["read_direct"] = canon.array(dest)
    return info


def walk(g):
    """A group's links in name order: soft links by target, objects described."""
    out = {"kind": "group", "attrs": {k: canon.value(g.attrs[k]) for k in sorted(g.attrs)}}
    members = {}
    for name in sorted(g):
        link = g.get(name, getlink=True)
        obj = g[name]
        entry = {"link": type(link).__name__}
        if isinstance(link, h5py.SoftLink):
            entry["target"] = link.path
        if isinstance(obj, h5py.Group):
            entry.update(walk(obj))
        else:
            entry.update(describe_dataset(obj))
        members[name] = entry
    out["members"] = members
    return out


with h5py.File(path, "r") as f:
    tree = walk(f)
    canon.check(f["grp/hard_to_int32"] == f["grp/int32"], "hard link is the same object")

canon.emit(
    {
        "library": f"h5py {h5py.__version__}",
        "hdf5_version": h5py.version.hdf5_version,
        "datasets": DATASETS,
        "dump": tree,
        "file_sha256": canon.file_digest(path),
    }
)
