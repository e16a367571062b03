//! Eight threads making HDF5 calls at once, on a thread-safe HDF5 1.14.5
//! (`hdf5-test-harness build-hdf5 --variant threadsafe`, linked at `.deps/hdf5-threadsafe`, or
//! `$H5PROV_HDF5_THREADSAFE_DIR`), natively and through h5prov (`tests/c/threads.c`: each
//! thread its own file or its own group and dataset in a shared file, plus its element of a
//! dataset all threads write through handles of their own; attributes; every write read
//! back; `sched_yield()` between calls, so that the threads take turns at HDF5's global lock
//! call by call instead of running alone for hundreds of calls).
//!
//! How h5prov buffers (`connector/src/trace/`), and what each assertion would catch:
//! - every thread encodes its records into a buffer of its own (`ThreadState.chunk`,
//!   registered in `Session.buffers`), written to the one trace file when it holds
//!   `buffer/4` bytes (at least 4 KiB, at most 256 KiB), at every file close and flush (all
//!   threads' buffers), when the thread exits (its thread-local's destructor), and at
//!   connector terminate (`finish`: all registered buffers, then the metadata record);
//! - each record takes its `seq` from one process-wide counter and its `tid` from the
//!   thread that made the call; after the calling thread's thread-locals are gone (HDF5's
//!   atexit handler runs after them) records go straight to the file with `gettid()`.
//!
//! So: `seq` must be exactly `0..records` (a buffer written twice duplicates, one never
//! written loses) and `records` in the metadata must equal the rows; the `tid`s must be the
//! threads' `gettid()`s plus the main thread's, with each thread's own count of every call;
//! the per-object summaries of the dataset all threads write through their own handles must
//! be the sum over the threads, and each summary must agree with the trace. The runs that
//! end hostile: threads that exit with their objects open (`leak`; HDF5 closes them from its
//! atexit handler on the main thread); `exit()` from the main thread while the workers are
//! parked with every record of theirs still in their buffers (`exit`; their thread-locals
//! are never destroyed); `exit()` from a worker while main is blocked with its records
//! buffered (`wexit`); `H5close()` while the threads are alive with open objects and full
//! buffers, after which they carry on in a second session (`restart`). Small buffers
//! (`buffer=16K`: a buffer is written every ~25 records, interleaved between threads) and
//! the default (1M: nothing of a worker is written before a file close or the end) both
//! run. Every run has a 60 s limit (`timeout -s KILL`): a deadlock fails the test, it does
//! not hang it.
//!
//! Each of these connector faults fails some of the tests (checked by hand on a mutated
//! `trace` module): a thread's buffer not written at thread exit; `finish` writing only one
//! thread's buffer; the pid recorded as `tid`; a buffer not emptied after a flush; one
//! thread's writes counted twice in the object counters.

use h5prov_tests::{
    compile_c, describe_output, files_with_suffix, read_metas, read_objects, read_records, repo,
    scratch, Run,
};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Instant;

const THREADS: usize = 8;
const TIMEOUT_SECS: u32 = 60;

/// The thread-safe HDF5 installation.
fn threadsafe_dir() -> PathBuf {
    let p = std::env::var_os("H5PROV_HDF5_THREADSAFE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join(".deps/hdf5-threadsafe"));
    let dir = std::fs::canonicalize(&p).unwrap_or_else(|e| {
        panic!(
            "thread-safe HDF5 not found at {} ({e}): run `cargo run -p hdf5-test-harness -- \
             build-hdf5 --variant threadsafe` (or set H5PROV_HDF5_THREADSAFE_DIR)",
            p.display()
        )
    });
    let conf = dir.join("include/H5pubconf.h");
    let text = std::fs::read_to_string(&conf).unwrap_or_else(|e| panic!("{}: {e}", conf.display()));
    assert!(
        text.lines()
            .any(|l| l.trim_start().trim_start_matches('#').trim_start()
                == "define H5_HAVE_THREADSAFE 1"),
        "{} is not a thread-safe HDF5 (no H5_HAVE_THREADSAFE in {})",
        dir.display(),
        conf.display()
    );
    dir
}

/// `tests/c/threads.c` compiled against the thread-safe HDF5 (once per test binary).
fn program() -> PathBuf {
    static EXE: OnceLock<PathBuf> = OnceLock::new();
    EXE.get_or_init(|| compile_c("cc", "threads", Some(&threadsafe_dir()), &["-lpthread"]))
        .clone()
}

/// What one thread says it did.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Worker {
    tid: u64,
    /// VOL operation (as h5prov names it) -> calls that map to it one to one.
    ops: BTreeMap<String, u64>,
    bytes_written: u64,
    bytes_read: u64,
    /// `restart`: the calls after `H5close()`, and the bytes they read.
    ops2: BTreeMap<String, u64>,
    bytes_read2: u64,
}

