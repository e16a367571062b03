"""multiprocessing workers that end with os._exit(0) and leave their file open, for
tests/tests/exit_paths.rs.

usage: mp_exit.py DIR MODE [WORKERS]
  direct  the work once, in this process, then the file is closed and Python exits
          normally (the reference run);
  fork    WORKERS multiprocessing.Process children started with "fork", each doing the
  spawn   work on a file of its own and calling os._exit(0) without closing it.
The work: create a file, write 40 datasets, read each back, then set an attribute "done"
on the file: the attribute's close is its last HDF5 call, the marker the tests cut at
(not a flush: h5prov writes its buffers at a flush).
"""
import multiprocessing
import os
import sys

import h5py
import numpy as np


def work(path, leave):
    f = h5py.File(path, "w")
    for i in range(40):
        f.create_dataset(f"d{i}", data=np.arange(100, dtype="i8") + i)
    total = 0
    for i in range(40):
        total += int(f[f"d{i}"][...].sum())
    assert total == sum(range(100)) * 40 + 100 * sum(range(40)), total
    f.attrs["done"] = 1
    if leave:
        os._exit(0)
    f.close()


def main():
    out, mode = sys.argv[1], sys.argv[2]
    workers = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    if mode == "direct":
        work(os.path.join(out, "direct.h5"), False)
        return
    ctx = multiprocessing.get_context(mode)
    procs = [
        ctx.Process(target=work, args=(os.path.join(out, f"w{i}.h5"), True))
        for i in range(workers)
    ]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    codes = [p.exitcode for p in procs]
    if any(c != 0 for c in codes):
        sys.exit(f"workers failed: {codes}")


if __name__ == "__main__":
    main()
