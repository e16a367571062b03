//! `h5prov export --parquet` adds a job to every table or to none, whatever kills it: an
//! export killed at each of its steps (the test hook `H5PROV_TEST_EXPORT_STOP`, see
//! `analyzer/src/export/parquet/commit.rs`, aborts it there like a `kill -9`), an export killed
//! for real while another waits for it, and the leftovers of an older export killed early.
//! After each: `h5prov report` sees the job whole or not at all, no temporary or truncated
//! Parquet file is where an engine's glob (`read_parquet('OUT/**/*.parquet')`) looks, and
//! the next export succeeds. The traces are a real HDF5 program's, run with the real
//! `libh5prov.so`.

use h5prov_tests::*;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

const TABLES: [&str; 4] = ["records", "objects", "processes", "files"];

/// The export's steps, in order (`commit::STEPS`); from `committed` on, the job is exported.
const STEPS: [&str; 7] = [
    "records-written",
    "staged",
    "committed",
    "moved-1",
    "moved-2",
    "moved-3",
    "moved-4",
];

/// Traces of job `1001` and of job `1002`: one `small_writes` run each.
fn traces() -> &'static (PathBuf, PathBuf) {
    static T: OnceLock<(PathBuf, PathBuf)> = OnceLock::new();
    T.get_or_init(|| {
        // Shared by every test of this binary, so kept.
        let root = scratch("parquet-atomic").keep();
        let mut dirs = Vec::new();
        for job in ["1001", "1002"] {
            let cwd = root.join(format!("data-{job}"));
            std::fs::create_dir_all(&cwd).unwrap();
            let traces = root.join(format!("traces-{job}"));
            let mut run = Run::with_h5prov(
                &c_program("small_writes"),
                &["f.h5", "200"],
                &cwd,
                &traces,
                "level=dataset",
            );
            for v in JOB_VARS {
                run = run.env_remove(v);
            }
            run.env("SLURM_JOB_ID", job).ok();
            dirs.push(traces);
        }
        (dirs[0].clone(), dirs[1].clone())
    })
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn export(out: &Path, traces: &Path) -> Command {
    let mut c = Command::new(analyzer());
    c.args(["export", "--no-progress", "--parquet", s(out), s(traces)]);
    c
}

fn run(mut c: Command) -> std::process::Output {
    let desc = format!("{c:?}");
    c.output().unwrap_or_else(|e| panic!("{desc}: {e}"))
}

/// `h5prov report --json` of job `job` of `out`: the report, or the error.
fn report(out: &Path, job: &str) -> Result<String, String> {
    let o = h5prov_cmd(&["report", "--json", "--no-progress", s(out), "--job", job]);
    if o.status.success() {
        Ok(String::from_utf8(o.stdout).unwrap())
    } else {
        Err(String::from_utf8_lossy(&o.stderr).into_owned())
    }
}

/// The report of `traces` as `report(out, ..)` gives it (its input named `out`).
fn report_of_traces(traces: &Path, out: &Path) -> String {
    let r =
        String::from_utf8(h5prov_ok(&["report", "--json", "--no-progress", s(traces)])).unwrap();
    let q = |p: &Path| serde_json::to_string(s(p)).unwrap();
    r.replacen(&q(traces), &q(out), 1)
}

/// Every `*.parquet` file under `out`, at any depth, `_` and `.` directories included:
/// what DuckDB's and Polars' `OUT/**/*.parquet` glob (both descend into such directories).
fn globbed(out: &Path) -> Vec<PathBuf> {
    files_with_suffix(out, ".parquet")
}

/// The tables whose partition of `job` the glob sees; every globbed file must be a
/// complete Parquet file (magic at both ends) in some table's `job=` partition.
fn visible_tables(out: &Path, job: &str) -> Vec<&'static str> {
    for f in globbed(out) {
        let rel = f.strip_prefix(out).unwrap();
        let parts: Vec<_> = rel.iter().map(|c| c.to_str().unwrap()).collect();
        assert!(
            parts.len() == 3 && TABLES.contains(&parts[0]) && parts[1].starts_with("job="),
            "{} is not a table partition's file",
            f.display()
        );
        let b = std::fs::read(&f).unwrap();
        assert!(
            b.len() >= 8 && b.starts_with(b"PAR1") && b.ends_with(b"PAR1"),
            "{} is not a complete Parquet file",
            f.display()
        );
    }
    TABLES
        .into_iter()
        .filter(|t| {
            let d = out.join(t).join(format!("job={job}"));
            !globbed(&d).is_empty()
        })
        .collect()
}

