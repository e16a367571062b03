//! Inconsistent traces are never accepted silently: each kind of inconsistency gives one
//! typed warning (kind, first file and line, count) in the library's report, in `--json`,
//! in the terminal and HTML reports and on stderr; a newer `format_version` is an error
//! naming the file. Every case starts from a copy of a consistent fixture process and
//! changes one thing.

mod common;
use common::h5prov;
use h5prov_analyzer::aggregate::check::{TraceWarning, WarningKind};
use h5prov_analyzer::analysis::Report;
use h5prov_analyzer::insights::Thresholds;
use h5prov_analyzer::read::ReadOptions;
use h5prov_analyzer::render;
use std::path::{Path, PathBuf};

/// Rank 0 of `mpi4`: a CSV trace, objects and meta file that agree with each other.
const CSV_STEM: &str = "h5prov-r0-p1000";
/// The `serial` process: a JSONL trace.
const JSONL_STEM: &str = "h5prov-rx-p4242";

fn fixture(stem: &str) -> PathBuf {
    let d = if stem == CSV_STEM {
        "tests/fixtures/mpi4/d0000"
    } else {
        "tests/fixtures/serial"
    };
    common::pkg_dir().join(d)
}

/// A fresh directory holding a copy of the fixture process `stem` (trace, objects, meta).
fn copy(name: &str, stem: &str) -> PathBuf {
    let dir = common::tempdir(&format!("consistency-{name}"));
    for e in std::fs::read_dir(fixture(stem)).unwrap() {
        let p = e.unwrap().path();
        let f = p.file_name().unwrap().to_str().unwrap().to_string();
        if f.starts_with(stem) {
            std::fs::copy(&p, dir.join(&f)).unwrap();
        }
    }
    dir
}

fn trace_path(dir: &Path, stem: &str) -> PathBuf {
    let csv = dir.join(format!("{stem}.trace.csv"));
    if csv.exists() {
        csv
    } else {
        dir.join(format!("{stem}.trace.jsonl"))
    }
}

fn meta_path(dir: &Path, stem: &str) -> PathBuf {
    dir.join(format!("{stem}.meta.json"))
}

/// Rewrites the trace's lines (line 1 is the CSV header).
fn edit_lines(dir: &Path, stem: &str, f: impl FnOnce(&mut Vec<String>)) {
    let p = trace_path(dir, stem);
    let text = std::fs::read_to_string(&p).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    f(&mut lines);
    let mut out = lines.join("\n");
    if !lines.is_empty() {
        out.push('\n');
    }
    std::fs::write(&p, out).unwrap();
}

/// Sets CSV field `col` (by header name) of line `line` (1-based).
fn set_field(dir: &Path, stem: &str, line: usize, col: &str, value: &str) {
    edit_lines(dir, stem, |lines| {
        let i = lines[0].split(',').position(|c| c == col).unwrap();
        let mut f: Vec<String> = lines[line - 1].split(',').map(str::to_string).collect();
        f[i] = value.to_string();
        lines[line - 1] = f.join(",");
    });
}

fn edit_meta(dir: &Path, stem: &str, f: impl FnOnce(&mut serde_json::Value)) {
    let p = meta_path(dir, stem);
    let mut m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
    f(&mut m);
    std::fs::write(&p, serde_json::to_string(&m).unwrap() + "\n").unwrap();
}

/// Makes the meta's `records` and `bytes_written` say what the trace now holds (as the
/// connector would have written them), so that only the problem under test remains.
fn sync_meta(dir: &Path, stem: &str) {
    let p = trace_path(dir, stem);
    let data = std::fs::read(&p).unwrap();
    let body = if p.extension().unwrap() == "csv" {
        &data[data.iter().position(|&b| b == b'\n').unwrap() + 1..]
    } else {
        &data[..]
    };
    let rows = body.iter().filter(|&&b| b == b'\n').count();
    edit_meta(dir, stem, |m| {
        m["records"] = rows.into();
        m["bytes_written"] = body.len().into();
    });
}

fn library_report(dir: &Path, lenient: bool) -> Report {
    h5prov_analyzer::report_for(dir, &ReadOptions { lenient }, &Thresholds::default()).unwrap()
}

/// `h5prov report --json` (exit status 0) and its stderr.
fn cli_json(dir: &Path, extra: &[&str]) -> (serde_json::Value, String) {
    let mut args = vec!["report", "--json", "--no-progress"];
    args.extend_from_slice(extra);
    args.push(dir.to_str().unwrap());
    let r = h5prov(&args);
    r.expect_code(0);
    (serde_json::from_str(&r.stdout()).unwrap(), r.stderr())
}

