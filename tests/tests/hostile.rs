//! Hostile but realistic conditions: the bare connector name, a file-size limit, `fork()`,
//! and the user recorded in the metadata. Each test runs a real HDF5 program with the real
//! `libh5prov.so` and fails on the defect it names.

use h5prov_tests::{
    c_program, files_with_suffix, plugin_dir, read_metas, read_objects, read_records, scratch,
    tool, Run,
};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Rows of each process's trace, by pid.
fn records_by_pid(dir: &Path) -> BTreeMap<u32, Vec<h5prov_format::TraceRecord>> {
    let mut by: BTreeMap<u32, Vec<_>> = BTreeMap::new();
    for r in read_records(dir) {
        by.entry(r.pid).or_default().push(r);
    }
    by
}

/// `HDF5_VOL_CONNECTOR=h5prov` (and `"h5prov "`), with no options, runs with the documented
/// defaults: native underneath, traces in `./h5prov-traces`. It used to make every
/// `H5Fcreate` fail ("no h5prov connector info"), and h5dump/h5ls traced nothing silently.
#[test]
fn the_bare_connector_name_traces_with_the_defaults() {
    for conn in ["h5prov", "h5prov "] {
        let dir = scratch("bare-name");
        Run::native(&c_program("small_writes"), &["f.h5", "50"], &dir)
            .env("HDF5_PLUGIN_PATH", &plugin_dir().to_string_lossy())
            .env("HDF5_VOL_CONNECTOR", conn)
            .ok();
        let traces = dir.join("h5prov-traces");
        let metas = read_metas(&traces);
        assert_eq!(
            metas.len(),
            1,
            "{conn:?}: one process traced in {}",
            traces.display()
        );
        assert_eq!(metas[0].connector, "under_vol=0;under_info={}");
        let writes = read_records(&traces)
            .iter()
            .filter(|r| r.op == "dataset.write")
            .count();
        assert_eq!(writes, 50, "{conn:?}");
        // The HDF5 tools, which fall back silently when a connector fails, trace too.
        let out = Run::native(&tool("h5ls"), &["-r", "f.h5"], &dir)
            .env("HDF5_PLUGIN_PATH", &plugin_dir().to_string_lossy())
            .env("HDF5_VOL_CONNECTOR", conn)
            .ok();
        assert!(out.contains("/d"), "{out}");
        assert_eq!(read_metas(&traces).len(), 2, "{conn:?}: h5ls traced");
    }
}

/// Under a file-size limit the host is never killed by `SIGXFSZ`: h5prov caps its own files
/// below the limit and counts what it drops.
#[test]
fn a_file_size_limit_never_kills_the_host() {
    let dir = scratch("fsize");
    let traces = dir.join("traces");
    let prog = c_program("small_writes");
    // 20000 one-element writes make about 4.6 MB of CSV trace; the limit is 1 MiB.
    let script = format!(
        "ulimit -f 2048 && exec {} f.h5 20000",
        h5prov_tests::shell_quote(&prog.to_string_lossy())
    );
    let out = Run::native(Path::new("/bin/sh"), &["-c", &script], &dir)
        .h5prov(&traces, "format=csv")
        .output();
    assert!(
        out.status.success(),
        "{}",
        h5prov_tests::describe_output("small_writes under ulimit -f 2048", &out)
    );
    let metas = read_metas(&traces);
    assert_eq!(metas.len(), 1);
    let m = &metas[0];
    assert!(m.dropped > 0, "records beyond the limit are counted: {m:?}");
    assert!(m.end_ns.is_some(), "the metadata record is complete");
    for f in files_with_suffix(&traces, "") {
        let len = std::fs::metadata(&f).unwrap().len();
        assert!(
            len <= 1 << 20,
            "{} is {len} bytes, past the limit",
            f.display()
        );
    }
    // The rows that were written are whole records, and the application's file is intact.
    let rows = read_records(&traces).len() as u64;
    assert_eq!(rows + m.dropped, m.records, "{m:?}");
    Run::native(&tool("h5dump"), &["-H", "f.h5"], &dir).ok();
}

/// A child forked after using HDF5 gets trace files of its own: its pid and thread id on its
/// records, its own sequence, its own counters, and none of the parent's buffered records.
#[test]
fn a_forked_child_gets_its_own_trace() {
    let dir = scratch("fork");
    let traces = dir.join("traces");
    let n = 500;
    let out = Run::with_h5prov(
        &c_program("small_writes"),
        &["a.h5", &n.to_string(), "fork"],
        &dir,
        &traces,
        "",
    )
    .ok();
    let pid_of = |who: &str| -> u32 {
        out.lines()
            .find_map(|l| l.strip_prefix(who)?.trim().parse().ok())
            .unwrap_or_else(|| panic!("no '{who}' line in {out}"))
    };
    let (parent, child) = (pid_of("parent "), pid_of("child "));
    let metas = read_metas(&traces);
    let meta_pids: BTreeSet<u32> = metas.iter().map(|m| m.pid).collect();
    assert_eq!(
        meta_pids,
        BTreeSet::from([parent, child]),
        "one meta per process"
    );
    let by_pid = records_by_pid(&traces);
    assert_eq!(by_pid.keys().copied().collect::<BTreeSet<_>>(), meta_pids);
    for m in &metas {
        let rows = &by_pid[&m.pid];
        assert_eq!(
            rows.len() as u64,
            m.records,
            "pid {}: rows = meta records",
            m.pid
        );
        let seqs: BTreeSet<u64> = rows.iter().map(|r| r.seq).collect();
        assert_eq!(
            seqs.len(),
            rows.len(),
            "pid {}: no duplicated sequence",
            m.pid
        );
        assert!(
            rows.iter().all(|r| r.tid == u64::from(m.pid)),
            "main-thread tids"
        );
        let writes: Vec<_> = rows.iter().filter(|r| r.op == "dataset.write").collect();
        assert_eq!(writes.len(), n, "pid {}: its own writes, once", m.pid);
        let want = if m.pid == parent {
            "a.h5"
        } else {
            "a.h5.child"
        };
        assert!(
            writes.iter().all(|r| r.file.ends_with(want)),
            "pid {}: writes go to {want}",
            m.pid
        );
    }
    // Per-object counters: the parent's dataset's writes are counted once, by the parent.
    let written: u64 = read_objects(&traces)
        .iter()
        .filter(|o| o.kind == "dataset" && o.file.ends_with("a.h5"))
        .map(|o| o.writes)
        .sum();
    assert_eq!(written, n as u64);
}

