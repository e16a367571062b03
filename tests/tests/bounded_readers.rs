//! The analyzer's readers hold a bounded amount of any input: a line longer than any valid
//! record is skipped and named, a huge file named like a trace is refused (or skipped with
//! `--lenient`) without being loaded, and a directory that cannot be listed is named (or
//! skipped with `--lenient`). Each test reads the traces of a real HDF5 program run with
//! the real `libh5prov.so`, plus the bad input.

use h5prov_tests::*;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A traced run of `small_writes` in CSV and one in JSONL, in `root/traces`.
fn traced(root: &Path) -> PathBuf {
    let traces = root.join("traces");
    for (i, format) in ["csv", "jsonl"].iter().enumerate() {
        let cwd = root.join(format!("data{i}"));
        std::fs::create_dir_all(&cwd).unwrap();
        Run::with_h5prov(
            &c_program("small_writes"),
            &["f.h5", "50"],
            &cwd,
            &traces,
            &format!("format={format}"),
        )
        .ok();
    }
    assert_eq!(files_with_suffix(&traces, ".trace.csv").len(), 1);
    assert_eq!(files_with_suffix(&traces, ".trace.jsonl").len(), 1);
    traces
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// `h5prov ARGS` under `/usr/bin/time`: its output and its peak resident memory in KiB.
fn h5prov_rss(args: &[&str], dir: &Path) -> (Output, u64) {
    let time = Path::new("/usr/bin/time");
    assert!(
        time.exists(),
        "measuring the analyzer's peak memory needs GNU time: apt-get install time"
    );
    let rss_file = dir.join(format!("rss-{}.txt", std::process::id()));
    let mut cmd = Command::new(time);
    cmd.arg("-o")
        .arg(&rss_file)
        .args(["-f", "%M"])
        .arg(analyzer())
        .args(args);
    let desc = format!("{cmd:?}");
    let out = cmd.output().unwrap_or_else(|e| panic!("{desc}: {e}"));
    let text = std::fs::read_to_string(&rss_file).unwrap();
    let _ = std::fs::remove_file(&rss_file);
    // GNU time writes "Command exited with non-zero status N" first when it fails.
    let kib = text
        .lines()
        .last()
        .and_then(|l| l.trim().parse().ok())
        .unwrap_or_else(|| panic!("{desc}: no peak memory in {text:?}"));
    (out, kib)
}

/// Appends a 100 MB line (then a valid row again) to a copy of the run's CSV and JSONL
/// traces (`big.trace.csv`, `big.trace.jsonl`), in `dir`.
fn with_long_lines(traces: &Path, dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    for ext in ["csv", "jsonl"] {
        let src = &files_with_suffix(traces, &format!(".trace.{ext}"))[0];
        let text = std::fs::read_to_string(src).unwrap();
        let mut lines = text.lines();
        let mut f = std::fs::File::create(dir.join(format!("big.trace.{ext}"))).unwrap();
        if ext == "csv" {
            writeln!(f, "{}", lines.next().unwrap()).unwrap(); // the header
        }
        let row = lines.next().unwrap();
        writeln!(f, "{row}").unwrap();
        f.write_all(&vec![b'7'; 100 << 20]).unwrap();
        writeln!(f).unwrap();
        writeln!(f, "{row}").unwrap();
    }
}

#[test]
fn a_100_mb_line_is_skipped_named_and_costs_no_memory() {
    let root = scratch("long-line");
    let traces = traced(&root);
    let (plain, base_kib) = h5prov_rss(&["report", "--no-progress", s(&traces)], &root);
    assert!(plain.status.success(), "{plain:?}");
    with_long_lines(&traces, &traces.join("extra"));
    // Without --lenient: an error naming the file and the line.
    let out = h5prov_cmd(&["report", "--no-progress", s(&traces)]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("big.trace.") && err.contains(":3:") && err.contains("longer than any"),
        "{err}"
    );
    // With it: skipped, counted and named, and the memory is what it was without the line.
    let (out, kib) = h5prov_rss(&["report", "--no-progress", "--lenient", s(&traces)], &root);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("skipped 2 malformed row(s) in 2 file(s)")
            && err.contains("big.trace.csv:3")
            && err.contains("longer than any valid record"),
        "{err}"
    );
    // The analyzer reads 256 KiB at a time and holds at most 2 MiB of a line per reader.
    assert!(
        kib < base_kib + 32 * 1024,
        "peak memory {kib} KiB with a 100 MB line, {base_kib} KiB without"
    );
}

#[test]
fn huge_files_named_like_traces_are_refused_unread() {
    let root = scratch("huge-sparse");
    let traces = traced(&root);
    let (_, base_kib) = h5prov_rss(&["report", "--no-progress", s(&traces)], &root);
    // 1 GiB of zeros (sparse: no disk) under every name a reader takes.
    let junk = traces.join("junk");
    std::fs::create_dir_all(&junk).unwrap();
    for name in [
        "a.trace.csv",
        "b.trace.jsonl",
        "c.objects.csv",
        "d.objects.jsonl",
        "e.meta.json",
    ] {
        let f = std::fs::File::create(junk.join(name)).unwrap();
        f.set_len(1 << 30).unwrap();
    }
    let (out, kib) = h5prov_rss(&["report", "--no-progress", s(&traces)], &root);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("junk/") && err.contains("longer than any"),
        "{err}"
    );
    assert!(kib < base_kib + 64 * 1024, "peak memory {kib} KiB");
    let (out, kib) = h5prov_rss(&["report", "--no-progress", "--lenient", s(&traces)], &root);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("junk/") && err.contains("longer than any"),
        "{err}"
    );
    assert!(kib < base_kib + 64 * 1024, "peak memory {kib} KiB");
}

/// `h5prov ARGS` as the user `nobody` when run as root (root reads any directory), else as
/// the current user.
fn h5prov_unprivileged(args: &[&str]) -> Output {
    let root = std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(1) == Some("0"));
    let mut cmd = if root {
        let mut c = Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
            .arg(analyzer());
        c
    } else {
        Command::new(analyzer())
    };
    cmd.args(args);
    let desc = format!("{cmd:?}");
    cmd.output().unwrap_or_else(|e| panic!("{desc}: {e}"))
}

#[test]
fn a_directory_that_cannot_be_read_is_named_or_skipped() {
    use std::os::unix::fs::PermissionsExt;
    let root = scratch("unreadable-dir");
    let traces = traced(&root);
    let locked = traces.join("locked");
    std::fs::create_dir_all(&locked).unwrap();
    let src = &files_with_suffix(&traces, ".trace.csv")[0];
    std::fs::copy(src, locked.join("x.trace.csv")).unwrap();
    // The connector makes its files private (mode 0600): opened to that user, but for
    // `locked`, which then reads as that user.
    for f in files_with_suffix(&traces, "") {
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    std::fs::set_permissions(&traces, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = h5prov_unprivileged(&["report", "--no-progress", s(&traces)]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();
    let out = h5prov_unprivileged(&["report", "--no-progress", s(&traces)]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains(s(&locked)) && err.contains("--lenient"),
        "{err}"
    );
    let out = h5prov_unprivileged(&["report", "--no-progress", "--lenient", s(&traces)]);
    let err = String::from_utf8_lossy(&out.stderr);
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("skipped 1 directory that cannot be read") && err.contains(s(&locked)),
        "{err}"
    );
}
