//! Every record reaches the disk, however the process ends: `_exit` from C, `os._exit` in
//! Python `multiprocessing` workers (fork and spawn, h5py from its wheel), `kill -9` in the
//! middle of a run. Each thread's buffered records are mirrored in the process's pending
//! sidecar (`<stem>.pending`, a shared mapping the kernel keeps when the process dies);
//! the analyzer reads a trace and its sidecar as one trace and finishes the meta.
//!
//! Each test counts the records a complete run makes independently: the same program's
//! reference run closes properly, and the records of the work are its records before it
//! closes its file (h5py asks for the file's open objects first). The run that does not close
//! must have exactly those records (the same operations, in order), as read by
//! `h5prov cat`, and `h5prov report` must not call its trace incomplete.

use h5prov_tests::*;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

/// The work's last kind of call (it sets an attribute "done" last): a trace with one holds
/// records of the work.
const MARKER: &str = "attr.write";

/// The calls that close a file: the reference run's records before the first of them are
/// the work's.
const CLOSING: &[&str] = &["file.close", "file.get:obj_count", "file.get:obj_ids"];

/// The records of one trace file through `h5prov cat` (the analyzer's one reader, with
/// the sidecar), as (seq, op).
fn cat(trace: &Path) -> Vec<(u64, String)> {
    let out = h5prov_ok(&["cat", "--format", "jsonl", trace.to_str().unwrap()]);
    String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            (
                v["seq"].as_u64().unwrap(),
                v["op"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// The trace files under `dir` that hold records of the work (a marker).
fn work_traces(dir: &Path) -> Vec<(PathBuf, Vec<(u64, String)>)> {
    files_with_suffix(dir, "")
        .into_iter()
        .filter(|p| {
            // `*.trace.bin.zst` (the default) is a binary trace, compressed.
            let name = p.to_string_lossy();
            let name = name.strip_suffix(".zst").unwrap_or(&name);
            h5prov_format::classify(Path::new(name))
                .is_some_and(|c| c.0 == h5prov_format::FileRole::Trace)
        })
        .map(|p| {
            let recs = cat(&p);
            (p, recs)
        })
        .filter(|(_, r)| r.iter().any(|(_, op)| op == MARKER))
        .collect()
}

/// The work's operations in a reference trace: those before it closes its file.
fn work_ops(records: &[(u64, String)]) -> Vec<String> {
    let end = records
        .iter()
        .position(|(_, op)| CLOSING.contains(&op.as_str()))
        .expect("the reference run closes its file");
    assert!(
        records[..end].iter().any(|(_, op)| op == MARKER),
        "{records:?}"
    );
    records[..end].iter().map(|(_, op)| op.clone()).collect()
}

/// A trace of a process that did not close holds exactly the work's records: the same
/// operations as the reference, and sequence numbers 0, 1, 2... without a gap.
fn assert_all_records(trace: &Path, records: &[(u64, String)], reference: &[String]) {
    let ops: Vec<String> = records.iter().map(|(_, op)| op.clone()).collect();
    assert_eq!(
        ops.len(),
        reference.len(),
        "{}: {} records on disk, the work made {} HDF5 calls (records of the reference run)",
        trace.display(),
        ops.len(),
        reference.len()
    );
    assert_eq!(
        ops,
        reference,
        "{}: other operations than the reference's",
        trace.display()
    );
    let mut seqs: Vec<u64> = records.iter().map(|(s, _)| *s).collect();
    seqs.sort_unstable();
    assert!(
        seqs.iter().enumerate().all(|(i, s)| *s == i as u64),
        "{}: sequence numbers with gaps",
        trace.display()
    );
}

/// `h5prov report --json` of `dir`.
fn report(dir: &Path) -> serde_json::Value {
    let out = h5prov_ok(&["report", "--json", "--no-progress", dir.to_str().unwrap()]);
    serde_json::from_slice(&out).unwrap()
}

/// `h5prov report --json` of `dir`: no incompleteness warning, no trace warning, and
/// `unclosed` processes ended without closing, each with its per-object summaries rebuilt
/// from its records (there are some: it created a file and objects in it).
fn assert_report_complete(dir: &Path, unclosed: u64) {
    let rep = report(dir);
    let codes: Vec<&str> = rep["insights"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["code"].as_str().unwrap())
        .collect();
    assert!(
        !codes.contains(&"incomplete_trace"),
        "a false incompleteness warning: {:#}",
        rep["insights"]
    );
    assert_eq!(rep["run"]["unfinished"], 0, "{:#}", rep["run"]);
    assert_eq!(
        rep["warnings"].as_array().map_or(0, |w| w.len()),
        0,
        "trace warnings: {:#}",
        rep["warnings"]
    );
    assert_eq!(rep["run"]["unclosed"], unclosed, "{:#}", rep["run"]);
    assert!(codes.contains(&"ended_without_closing"), "{codes:?}");
    assert_eq!(rep["run"]["objects_rebuilt"], unclosed, "{:#}", rep["run"]);
    assert!(codes.contains(&"objects_rebuilt"), "{codes:?}");
    assert!(
        rep["run"]["object_rows"].as_u64().unwrap() >= 2 * unclosed,
        "no per-object rows: {:#}",
        rep["run"]
    );
}

/// The per-object summaries of a process that did not close are those of its reference
/// run (which closed): as many rows, and each file's dataset counts and opening time.
fn assert_objects_like_reference(dir: &Path, reference: &Path) {
    let (rep, want) = (report(dir), report(reference));
    assert_eq!(
        rep["run"]["object_rows"], want["run"]["object_rows"],
        "objects rows: {:#} against the reference's {:#}",
        rep["run"], want["run"]
    );
    let files = |r: &serde_json::Value| -> Vec<(u64, u64, bool)> {
        r["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                (
                    f["datasets_created"].as_u64().unwrap(),
                    f["datasets_opened"].as_u64().unwrap(),
                    // Open from its creation to the process's last call: not only its own
                    // calls.
                    f["open_ns"].as_u64().unwrap() > f["total_ns"].as_u64().unwrap() / 2,
                )
            })
            .collect()
    };
    assert_eq!(files(&rep), files(&want), "{:#}", rep["files"]);
}

/// The C program's reference run: its work's operations, and its traces directory.
fn c_reference(n: &str, options: &str) -> (Vec<String>, PathBuf, Scratch) {
    let exe = c_program("exit_paths");
    let dir = scratch(&format!("exit-ref-{n}"));
    let traces = dir.join("traces");
    // Its file is named like the runs' (`a.h5`), in another directory: the reports match.
    Run::with_h5prov(&exe, &["a.h5", n, "close"], &dir, &traces, options).ok();
    let t = work_traces(&traces);
    assert_eq!(t.len(), 1, "{t:?}");
    (work_ops(&t[0].1), traces, dir)
}

#[test]
fn a_c_child_that_calls_exit_loses_no_record() {
    // 3000 datasets: about 9000 records, less than one buffer (all would be lost).
    let (reference, ref_traces, _ref_dir) = c_reference("3000", "");
    let exe = c_program("exit_paths");
    let dir = scratch("exit-_exit");
    let traces = dir.join("traces");
    Run::with_h5prov(&exe, &["a.h5", "3000", "exit"], &dir, &traces, "").ok();
    let t = work_traces(&traces);
    assert_eq!(t.len(), 1, "the _exit run's trace holds the marker: {t:?}");
    assert_all_records(&t[0].0, &t[0].1, &reference);
    assert_report_complete(&traces, 1);
    assert_objects_like_reference(&traces, &ref_traces);
}

#[test]
fn kill_9_in_the_middle_of_a_run_loses_no_record() {
    // A small buffer: many blocks reach the trace file before the kill, and the last ones
    // are only in the sidecar.
    let options = "buffer=64K";
    let (reference, ref_traces, _ref_dir) = c_reference("2000", options);
    let exe = c_program("exit_paths");
    let dir = scratch("exit-kill9");
    let traces = dir.join("traces");
    let run = Run::with_h5prov(&exe, &["a.h5", "2000", "wait"], &dir, &traces, options);
    let desc = run.describe();
    let mut child = run.spawn_piped();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line.trim(), "ready", "{desc}");
    // SIGKILL: no handler, no atexit, nothing of h5prov's runs.
    child.kill().unwrap();
    let status = child.wait().unwrap();
    assert!(!status.success(), "{desc}: {status}");
    let t = work_traces(&traces);
    assert_eq!(t.len(), 1, "the killed run's trace holds the marker: {t:?}");
    assert_all_records(&t[0].0, &t[0].1, &reference);
    assert_report_complete(&traces, 1);
    assert_objects_like_reference(&traces, &ref_traces);
}

