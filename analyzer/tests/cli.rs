//! CLI behaviour: exit codes, error and warning messages (file, line, flag), outputs.

mod common;
use common::h5prov;

#[test]
fn report_ok_warns_once_about_truncation() {
    let r = h5prov(&["report", "tests/fixtures/mpi4"]);
    r.expect_code(0)
        .expect_stdout("HOT FUNCTIONS by total time")
        .expect_stderr("tests/fixtures/mpi4/d0001/h5prov-r3-p1003.trace.csv:345");
    assert_eq!(
        r.stderr().matches("truncated").count(),
        1,
        "{}",
        r.explain()
    );
    assert!(
        !r.stdout().contains('\x1b'),
        "NO_COLOR must disable colors{}",
        r.explain()
    );
}

#[test]
fn malformed_row_is_an_error_naming_file_line_and_flag() {
    let r = h5prov(&["report", "tests/fixtures/malformed"]);
    r.expect_code(1)
        .expect_stderr("error: tests/fixtures/malformed/h5prov-r1-p2001.trace.csv:5: malformed row: column `total_ns`: not a valid number: \"12x4\"")
        .expect_stderr("--lenient");
    assert!(r.stdout().is_empty(), "{}", r.explain());
}

#[test]
fn lenient_counts_and_summarises_once() {
    let r = h5prov(&["report", "--lenient", "tests/fixtures/malformed"]);
    r.expect_code(0)
        .expect_stderr("warning: skipped 1 malformed row(s) in 1 file(s) (--lenient); first at tests/fixtures/malformed/h5prov-r1-p2001.trace.csv:5")
        .expect_stdout("dataset.read");
    assert_eq!(r.stderr().lines().count(), 1, "{}", r.explain());
}

#[test]
fn missing_and_empty_inputs() {
    h5prov(&["report", "tests/fixtures/does-not-exist"])
        .expect_code(1)
        .expect_stderr("tests/fixtures/does-not-exist: No such file or directory");
    let empty = common::tempdir("empty");
    h5prov(&["report", empty.to_str().unwrap()])
        .expect_code(1)
        .expect_stderr("no h5prov files found");
}

#[test]
fn bad_flags() {
    h5prov(&["report", "--imbalance", "2", "tests/fixtures/mpi4"])
        .expect_code(1)
        .expect_stderr("--imbalance 2: must be a fraction between 0 and 1");
    h5prov(&["report", "--threads", "0", "tests/fixtures/mpi4"])
        .expect_code(1)
        .expect_stderr("--threads 0");
    h5prov(&["report", "--no-such-flag", "tests/fixtures/mpi4"]).expect_code(2);
    h5prov(&[]).expect_code(2);
}

#[test]
fn thresholds_are_overridable() {
    // A huge Z threshold and imbalance leave no straggler ranks.
    let r = h5prov(&[
        "report",
        "--json",
        "--z-threshold",
        "1000",
        "--imbalance",
        "1",
        "--late-wait-share",
        "1",
        "tests/fixtures/mpi4",
    ]);
    r.expect_code(0);
    let v: serde_json::Value = serde_json::from_str(&r.stdout()).unwrap();
    assert_eq!(
        v["straggler_ranks"].as_array().unwrap().len(),
        0,
        "{}",
        r.explain()
    );
    assert_eq!(v["thresholds"]["z_threshold"], 1000.0);
}

#[test]
fn color_always_uses_ansi() {
    h5prov(&["report", "--color", "always", "tests/fixtures/serial"])
        .expect_code(0)
        .expect_stdout("\x1b[1m");
}

#[test]
fn csv_and_html_outputs() {
    let dir = common::tempdir("csvout");
    let csv = dir.join("tables");
    let html = dir.join("r.html");
    let r = h5prov(&[
        "report",
        "--csv",
        csv.to_str().unwrap(),
        "--html",
        html.to_str().unwrap(),
        "tests/fixtures/mpi4",
    ]);
    r.expect_code(0)
        .expect_stderr("wrote CSV tables")
        .expect_stderr("wrote HTML report");
    for t in [
        "ops.csv",
        "ranks.csv",
        "rank_ops.csv",
        "straggler_calls.csv",
        "straggler_ranks.csv",
        "datasets.csv",
        "files.csv",
        "phases.csv",
        "insights.csv",
    ] {
        let text = std::fs::read_to_string(csv.join(t))
            .unwrap_or_else(|e| panic!("{t}: {e}{}", r.explain()));
        assert!(text.lines().count() >= 2, "{t} has no rows");
    }
    let h = std::fs::read_to_string(&html).unwrap();
    assert!(h.starts_with("<!DOCTYPE html>") && h.contains("<svg id=\"timeline\""));
    let bad = h5prov(&[
        "report",
        "--html",
        "/nonexistent-dir/x.html",
        "tests/fixtures/mpi4",
    ]);
    bad.expect_code(1)
        .expect_stderr("--html /nonexistent-dir/x.html");
}

#[test]
fn compare_runs() {
    let r = h5prov(&[
        "compare",
        "--json",
        "tests/fixtures/mpi4",
        "tests/fixtures/serial",
    ]);
    r.expect_code(0);
    let v: serde_json::Value = serde_json::from_str(&r.stdout()).unwrap();
    let ops = v["ops"].as_array().unwrap();
    let create = ops.iter().find(|o| o["op"] == "dataset.create").unwrap();
    assert_eq!(create["count_a"], 160);
    assert_eq!(create["count_b"], 121);
    let wr = ops.iter().find(|o| o["op"] == "group.open").unwrap();
    assert!(wr["total_ratio"].is_null() || wr["total_ratio"] == 0.0);
    h5prov(&["compare", "tests/fixtures/mpi4", "tests/fixtures/mpi4"])
        .expect_code(0)
        .expect_stdout("1.00×");
}

#[test]
fn export_requires_perfetto_flag() {
    h5prov(&["export", "tests/fixtures/mpi4"])
        .expect_code(2)
        .expect_stderr("--perfetto");
}