/// The program's report.
#[derive(Debug)]
struct Report {
    main_tid: u64,
    workers: Vec<Worker>,
    /// stdout without the lines that carry thread ids (equal natively and through h5prov).
    stable: String,
}

fn parse_report(stdout: &str) -> Report {
    let mut main_tid = None;
    let mut workers: Vec<Worker> = Vec::new();
    let mut stable = String::new();
    let num = |s: &str| -> u64 { s.parse().unwrap_or_else(|_| panic!("{s:?} in:\n{stdout}")) };
    for line in stdout.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            ["main", tid] => main_tid = Some(num(tid.strip_prefix("tid=").unwrap())),
            ["thread", i, tid] if tid.starts_with("tid=") => {
                assert_eq!(num(i) as usize, workers.len(), "{stdout}");
                workers.push(Worker {
                    tid: num(&tid[4..]),
                    ops: BTreeMap::new(),
                    bytes_written: 0,
                    bytes_read: 0,
                    ops2: BTreeMap::new(),
                    bytes_read2: 0,
                });
            }
            ["thread", i, "ops2", rest @ ..] => {
                let w = &mut workers[num(i) as usize];
                for kv in rest {
                    let (k, v) = kv.split_once('=').unwrap();
                    match k {
                        "bytes_read" => w.bytes_read2 = num(v),
                        op => {
                            w.ops2.insert(op.to_string(), num(v));
                        }
                    }
                }
                stable.push_str(line);
                stable.push('\n');
            }
            ["thread", i, "ops", rest @ ..] => {
                let w = &mut workers[num(i) as usize];
                for kv in rest {
                    let (k, v) = kv.split_once('=').unwrap();
                    match k {
                        "bytes_written" => w.bytes_written = num(v),
                        "bytes_read" => w.bytes_read = num(v),
                        "sum" => {}
                        op => {
                            w.ops.insert(op.to_string(), num(v));
                        }
                    }
                }
                stable.push_str(line);
                stable.push('\n');
            }
            _ => panic!("unexpected line {line:?} in:\n{stdout}"),
        }
    }
    Report {
        main_tid: main_tid.unwrap_or_else(|| panic!("no main tid in:\n{stdout}")),
        workers,
        stable,
    }
}

/// One scenario of `tests/c/threads.c`.
#[derive(Clone, Copy)]
struct Case {
    mode: &'static str,
    end: &'static str,
    writes: u64,
    /// h5prov options after `path=...` (e.g. a small `buffer=`).
    options: &'static str,
}

impl Case {
    fn name(&self) -> String {
        format!(
            "threads-{}-{}{}",
            self.mode,
            self.end,
            if self.options.is_empty() {
                ""
            } else {
                "-small"
            }
        )
    }

    /// Runs the program (under `timeout`), natively or through h5prov; requires success.
    fn run(&self, dir: &Path, traces: Option<&Path>) -> Report {
        let ts = threadsafe_dir();
        let exe = program();
        let (t, w) = (THREADS.to_string(), self.writes.to_string());
        let secs = TIMEOUT_SECS.to_string();
        let args = [
            "-s",
            "KILL",
            &secs,
            exe.to_str().unwrap(),
            self.mode,
            &t,
            &w,
            self.end,
        ];
        let run = Run::app(Path::new("timeout"), &args, dir)
            .env("LD_LIBRARY_PATH", &ts.join("lib").to_string_lossy());
        let run = match traces {
            Some(t) => run.h5prov(t, &format!("level=dataset{}", self.options)),
            None => run,
        };
        let desc = run.describe();
        let started = Instant::now();
        let out = run.output();
        assert_ne!(
            out.status.code(),
            Some(137),
            "killed after {TIMEOUT_SECS} s: a deadlock or a hang: {}",
            describe_output(&desc, &out)
        );
        assert!(
            out.status.success(),
            "the program failed (or crashed): {}",
            describe_output(&desc, &out)
        );
        eprintln!(
            "{} ({}): {:.2} s",
            self.name(),
            if traces.is_some() { "h5prov" } else { "native" },
            started.elapsed().as_secs_f64()
        );
        let report = parse_report(&String::from_utf8_lossy(&out.stdout));
        assert_eq!(report.workers.len(), THREADS, "{}", desc);
        report
    }