/// `tests/python/mp_exit.py DIR MODE` under the wheels venv, through h5prov, in scratch
/// directory `label`.
fn mp_exit(mode: &str, label: &str) -> (Scratch, PathBuf) {
    let dir = scratch(&format!("mp-exit-{label}"));
    let traces = dir.join("traces");
    let script = repo().join("tests/python/mp_exit.py");
    Run::python(&script, &[dir.to_str().unwrap(), mode], &dir)
        .h5prov(&traces, "")
        .ok();
    (dir, traces)
}

fn multiprocessing_workers_lose_no_record(mode: &str) {
    let reference = {
        let (_dir, traces) = mp_exit("direct", &format!("direct-for-{mode}"));
        let t = work_traces(&traces);
        assert_eq!(t.len(), 1, "{t:?}");
        work_ops(&t[0].1)
    };
    let (_dir, traces) = mp_exit(mode, mode);
    let t = work_traces(&traces);
    assert_eq!(t.len(), 3, "one trace per worker holds the marker: {t:?}");
    for (p, recs) in &t {
        assert_all_records(p, recs, &reference);
    }
    assert_report_complete(&traces, 3);
}

#[test]
fn multiprocessing_fork_workers_that_os_exit_lose_no_record() {
    multiprocessing_workers_lose_no_record("fork");
}

