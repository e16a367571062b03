"""The h5py idiom f[name] = array: h5py creates the dataset anonymously (H5Dcreate_anon),
writes the array into it, then links it under its name (H5Olink).

Usage: h5py_anonymous.py DIR N. Writes DIR/anonymous.h5 with N datasets d000, d001, ...
of 16 int64 each, one f[name] = array each; then, in the same session, overwrites two
elements of every tenth dataset and reads every fifth one back; then reopens the file
read-only and reads every dataset once. Prints one JSON line: {"datasets": [paths], "sum": S}.
"""
import json
import sys

import h5py
import numpy as np

directory, n = sys.argv[1], int(sys.argv[2])
path = f"{directory}/anonymous.h5"
names = [f"d{i:03}" for i in range(n)]
total = 0
with h5py.File(path, "w") as f:
    for i, name in enumerate(names):
        f[name] = np.arange(16, dtype="i8") + i
    for name in names[::10]:
        f[name][0:2] = [-1, -2]
    for name in names[::5]:
        total += int(f[name][...].sum())
with h5py.File(path, "r") as f:
    for name in names:
        total += int(f[name][...].sum())
print(json.dumps({"datasets": [f"/{name}" for name in names], "sum": total}))