/// Asserts that the report's warnings are exactly `want` (kind, file name, count), in
/// the library result, the `--json` output, the terminal and HTML reports and on stderr.
/// Returns the library's warnings.
fn expect_warnings(
    dir: &Path,
    lenient: bool,
    want: &[(WarningKind, &str, u64)],
) -> Vec<TraceWarning> {
    let rep = library_report(dir, lenient);
    let got: Vec<(WarningKind, String, u64)> = rep
        .warnings
        .iter()
        .map(|w| {
            let name = Path::new(&w.file).file_name().unwrap().to_str().unwrap();
            (w.kind, name.to_string(), w.count)
        })
        .collect();
    let want_owned: Vec<(WarningKind, String, u64)> = want
        .iter()
        .map(|(k, f, c)| (*k, f.to_string(), *c))
        .collect();
    assert_eq!(got, want_owned, "library warnings: {:#?}", rep.warnings);
    for w in &rep.warnings {
        assert!(
            Path::new(&w.file).starts_with(dir),
            "the warning names the file by its path: {w:?}"
        );
        assert!(w.message.contains(&w.file), "{w:?}");
    }

    let extra: &[&str] = if lenient { &["--lenient"] } else { &[] };
    let (json, stderr) = cli_json(dir, extra);
    // Left out when there are none.
    let none = Vec::new();
    let jw = match json.get("warnings") {
        Some(w) => w.as_array().expect("an array"),
        None => &none,
    };
    let got_json: Vec<(String, String, u64)> = jw
        .iter()
        .map(|w| {
            (
                w["kind"].as_str().unwrap().to_string(),
                w["file"].as_str().unwrap().to_string(),
                w["count"].as_u64().unwrap(),
            )
        })
        .collect();
    let want_json: Vec<(String, String, u64)> = rep
        .warnings
        .iter()
        .map(|w| (w.kind.name().to_string(), w.file.clone(), w.count))
        .collect();
    assert_eq!(got_json, want_json);
    for w in &rep.warnings {
        assert!(stderr.contains(&w.message), "stderr lacks {w:?}:\n{stderr}");
    }
    assert_eq!(
        stderr.matches("warning:").count(),
        rep.warnings.len(),
        "one stderr line per kind:\n{stderr}"
    );

    let term = render::terminal::render(&rep, &Default::default());
    let html = render::html::render(&rep, 15);
    for w in &rep.warnings {
        assert!(term.contains(&format!("warning: {}", w.message)), "{term}");
        assert!(html.contains(w.kind.name()), "HTML lacks {w:?}");
    }
    let csv = render::csv_out::tables(&rep);
    let has_table = csv.iter().any(|(n, _)| *n == "warnings.csv");
    assert_eq!(has_table, !rep.warnings.is_empty());
    rep.warnings
}

fn line_of(ws: &[TraceWarning], kind: WarningKind) -> Option<u64> {
    ws.iter().find(|w| w.kind == kind).unwrap().line
}

#[test]
fn consistent_traces_give_no_warnings() {
    for (name, stem) in [("ok-csv", CSV_STEM), ("ok-jsonl", JSONL_STEM)] {
        let dir = copy(name, stem);
        let rep = library_report(&dir, false);
        assert!(rep.warnings.is_empty(), "{name}: {:#?}", rep.warnings);
        let (json, stderr) = cli_json(&dir, &[]);
        assert!(json.get("warnings").is_none(), "{name}: {json}");
        assert!(!stderr.contains("warning"), "{name}: {stderr}");
        let csv = render::csv_out::tables(&rep);
        assert!(!csv.iter().any(|(n, _)| *n == "warnings.csv"));
    }
    // The fixtures as a whole (mpi4's truncated last line is reported as before).
    for d in ["mpi4", "serial"] {
        let rep = library_report(&common::pkg_dir().join("tests/fixtures").join(d), false);
        assert!(rep.warnings.is_empty(), "{d}: {:#?}", rep.warnings);
    }
    // Compressed: the meta counts the bytes of the decompressed records.
    let dir = copy("ok-gz", CSV_STEM);
    let t = trace_path(&dir, CSV_STEM);
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut gz, &std::fs::read(&t).unwrap()).unwrap();
    std::fs::write(t.with_extension("csv.gz"), gz.finish().unwrap()).unwrap();
    std::fs::remove_file(&t).unwrap();
    assert!(library_report(&dir, false).warnings.is_empty());
}

