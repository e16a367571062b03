"""h5prov: HDF5 provenance and I/O-performance tracing, from Python.

A thin layer over the ``h5prov`` command line that ships in the same wheel (the work stays
in Rust; this module only sets variables and runs the CLI):

- :func:`enable` loads the h5prov VOL connector into this process's HDF5 (h5py, netCDF4,
  PyTables): it sets ``HDF5_PLUGIN_PATH`` and ``HDF5_VOL_CONNECTOR`` exactly as
  ``h5prov run`` does, and must run before HDF5 is loaded;
- :func:`read` gives the records, objects and processes of traces as pyarrow Tables
  (``.to_pandas()``, ``polars.from_arrow``), through ``h5prov export --parquet``;
- :func:`report` gives ``h5prov report --json`` as a dict, shown in Jupyter as the HTML
  report.
"""

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile

__all__ = ["enable", "read", "report", "Trace", "Report", "HDF5AlreadyLoaded", "executable"]

# The Python packages that load an HDF5 library when imported.
_HDF5_MODULES = ("h5py", "netCDF4", "tables", "h5netcdf", "pyfive")


class HDF5AlreadyLoaded(RuntimeError):
    """HDF5 was initialised in this process before :func:`enable`: it reads
    ``HDF5_VOL_CONNECTOR`` once, when it starts, so h5prov could not be loaded into it."""


def _plugin_dir():
    d = os.path.join(os.path.dirname(os.path.abspath(__file__)), "plugin")
    return d if os.path.isfile(os.path.join(d, "libh5prov.so")) else None


def executable():
    """The ``h5prov`` CLI: ``$H5PROV_EXE``, the environment's scripts directory (where pip
    installs it with this package), then ``PATH``."""
    env = os.environ.get("H5PROV_EXE")
    if env:
        return env
    for d in (sysconfig.get_path("scripts"), os.path.dirname(sys.executable)):
        p = os.path.join(d, "h5prov")
        if os.path.isfile(p) and os.access(p, os.X_OK):
            return p
    p = shutil.which("h5prov")
    if p:
        return p
    raise FileNotFoundError(
        "the h5prov command is not installed with this package (pip install h5prov), "
        "nor on PATH; set H5PROV_EXE to it"
    )


def _cli(*args, env=None):
    """Runs ``h5prov ARGS`` and returns its stdout; raises RuntimeError with its stderr."""
    cmd = [executable(), *map(str, args)]
    p = subprocess.run(cmd, capture_output=True, env=env)
    if p.returncode != 0:
        raise RuntimeError(
            f"{' '.join(cmd)} failed (status {p.returncode}):\n"
            + p.stderr.decode(errors="replace").strip()
        )
    return p.stdout


def _hdf5_loaded():
    """Why HDF5 already runs in this process, or None."""
    mods = [m for m in _HDF5_MODULES if m in sys.modules]
    if mods:
        return "module(s) " + ", ".join(mods) + " already imported"
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as f:
            for line in f:
                name = line.rsplit(None, 1)[-1] if line.strip() else ""
                if os.path.basename(name).startswith("libhdf5"):
                    return f"{name} already loaded"
    except OSError:
        pass
    return None


def enable(path="h5prov-traces", level=None, format=None, stream=None, **options):
    """Loads h5prov into the HDF5 this process will start: traces go to ``path``.

    ``level`` (off, summary, file, group, dataset, element), ``format`` (bin, csv, jsonl),
    ``stream`` (HOST:PORT of ``h5prov collect``) and further connector options as keywords
    (``max_size="512M"``) are those of ``h5prov run``. A connector already selected in
    ``HDF5_VOL_CONNECTOR`` is stacked under h5prov as ``h5prov run`` does.

    Call it before importing h5py, netCDF4 or PyTables. Raises :class:`HDF5AlreadyLoaded`
    when one of them (or any libhdf5) is already loaded. Returns the two variables set.
    """
    why = _hdf5_loaded()
    if why:
        raise HDF5AlreadyLoaded(
            f"h5prov.enable() must run before HDF5 starts, and HDF5 already runs in this "
            f"process ({why}): HDF5 reads HDF5_VOL_CONNECTOR once, when it starts, so this "
            f"process cannot be traced any more. Call h5prov.enable() first (at the top of "
            f"the script or in the notebook's first cell, then restart the kernel), or run "
            f"the script with `h5prov run --path {path} -- python script.py`."
        )
    args = ["run", "--print-env", "--path", os.path.abspath(path)]
    for flag, v in (("--level", level), ("--format", format), ("--stream", stream)):
        if v is not None:
            args += [flag, v]
    for k, v in options.items():
        args += ["--option", f"{k}={v}"]
    env = dict(os.environ)
    plugin = _plugin_dir()
    if plugin and not env.get("H5PROV_PLUGIN"):
        env["H5PROV_PLUGIN"] = plugin
    out = _cli(*args, "--", "python", env=env).decode()
    set_vars = {}
    for line in out.splitlines():
        k, _, v = line.partition("=")
        if k in ("HDF5_PLUGIN_PATH", "HDF5_VOL_CONNECTOR"):
            set_vars[k] = v
    if len(set_vars) != 2:
        raise RuntimeError(f"h5prov run --print-env printed {out!r}")
    os.environ.update(set_vars)
    return set_vars