    /// `h5dump -d` of every dataset the run wrote: equal natively and through h5prov.
    fn dump(&self, dir: &Path) -> String {
        let h5dump = threadsafe_dir().join("bin/h5dump");
        let mut files: Vec<(String, Vec<String>)> =
            vec![("shared.h5".to_string(), vec!["/shared".to_string()])];
        for i in 0..THREADS {
            let d = format!("/t{i}/d");
            if self.mode == "files" {
                files.push((format!("t{i}.h5"), vec![d]));
            } else {
                files[0].1.push(d);
            }
        }
        let mut all = String::new();
        for (file, dsets) in files {
            let mut cmd = Command::new(&h5dump);
            for d in &dsets {
                cmd.arg("-d").arg(d);
            }
            let out = cmd
                .arg(&file)
                .current_dir(dir)
                .env("LD_LIBRARY_PATH", threadsafe_dir().join("lib"))
                .env_remove("HDF5_VOL_CONNECTOR")
                .env_remove("HDF5_PLUGIN_PATH")
                .output()
                .expect("run h5dump");
            assert!(
                out.status.success(),
                "h5dump {file} in {}: {}",
                dir.display(),
                String::from_utf8_lossy(&out.stderr)
            );
            all.push_str(&String::from_utf8_lossy(&out.stdout));
        }
        all
    }

    /// Runs natively and through h5prov and checks everything.
    fn check(&self) {
        let base = scratch(&self.name());
        let native_dir = base.join("native");
        let traced_dir = base.join("h5prov");
        std::fs::create_dir_all(&native_dir).unwrap();
        std::fs::create_dir_all(&traced_dir).unwrap();
        let traces = base.join("traces");

        let native = self.run(&native_dir, None);
        let traced = self.run(&traced_dir, Some(&traces));
        assert_eq!(
            native.stable, traced.stable,
            "the threads did the same natively and through h5prov"
        );
        assert_eq!(
            self.dump(&native_dir),
            self.dump(&traced_dir),
            "the files hold the same data natively and through h5prov"
        );
        if self.end == "restart" {
            // Two sessions: before H5close() (`<stem>.*`) and after (`<stem>-s1.*`).
            let (first, second) = (base.join("session-0"), base.join("session-1"));
            for f in files_with_suffix(&traces, "") {
                let name = f.file_name().unwrap().to_string_lossy().into_owned();
                let to = if name.contains("-s1.") {
                    &second
                } else {
                    &first
                };
                std::fs::create_dir_all(to).unwrap();
                std::fs::rename(&f, to.join(&name)).unwrap();
            }
            check_traces(self, &traced, &first);
            check_restarted(self, &traced, &second);
        } else {
            check_traces(self, &traced, &traces);
        }
        // Kept when a check fails (the messages name the directories).
        let _ = std::fs::remove_dir_all(&base);
    }
}

fn count<'a>(it: impl Iterator<Item = &'a h5prov_format::TraceRecord>) -> u64 {
    it.count() as u64
}

