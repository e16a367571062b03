"""The Python API of the h5prov wheel, used as a user would (tests/tests/wheel_user.rs).

Usage: python user_checks.py CHECK ARGS...

  enable TRACES OUTDIR   h5prov.enable(path=TRACES) before importing h5py, then writes
                         OUTDIR/enabled.h5 with the dataset /enabled/values; prints JSON
                         {"vol": HDF5_VOL_CONNECTOR, "plugin_path": HDF5_PLUGIN_PATH}
  late TRACES            h5prov.enable must raise HDF5AlreadyLoaded once a libhdf5 is
                         mapped (ctypes, no package imported), and after `import h5py`;
                         prints both messages
  read TRACES            prints JSON: per-operation record counts of h5prov.read(TRACES)
                         (through pandas), of h5prov.read of a Parquet export of TRACES,
                         and from h5prov.report(TRACES); the row counts of the objects and
                         processes tables
  notebook TRACES NB     executes a notebook that shows h5prov.report(TRACES) headless
                         with nbclient, saves it as NB, prints the cell's text/html output
"""

import json
import os
import sys


def enable(traces, out_dir):
    import h5prov

    set_vars = h5prov.enable(path=traces)
    import h5py
    import numpy as np

    with h5py.File(os.path.join(out_dir, "enabled.h5"), "w") as f:
        f.create_group("enabled").create_dataset("values", data=np.arange(1000.0))
    with h5py.File(os.path.join(out_dir, "enabled.h5"), "r") as f:
        assert f["enabled/values"][17] == 17.0
    print(json.dumps({"vol": set_vars["HDF5_VOL_CONNECTOR"], "plugin_path": set_vars["HDF5_PLUGIN_PATH"]}))


def late(traces):
    import ctypes
    import glob
    import importlib.util

    import h5prov

    # A libhdf5 loaded without any HDF5 package imported: found in /proc/self/maps.
    spec = importlib.util.find_spec("h5py")
    libs = glob.glob(os.path.join(os.path.dirname(spec.origin), "..", "h5py.libs", "libhdf5-*"))
    ctypes.CDLL(libs[0])
    assert "h5py" not in sys.modules
    try:
        h5prov.enable(path=traces)
        sys.exit("h5prov.enable() with a libhdf5 mapped did not raise HDF5AlreadyLoaded")
    except h5prov.HDF5AlreadyLoaded as e:
        print(str(e))
    import h5py  # noqa: F401  (starts HDF5)

    try:
        h5prov.enable(path=traces)
    except h5prov.HDF5AlreadyLoaded as e:
        print(str(e))
        return
    sys.exit("h5prov.enable() after `import h5py` did not raise HDF5AlreadyLoaded")


def read(traces):
    import h5prov

    t = h5prov.read(traces)
    records = t.records.to_pandas()
    from_read = {str(k): int(v) for k, v in records.groupby("op").size().items()}
    rep = h5prov.report(traces)
    from_report = {o["op"]: int(o["count"]) for o in rep["ops"]}
    # A Parquet export is read as it is (pyarrow, no CLI).
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        export = os.path.join(tmp, "export")
        subprocess.run(
            [h5prov.executable(), "export", "--no-progress", "--parquet", export, traces],
            check=True,
            capture_output=True,
        )
        exported = h5prov.read(export).records.to_pandas()
        from_export = {str(k): int(v) for k, v in exported.groupby("op").size().items()}
    print(
        json.dumps(
            {
                "read": from_read,
                "read_export": from_export,
                "report": from_report,
                "objects": t.objects.num_rows,
                "processes": t.processes.num_rows,
                "repr": repr(t),
            }
        )
    )


def notebook(traces, nb_path):
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.v4.new_notebook()
    nb.cells.append(nbformat.v4.new_code_cell(f"import h5prov\nh5prov.report({traces!r})"))
    NotebookClient(nb, timeout=300, kernel_name="python3").execute()
    nbformat.write(nb, nb_path)
    outs = nb.cells[0].outputs
    html = [o["data"]["text/html"] for o in outs if "data" in o and "text/html" in o["data"]]
    if not html:
        sys.exit(f"the cell showed no HTML: {outs}")
    print(html[0])


if __name__ == "__main__":
    check, args = sys.argv[1], sys.argv[2:]
    {"enable": enable, "late": late, "read": read, "notebook": notebook}[check](*args)
