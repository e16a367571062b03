"""Runs the SQL recipes of docs/PARQUET.md, or the hot-function query through a DataFrame
API, over an h5prov Parquet export with one engine; prints the results as JSON.

usage: parquet_engines.py ENGINE EXPORT_DIR RECIPES_MD
ENGINE: duckdb or spark (every recipe, SQL), polars or pyarrow (hot functions).
Output: {"recipe": [[value, ...], ...], ...}, rows in the recipe's order; floats rounded to
6 digits, decimals and integers as integers.
"""
import decimal
import json
import re
import sys

TABLES = ["records", "objects", "processes", "files"]


def recipes(md_path):
    text = open(md_path, encoding="utf-8").read()
    found = re.findall(r"<!-- recipe: (\w+) -->\s*```sql\n(.*?)```", text, re.S)
    assert found, f"no recipes in {md_path}"
    return dict(found)


def norm(v):
    if isinstance(v, bool) or v is None or isinstance(v, str):
        return v
    if isinstance(v, decimal.Decimal):
        return int(v) if v == v.to_integral_value() else round(float(v), 6)
    if isinstance(v, float):
        return round(v, 6)
    return int(v)


def rows(it):
    return [[norm(v) for v in r] for r in it]


def duckdb_run(root, sqls):
    import duckdb

    con = duckdb.connect()
    for t in TABLES:
        con.execute(
            f"CREATE VIEW {t} AS SELECT * FROM read_parquet('{root}/{t}/*/*.parquet', "
            "hive_partitioning = true, hive_types = {'job': 'VARCHAR'})"
        )
    return {name: rows(con.execute(sql).fetchall()) for name, sql in sqls.items()}


def spark_run(root, sqls):
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[2]")
        .appName("h5prov-parquet-test")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.sql.sources.partitionColumnTypeInference.enabled", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    for t in TABLES:
        spark.read.parquet(f"{root}/{t}").createOrReplaceTempView(t)
    out = {name: rows(spark.sql(sql).collect()) for name, sql in sqls.items()}
    spark.stop()
    return out


def polars_run(root):
    import polars as pl

    records = pl.scan_parquet(
        f"{root}/records/**/*.parquet",
        hive_partitioning=True,
        hive_schema={"job": pl.String},
    )
    hot = (
        records.group_by("job", "op")
        .agg(pl.len().alias("calls"), pl.col("total_ns").clip(lower_bound=0).sum())
        .sort(["total_ns", "job", "op"], descending=[True, False, False])
        .collect()
    )
    return {"hot_functions": rows(hot.select("job", "op", "calls", "total_ns").iter_rows())}


def pyarrow_run(root):
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.dataset as ds

    part = ds.partitioning(pa.schema([("job", pa.string())]), flavor="hive")
    t = ds.dataset(f"{root}/records", format="parquet", partitioning=part).to_table(
        columns=["job", "op", "total_ns"]
    )
    t = t.set_column(2, "total_ns", pc.max_element_wise(t["total_ns"], 0))
    g = t.group_by(["job", "op"]).aggregate([("op", "count"), ("total_ns", "sum")])
    g = g.sort_by([("total_ns_sum", "descending"), ("job", "ascending"), ("op", "ascending")])
    return {
        "hot_functions": rows(
            zip(g["job"].to_pylist(), g["op"].to_pylist(), g["op_count"].to_pylist(),
                g["total_ns_sum"].to_pylist())
        )
    }


def main():
    engine, root, md = sys.argv[1:4]
    sqls = recipes(md)
    if engine == "duckdb":
        out = duckdb_run(root, sqls)
    elif engine == "spark":
        out = spark_run(root, sqls)
    elif engine == "polars":
        out = polars_run(root)
    elif engine == "pyarrow":
        out = pyarrow_run(root)
    else:
        sys.exit(f"unknown engine {engine}")
    json.dump(out, sys.stdout)


main()
