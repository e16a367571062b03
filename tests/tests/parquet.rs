//! `h5prov export --parquet` on real traced runs, read back by `h5prov report` and by real
//! engines from PyPI: DuckDB, Polars, pyarrow and Spark (local mode, on Java).
//!
//! Two jobs run the workloads through h5prov under launcher job ids (`SLURM_JOB_ID=4242`:
//! a 4-rank VPIC-like writer with a slowed rank; `PBS_JOBID=77.server`: the demo sample
//! and a metadata-heavy run). Their traces are exported into one dataset, one job after
//! the other. The hot-function table (count and total time per operation) of each engine
//! must equal `h5prov report --json`'s exactly; DuckDB and Spark must agree on every SQL
//! recipe of docs/PARQUET.md.

use h5prov_tests::*;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

const JOB_A: &str = "4242";
const JOB_B: &str = "77.server";

struct Fixture {
    /// Traces of job A and job B.
    a: PathBuf,
    b: PathBuf,
    /// Job A exported alone.
    one: PathBuf,
    /// Job A, then job B, exported into one dataset.
    two: PathBuf,
}

/// Runs `program args` through h5prov into `traces` with `env` (rank variables, job id).
fn traced(program: &str, args: &[&str], traces: &Path, env: &[(&str, &str)]) {
    let cwd = traces.parent().unwrap().join("data");
    std::fs::create_dir_all(&cwd).unwrap();
    let mut run = Run::with_h5prov(&workload(program), args, &cwd, traces, "level=dataset");
    for v in JOB_VARS {
        run = run.env_remove(v);
    }
    for (k, v) in env {
        run = run.env(k, v);
    }
    // `ok` requires the metadata record (h5prov was loaded) and exit status 0.
    run.ok();
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        // Shared by every test of this binary, so kept.
        let root = scratch("parquet").keep();
        let a = root.join("job-a/traces");
        let b = root.join("job-b/traces");
        for rank in 0..4 {
            let r = rank.to_string();
            traced(
                "vpic_write",
                // -s 3:8: rank 3 writes 8 times as much (a straggler; 100000 particles
                // make the data writes outweigh file creation).
                &["-d", ".", "-p", "100000", "-t", "2", "-s", "3:8"],
                &a,
                &[
                    ("OMPI_COMM_WORLD_RANK", &r),
                    ("OMPI_COMM_WORLD_SIZE", "4"),
                    ("SLURM_JOB_ID", JOB_A),
                ],
            );
        }
        traced("sample", &["-d", "."], &b, &[("PBS_JOBID", JOB_B)]);
        traced(
            "metadata_heavy",
            // Enough iterations for metadata to outweigh the sample's data writes.
            &["-d", ".", "-n", "1000"],
            &b,
            &[("PBS_JOBID", JOB_B)],
        );
        // The HDF5 files (~90 MB) are not needed any more, only their traces.
        for job in ["job-a", "job-b"] {
            let _ = std::fs::remove_dir_all(root.join(job).join("data"));
        }
        let one = root.join("one");
        let two = root.join("two");
        h5prov_ok(&["export", "--no-progress", "--parquet", s(&one), s(&a)]);
        h5prov_ok(&["export", "--no-progress", "--parquet", s(&two), s(&a)]);
        h5prov_ok(&["export", "--no-progress", "--parquet", s(&two), s(&b)]);
        Fixture { a, b, one, two }
    })
}

/// `h5prov report --json` of `input` (`--job job` when given).
fn report(input: &Path, job: Option<&str>) -> Vec<u8> {
    let mut args = vec!["report", "--json", "--no-progress", s(input)];
    if let Some(j) = job {
        args.extend(["--job", j]);
    }
    h5prov_ok(&args)
}

/// The report's only field that names its input: `run.inputs`, the path given.
fn with_input(report: &[u8], from: &Path, to: &Path) -> Vec<u8> {
    let text = String::from_utf8(report.to_vec()).unwrap();
    let q = |p: &Path| serde_json::to_string(s(p)).unwrap();
    let old = format!("\"inputs\": [\n      {}\n    ]", q(from));
    assert!(text.contains(&old), "no {old} in the report");
    text.replacen(&old, &format!("\"inputs\": [\n      {}\n    ]", q(to)), 1)
        .into_bytes()
}

#[test]
fn the_connector_records_the_launchers_job_id() {
    let f = fixture();
    for (dir, job, n) in [(&f.a, JOB_A, 4), (&f.b, JOB_B, 2)] {
        let metas = read_metas(dir);
        assert_eq!(metas.len(), n);
        for m in metas {
            assert_eq!(m.job_id, job, "{}", dir.display());
        }
    }
    for (t, job) in [("records", JOB_A), ("processes", JOB_B), ("files", JOB_A)] {
        assert!(f.two.join(t).join(format!("job={job}")).is_dir());
    }
}

