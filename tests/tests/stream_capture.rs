//! `h5prov report` and `h5prov export --parquet` of what `h5prov collect --out` wrote, with
//! real parts: two traced programs (the serial HDF5's workloads) stream their events to a
//! real collector over a Unix socket while writing their trace files; the report of the
//! capture must give the hot-function table of the report of the traces, and the report of
//! the capture's Parquet export the report of the capture.

use h5prov_tests::{
    captured_events, files_with_suffix, h5prov_cmd, h5prov_ok, read_metas, scratch,
    start_collector, workload, Run, Scratch,
};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn report(input: &Path) -> Value {
    serde_json::from_slice(&h5prov_ok(&["report", "--json", "--no-progress", s(input)])).unwrap()
}

/// Two programs streaming at `level` to one collector: (traces, capture).
fn streamed_run(name: &str, level: &str) -> (Scratch, PathBuf, PathBuf) {
    let dir = scratch(name);
    let (traces, capture, data) = (dir.join("traces"), dir.join("capture"), dir.join("data"));
    std::fs::create_dir_all(&data).unwrap();
    let sock = dir.join("collect.sock");
    let (coll, _, _) = start_collector(
        &format!("unix:{}", sock.display()),
        &["--out".as_ref(), capture.as_os_str()],
    );
    let opts = format!("stream=unix:{};stream_level={level}", sock.display());
    for (prog, args) in [
        ("sample", vec!["-d", "."]),
        ("metadata_heavy", vec!["-d", ".", "-n", "40"]),
    ] {
        Run::with_h5prov(&workload(prog), &args, &data, &traces, &opts)
            .env("PBS_JOBID", "4242.stream")
            .ok();
    }
    // Every message made was sent, and the collector wrote each one (it flushes when a
    // sender's connection ends).
    let metas = read_metas(&traces);
    assert_eq!(metas.len(), 2);
    let sent: u64 = metas.iter().map(|m| m.stream_sent.unwrap()).sum();
    assert!(
        metas.iter().all(|m| m.stream_dropped == Some(0)),
        "{metas:?}"
    );
    if level == "event" {
        let records: u64 = metas.iter().map(|m| m.records).sum();
        assert_eq!(sent, records);
        let t0 = Instant::now();
        while captured_events(&capture) != sent && t0.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(200));
        }
        assert_eq!(captured_events(&capture), sent, "events in the --out files");
    } else {
        std::thread::sleep(Duration::from_millis(1500));
    }
    drop(coll);
    (dir, traces, capture)
}

/// The hot-function table's columns a stream carries (not `self_ns`: no `under_ns`).
fn ops(r: &Value) -> Vec<Value> {
    r["ops"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            let keys = [
                "op", "count", "total_ns", "bytes", "errors", "min_ns", "p50_ns", "p99_ns",
                "max_ns",
            ];
            Value::Object(
                keys.iter()
                    .map(|k| (k.to_string(), o[*k].clone()))
                    .collect(),
            )
        })
        .collect()
}

#[test]
fn report_and_export_read_a_collectors_capture() {
    let (_dir, traces, capture) = streamed_run("stream-capture", "event");
    let of_traces = report(&traces);
    let of_capture = report(&capture);
    assert!(!ops(&of_traces).is_empty());
    assert_eq!(ops(&of_capture), ops(&of_traces), "hot-function tables");
    let (rc, rt) = (&of_capture["run"], &of_traces["run"]);
    for k in [
        "records",
        "processes",
        "call_ns",
        "first_ns",
        "last_ns",
        "executables",
        "levels",
    ] {
        assert_eq!(rc[k], rt[k], "run.{k}");
    }
    // It says what it read and what a stream lacks.
    let sc = &rc["stream_capture"];
    assert_eq!(sc["processes"], 2, "{sc}");
    assert_eq!(sc["without_hello"], 0, "{sc}");
    assert!(sc["missing_columns"]
        .as_array()
        .unwrap()
        .contains(&Value::from("under_ns")));
    assert_eq!(
        (rc["trace_files"].as_u64(), rc["meta_files"].as_u64()),
        (Some(0), Some(0))
    );
    assert_eq!(rc["unfinished"], 0);
    assert!(rt.get("stream_capture").is_none());
    let text = String::from_utf8(h5prov_ok(&["report", "--no-progress", s(&capture)])).unwrap();
    assert!(
        text.contains("a stream capture") && text.contains("under_ns"),
        "{text}"
    );

    // A capture inside the trace directory would count every call twice: refused.
    let both = capture.parent().unwrap().join("both");
    let _ = std::fs::remove_dir_all(&both);
    std::fs::create_dir_all(&both).unwrap();
    for f in files_with_suffix(&traces, "")
        .iter()
        .chain(&files_with_suffix(&capture, ""))
    {
        std::fs::copy(f, both.join(f.file_name().unwrap())).unwrap();
    }
    let out = h5prov_cmd(&["report", "--no-progress", s(&both)]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("count twice"),
        "{err}"
    );

    // Its Parquet export reads back as the same report (but for the input's name).
    let export = capture.parent().unwrap().join("export");
    let _ = std::fs::remove_dir_all(&export);
    h5prov_ok(&[
        "export",
        "--no-progress",
        "--parquet",
        s(&export),
        s(&capture),
    ]);
    assert!(export.join("records/job=4242.stream").is_dir());
    let mut of_export = report(&export);
    of_export["run"]["inputs"] = of_capture["run"]["inputs"].clone();
    assert_eq!(of_export, of_capture, "report of the capture's export");

    // A malformed line is named by file and line, or skipped with --lenient.
    let bad = capture.parent().unwrap().join("bad-capture");
    let _ = std::fs::remove_dir_all(&bad);
    std::fs::create_dir_all(&bad).unwrap();
    let files = files_with_suffix(&capture, ".jsonl");
    let first = &files[0];
    let mut text = std::fs::read_to_string(first).unwrap();
    let line = text.lines().count() + 1;
    text.push_str("{\"v\":1,\"type\":\"event\",\"job_id\":\"x\"}\n");
    let bad_file = bad.join(first.file_name().unwrap());
    std::fs::write(&bad_file, text).unwrap();
    let out = h5prov_cmd(&["report", "--json", "--no-progress", s(&bad)]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains(&format!("{}:{line}:", bad_file.display())) && err.contains("missing field"),
        "{err}"
    );
    let lenient: Value = serde_json::from_slice(&h5prov_ok(&[
        "report",
        "--json",
        "--no-progress",
        "--lenient",
        s(&bad),
    ]))
    .unwrap();
    assert_eq!(lenient["run"]["malformed_rows"], 1);
}

#[test]
fn a_capture_of_interval_sums_is_refused_by_name() {
    let (_dir, _traces, capture) = streamed_run("stream-capture-interval", "interval");
    let out = h5prov_cmd(&["report", "--no-progress", s(&capture)]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("collect-") && err.contains("only interval sums"),
        "{err}"
    );
}
