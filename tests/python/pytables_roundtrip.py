"""PyTables round trip: writes an HDF5 file with PyTables, reads it back, prints a dump.

Usage: python pytables_roundtrip.py OUTDIR

Writes OUTDIR/pytables_roundtrip.h5 with PyTables (over the HDF5 1.14.6 bundled in the
wheel): a table of compound rows appended through `Table.row` in two batches and with
`Table.append`, an EArray appended along its extendable axis, a zlib-compressed CArray
with shuffle, a plain Array, node attributes, and a group. Then reopens it read-only,
reads every node whole and in slices (and one in-kernel query of the table), checks every
value against what was written, and prints one JSON document (tests/python/canon.py) that
is the same for every run that reads the same data (the datasets are created with
`track_times=False`, so the file's bytes are too): the HDF5 version PyTables runs on,
the HDF5 paths of the datasets created, and the dump. tests/tests/python_wheels.rs runs it
natively and with h5prov loaded and compares.
"""

import os
import sys

import numpy as np
import tables

import canon

out_dir = sys.argv[1]
path = os.path.join(out_dir, "pytables_roundtrip.h5")
rng = np.random.default_rng(20261128)


class Particle(tables.IsDescription):
    """One row of the table."""

    ident = tables.Int64Col(pos=0)
    name = tables.StringCol(12, pos=1)
    energy = tables.Float64Col(pos=2)
    position = tables.Float32Col(shape=(3,), pos=3)


NROWS, NT, NX = 600, 8, 256
rows = np.zeros(NROWS, dtype=[("ident", "<i8"), ("name", "S12"), ("energy", "<f8"), ("position", "<f4", (3,))])
rows["ident"] = np.arange(NROWS)
rows["name"] = [f"p{i:05d}".encode() for i in range(NROWS)]
rows["energy"] = rng.random(NROWS) * 100.0
rows["position"] = rng.standard_normal((NROWS, 3)).astype(np.float32)
series = rng.integers(-1000, 1000, size=(NT, NX), dtype=np.int32)
field = (rng.random((64, 128)) * 10.0).astype(np.float64).round(2)
labels = np.arange(32, dtype=np.int16) * 3

# The HDF5 datasets PyTables creates for the nodes.
DATASETS = ["/events/particles", "/events/series", "/field", "/labels"]

# --- write -------------------------------------------------------------------------------
with tables.open_file(path, "w", title="h5prov wheel round trip") as h5:
    h5.root._v_attrs.run = np.int32(7)
    g = h5.create_group("/", "events", "particle events")
    t = h5.create_table(g, "particles", Particle, "particles", expectedrows=NROWS, track_times=False)
    # Two batches through Table.row (PyTables buffers rows and writes them in blocks),
    # the rest with one Table.append.
    r = t.row
    for lo, hi in ((0, 200), (200, 400)):
        for rec in rows[lo:hi]:
            r["ident"] = rec["ident"]
            r["name"] = rec["name"]
            r["energy"] = rec["energy"]
            r["position"] = rec["position"]
            r.append()
        t.flush()
    t.append(rows[400:])
    t.attrs.units = "GeV"

    e = h5.create_earray(g, "series", tables.Int32Atom(), shape=(0, NX), expectedrows=NT, track_times=False
    )
    e.append(series[: NT // 2])
    e.append(series[NT // 2 :])

    filters = tables.Filters(complevel=4, complib="zlib", shuffle=True)
    c = h5.create_carray("/", "field", tables.Float64Atom(), shape=field.shape, filters=filters, track_times=False
    )
    c[:] = field
    c.attrs.valid_range = np.array([0.0, 10.0])
    h5.create_array("/", "labels", labels, "plain array", track_times=False)

# --- read back ---------------------------------------------------------------------------
expected = {
    "/events/particles": rows,
    "/events/series": series,
    "/field": field,
    "/labels": labels,
}
SLICES = {
    "/events/particles": {"block": np.s_[100:180], "stride": np.s_[::37]},
    "/events/series": {"block": np.s_[2:5, 10:70], "stride": np.s_[::3, 1::9]},
    "/field": {"block": np.s_[5:20, 40:90], "stride": np.s_[::7, ::11]},
    "/labels": {"block": np.s_[4:9], "stride": np.s_[::5]},
}


def attrs_of(node):
    a = node._v_attrs
    return {k: canon.value(a[k]) for k in sorted(a._v_attrnamesuser)}


def describe(node, hpath):
    whole = node.read()
    canon.check(np.array_equal(whole, expected[hpath]), hpath)
    slices = {}
    for name, sel in SLICES[hpath].items():
        a = node[sel]
        canon.check(np.array_equal(a, expected[hpath][sel]), f"{hpath}[{name}]")
        slices[name] = canon.array(a)
    return {
        "class": node._c_classid,
        "shape": [int(x) for x in node.shape],
        "chunkshape": [int(x) for x in node.chunkshape] if node.chunkshape else None,
        "filters": repr(node.filters),
        "attrs": attrs_of(node),
        "data": canon.array(whole),
        "slices": slices,
    }


with tables.open_file(path, "r") as h5:
    dump = {hp: describe(h5.get_node(hp), hp) for hp in DATASETS}
    hot = h5.root.events.particles.read_where("energy > 90.0")
    canon.check(np.array_equal(hot, rows[rows["energy"] > 90.0]), "read_where")
    dump["query"] = canon.array(hot)
    dump["root_attrs"] = attrs_of(h5.root)
    dump["title"] = h5.title

canon.emit(
    {
        "library": f"PyTables {tables.__version__}",
        "hdf5_version": tables.hdf5_version,
        "datasets": DATASETS,
        "dump": dump,
        "file_sha256": canon.file_digest(path),
    }
)