#[test]
fn threads_interleave_without_seq_warnings() {
    // Each thread's records are written in blocks (its own buffer): seq increases per
    // thread, not along the file. Thread 2 flushed first, with later seqs.
    let dir = copy("threads", CSV_STEM);
    edit_lines(&dir, CSV_STEM, |lines| {
        let mut moved: Vec<String> = lines.drain(11..21).collect();
        for l in &mut moved {
            let mut f: Vec<&str> = l.split(',').collect();
            f[6] = "1777";
            *l = f.join(",");
        }
        let at = 3;
        for (i, l) in moved.into_iter().enumerate() {
            lines.insert(at + i, l);
        }
    });
    sync_meta(&dir, CSV_STEM);
    expect_warnings(&dir, false, &[]);
}

#[test]
fn trace_cut_at_a_line_boundary_is_short() {
    for (name, stem, file) in [
        ("short-csv", CSV_STEM, "h5prov-r0-p1000.trace.csv"),
        ("short-jsonl", JSONL_STEM, "h5prov-rx-p4242.trace.jsonl"),
    ] {
        let dir = copy(name, stem);
        edit_lines(&dir, stem, |lines| lines.truncate(101));
        let ws = expect_warnings(&dir, false, &[(WarningKind::TraceShort, file, 1)]);
        assert!(ws[0].message.contains("of the"), "{}", ws[0].message);
    }
}

#[test]
fn empty_traces() {
    // Zero bytes and header only, with a meta that counts records.
    for (name, keep) in [("empty-zero", 0), ("empty-header", 1)] {
        let dir = copy(name, CSV_STEM);
        edit_lines(&dir, CSV_STEM, |lines| lines.truncate(keep));
        let ws = expect_warnings(
            &dir,
            false,
            &[(WarningKind::EmptyTrace, "h5prov-r0-p1000.trace.csv", 1)],
        );
        assert!(ws[0].message.contains("its meta says"), "{}", ws[0].message);
    }
    // No meta at all.
    let dir = copy("empty-nometa", CSV_STEM);
    edit_lines(&dir, CSV_STEM, |lines| lines.truncate(1));
    std::fs::remove_file(meta_path(&dir, CSV_STEM)).unwrap();
    let ws = expect_warnings(
        &dir,
        false,
        &[(WarningKind::EmptyTrace, "h5prov-r0-p1000.trace.csv", 1)],
    );
    assert!(ws[0].message.contains("no meta.json"), "{}", ws[0].message);
    // A process that finished without a record is consistent.
    let dir = copy("empty-ok", CSV_STEM);
    edit_lines(&dir, CSV_STEM, |lines| lines.truncate(1));
    sync_meta(&dir, CSV_STEM);
    expect_warnings(&dir, false, &[]);
}

#[test]
fn meta_with_a_key_of_the_wrong_type_names_file_and_key() {
    let dir = copy("wrong-type", CSV_STEM);
    edit_meta(&dir, CSV_STEM, |m| {
        m["pid"] = "abc".into();
        m["records"] = (-3).into();
    });
    let ws = expect_warnings(
        &dir,
        false,
        &[(WarningKind::MetaWrongType, "h5prov-r0-p1000.meta.json", 1)],
    );
    let m = &ws[0].message;
    assert!(
        m.contains("key `pid`: expected an unsigned 32-bit integer, found \"abc\"")
            && m.contains("key `records`: expected an unsigned integer, found -3"),
        "{m}"
    );
    // The meta is ignored rather than read with pid 0: one process, not two.
    let rep = library_report(&dir, false);
    assert_eq!(rep.run.processes, 1);
    assert_eq!(rep.run.bad_metas.len(), 1);
}

#[test]
fn newer_format_version_is_an_error_naming_file_and_versions() {
    let dir = copy("newer", CSV_STEM);
    edit_meta(&dir, CSV_STEM, |m| m["format_version"] = 99.into());
    let meta = meta_path(&dir, CSV_STEM);
    let r = h5prov(&["report", "--json", dir.to_str().unwrap()]);
    r.expect_code(1).expect_stderr(&format!(
        "error: {}: format_version 99 is newer than this analyzer understands (version 1)",
        meta.display()
    ));
    r.expect_stderr("--lenient");
    assert!(r.stdout().is_empty(), "{}", r.explain());
    let e = h5prov_analyzer::report_for(&dir, &ReadOptions::default(), &Thresholds::default())
        .unwrap_err();
    assert!(
        matches!(
            e,
            h5prov_analyzer::read::Error::NewerFormat {
                found: 99,
                supported: 1,
                ..
            }
        ),
        "{e}"
    );
    // --lenient reads it, and says so.
    let ws = expect_warnings(
        &dir,
        true,
        &[(WarningKind::NewerFormat, "h5prov-r0-p1000.meta.json", 1)],
    );
    assert!(
        ws[0].message.contains("format_version 99"),
        "{}",
        ws[0].message
    );
}