#[test]
fn report_of_an_export_is_the_report_of_its_traces() {
    let f = fixture();
    let from_traces = report(&f.a, None);
    // Byte for byte, but for `run.inputs`: it names the directory the report read.
    assert_eq!(
        String::from_utf8(with_input(&from_traces, &f.a, &f.one)).unwrap(),
        String::from_utf8(report(&f.one, None)).unwrap(),
        "report of job A's export (one job: no --job needed) differs from its traces'"
    );
    for (traces, job) in [(&f.a, JOB_A), (&f.b, JOB_B)] {
        assert_eq!(
            String::from_utf8(with_input(&report(traces, None), traces, &f.two)).unwrap(),
            String::from_utf8(report(&f.two, Some(job))).unwrap(),
            "report of job {job} of the two-job export differs from its traces'"
        );
    }
    // Of two jobs, one must be chosen.
    let out = h5prov_cmd(&["report", "--json", s(&f.two)]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("2 jobs")
            && err.contains(JOB_A)
            && err.contains(JOB_B)
            && err.contains("--job"),
        "{err}"
    );
    let out = h5prov_cmd(&["report", "--json", s(&f.two), "--job", "nope"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no job nope"));
}

/// Every file under `dir` with its bytes.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    files_with_suffix(dir, "")
        .into_iter()
        .map(|p| {
            let b = std::fs::read(&p).unwrap();
            (p, b)
        })
        .collect()
}

#[test]
fn a_job_is_exported_once_and_others_are_added_beside_it() {
    let f = fixture();
    let root = scratch("parquet-once");
    let dir = root.join("ds");
    h5prov_ok(&["export", "--no-progress", "--parquet", s(&dir), s(&f.b)]);
    let before = snapshot(&dir);
    let out = h5prov_cmd(&["export", "--no-progress", "--parquet", s(&dir), s(&f.b)]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success(),
        "a second export of job {JOB_B} must be refused"
    );
    assert!(
        err.contains("already exported") && err.contains(&format!("job={JOB_B}")),
        "{err}"
    );
    assert_eq!(
        snapshot(&dir),
        before,
        "a refused export changed the dataset"
    );
    // Another job is added beside it; the first job's files are untouched.
    h5prov_ok(&["export", "--no-progress", "--parquet", s(&dir), s(&f.a)]);
    let after = snapshot(&dir);
    for (p, b) in &before {
        assert_eq!(after.get(p), Some(b), "{} was rewritten", p.display());
    }
    assert!(after.len() > before.len());
    assert!(
        !std::fs::read_dir(&dir).unwrap().any(|e| e
            .unwrap()
            .file_name()
            .to_string_lossy()
            .starts_with("_tmp")),
        "temporary directories left in {}",
        dir.display()
    );
    // --job names a run's job; traces without a launcher id get a stable derived one.
    let c = dir.parent().unwrap().join("job-c/traces");
    traced("sample", &["-d", "."], &c, &[]);
    assert!(read_metas(&c).iter().all(|m| m.job_id.is_empty()));
    h5prov_ok(&["export", "--no-progress", "--parquet", s(&dir), s(&c)]);
    let other = dir.parent().unwrap().join("ds2");
    h5prov_ok(&["export", "--no-progress", "--parquet", s(&other), s(&c)]);
    let derived: Vec<String> = [&dir, &other]
        .iter()
        .map(|d| {
            let mut v: Vec<String> = std::fs::read_dir(d.join("records"))
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with("job=run-"))
                .collect();
            assert_eq!(v.len(), 1, "{v:?}");
            v.pop().unwrap()
        })
        .collect();
    assert_eq!(derived[0], derived[1], "the derived job id is not stable");
    let out = h5prov_cmd(&["export", "--no-progress", "--parquet", s(&other), s(&c)]);
    assert!(!out.status.success(), "the same derived job exported twice");
    h5prov_ok(&[
        "export",
        "--no-progress",
        "--parquet",
        s(&other),
        s(&c),
        "--job",
        "renamed/1",
    ]);
    assert!(other.join("processes/job=renamed_1").is_dir());
}

/// Per job, the report's hot functions: op → (count, total_ns).
type Hot = BTreeMap<String, BTreeMap<String, (u64, u64)>>;