/// A child that only execs (`system()`, `popen()`) leaves no trace files: the child's
/// session starts with its first record.
#[test]
fn a_fork_that_only_execs_leaves_no_trace() {
    let dir = scratch("system");
    let traces = dir.join("traces");
    Run::with_h5prov(
        &c_program("small_writes"),
        &["f.h5", "20", "system"],
        &dir,
        &traces,
        "",
    )
    .ok();
    let metas = read_metas(&traces);
    assert_eq!(metas.len(), 1, "{metas:?}");
    assert!(metas[0].end_ns.is_some());
}

/// The metadata's user comes from the uid, not from `$USER`, which anyone can set.
#[test]
fn the_user_comes_from_the_uid() {
    let dir = scratch("user");
    let traces = dir.join("traces");
    Run::with_h5prov(
        &c_program("small_writes"),
        &["f.h5", "5"],
        &dir,
        &traces,
        "",
    )
    .env("USER", "somebody-else")
    .env("LOGNAME", "somebody-else")
    .ok();
    let metas = read_metas(&traces);
    let id = std::process::Command::new("id")
        .arg("-un")
        .output()
        .unwrap();
    let me = String::from_utf8_lossy(&id.stdout).trim().to_string();
    assert_eq!(metas[0].user, me);
}

/// Paths are bytes on Linux: a non-UTF-8 `path=` in `HDF5_VOL_CONNECTOR` is used exactly
/// as given, not rewritten with U+FFFD into a directory nobody named. A non-UTF-8 key or
/// value elsewhere is rejected with a message that names it (HDF5 itself only says "unable
/// to set default VOL connector").
#[test]
fn non_utf8_connector_strings() {
    use std::ffi::OsString;
    use std::os::unix::ffi::{OsStrExt, OsStringExt};
    let dir = scratch("non-utf8");
    let prog = c_program("small_writes");
    let run = |conn: Vec<u8>| {
        std::process::Command::new(&prog)
            .args(["f.h5", "5"])
            .current_dir(&dir)
            .env("LD_LIBRARY_PATH", h5prov_tests::hdf5_dir().join("lib"))
            .env("HDF5_PLUGIN_PATH", plugin_dir())
            .env("HDF5_VOL_CONNECTOR", OsString::from_vec(conn))
            .output()
            .unwrap()
    };
    let mut traces = dir.as_os_str().as_bytes().to_vec();
    traces.extend_from_slice(b"/tr\xff\xfe");
    let mut conn = b"h5prov under_vol=0;under_info={};path=".to_vec();
    conn.extend_from_slice(&traces);
    let out = run(conn);
    assert!(
        out.status.success(),
        "{}",
        h5prov_tests::describe_output("small_writes", &out)
    );
    let exact = std::path::PathBuf::from(OsString::from_vec(traces));
    assert_eq!(
        read_metas(&exact).len(),
        1,
        "traces in the directory named, byte for byte"
    );
    let names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    // U+FFFD in UTF-8: a name rewritten lossily would hold these bytes.
    assert!(
        !names
            .iter()
            .any(|n| n.as_bytes().windows(3).any(|w| w == "\u{fffd}".as_bytes())),
        "no lossy directory: {names:?}"
    );

    for (bad, named) in [
        (
            &b"h5prov under_vol=0;under_info={};level=dat\xffset"[..],
            "'level'",
        ),
        (
            &b"h5prov under_vol=0;under_info={};lev\xffel=dataset"[..],
            "key is not valid UTF-8",
        ),
    ] {
        let out = run(bad.to_vec());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("h5prov: HDF5_VOL_CONNECTOR rejected") && stderr.contains(named),
            "{}",
            h5prov_tests::describe_output("small_writes", &out)
        );
    }
}

/// A file's `opens` counts the application's creates and opens: HDF5's own re-wrapping of
/// the file after each open (its post-open step) is not one. It used to double the count.
#[test]
fn a_file_opened_once_counts_one_open() {
    let dir = scratch("file-opens");
    let traces = dir.join("traces");
    Run::with_h5prov(
        &c_program("small_writes"),
        &["f.h5", "3"],
        &dir,
        &traces,
        "",
    )
    .ok();
    let files: Vec<_> = read_objects(&traces)
        .into_iter()
        .filter(|o| o.kind == "file")
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    assert_eq!(files[0].opens, 1, "{files:?}");
}
