#!/usr/bin/env python3
"""pandas baseline for the analyzer benchmark (issue 6, part 4).

Computes, from h5prov CSV trace files (docs/TRACE-FORMAT.md), the same two
aggregates `h5prov report` computes, so the two can be timed side by side on
the same files:

  * hot functions: per `op`, count / total / mean / p50 / p95 / p99 / max of
    `total_ns`, sorted by total descending;
  * per rank per op: count and total of `total_ns`.

Percentiles are exact (pandas' default linear interpolation between order
statistics); the analyzer may use another definition, so compare p50/p95/p99
with a tolerance, and count/total/max exactly.

Usage:
    pandas_aggregate.py [--json OUT.json] [--top N] PATH...

PATH is a trace file or a directory searched recursively for `*.trace.csv`.
Prints the tables on stdout and one timing line on stderr:
    pandas: records=<n> files=<f> seconds=<s> records_per_s=<r>
Requires pandas (pip install pandas).
"""

import argparse
import json
import os
import sys
import time

try:
    import pandas as pd
except ImportError:  # pragma: no cover - message for the user
    sys.exit("pandas_aggregate.py: pandas is not installed (pip install pandas)")

COLUMNS = ["rank", "op", "total_ns"]
DTYPES = {"rank": "int64", "op": "category", "total_ns": "uint64"}


def trace_files(paths):
    """Every *.trace.csv file under the given files/directories, sorted."""
    out = []
    for p in paths:
        if os.path.isdir(p):
            for root, _dirs, files in os.walk(p):
                out.extend(os.path.join(root, f) for f in files if f.endswith(".trace.csv"))
        else:
            out.append(p)
    return sorted(out)


def load(files):
    """One DataFrame with the columns rank, op, total_ns of every file."""
    frames = []
    for f in files:
        df = pd.read_csv(f, usecols=COLUMNS, dtype=DTYPES, on_bad_lines="skip")
        frames.append(df)
    if not frames:
        return pd.DataFrame({c: pd.Series(dtype=t) for c, t in DTYPES.items()})
    df = pd.concat(frames, ignore_index=True)
    df["op"] = df["op"].astype("category")
    return df


def hot_functions(df):
    """Per op: count, total, mean, p50, p95, p99, max of total_ns."""
    g = df.groupby("op", observed=True)["total_ns"]
    agg = g.agg(["count", "sum", "mean", "max"])
    q = g.quantile([0.5, 0.95, 0.99]).unstack()
    q.columns = ["p50", "p95", "p99"]
    out = agg.join(q).rename(columns={"sum": "total"})
    out = out[["count", "total", "mean", "p50", "p95", "p99", "max"]]
    return out.sort_values("total", ascending=False)


def per_rank(df):
    """Per rank and op: count and total of total_ns."""
    g = df.groupby(["rank", "op"], observed=True)["total_ns"]
    return g.agg(count="count", total="sum").reset_index().sort_values(["rank", "total"],
                                                                       ascending=[True, False])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("paths", nargs="+", help="trace files or directories")
    ap.add_argument("--json", help="also write both tables as JSON to this file")
    ap.add_argument("--top", type=int, default=20, help="rows of the hot-function table to print")
    args = ap.parse_args()

    t0 = time.perf_counter()
    files = trace_files(args.paths)
    if not files:
        sys.exit("pandas_aggregate.py: no *.trace.csv files under " + " ".join(args.paths))
    df = load(files)
    hot = hot_functions(df)
    ranks = per_rank(df)
    seconds = time.perf_counter() - t0

    with pd.option_context("display.width", 160, "display.max_columns", 20):
        print("# hot functions (total_ns)")
        print(hot.head(args.top).to_string(float_format=lambda v: f"{v:.1f}"))
        print()
        print("# per rank per op")
        print(ranks.to_string(index=False))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(
                {
                    "records": int(len(df)),
                    "files": len(files),
                    "seconds": seconds,
                    "hot": hot.reset_index().to_dict(orient="records"),
                    "per_rank": ranks.to_dict(orient="records"),
                },
                f,
                default=lambda o: o.item() if hasattr(o, "item") else str(o),
            )
    n = len(df)
    print(
        f"pandas: records={n} files={len(files)} seconds={seconds:.3f} "
        f"records_per_s={n / seconds if seconds > 0 else 0:.0f}",
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