#[test]
fn impossible_timestamps_are_flagged_and_left_out_of_wall_time() {
    let base = library_report(&fixture_dir(), false);
    let dir = copy("timestamps", CSV_STEM);
    set_field(&dir, CSV_STEM, 30, "start_ns", "0");
    set_field(&dir, CSV_STEM, 40, "start_ns", &u64::MAX.to_string());
    set_field(&dir, CSV_STEM, 50, "total_ns", &u64::MAX.to_string());
    sync_meta(&dir, CSV_STEM);
    let ws = expect_warnings(
        &dir,
        false,
        &[(WarningKind::BadTimestamp, "h5prov-r0-p1000.trace.csv", 3)],
    );
    assert_eq!(line_of(&ws, WarningKind::BadTimestamp), Some(30));
    assert!(
        ws[0].message.contains(":30: start_ns 0"),
        "{}",
        ws[0].message
    );
    let rep = library_report(&dir, false);
    // The wall time is the consistent trace's, not 57 or 500 years.
    assert_eq!(rep.run.first_ns, base.run.first_ns);
    assert_eq!(rep.run.last_ns, base.run.last_ns);
    assert_eq!(rep.run.wall_ns, base.run.wall_ns);
    assert!(rep.run.wall_ns < 1_000_000_000, "{}", rep.run.wall_ns);
    assert_eq!(rep.windows.len(), base.windows.len());
    assert_eq!(rep.run.records, base.run.records, "the records still count");
    // A u64::MAX duration does not overflow the sums (it counts as 0 ns).
    assert!(rep.run.call_ns <= base.run.call_ns);
    // Zero durations are flagged (and harmless to the wall time).
    let dir = copy("zero-total", CSV_STEM);
    set_field(&dir, CSV_STEM, 12, "total_ns", "0");
    set_field(&dir, CSV_STEM, 12, "under_ns", "0");
    sync_meta(&dir, CSV_STEM);
    let ws = expect_warnings(
        &dir,
        false,
        &[(WarningKind::ZeroDuration, "h5prov-r0-p1000.trace.csv", 1)],
    );
    assert_eq!(ws[0].line, Some(12));
}

/// The directory of the consistent CSV fixture process alone.
fn fixture_dir() -> PathBuf {
    copy("timestamps-base", CSV_STEM)
}

#[test]
fn under_connector_time_above_total_is_flagged() {
    let dir = copy("under", CSV_STEM);
    set_field(&dir, CSV_STEM, 20, "under_ns", "999999999");
    set_field(&dir, CSV_STEM, 25, "under_ns", "999999999");
    sync_meta(&dir, CSV_STEM);
    let ws = expect_warnings(
        &dir,
        false,
        &[(
            WarningKind::UnderExceedsTotal,
            "h5prov-r0-p1000.trace.csv",
            2,
        )],
    );
    assert_eq!(ws[0].line, Some(20));
}

#[test]
fn duplicate_and_decreasing_seqs_are_flagged() {
    // A row written twice.
    let dir = copy("seq-dup", CSV_STEM);
    edit_lines(&dir, CSV_STEM, |lines| {
        let l = lines[9].clone();
        lines.insert(10, l);
    });
    sync_meta(&dir, CSV_STEM);
    let ws = expect_warnings(
        &dir,
        false,
        &[(WarningKind::SeqOrder, "h5prov-r0-p1000.trace.csv", 1)],
    );
    assert_eq!(ws[0].line, Some(11));
    // Two rows swapped: the second of them is below the first.
    let dir = copy("seq-swap", CSV_STEM);
    edit_lines(&dir, CSV_STEM, |lines| lines.swap(60, 61));
    let ws = expect_warnings(
        &dir,
        false,
        &[(WarningKind::SeqOrder, "h5prov-r0-p1000.trace.csv", 1)],
    );
    assert_eq!(ws[0].line, Some(62));
    // The file appended to itself: every row of the second copy.
    let dir = copy("seq-twice", JSONL_STEM);
    edit_lines(&dir, JSONL_STEM, |lines| {
        let again = lines.clone();
        lines.extend(again);
    });
    sync_meta(&dir, JSONL_STEM);
    let ws = expect_warnings(
        &dir,
        false,
        &[(WarningKind::SeqOrder, "h5prov-rx-p4242.trace.jsonl", 636)],
    );
    assert_eq!(ws[0].line, Some(637));
}

