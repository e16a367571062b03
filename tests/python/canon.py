"""Canonical, JSON-serialisable descriptions of arrays and attribute values.

Shared by the round-trip scripts of tests/tests/python_wheels.rs. Two runs that read the
same data print the same text: keys are sorted, arrays are described by shape, dtype and
the sha256 of their contents, never by memory addresses.
"""

import hashlib
import json
import sys

import numpy as np


def dtype_name(dt):
    """A stable name for a NumPy dtype (the field layout for compound types)."""
    dt = np.dtype(dt)
    if dt.fields:
        return [[name, dtype_name(dt.fields[name][0])] for name in dt.names]
    return dt.str


def digest(a):
    """sha256 of an array's contents.

    Fixed-size types hash their raw bytes; object arrays (variable-length strings) hash
    each element's UTF-8 bytes with a length prefix, so element boundaries count.
    """
    a = np.asarray(a)
    h = hashlib.sha256()
    if a.dtype.kind == "O":
        for x in a.ravel().tolist():
            b = x.encode("utf-8") if isinstance(x, str) else bytes(x)
            h.update(len(b).to_bytes(8, "little"))
            h.update(b)
    else:
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()


def array(a):
    """Shape, dtype and content hash of an array."""
    a = np.asarray(a)
    return {"shape": list(a.shape), "dtype": dtype_name(a.dtype), "sha256": digest(a)}


def value(v):
    """An attribute value as JSON: type and contents, nothing process-specific."""
    if isinstance(v, bytes):
        return {"bytes": v.hex()}
    if isinstance(v, (str, bool, int, float)) or v is None:
        return v
    if isinstance(v, np.ndarray):
        return {
            "dtype": dtype_name(v.dtype),
            "shape": list(v.shape),
            "values": [value(x) for x in v.ravel().tolist()],
        }
    if isinstance(v, np.generic):
        return {"dtype": dtype_name(v.dtype), "value": value(v.item())}
    if isinstance(v, (list, tuple)):
        return [value(x) for x in v]
    raise TypeError(f"no canonical form for {type(v).__name__}: {v!r}")


def file_digest(path):
    """sha256 of a file's bytes."""
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def emit(doc):
    """Prints the canonical dump: one JSON document on stdout."""
    json.dump(doc, sys.stdout, sort_keys=True, indent=1)
    sys.stdout.write("\n")
    sys.stdout.flush()


def check(cond, what):
    """Fails the script (exit 1, message on stderr) unless `cond`."""
    if not cond:
        sys.exit(f"read-back mismatch: {what}")
