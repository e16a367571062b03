"""The analysis step of the provenance workflow of tests/tests/prov_workflow.rs (issue 34):
reads sim.h5:/fields/u and writes its mean, minimum and maximum to ana.h5:/stats, with
h5py's f[name] = array idiom (an anonymous dataset linked by name). Usage:
h5py_analysis.py DIR. Prints the three values."""
import sys

import h5py
import numpy as np

directory = sys.argv[1]
with h5py.File(f"{directory}/sim.h5", "r") as f:
    u = f["/fields/u"][...]
stats = np.array([u.mean(), u.min(), u.max()])
with h5py.File(f"{directory}/ana.h5", "w") as f:
    f["stats"] = stats
print(" ".join(f"{x:g}" for x in stats))