#[test]
fn write_errors_and_a_meta_that_disagrees_are_shown() {
    // After ENOSPC: the connector counted every record dropped and no byte written, but
    // 144 rows reached the file before the disk filled.
    let dir = copy("enospc", CSV_STEM);
    edit_lines(&dir, CSV_STEM, |lines| lines.truncate(145));
    edit_meta(&dir, CSV_STEM, |m| {
        m["bytes_written"] = 0.into();
        m["dropped"] = 344.into();
        m["write_errors"] = 3.into();
    });
    let ws = expect_warnings(
        &dir,
        false,
        &[
            (WarningKind::MetaMismatch, "h5prov-r0-p1000.meta.json", 1),
            (WarningKind::WriteErrors, "h5prov-r0-p1000.meta.json", 3),
            (WarningKind::Dropped, "h5prov-r0-p1000.meta.json", 344),
        ],
    );
    assert!(
        ws[0].message.contains("bytes_written 0") && ws[0].message.contains("holds 144 records"),
        "{}",
        ws[0].message
    );
    let (json, _) = cli_json(&dir, &[]);
    assert_eq!(json["run"]["write_errors"], 3);
    assert_eq!(json["run"]["dropped"], 344);
    // bytes_written alone disagreeing (same rows) is flagged too.
    let dir = copy("bytes", CSV_STEM);
    edit_meta(&dir, CSV_STEM, |m| m["bytes_written"] = 12345.into());
    expect_warnings(
        &dir,
        false,
        &[(WarningKind::MetaMismatch, "h5prov-r0-p1000.meta.json", 1)],
    );
}

#[test]
fn missing_trace_and_unfinished_processes() {
    let dir = copy("missing", CSV_STEM);
    std::fs::remove_file(trace_path(&dir, CSV_STEM)).unwrap();
    expect_warnings(
        &dir,
        false,
        &[(WarningKind::MissingTrace, "h5prov-r0-p1000.meta.json", 1)],
    );
    let dir = copy("unfinished", CSV_STEM);
    edit_meta(&dir, CSV_STEM, |m| {
        m["end_ns"] = serde_json::Value::Null;
        m["records"] = 0.into();
        m["bytes_written"] = 0.into();
    });
    expect_warnings(
        &dir,
        false,
        &[(WarningKind::Unfinished, "h5prov-r0-p1000.meta.json", 1)],
    );
}

/// Copies a directory tree.
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let p = e.unwrap().path();
        let dst = to.join(p.file_name().unwrap());
        if p.is_dir() {
            copy_tree(&p, &dst);
        } else {
            std::fs::copy(&p, &dst).unwrap();
        }
    }
}

#[test]
fn problems_in_many_files_are_summarised_once_with_the_first_file() {
    // The four mpi4 processes, each trace cut to its first 50 lines: one warning, count 4,
    // the smallest path as the example, whatever the number of threads.
    let dir = common::tempdir("consistency-many");
    copy_tree(&common::pkg_dir().join("tests/fixtures/mpi4"), &dir);
    for d in ["d0000", "d0001"] {
        for e in std::fs::read_dir(dir.join(d)).unwrap() {
            let p = e.unwrap().path();
            if p.to_str().unwrap().contains(".trace.") {
                let text = std::fs::read_to_string(&p).unwrap();
                let keep: Vec<&str> = text.lines().take(50).collect();
                std::fs::write(&p, keep.join("\n") + "\n").unwrap();
            }
        }
    }
    let ws = expect_warnings(
        &dir,
        false,
        &[(WarningKind::TraceShort, "h5prov-r0-p1000.trace.csv", 4)],
    );
    assert_eq!(ws[0].files, 4);
    assert!(ws[0].file.contains("d0000"), "{}", ws[0].file);
    let with_threads = |n: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build()
            .unwrap();
        render::json(&pool.install(|| library_report(&dir, false)))
    };
    assert_eq!(with_threads(1), with_threads(2));
}