fn check_traces(case: &Case, report: &Report, traces: &Path) {
    let t = THREADS as u64;
    let n = case.writes;
    let ctx = format!("{} (traces in {})", case.name(), traces.display());

    // One process, one HDF5, one trace file; the session was completed.
    let metas = read_metas(traces);
    assert_eq!(metas.len(), 1, "{ctx}: {metas:?}");
    let meta = &metas[0];
    assert_eq!(
        files_with_suffix(traces, "")
            .iter()
            .filter(|p| p.to_string_lossy().contains(".trace."))
            .count(),
        1,
        "{ctx}: one trace file"
    );
    assert!(
        meta.end_ns.is_some(),
        "{ctx}: the metadata record was never completed (terminate did not run): {meta:?}"
    );
    assert_eq!(
        u64::from(meta.pid),
        report.main_tid,
        "{ctx}: the main thread's tid is the pid"
    );
    assert_eq!((meta.dropped, meta.write_errors), (0, 0), "{ctx}: {meta:?}");

    // No record lost or duplicated: seq is exactly 0..records, records = rows.
    let recs = read_records(traces);
    assert_eq!(
        meta.records,
        recs.len() as u64,
        "{ctx}: meta records vs rows in the trace"
    );
    let mut seqs: Vec<u64> = recs.iter().map(|r| r.seq).collect();
    seqs.sort_unstable();
    let dups: Vec<u64> = seqs
        .windows(2)
        .filter(|w| w[0] == w[1])
        .map(|w| w[0])
        .collect();
    assert!(dups.is_empty(), "{ctx}: duplicated seqs {dups:?}");
    let missing: Vec<u64> = (0..meta.records)
        .filter(|s| seqs.binary_search(s).is_err())
        .take(20)
        .collect();
    assert!(
        missing.is_empty(),
        "{ctx}: missing seqs (first 20) {missing:?}"
    );
    assert!(recs.iter().all(|r| r.pid == meta.pid), "{ctx}: pid column");

    // tids: the threads' gettid() values plus the main thread's, nothing else.
    let worker_tids: BTreeSet<u64> = report.workers.iter().map(|w| w.tid).collect();
    assert_eq!(worker_tids.len(), THREADS, "{ctx}: {report:?}");
    assert!(!worker_tids.contains(&report.main_tid));
    let mut expected_tids = worker_tids.clone();
    expected_tids.insert(report.main_tid);
    let seen_tids: BTreeSet<u64> = recs.iter().map(|r| r.tid).collect();
    assert_eq!(seen_tids, expected_tids, "{ctx}: tids in the trace");
    // The threads really made their calls at the same time: their seq ranges overlap.
    let range = |tid: u64| {
        let s = recs.iter().filter(|r| r.tid == tid).map(|r| r.seq);
        (s.clone().min().unwrap(), s.max().unwrap())
    };
    let ranges: Vec<(u64, u64)> = worker_tids.iter().map(|&t| range(t)).collect();
    let overlapping = ranges
        .iter()
        .enumerate()
        .any(|(i, a)| ranges[i + 1..].iter().any(|b| a.0 < b.1 && b.0 < a.1));
    assert!(
        overlapping,
        "{ctx}: the threads ran one after another: {ranges:?}"
    );

    // Per thread: exactly the calls it made, and the bytes it moved.
    for (i, w) in report.workers.iter().enumerate() {
        let mine = || recs.iter().filter(|r| r.tid == w.tid);
        for (op, &calls) in &w.ops {
            assert_eq!(
                count(mine().filter(|r| &r.op == op)),
                calls,
                "{ctx}: thread {i} (tid {}) made {calls} calls that are {op}",
                w.tid
            );
        }
        assert!(
            mine().all(|r| r.status >= 0),
            "{ctx}: thread {i}: a failed call"
        );
        assert_eq!(w.ops["dataset.write"], 2 * n, "{ctx}: {w:?}");
        let bytes = |op: &str| -> u64 { mine().filter(|r| r.op == op).map(|r| r.bytes).sum() };
        assert_eq!(bytes("dataset.write"), w.bytes_written, "{ctx}: thread {i}");
        assert_eq!(bytes("dataset.read"), w.bytes_read, "{ctx}: thread {i}");
        assert_eq!(w.bytes_written, n * 16 + n * 4, "{ctx}: thread {i}");
    }

    // The main thread created shared.h5 and /shared. What is left open at the end is closed
    // by HDF5's atexit handler, after the exiting thread's thread-locals are gone: on the
    // main thread (`leak`, `exit`) or on thread 0 (`wexit`).
    let by = |tid: u64, op: &str| count(recs.iter().filter(|r| r.tid == tid && r.op == op));
    let main = report.main_tid;
    assert_eq!(by(main, "file.create"), 1, "{ctx}");
    assert_eq!(by(main, "dataset.create"), 1, "{ctx}");
    assert_eq!(
        by(main, "dataset.write") + by(main, "dataset.read"),
        0,
        "{ctx}"
    );
    let files_per_thread = u64::from(case.mode == "files");
    let closes = ["dataset.close", "group.close", "file.close"];
    let closed_by = |tid: u64| closes.map(|op| by(tid, op));
    match case.end {
        "clean" => assert_eq!(closed_by(main), [1, 0, 1], "{ctx}: closes by main"),
        "leak" | "exit" | "restart" => assert_eq!(
            closed_by(main),
            [2 * t + 1, t, t * files_per_thread + 1],
            "{ctx}: closes by main (atexit)"
        ),
        "wexit" => {
            assert_eq!(closed_by(main), [0, 0, 0], "{ctx}: closes by main");
            assert_eq!(
                closed_by(report.workers[0].tid),
                [2 * t + 1, t, t * files_per_thread + 1],
                "{ctx}: closes by thread 0 (atexit)"
            );
        }
        other => panic!("end {other}"),
    }
    // Every object is closed once, by someone.
    let all = |op: &str| count(recs.iter().filter(|r| r.op == op));
    assert_eq!(all("dataset.close"), 2 * t + 1, "{ctx}");
    assert_eq!(all("group.close"), t, "{ctx}");
    assert_eq!(all("file.close"), t * files_per_thread + 1, "{ctx}");

    // Per-object summaries: one row per object, the sum over the threads.
    let objs = read_objects(traces);
    let rows = |file: &str, path: &str| -> Vec<&h5prov_format::ObjectSummary> {
        objs.iter()
            .filter(|o| o.path == path && Path::new(&o.file).file_name() == Some(file.as_ref()))
            .collect()
    };
    let shared = rows("shared.h5", "/shared");
    assert_eq!(shared.len(), 1, "{ctx}: one row for /shared: {objs:#?}");
    let s = shared[0];
    assert_eq!(s.kind, "dataset");
    assert_eq!(
        (s.opens, s.writes, s.bytes_written, s.reads, s.bytes_read),
        (1 + t, t * n, t * n * 4, t * n, t * n * 4),
        "{ctx}: /shared (created by main, opened by each thread, {n} 4-byte writes and reads \
         each): {s:?}"
    );
    for i in 0..THREADS {
        let file = if case.mode == "files" {
            format!("t{i}.h5")
        } else {
            "shared.h5".to_string()
        };
        let d = rows(&file, &format!("/t{i}/d"));
        assert_eq!(d.len(), 1, "{ctx}: one row for {file} /t{i}/d: {objs:#?}");
        let d = d[0];
        assert_eq!(
            (d.opens, d.writes, d.bytes_written, d.reads, d.bytes_read),
            (1, n, n * 16, n, n * 16),
            "{ctx}: /t{i}/d: {d:?}"
        );
        assert_eq!(
            rows(&file, &format!("/t{i}")).len(),
            1,
            "{ctx}: group /t{i}"
        );
    }
    let datasets: Vec<_> = objs.iter().filter(|o| o.kind == "dataset").collect();
    assert_eq!(datasets.len(), THREADS + 1, "{ctx}: {datasets:#?}");
    let summed: u64 = datasets.iter().map(|o| o.bytes_written).sum();
    let by_threads: u64 = report.workers.iter().map(|w| w.bytes_written).sum();
    assert_eq!(
        summed, by_threads,
        "{ctx}: bytes written, summaries vs threads"
    );
    let summed: u64 = datasets.iter().map(|o| o.writes).sum();
    let by_threads: u64 = report.workers.iter().map(|w| w.ops["dataset.write"]).sum();
    assert_eq!(summed, by_threads, "{ctx}: writes, summaries vs threads");
    // And the summaries agree with the trace, object by object.
    for o in &datasets {
        let of = |op: &str| {
            recs.iter()
                .filter(|r| r.op == op && r.file == o.file && r.path == o.path)
                .map(|r| r.bytes)
                .sum::<u64>()
        };
        assert_eq!(
            (of("dataset.write"), of("dataset.read")),
            (o.bytes_written, o.bytes_read),
            "{ctx}: trace vs summary of {} {}",
            o.file,
            o.path
        );
    }
    // The files: shared.h5 holds /shared (+ the threads' groups and datasets in `shared`).
    let f = rows("shared.h5", "/");
    assert_eq!(f.len(), 1, "{ctx}: one row for shared.h5: {objs:#?}");
    let per_thread = u64::from(case.mode == "shared");
    assert_eq!(
        (f[0].dsets_created, f[0].groups_created),
        (1 + t * per_thread, t * per_thread),
        "{ctx}: {:?}",
        f[0]
    );
}

