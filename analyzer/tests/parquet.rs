//! `h5prov export --parquet` and `h5prov report` of the export on the fixtures: the same
//! report (byte for byte but `run.inputs`) and the same warnings as from the files, and
//! unreadable traces named and failed or skipped exactly as `report` does.

mod common;
use common::{h5prov, pkg_dir, tempdir};
use std::path::Path;

/// `report --json` of `traces` and of its export `out` (exported with `export` flags; both
/// reported with `extra` flags), with `run.inputs` of the first set to the second's; and
/// their stderr.
fn both(
    traces: &str,
    out: &Path,
    export: &[&str],
    extra: &[&str],
) -> ((String, String), (String, String)) {
    let o = out.to_str().unwrap();
    let mut args = vec!["export", "--no-progress", "--parquet", o, traces];
    args.extend(export);
    args.extend(extra);
    h5prov(&args).expect_code(0);
    let mut args = vec!["report", "--json", "--no-progress", traces];
    args.extend(extra);
    let a = h5prov(&args);
    a.expect_code(0);
    let mut args = vec!["report", "--json", "--no-progress", o];
    args.extend(extra);
    let b = h5prov(&args);
    b.expect_code(0);
    let q = |s: &str| serde_json::to_string(s).unwrap();
    let from = format!("\"inputs\": [\n      {}\n    ]", q(traces));
    assert!(a.stdout().contains(&from), "{}", a.explain());
    let to = format!("\"inputs\": [\n      {}\n    ]", q(o));
    (
        (a.stdout().replacen(&from, &to, 1), a.stderr()),
        (b.stdout(), b.stderr()),
    )
}

#[test]
fn report_of_the_export_is_the_report_of_the_fixtures() {
    for fixture in ["tests/fixtures/mpi4", "tests/fixtures/serial"] {
        let out = tempdir(&format!("pq-{}", fixture.replace('/', "-")));
        let (a, b) = both(fixture, &out.join("ds"), &[], &[]);
        assert_eq!(a.0, b.0, "{fixture}: report of the export differs");
        // The warnings too (mpi4 has a truncated last line).
        assert_eq!(a.1, b.1, "{fixture}: warnings differ");
    }
}

#[test]
fn report_of_an_export_keeps_bad_metas_empty_files_and_merged_members() {
    let dir = tempdir("pq-hostile");
    let traces = dir.join("traces");
    std::fs::create_dir_all(&traces).unwrap();
    let src = pkg_dir().join("tests/fixtures/mpi4");
    for d in ["d0000", "d0001"] {
        for e in std::fs::read_dir(src.join(d)).unwrap() {
            let e = e.unwrap();
            std::fs::copy(e.path(), traces.join(e.file_name())).unwrap();
        }
    }
    // An unreadable meta, a meta with a key of the wrong type, a trace with only its
    // header, an objects file with only its header.
    std::fs::write(traces.join("h5prov-r8-p8.meta.json"), "{\"pid\":").unwrap();
    std::fs::write(
        traces.join("h5prov-r9-p9.meta.json"),
        "{\"format_version\":1,\"pid\":\"abc\"}",
    )
    .unwrap();
    let header = |name: &str| {
        let f = std::fs::read_to_string(src.join("d0000/h5prov-r0-p1000").with_extension(name))
            .unwrap();
        f.lines().next().unwrap().to_string() + "\n"
    };
    std::fs::write(traces.join("h5prov-r7-p7.trace.csv"), header("trace.csv")).unwrap();
    std::fs::write(
        traces.join("h5prov-r7-p7.objects.csv"),
        header("objects.csv"),
    )
    .unwrap();
    let t = traces.to_str().unwrap();
    let (a, b) = both(t, &dir.join("ds"), &[], &[]);
    assert_eq!(a.0, b.0, "report of the export differs");
    assert_eq!(a.1, b.1, "warnings differ");
    assert!(b.0.contains("h5prov-r8-p8.meta.json"), "{}", b.0);
    // A merged file's members are named `<merged file>/<member>`, in the export too.
    let merged = dir.join("run.h5prov");
    h5prov(&["merge", t, "-o", merged.to_str().unwrap(), "--no-progress"]).expect_code(0);
    let (a, b) = both(merged.to_str().unwrap(), &dir.join("ds-merged"), &[], &[]);
    assert_eq!(a.0, b.0, "report of the merged file's export differs");
}

#[test]
fn a_malformed_trace_fails_the_export_as_it_fails_the_report() {
    let dir = tempdir("pq-malformed");
    let out = dir.join("ds");
    let o = out.to_str().unwrap();
    let want = "error: tests/fixtures/malformed/h5prov-r1-p2001.trace.csv:5: malformed row: \
                column `total_ns`: not a valid number: \"12x4\"";
    h5prov(&["report", "tests/fixtures/malformed"])
        .expect_code(1)
        .expect_stderr(want);
    let r = h5prov(&[
        "export",
        "--parquet",
        o,
        "tests/fixtures/malformed",
        "--job",
        "j",
    ]);
    r.expect_code(1)
        .expect_stderr(want)
        .expect_stderr("--lenient");
    // Nothing was written.
    let left: Vec<_> = std::fs::read_dir(&out)
        .map(|rd| rd.map(|e| e.unwrap().file_name()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "a failed export left {left:?}");
    // --lenient: skipped and counted, in the export as in the report.
    let (a, b) = both(
        "tests/fixtures/malformed",
        &out,
        &["--job", "j"],
        &["--lenient"],
    );
    assert_eq!(a.0, b.0);
    assert_eq!(a.1, b.1);
    assert!(
        b.1.contains("skipped") && b.1.contains("h5prov-r1-p2001.trace.csv:5"),
        "{}",
        b.1
    );
}

#[test]
fn report_of_the_export_needs_a_job_id_without_metas_and_names_the_jobs() {
    // The malformed fixture has no meta.json: no job id to take or derive.
    let dir = tempdir("pq-nojob");
    let o = dir.join("ds");
    h5prov(&[
        "export",
        "--parquet",
        o.to_str().unwrap(),
        "--lenient",
        "tests/fixtures/malformed",
    ])
    .expect_code(1)
    .expect_stderr("no readable meta.json")
    .expect_stderr("--job ID");
    h5prov(&["report", "tests/fixtures/mpi4", "--job", "x"])
        .expect_code(1)
        .expect_stderr("not a Parquet export");
}
