"""Times DuckDB's hot-function query (the `hot_functions_all_jobs` recipe of
docs/PARQUET.md) over an h5prov Parquet export, for the analyzer benchmark.

usage: duckdb_hot.py --json OUT EXPORT_DIR RECIPES_MD

Writes {"hot": [{"op", "count", "total_ns"}, ...]} to OUT and, on stderr, one line
`duckdb: rows=R seconds=S` where S is the time of connecting, creating the view and running
the query (no interpreter start-up, no `import duckdb`).
"""
import json
import re
import sys
import time


def main():
    args = sys.argv[1:]
    if len(args) != 4 or args[0] != "--json":
        sys.exit(__doc__)
    out, root, md = args[1:]
    text = open(md, encoding="utf-8").read()
    m = re.search(r"<!-- recipe: hot_functions_all_jobs -->\s*```sql\n(.*?)```", text, re.S)
    if not m:
        sys.exit(f"{md}: no hot_functions_all_jobs recipe")
    import duckdb

    t0 = time.perf_counter()
    con = duckdb.connect()
    con.execute(
        f"CREATE VIEW records AS SELECT * FROM read_parquet('{root}/records/*/*.parquet', "
        "hive_partitioning = true, hive_types = {'job': 'VARCHAR'})"
    )
    rows = con.execute(m.group(1)).fetchall()
    secs = time.perf_counter() - t0
    hot = [{"op": r[0], "count": int(r[1]), "total_ns": int(r[2])} for r in rows]
    with open(out, "w", encoding="utf-8") as f:
        json.dump({"hot": hot}, f)
    print(f"duckdb: rows={len(hot)} seconds={secs:.3f}", file=sys.stderr)


if __name__ == "__main__":
    main()