/// The records of one complete session in `traces`: checked for loss and duplicates.
fn complete_session(ctx: &str, traces: &Path) -> Vec<h5prov_format::TraceRecord> {
    let metas = read_metas(traces);
    assert_eq!(metas.len(), 1, "{ctx}: {metas:?}");
    let meta = &metas[0];
    assert!(meta.end_ns.is_some(), "{ctx}: not completed: {meta:?}");
    assert_eq!((meta.dropped, meta.write_errors), (0, 0), "{ctx}: {meta:?}");
    let recs = read_records(traces);
    assert_eq!(
        meta.records,
        recs.len() as u64,
        "{ctx}: meta records vs rows"
    );
    let mut seqs: Vec<u64> = recs.iter().map(|r| r.seq).collect();
    seqs.sort_unstable();
    assert!(
        seqs.iter().copied().eq(0..meta.records),
        "{ctx}: seq is not exactly 0..{}",
        meta.records
    );
    recs
}

/// `restart`: the session h5prov starts when the threads carry on after `H5close()`.
fn check_restarted(case: &Case, report: &Report, traces: &Path) {
    let n = case.writes;
    let ctx = format!(
        "{} after H5close (traces in {})",
        case.name(),
        traces.display()
    );
    let recs = complete_session(&ctx, traces);
    let worker_tids: BTreeSet<u64> = report.workers.iter().map(|w| w.tid).collect();
    let seen: BTreeSet<u64> = recs.iter().map(|r| r.tid).collect();
    assert_eq!(seen, worker_tids, "{ctx}: only the threads made calls");
    for (i, w) in report.workers.iter().enumerate() {
        let mine = || recs.iter().filter(|r| r.tid == w.tid);
        assert_eq!(w.ops2["dataset.read"], n, "{ctx}: {w:?}");
        for (op, &calls) in &w.ops2 {
            assert_eq!(
                count(mine().filter(|r| &r.op == op)),
                calls,
                "{ctx}: thread {i} (tid {}) made {calls} calls that are {op}",
                w.tid
            );
        }
        let read: u64 = mine()
            .filter(|r| r.op == "dataset.read")
            .map(|r| r.bytes)
            .sum();
        assert_eq!((read, w.bytes_read2), (n * 16, n * 16), "{ctx}: thread {i}");
    }
    let objs = read_objects(traces);
    for i in 0..THREADS {
        let path = format!("/t{i}/d");
        let d: Vec<_> = objs.iter().filter(|o| o.path == path).collect();
        assert_eq!(d.len(), 1, "{ctx}: one row for {path}: {objs:#?}");
        assert_eq!(
            (d[0].opens, d[0].reads, d[0].bytes_read, d[0].writes),
            (1, n, n * 16, 0),
            "{ctx}: {path}: {:?}",
            d[0]
        );
    }
}