class Trace:
    """The tables of a trace: ``records``, ``objects``, ``processes`` and ``files``, each a
    pyarrow Table (``.to_pandas()``; ``.to_polars()`` here where Polars is installed)."""

    def __init__(self, tables):
        self.records = tables["records"]
        self.objects = tables["objects"]
        self.processes = tables["processes"]
        self.files = tables["files"]

    def to_pandas(self):
        """The four tables as pandas DataFrames, in a dict."""
        return {k: getattr(self, k).to_pandas() for k in ("records", "objects", "processes", "files")}

    def to_polars(self):
        """The four tables as Polars DataFrames, in a dict (needs polars)."""
        import polars

        return {k: polars.from_arrow(getattr(self, k)) for k in ("records", "objects", "processes", "files")}

    def __repr__(self):
        return (
            f"h5prov.Trace(records={self.records.num_rows}, objects={self.objects.num_rows}, "
            f"processes={self.processes.num_rows}, files={self.files.num_rows})"
        )


def _read_export(root, job=None):
    import pyarrow.dataset as ds

    tables = {}
    for name in ("records", "objects", "processes", "files"):
        d = ds.dataset(
            os.path.join(root, name), format="parquet", partitioning="hive"
        )
        t = d.to_table()
        if job is not None and "job" in t.column_names:
            import pyarrow.compute as pc

            t = t.filter(pc.equal(pc.cast(t["job"], "string"), str(job)))
        tables[name] = t
    return Trace(tables)


def read(path, job=None):
    """The records, objects and processes of ``path`` as pyarrow Tables (a :class:`Trace`).

    ``path`` is a trace directory, a merged file (``h5prov merge``), a collector's capture,
    trace files, or a Parquet export (``h5prov export --parquet``; ``job`` picks one job of
    it). Anything but an export is read by the h5prov CLI itself (``export --parquet`` into
    a temporary directory, then read with pyarrow), so the counts are those of
    ``h5prov report``. Needs pyarrow (``pip install h5prov[read]``).
    """
    if os.path.isdir(os.path.join(path, "records")) and os.path.isdir(os.path.join(path, "processes")):
        return _read_export(path, job)
    with tempfile.TemporaryDirectory(prefix="h5prov-read-") as tmp:
        out = os.path.join(tmp, "export")
        _cli("export", "--no-progress", "--parquet", out, "--job", "read", path)
        trace = _read_export(out)
        # The tables are in memory now: the files can go.
        trace = Trace({k: _in_memory(getattr(trace, k)) for k in ("records", "objects", "processes", "files")})
    return trace


def _in_memory(t):
    return t.combine_chunks() if t.num_rows else t


class Report(dict):
    """``h5prov report --json`` as a dict; in Jupyter it shows the HTML report."""

    def __init__(self, data, path, job=None):
        super().__init__(data)
        self._path = path
        self._job = job

    def html(self, top=15):
        """The self-contained HTML report (``h5prov report --html``), as text."""
        with tempfile.TemporaryDirectory(prefix="h5prov-report-") as tmp:
            f = os.path.join(tmp, "report.html")
            args = ["report", "--no-progress", "--top", top, "--html", f, self._path]
            if self._job is not None:
                args += ["--job", self._job]
            _cli(*args)
            with open(f, encoding="utf-8") as fh:
                return fh.read()

    def _repr_html_(self):
        return self.html()


def report(path, job=None):
    """``h5prov report --json PATH`` as a :class:`Report` (a dict: ``ops``, ``ranks``,
    ``datasets``, ``insights``, ...), shown as the HTML report in Jupyter."""
    args = ["report", "--no-progress", "--json", path]
    if job is not None:
        args += ["--job", job]
    return Report(json.loads(_cli(*args)), path, job)