fn report_hot(jobs: &[(&Path, &str)]) -> Hot {
    jobs.iter()
        .map(|(traces, job)| {
            let r: Value = serde_json::from_slice(&report(traces, None)).unwrap();
            let ops = r["ops"]
                .as_array()
                .unwrap()
                .iter()
                .map(|o| {
                    (
                        o["op"].as_str().unwrap().to_string(),
                        (
                            o["count"].as_u64().unwrap(),
                            o["total_ns"].as_u64().unwrap(),
                        ),
                    )
                })
                .collect();
            (job.to_string(), ops)
        })
        .collect()
}

/// An engine's results for the export `dir`: recipe → rows.
fn engine(name: &str, dir: &Path) -> BTreeMap<String, Vec<Value>> {
    let py = engines_python();
    let script = repo().join("tests/python/parquet_engines.py");
    let mut cmd = Command::new(&py);
    cmd.arg(&script)
        .arg(name)
        .arg(dir)
        .arg(repo().join("docs/PARQUET.md"))
        .env_remove("PYTHONPATH")
        .env_remove("SPARK_HOME");
    let desc = format!("{cmd:?}");
    let out = cmd.output().unwrap_or_else(|e| panic!("{desc}: {e}"));
    assert!(out.status.success(), "{}", describe_output(&desc, &out));
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{desc}: no JSON ({e}): {}", describe_output(&desc, &out)))
}

fn engine_hot(rows: &[Value]) -> Hot {
    let mut out = Hot::new();
    for r in rows {
        let job = r[0].as_str().unwrap().to_string();
        let op = r[1].as_str().unwrap().to_string();
        let v = (r[2].as_u64().unwrap(), r[3].as_u64().unwrap());
        assert!(
            out.entry(job).or_default().insert(op, v).is_none(),
            "a (job, op) twice"
        );
    }
    out
}

#[test]
fn duckdb_polars_and_pyarrow_give_the_reports_hot_functions() {
    let f = fixture();
    let want = report_hot(&[(&f.a, JOB_A), (&f.b, JOB_B)]);
    assert!(want.values().all(|ops| ops.len() > 5));
    for name in ["duckdb", "polars", "pyarrow"] {
        // The two-job export, queried as one dataset.
        let got = engine(name, &f.two);
        assert_eq!(
            engine_hot(&got["hot_functions"]),
            want,
            "{name}'s hot functions over the two-job export differ from h5prov report --json"
        );
        // Ordered by total time, as the report.
        let totals: Vec<u64> = got["hot_functions"]
            .iter()
            .map(|r| r[3].as_u64().unwrap())
            .collect();
        assert!(
            totals.windows(2).all(|w| w[0] >= w[1]),
            "{name}: {totals:?}"
        );
    }
    let one = engine("duckdb", &f.one);
    assert_eq!(
        engine_hot(&one["hot_functions"]),
        report_hot(&[(&f.a, JOB_A)])
    );
    // The other recipes find what the runs did: rank 3 of job A straggles; job B (the
    // metadata-heavy run) spends more time in metadata than in data.
    let d = engine("duckdb", &f.two);
    let strag: Vec<(String, i64)> = d["straggler_ranks"]
        .iter()
        .map(|r| (r[0].as_str().unwrap().to_string(), r[1].as_i64().unwrap()))
        .collect();
    assert!(strag.contains(&(JOB_A.to_string(), 3)), "{strag:?}");
    let meta_jobs: Vec<&str> = d["metadata_heavy_jobs"]
        .iter()
        .map(|r| r[0].as_str().unwrap())
        .collect();
    assert!(
        meta_jobs.contains(&JOB_B) && !meta_jobs.contains(&JOB_A),
        "{meta_jobs:?}"
    );
    assert!(d["bytes_per_file"]
        .iter()
        .any(|r| r[0] == JOB_A && r[4].as_u64().unwrap() > 0));
    assert_eq!(d["job_spans"].len(), 2);
}

#[test]
fn spark_runs_the_same_queries_and_gets_the_same_numbers() {
    let f = fixture();
    let java = Command::new("java").arg("-version").output();
    assert!(
        java.is_ok_and(|o| o.status.success()),
        "Spark needs Java 17 or later: apt-get install openjdk-17-jre-headless"
    );
    let spark = engine("spark", &f.two);
    let duck = engine("duckdb", &f.two);
    assert_eq!(
        engine_hot(&spark["hot_functions"]),
        report_hot(&[(&f.a, JOB_A), (&f.b, JOB_B)]),
        "Spark's hot functions differ from h5prov report --json"
    );
    assert_eq!(
        spark.keys().collect::<Vec<_>>(),
        duck.keys().collect::<Vec<_>>()
    );
    for (recipe, rows) in &duck {
        assert_eq!(
            &spark[recipe], rows,
            "Spark and DuckDB disagree on recipe {recipe}"
        );
    }
}
