"""The h5py idiom f["x"][i]: every access opens the dataset, reads one element and closes it.

Usage: h5py_reopen.py DIR N. Writes DIR/reopen.h5 with a chunked dataset /x of 1000 float64,
then reopens the file read-only and reads N elements, one f["x"][i] each. Prints
"opens=<N> sum=<sum>".
"""
import sys

import h5py
import numpy as np

directory, n = sys.argv[1], int(sys.argv[2])
path = f"{directory}/reopen.h5"
with h5py.File(path, "w") as f:
    f.create_dataset("x", data=np.arange(1000, dtype="f8"), chunks=(100,))
total = 0.0
with h5py.File(path, "r") as f:
    for i in range(n):
        total += float(f["x"][i % 1000])
print(f"opens={n} sum={total}")