#[test]
fn an_export_killed_at_any_step_leaves_its_job_whole_or_absent() {
    let (a, b) = traces();
    let base = scratch("parquet-killed");
    for (i, step) in STEPS.iter().enumerate() {
        let committed = i >= 2;
        let out = base.join(step).join("ds");
        let mut c = export(&out, a);
        c.env("H5PROV_TEST_EXPORT_STOP", step);
        let o = run(c);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            !o.status.success() && err.contains(&format!("aborted at step {step}")),
            "{step}: the export was not stopped there: {err}"
        );
        // h5prov report: the whole job once committed, else no job.
        match report(&out, "1001") {
            Ok(r) => {
                assert!(committed, "{step}: job 1001 reported before its commit");
                assert_eq!(r, report_of_traces(a, &out), "{step}: a partial job");
            }
            Err(e) => assert!(!committed, "{step}: the committed job is not read: {e}"),
        }
        // The glob: no temporary or truncated file ever; all or none of the job's tables,
        // but while the partitions are being moved (a kill between two renames: until the
        // next export finishes the moves, only h5prov reads the job whole).
        let seen = visible_tables(&out, "1001");
        match *step {
            "records-written" | "staged" | "committed" => assert!(seen.is_empty(), "{step}"),
            "moved-4" => assert_eq!(seen, TABLES, "{step}"),
            _ => assert_eq!(seen.len(), i - 2, "{step}: {seen:?}"),
        }
        // The next export succeeds: the same job again if it never was exported (its
        // leftovers removed), another job beside it if it was (it is finished first).
        if committed {
            let o = run(export(&out, a));
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(
                !o.status.success() && err.contains("already exported"),
                "{step}: {err}"
            );
            let o = run(export(&out, b));
            assert!(o.status.success(), "{step}: {o:?}");
            assert_eq!(visible_tables(&out, "1002"), TABLES, "{step}");
        } else {
            let o = run(export(&out, a));
            assert!(o.status.success(), "{step}: {o:?}");
        }
        assert_eq!(visible_tables(&out, "1001"), TABLES, "{step}");
        assert_eq!(
            report(&out, "1001").unwrap(),
            report_of_traces(a, &out),
            "{step}"
        );
        // Nothing staged is left beside the export.
        let staging = out.with_file_name(".ds.h5prov-staging");
        assert!(!staging.exists(), "{step}: {} left", staging.display());
    }
}

#[test]
fn a_second_export_of_a_job_names_the_first_and_a_killed_one_is_cleaned_up() {
    let (a, _) = traces();
    let root = scratch("parquet-concurrent");
    let out = root.join("ds");
    // The first export waits once its tables are staged...
    let mut c = export(&out, a);
    c.env("H5PROV_TEST_EXPORT_STOP", "staged:sleep")
        .stderr(Stdio::piped());
    let mut first = KillOnDrop(c.spawn().unwrap());
    let pid = first.0.id();
    let mut stderr = BufReader::new(first.0.stderr.take().unwrap());
    let mut line = String::new();
    while !line.contains("waiting at step staged") {
        line.clear();
        assert!(
            stderr.read_line(&mut line).unwrap() > 0,
            "the first export ended"
        );
    }
    // ...while a second one of the same job is refused, naming the job and the first.
    let o = run(export(&out, a));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{err}");
    assert!(
        err.contains("job 1001")
            && err.contains("another export")
            && err.contains(&format!("pid {pid}")),
        "{err}"
    );
    assert!(!err.contains("not empty"), "{err}");
    assert!(visible_tables(&out, "1001").is_empty());
    // Killed for real (SIGKILL), the first leaves nothing a reader sees, and the next
    // export of the job succeeds without any cleaning by hand.
    first.0.kill().unwrap();
    first.0.wait().unwrap();
    assert!(report(&out, "1001").is_err());
    assert!(visible_tables(&out, "1001").is_empty());
    let o = run(export(&out, a));
    assert!(o.status.success(), "{o:?}");
    assert_eq!(visible_tables(&out, "1001"), TABLES);
    assert_eq!(report(&out, "1001").unwrap(), report_of_traces(a, &out));
    assert!(!out.with_file_name(".ds.h5prov-staging").exists());
}

#[test]
fn an_older_exports_leftovers_are_removed_by_the_next_export() {
    let (a, b) = traces();
    let root = scratch("parquet-leftovers");
    let out = root.join("ds");
    let o = run(export(&out, b));
    assert!(o.status.success(), "{o:?}");
    // What an export killed early left before: its temporary directory inside the
    // export, named after a process that is gone, holding a truncated Parquet file.
    let dead = u32::MAX / 2 + 12345;
    assert!(!Path::new(&format!("/proc/{dead}")).exists());
    let tmp = out.join(format!("_tmp-job=1001-{dead}"));
    std::fs::create_dir_all(tmp.join("records")).unwrap();
    std::fs::write(tmp.join("records/part-0.parquet"), b"PAR1\x15\x00").unwrap();
    let o = run(export(&out, a));
    assert!(o.status.success(), "{o:?}");
    assert!(!tmp.exists(), "{} left", tmp.display());
    assert_eq!(visible_tables(&out, "1001"), TABLES);
    assert_eq!(visible_tables(&out, "1002"), TABLES);
}