#[test]
fn multiprocessing_spawn_workers_that_os_exit_lose_no_record() {
    multiprocessing_workers_lose_no_record("spawn");
}

/// A normal end leaves no sidecar: a clean run's files are what they were.
#[test]
fn a_clean_run_leaves_no_sidecar() {
    let exe = c_program("exit_paths");
    let dir = scratch("exit-clean");
    let traces = dir.join("traces");
    Run::with_h5prov(&exe, &["a.h5", "10", "close"], &dir, &traces, "").ok();
    assert!(files_with_suffix(&traces, ".pending").is_empty());
    assert_eq!(files_with_suffix(&traces, ".meta.json").len(), 1);
}

/// `h5prov export --parquet` of a process that called `_exit`: its `processes` row has the
/// `end_ns` the report derives (its last call's end), so the export's report does not call
/// it unfinished (the records table does not say that its trace had a sidecar).
#[test]
fn a_parquet_export_finishes_a_process_that_called_exit() {
    let exe = c_program("exit_paths");
    let dir = scratch("exit-parquet");
    let traces = dir.join("traces");
    Run::with_h5prov(&exe, &["a.h5", "50", "exit"], &dir, &traces, "").ok();
    assert_eq!(work_traces(&traces).len(), 1);
    let out = dir.join("pq");
    h5prov_ok(&[
        "export",
        "--no-progress",
        "--parquet",
        out.to_str().unwrap(),
        traces.to_str().unwrap(),
    ]);
    let rep = report(&out);
    assert_eq!(rep["run"]["processes"], 1, "{:#}", rep["run"]);
    assert_eq!(
        rep["run"]["unfinished"], 0,
        "the export's processes row has no end_ns: {:#}",
        rep["run"]
    );
    let codes: Vec<&str> = rep["insights"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["code"].as_str().unwrap())
        .collect();
    assert!(!codes.contains(&"incomplete_trace"), "{codes:?}");
    let direct = report(&traces);
    assert_eq!(rep["run"]["records"], direct["run"]["records"]);
    assert_eq!(direct["run"]["unfinished"], 0, "{:#}", direct["run"]);
}

/// `h5prov merge` of a directory with a process that called `_exit`: the merged file holds
/// its sidecar's records too, so its report is the directory's: every record, the process
/// ended without closing (not unfinished), its per-object summaries rebuilt.
#[test]
fn merging_keeps_the_records_of_a_process_that_called_exit() {
    let exe = c_program("exit_paths");
    let dir = scratch("exit-merge");
    let traces = dir.join("traces");
    // 3000 datasets: most records are only in the sidecar.
    Run::with_h5prov(&exe, &["a.h5", "3000", "exit"], &dir, &traces, "").ok();
    let t = work_traces(&traces);
    assert_eq!(t.len(), 1, "{t:?}");
    assert_eq!(files_with_suffix(&traces, ".pending").len(), 1);
    let merged = dir.join("run.h5prov");
    h5prov_ok(&[
        "merge",
        "--no-progress",
        "-o",
        merged.to_str().unwrap(),
        traces.to_str().unwrap(),
    ]);
    // The member reads as the trace and its sidecar did.
    let member = merged.join(t[0].0.file_name().unwrap());
    let got = cat(&member);
    assert!(
        got == t[0].1,
        "the merged trace has {} records, the trace and its sidecar {}",
        got.len(),
        t[0].1.len()
    );
    let (rep, want) = (report(&merged), report(&traces));
    for k in [
        "records",
        "unfinished",
        "unclosed",
        "objects_rebuilt",
        "object_rows",
    ] {
        assert_eq!(rep["run"][k], want["run"][k], "{k}: {:#}", rep["run"]);
    }
    assert_eq!(rep["run"]["unclosed"], 1, "{:#}", rep["run"]);
    assert_eq!(rep["run"]["unfinished"], 0, "{:#}", rep["run"]);
}
