"""netCDF4 round trip: writes a netCDF-4 (HDF5) file, reads it back, prints a dump.

Usage: python netcdf4_roundtrip.py OUTDIR

Writes OUTDIR/netcdf4_roundtrip.nc with netCDF4-python (netCDF-C over the HDF5 bundled in
the wheel): fixed and unlimited dimensions, coordinate and data variables with attributes,
zlib-compressed chunked variables, a variable-length string variable, a group with its own
dimension, and data appended along the unlimited dimension in two writes. Then reopens it
read-only, reads every variable whole and in slices, checks every value against what was
written, and prints one JSON document (tests/python/canon.py) that is the same for every
run that reads the same data: the HDF5 version netCDF4 was built with, the HDF5 paths of
the variables created, and the dump. tests/tests/python_wheels.rs runs it natively and
with h5prov loaded and compares.
"""

import os
import sys

import numpy as np
import netCDF4

import canon

out_dir = sys.argv[1]
path = os.path.join(out_dir, "netcdf4_roundtrip.nc")
rng = np.random.default_rng(20261125)

NT, NLAT, NLON, NSTEP = 12, 36, 72, 5
time = np.arange(NT, dtype=np.float64) * 6.0
lat = np.linspace(-87.5, 87.5, NLAT, dtype=np.float32)
lon = np.linspace(0.0, 355.0, NLON, dtype=np.float32)
temp = (250.0 + 40.0 * rng.random((NT, NLAT, NLON))).astype(np.float32)
counts = rng.integers(0, 1000, size=(NT, NLAT), dtype=np.int32)
counts[3, 7] = -1  # the fill value, stored explicitly
station = np.array([f"st-{i}-{'é' * (i % 4)}" for i in range(NLAT)], dtype=object)
pressure = rng.standard_normal((NT, NSTEP)) * 10.0 + 1013.0

# The HDF5 datasets netCDF-C creates for the variables (dimensions without a coordinate
# variable get datasets of their own too; they are not listed).
VARIABLES = ["/time", "/lat", "/lon", "/temp", "/counts", "/station", "/forecast/pressure"]

# --- write -------------------------------------------------------------------------------
with netCDF4.Dataset(path, "w", format="NETCDF4") as ds:
    ds.title = "h5prov wheel round trip"
    ds.institution = "h5prov tests"
    ds.setncattr("run", np.int32(7))
    ds.setncattr("weights", np.array([0.5, 1.5, 2.5]))
    ds.createDimension("time", None)
    ds.createDimension("lat", NLAT)
    ds.createDimension("lon", NLON)

    v = ds.createVariable("time", "f8", ("time",))
    v.units = "hours since 2000-01-01 00:00:00"
    v.calendar = "standard"
    v = ds.createVariable("lat", "f4", ("lat",))
    v.units = "degrees_north"
    v[:] = lat
    v = ds.createVariable("lon", "f4", ("lon",))
    v.units = "degrees_east"
    v[:] = lon

    t = ds.createVariable(
        "temp",
        "f4",
        ("time", "lat", "lon"),
        zlib=True,
        complevel=4,
        shuffle=True,
        chunksizes=(1, NLAT, NLON),
    )
    t.units = "K"
    t.long_name = "air temperature"
    t.valid_range = np.array([200.0, 320.0], dtype=np.float32)

    c = ds.createVariable("counts", "i4", ("time", "lat"), zlib=True, fill_value=-1)
    c.long_name = "observations per latitude band"

    s = ds.createVariable("station", str, ("lat",))
    s.long_name = "station names"
    s[:] = station

    g = ds.createGroup("forecast")
    g.model = "persistence"
    g.createDimension("step", NSTEP)
    p = g.createVariable("pressure", "f8", ("time", "step"), zlib=True, complevel=1)
    p.units = "hPa"

    # Appends along the unlimited dimension, in two writes.
    half = NT // 2
    for lo, hi in ((0, half), (half, NT)):
        ds["time"][lo:hi] = time[lo:hi]
        t[lo:hi] = temp[lo:hi]
        c[lo:hi] = counts[lo:hi]
        p[lo:hi] = pressure[lo:hi]

# --- read back ---------------------------------------------------------------------------
expected = {
    "/time": time,
    "/lat": lat,
    "/lon": lon,
    "/temp": temp,
    "/counts": counts,
    "/station": station,
    "/forecast/pressure": pressure,
}

SLICES = {
    "/time": {"block": np.s_[3:7], "stride": np.s_[::4]},
    "/lat": {"block": np.s_[10:20], "stride": np.s_[1::3]},
    "/lon": {"block": np.s_[-10:], "stride": np.s_[::7]},
    "/temp": {
        "block": np.s_[2:5, 10:20, 30:50],
        "stride": np.s_[::5, 1::4, ::9],
        "last": np.s_[-1],
    },
    "/counts": {"block": np.s_[4:9, :], "stride": np.s_[:, ::3]},
    "/station": {"block": np.s_[5:9], "stride": np.s_[::6]},
    "/forecast/pressure": {"block": np.s_[1:3, :], "stride": np.s_[::2, 1::2]},
}


def read(var, sel):
    a = var[sel]
    if var.dtype is str:
        return np.array(a, dtype=object)
    return np.asarray(a)


def describe_var(var, hpath):
    whole = read(var, np.s_[...])
    canon.check(np.array_equal(whole, expected[hpath]), hpath)
    slices = {}
    for name, sel in SLICES[hpath].items():
        a = read(var, sel)
        canon.check(np.array_equal(a, expected[hpath][sel]), f"{hpath}[{name}]")
        slices[name] = canon.array(a)
    chunking = var.chunking()
    return {
        "dtype": "str" if var.dtype is str else canon.dtype_name(var.dtype),
        "dimensions": list(var.dimensions),
        "shape": list(var.shape),
        "chunking": chunking if isinstance(chunking, str) else list(chunking),
        "filters": {k: canon.value(v) for k, v in sorted(var.filters().items())},
        "attrs": {k: canon.value(var.getncattr(k)) for k in sorted(var.ncattrs())},
        "data": canon.array(whole),
        "slices": slices,
    }


def describe_group(grp, prefix):
    return {
        "attrs": {k: canon.value(grp.getncattr(k)) for k in sorted(grp.ncattrs())},
        "dimensions": {
            name: {"size": len(d), "unlimited": d.isunlimited()}
            for name, d in sorted(grp.dimensions.items())
        },
        "variables": {
            name: describe_var(v, f"{prefix}/{name}") for name, v in sorted(grp.variables.items())
        },
        "groups": {
            name: describe_group(g, f"{prefix}/{name}") for name, g in sorted(grp.groups.items())
        },
    }


with netCDF4.Dataset(path, "r") as ds:
    ds.set_auto_maskandscale(False)
    tree = describe_group(ds, "")
    canon.check(ds.data_model == "NETCDF4", "data model")

canon.emit(
    {
        "library": f"netCDF4 {netCDF4.__version__} (netCDF-C {netCDF4.__netcdf4libversion__})",
        "hdf5_version": netCDF4.__hdf5libversion__,
        "datasets": VARIABLES,
        "dump": tree,
        "file_sha256": canon.file_digest(path),
    }
)