// Each thread in a file of its own; the default buffer (nothing of a worker is written
// before the thread closes its file or exits).
#[test]
fn eight_threads_own_files_clean() {
    Case {
        mode: "files",
        end: "clean",
        writes: 300,
        options: "",
    }
    .check();
}

// All threads in one file; small buffers, written while the other threads run.
#[test]
fn eight_threads_shared_file_clean_small_buffers() {
    Case {
        mode: "shared",
        end: "clean",
        writes: 300,
        options: ";buffer=16K",
    }
    .check();
}

// The threads exit with their datasets, groups (and files) open.
#[test]
fn eight_threads_exit_with_objects_open() {
    for mode in ["files", "shared"] {
        Case {
            mode,
            end: "leak",
            writes: 300,
            options: "",
        }
        .check();
    }
}

// exit() from the main thread while the workers are parked, every object open and every
// record of theirs still in their buffers (default buffer), or part of them (16K).
#[test]
fn main_exits_while_workers_hold_unflushed_buffers() {
    for (mode, options) in [("shared", ""), ("files", ";buffer=16K")] {
        Case {
            mode,
            end: "exit",
            writes: 300,
            options,
        }
        .check();
    }
}

// exit() from a worker thread, with the main thread blocked (its records of shared.h5 still
// buffered) and the other workers parked.
#[test]
fn a_worker_exits_the_process_while_main_and_the_others_hold_buffers() {
    for (mode, options) in [("shared", ""), ("files", ";buffer=16K")] {
        Case {
            mode,
            end: "wexit",
            writes: 300,
            options,
        }
        .check();
    }
}

// H5close() from the main thread while the threads are alive with their objects open and
// their records buffered; then they carry on (HDF5 starts again, h5prov with a second
// session) and read their datasets back.
#[test]
fn h5close_while_threads_hold_buffers_then_they_carry_on() {
    for (mode, options) in [("files", ""), ("shared", ";buffer=16K")] {
        Case {
            mode,
            end: "restart",
            writes: 300,
            options,
        }
        .check();
    }
}
