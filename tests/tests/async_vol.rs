//! h5prov with HDF5's asynchronous I/O connector, vol-async 1.8.1 on Argobots 1.2, built
//! from the vendored release sources against the thread-safe HDF5 1.14.5 by
//! `hdf5-test-harness build-async` (linked at `.deps/vol-async`, or
//! `$H5PROV_VOL_ASYNC_DIR`; the HDF5 at `.deps/hdf5-threadsafe` or
//! `$H5PROV_HDF5_THREADSAFE_DIR`).
//!
//! Three stacks run the same programs:
//! - `async`: vol-async over the native connector, no h5prov (the reference);
//! - `over`: h5prov over vol-async (`h5prov under_vol=512;under_info={under_vol=0;...}`);
//! - `under`: vol-async over h5prov (`async under_vol=416;under_info={under_vol=0;...}`).
//!
//! Every run proves what was in its stack: h5prov wrote its metadata record (HDF5 falls
//! back to native silently otherwise), and HDF5 loaded vol-async as a plugin (the dynamic
//! loader's `LD_DEBUG=files` log names `libh5async.so`, which no program here links).
//!
//! What fails on a connector that frees a request wrapper in `wait` (HDF5's event set then
//! calls `request_free` on freed memory: the `over` runs crash), or that takes every object
//! HDF5 hands to `unwrap_object` for its own (vol-async passes the library's file object
//! through h5prov's level unwrapped when the file's create is still in flight, and HDF5 asks
//! h5prov to unwrap it at file close, on vol-async's thread: the `under` runs crash); and
//! a connector that calls an operation asynchronous because a request slot was passed (the
//! `async` column on the native connector).

use h5prov_tests::{
    compile_c, describe_output, files_with_suffix, h5prov_ok, plugin_dir, read_objects,
    read_records, repo, scratch, Run,
};
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::OnceLock;

/// vol-async's serial tests (`hdf5-test-harness/src/asyncvol.rs` builds them).
const SERIAL_TESTS: [&str; 6] = [
    "async_test_multifile",
    "async_test_serial",
    "async_test_serial2",
    "async_test_serial_event_set",
    "async_test_serial_event_set_error_stack",
    "async_test_serial_mdset",
];

fn existing_dir(var: &str, default: &str, what: &str) -> PathBuf {
    let p = std::env::var_os(var)
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join(default));
    std::fs::canonicalize(&p).unwrap_or_else(|e| {
        panic!(
            "{what} not found at {} ({e}): run `cargo run --release -p hdf5-test-harness -- \
             build-hdf5 --variant threadsafe` and `... -- build-async` (or set {var})",
            p.display()
        )
    })
}

/// The thread-safe HDF5 installation vol-async was built against.
fn threadsafe_dir() -> PathBuf {
    existing_dir(
        "H5PROV_HDF5_THREADSAFE_DIR",
        ".deps/hdf5-threadsafe",
        "thread-safe HDF5",
    )
}

/// The vol-async build: `plugin/libh5async.so`, `tests/<serial test>`.
fn vol_async_dir() -> PathBuf {
    existing_dir("H5PROV_VOL_ASYNC_DIR", ".deps/vol-async", "vol-async")
}

/// `tests/c/async_write.c` compiled against the thread-safe HDF5 (once per test binary).
fn async_write() -> PathBuf {
    static EXE: OnceLock<PathBuf> = OnceLock::new();
    EXE.get_or_init(|| compile_c("cc", "async_write", Some(&threadsafe_dir()), &[]))
        .clone()
}

/// vol-async 1.8.1 on Argobots 1.2 sometimes never finishes on a loaded machine, without
/// h5prov too: its main thread spins in Argobots' scheduler (`sched_run`) and the program
/// never exits (seen with vol-async alone in 2 of 6 runs, and with h5prov over it, while
/// other builds and tests ran on both cores; not seen in dozens of runs on a quiet machine).
/// Argobots' schedulers busy-wait, so the tests run one vol-async program at a time
/// ([`ONE_AT_A_TIME`]). A normal run takes a few seconds; one that takes
/// longer than this many seconds is killed (`timeout -s KILL`, see [`hung`]) and run again, at
/// most [`RUNS`] times: a hang is not a result to compare, and a result is never retried.
const HANG_SECS: &str = "60";
/// Held while a program runs: one vol-async program at a time (see [`HANG_SECS`]).
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
/// Whether a run was killed by its `timeout` (see [`HANG_SECS`]): `timeout -s KILL` sends
/// the signal to its process group, itself included, so it dies of SIGKILL (or, had it
/// survived, would exit with 137).
fn hung(out: &Output) -> bool {
    use std::os::unix::process::ExitStatusExt;
    // 9: SIGKILL.
    out.status.signal() == Some(9) || out.status.code() == Some(137)
}

/// Runs of one program and stack at most (see [`HANG_SECS`]).
const RUNS: usize = 5;

/// Which connectors are stacked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stack {
    /// vol-async over native.
    Async,
    /// h5prov over vol-async over native.
    Over,
    /// vol-async over h5prov over native.
    Under,
    /// h5prov over native (no vol-async), on the thread-safe HDF5.
    H5provOnly,
}

impl Stack {
    fn has_h5prov(self) -> bool {
        self != Stack::Async
    }
    fn has_async(self) -> bool {
        self != Stack::H5provOnly
    }
}

/// Runs `program args` in `dir` with `stack`; h5prov traces (binary, level=call) go to
/// `dir/traces`. Returns the output; asserts the stack was really loaded.
fn run(stack: Stack, program: &Path, args: &[&str], dir: &Path) -> Output {
    run_env(stack, program, args, dir, &[])
}

/// [`run`] with extra environment variables.
fn run_env(
    stack: Stack,
    program: &Path,
    args: &[&str],
    dir: &Path,
    env: &[(&str, &str)],
) -> Output {
    run_opts(stack, program, args, dir, env, "")
}

/// [`run_env`] with h5prov options (`level=file;format=csv`) added to its connector string
/// in the `over` stack.
fn run_opts(
    stack: Stack,
    program: &Path,
    args: &[&str],
    dir: &Path,
    env: &[(&str, &str)],
    opts: &str,
) -> Output {
    let traces = dir.join("traces");
    let lib = threadsafe_dir().join("lib");
    let h5prov = format!("under_vol=0;under_info={{}};path={}", traces.display());
    let conn = match stack {
        Stack::Async => "async under_vol=0;under_info={}".to_string(),
        Stack::Over => format!(
            "h5prov under_vol=512;under_info={{under_vol=0;under_info={{}}}};path={}{}{opts}",
            traces.display(),
            if opts.is_empty() { "" } else { ";" }
        ),
        Stack::Under => format!("async under_vol=416;under_info={{{h5prov}}}"),
        Stack::H5provOnly => format!("h5prov {h5prov}"),
    };
    let plugins = format!(
        "{}:{}",
        plugin_dir().display(),
        vol_async_dir().join("plugin").display()
    );
    // Under `timeout`: a run that hangs (see `HANG_SECS`) is killed and run again, with
    // its traces and loader logs removed first.
    let program = program.to_str().expect("a UTF-8 program path");
    let mut timed = vec!["-s", "KILL", HANG_SECS, program];
    timed.extend_from_slice(args);
    let one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let (desc, out) = (1..=RUNS)
        .map(|attempt| {
            if attempt > 1 {
                let _ = std::fs::remove_dir_all(&traces);
                for e in std::fs::read_dir(dir).unwrap().flatten() {
                    if e.file_name().to_string_lossy().starts_with("ld.") {
                        let _ = std::fs::remove_file(e.path());
                    }
                }
            }
            let r = Run::app(Path::new("timeout"), &timed, dir)
                .env("LD_LIBRARY_PATH", &lib.to_string_lossy())
                .env("HDF5_PLUGIN_PATH", &plugins)
                .env("HDF5_VOL_CONNECTOR", &conn)
                .env("LD_DEBUG", "files")
                .env("LD_DEBUG_OUTPUT", &dir.join("ld").to_string_lossy());
            let r = env.iter().fold(r, |r, (k, v)| r.env(k, v));
            let desc = r.describe();
            let out = r.output();
            if hung(&out) {
                eprintln!(
                    "{stack:?}: killed after {HANG_SECS} s (run {attempt} of {RUNS}): {desc}"
                );
            }
            (desc, out)
        })
        .find(|(_, out)| !hung(out))
        .unwrap_or_else(|| panic!("{stack:?}: {program} hung {RUNS} times"));
    drop(one);
    // The loader's log (one file per process, `ld.<pid>`): which plugins HDF5 dlopened.
    let log: String = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("ld."))
        .map(|p| std::fs::read_to_string(p).unwrap_or_default())
        .collect();
    let loaded = |lib: &str| {
        log.lines()
            .any(|l| l.contains("file=") && l.contains(lib) && l.contains("dynamically loaded"))
    };
    assert_eq!(
        loaded("libh5async.so"),
        stack.has_async(),
        "vol-async loaded as a plugin? {}",
        describe_output(&desc, &out)
    );
    if stack.has_h5prov() {
        assert!(
            loaded("libh5prov.so"),
            "h5prov was NOT loaded as a plugin: {}",
            describe_output(&desc, &out)
        );
        // A process that ends normally also wrote h5prov's metadata record (at its
        // connector's terminate): h5prov was in the stack, not only loaded.
        assert!(
            !out.status.success() || !files_with_suffix(&traces, ".meta.json").is_empty(),
            "h5prov was NOT used (no metadata record in {}): {}",
            traces.display(),
            describe_output(&desc, &out)
        );
    }
    out
}

/// The one difference of vol-async's serial tests through h5prov, and why: (test, stack,
/// the test's message on stderr). `async_test_serial_event_set_error_stack` checks that the
/// error stack of a failed background `H5Gcreate_async` holds exactly 9 records ("Somewhat
/// fragile", says its source): with a pass-through connector between vol-async and native,
/// HDF5's own `H5VLgroup_create`, which that connector calls, adds its records for the
/// extra layer. Its failure path then leaves objects open and HDF5's `H5close` gives up
/// ("infinite loop closing library"), so the connectors are never terminated: no metadata
/// record (the loader's log proves h5prov was loaded).
const EXPECTED_DIFFERENCES: [(&str, Stack, &str); 1] = [(
    "async_test_serial_event_set_error_stack",
    Stack::Under,
    "Event set didn't return error stack correctly?!?",
)];

fn ok_stdout(stack: Stack, program: &Path, args: &[&str], dir: &Path) -> String {
    ok_stdout_env(stack, program, args, dir, &[])
}

fn ok_stdout_env(
    stack: Stack,
    program: &Path,
    args: &[&str],
    dir: &Path,
    env: &[(&str, &str)],
) -> String {
    let out = run_env(stack, program, args, dir, env);
    assert!(
        out.status.success(),
        "{stack:?}: {} failed: {}",
        program.display(),
        describe_output(&format!("{args:?} in {}", dir.display()), &out)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The tests' output with the measured times (`... time: 0.002349`) blanked.
fn without_times(stdout: &str) -> String {
    stdout
        .lines()
        .map(|l| match l.find("time: ") {
            Some(i) => format!("{}time: <t>\n", &l[..i]),
            None => format!("{l}\n"),
        })
        .collect()
}

#[test]
fn vol_async_serial_tests_give_the_same_results_with_h5prov_over_and_under_it() {
    let tests = vol_async_dir().join("tests");
    for t in SERIAL_TESTS {
        let exe = tests.join(t);
        let mut results = Vec::new();
        for stack in [Stack::Async, Stack::Over, Stack::Under] {
            let dir = scratch(&format!("async-{t}-{stack:?}"));
            let out = run(stack, &exe, &[], &dir);
            results.push((
                stack,
                out.status.code(),
                without_times(&String::from_utf8_lossy(&out.stdout)),
                String::from_utf8_lossy(&out.stderr).into_owned(),
            ));
        }
        let (_, status, stdout, stderr) = &results[0];
        assert_eq!(
            *status,
            Some(0),
            "{t} fails with vol-async alone:\n{stdout}\n{stderr}"
        );
        for (stack, s, o, e) in &results[1..] {
            if let Some((_, _, why)) = EXPECTED_DIFFERENCES
                .iter()
                .find(|(name, st, _)| *name == t && st == stack)
            {
                assert!(
                    *s == Some(255) && e.contains(why),
                    "{t}: {stack:?}: the expected difference changed (status {s:?}):\n{o}\n{e}"
                );
                continue;
            }
            assert_eq!(
                (s, o),
                (status, stdout),
                "{t}: {stack:?} differs from vol-async alone (status, stdout); its stderr:\n{e}"
            );
        }
    }
}

/// `key=value` lines of `async_write`'s report.
fn value(stdout: &str, key: &str) -> f64 {
    stdout
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{key}=")))
        .unwrap_or_else(|| panic!("no {key}= in:\n{stdout}"))
        .parse()
        .unwrap_or_else(|e| panic!("{key}: {e} in:\n{stdout}"))
}

#[test]
fn a_64_mib_async_write_overlaps_compute_with_h5prov_over_and_under_vol_async() {
    for stack in [Stack::Async, Stack::Over, Stack::Under] {
        let dir = scratch(&format!("async-write-{stack:?}"));
        let out = ok_stdout(stack, &async_write(), &["w.h5", "64", "300"], &dir);
        assert!(
            value(&out, "in_flight") >= 1.0,
            "{stack:?}: vol-async ran nothing asynchronously:\n{out}"
        );
        assert_eq!(value(&out, "err"), 0.0, "{stack:?}:\n{out}");
        assert!(out.contains("read_back=ok"), "{stack:?}:\n{out}");
        if stack == Stack::Over {
            // The write is issued and returns in flight: async=1 on its row, with a request
            // id that the wait which saw it done carries too.
            let recs = read_records(&dir.join("traces"));
            let writes: Vec<_> = recs.iter().filter(|r| r.op == "dataset.write").collect();
            assert!(
                writes.len() == 1 && writes[0].is_async == 1 && writes[0].req != 0,
                "{stack:?}: the async write's rows: {writes:?}"
            );
            let done: Vec<_> = recs
                .iter()
                .filter(|r| r.req == writes[0].req && r.req_done != 0)
                .collect();
            assert!(
                done.len() == 1 && done[0].op == "request.wait" && done[0].req_done == 1,
                "the wait that saw the write done: {done:?}"
            );
            // The report: the 300 ms of computation between the issue and the wait are
            // overlap (both clocks are CLOCK_MONOTONIC), so the completion is at least that
            // much after the issue; nothing was waited for right after issuing.
            let v = report(&dir.join("traces"));
            let w = async_row(&v, "dataset.write");
            assert_eq!(
                (w["issued"].as_u64(), w["completed"].as_u64()),
                (Some(1), Some(1))
            );
            let overlap = w["overlap_ns"].as_u64().unwrap();
            assert!(overlap >= 300_000_000, "{w}");
            assert!(
                w["mean_to_completion_ns"].as_u64().unwrap() >= overlap,
                "{w}"
            );
            assert_eq!(w["waited_right_after"].as_u64(), Some(0), "{w}");
        }
    }
}

/// With vol-async's exec-time clock mended (`hdf5-test-harness build-async`, docs/ASYNC.md),
/// h5prov asks `H5VL_REQUEST_GET_EXEC_TIME` once a request has finished and records the
/// answer on the row that saw it finished: a 64 MiB write ran for a time > 0 that is at
/// most its observed completion (from its call's start to the end of that wait).
///
/// The program computes for 1.5 s before it waits, long enough for the write to have
/// finished on a loaded machine: vol-async 1.8.1 sets a task's end time just after marking
/// it done, so a wait that finds the write done the moment it ends can get an unset end,
/// which h5prov drops (docs/ASYNC.md). With 100 ms this failed 3 times in 15 under load.
#[test]
fn a_64_mib_async_write_records_its_execution_time() {
    let dir = scratch("async-exec-time");
    let out = ok_stdout(Stack::Over, &async_write(), &["w.h5", "64", "1500"], &dir);
    assert!(out.contains("read_back=ok"), "{out}");
    let recs = read_records(&dir.join("traces"));
    let write = recs
        .iter()
        .find(|r| r.op == "dataset.write" && r.is_async == 1)
        .unwrap_or_else(|| panic!("no async write in {recs:?}"));
    let done = recs
        .iter()
        .find(|r| r.req == write.req && r.req_done == 1)
        .unwrap_or_else(|| panic!("no completion of request {}: {recs:?}", write.req));
    let observed = done.start_ns + done.total_ns - write.start_ns;
    assert!(
        done.exec_ns > 0 && done.exec_ns <= observed,
        "execution {} ns, observed completion {observed} ns: {done:?}",
        done.exec_ns
    );
    // Only the row that saw a request finished carries an execution time.
    assert!(
        recs.iter().all(|r| r.exec_ns == 0 || r.req_done == 1),
        "{recs:?}"
    );
    let v = report(&dir.join("traces"));
    let w = async_row(&v, "dataset.write");
    assert_eq!(w["timed"].as_u64(), Some(1), "{w}");
    assert_eq!(w["mean_exec_ns"].as_u64(), Some(done.exec_ns), "{w}");
}

/// Each completion is linked to its operation in every trace format (csv, jsonl, bin) at
/// every level that records the operation: at `level=dataset` the write's, at `level=file`
/// the file create's (whose `request.wait` rows were left out there before: the create was
/// issued and never completed, in the trace and in the report).
#[test]
fn completions_are_linked_in_every_format_at_file_and_dataset_level() {
    for (format, ext) in [("csv", "csv"), ("jsonl", "jsonl"), ("bin", "bin.zst")] {
        for (level, op) in [("dataset", "dataset.write"), ("file", "file.create")] {
            let dir = scratch(&format!("async-formats-{format}-{level}"));
            let opts = format!("level={level};format={format}");
            let args = ["w.h5", "1", "0"];
            let out = run_opts(Stack::Over, &async_write(), &args, &dir, &[], &opts);
            assert!(
                out.status.success()
                    && String::from_utf8_lossy(&out.stdout).contains("read_back=ok"),
                "{format} {level}: {}",
                describe_output(&opts, &out)
            );
            let traces = dir.join("traces");
            assert!(
                !files_with_suffix(&traces, &format!(".trace.{ext}")).is_empty(),
                "{format} {level}: no trace file in {}",
                traces.display()
            );
            let v = report(&traces);
            let row = async_row(&v, op);
            assert_eq!(
                (row["issued"].as_u64(), row["completed"].as_u64()),
                (Some(1), Some(1)),
                "{format} {level}: {row}"
            );
        }
    }
}

/// The link survives the exports and every render of the report: the report read back from
/// the Parquet export has the same asynchronous rows; the Perfetto export carries the
/// request on both events and draws a flow from the write's issue to the wait that saw it
/// finished; the terminal, HTML and CSV reports each have the section.
#[test]
fn exports_and_every_report_render_keep_the_link() {
    let dir = scratch("async-exports");
    let env = [("SLURM_JOB_ID", "4242")];
    ok_stdout_env(
        Stack::Over,
        &async_write(),
        &["w.h5", "8", "50"],
        &dir,
        &env,
    );
    let traces = dir.join("traces");
    let from_traces = report(&traces);

    let pq = dir.join("pq");
    h5prov_ok(&[
        "export",
        "--parquet",
        &pq.to_string_lossy(),
        &traces.to_string_lossy(),
    ]);
    let out = h5prov_ok(&[
        "report",
        "--json",
        "--no-progress",
        "--job",
        "4242",
        &pq.to_string_lossy(),
    ]);
    let from_parquet: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(
        from_parquet["async_ops"], from_traces["async_ops"],
        "the report from Parquet"
    );
    assert_eq!(async_row(&from_parquet, "dataset.write")["completed"], 1);

    let json = dir.join("t.json");
    h5prov_ok(&[
        "export",
        "--perfetto",
        &json.to_string_lossy(),
        &traces.to_string_lossy(),
    ]);
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let evs = v["traceEvents"].as_array().unwrap();
    let write = evs
        .iter()
        .find(|e| e["name"] == "dataset.write" && e["ph"] == "X")
        .unwrap_or_else(|| panic!("no dataset.write event"));
    assert_eq!(write["args"]["async"], 1, "{write}");
    let req = write["args"]["req"].as_u64().filter(|&r| r != 0).unwrap();
    let done = evs
        .iter()
        .find(|e| e["ph"] == "X" && e["args"]["req"] == req && e["args"]["req_done"] == 1)
        .unwrap_or_else(|| panic!("no event completes request {req}"));
    assert_eq!(done["name"], "request.wait", "{done}");
    let id = format!("{}.{req}", write["pid"]);
    let flow = |ph: &str| {
        evs.iter()
            .find(|e| e["ph"] == ph && e["id"] == id.as_str())
            .unwrap_or_else(|| panic!("no flow event {ph} with id {id}"))
    };
    assert_eq!(flow("s")["ts"], write["ts"]);
    assert_eq!(flow("f")["ts"], done["ts"]);

    // Every render of the report has the section: terminal, HTML, CSV (and JSON above).
    let text = String::from_utf8(h5prov_ok(&[
        "report",
        "--no-progress",
        &traces.to_string_lossy(),
    ]))
    .unwrap();
    let at = text
        .find("ASYNCHRONOUS OPERATIONS")
        .expect("terminal section");
    assert!(text[at..].contains("dataset.write"), "{text}");
    let html = dir.join("r.html");
    h5prov_ok(&[
        "report",
        "--no-progress",
        "--html",
        &html.to_string_lossy(),
        &traces.to_string_lossy(),
    ]);
    let html = std::fs::read_to_string(&html).unwrap();
    let at = html
        .find("<h2>Asynchronous operations</h2>")
        .expect("HTML section");
    assert!(
        html[at..].contains("<td>dataset.write</td><td>1/1</td>"),
        "{html}"
    );
    let csv = dir.join("csv");
    h5prov_ok(&[
        "report",
        "--no-progress",
        "--csv",
        &csv.to_string_lossy(),
        &traces.to_string_lossy(),
    ]);
    let table = std::fs::read_to_string(csv.join("async_ops.csv")).unwrap();
    assert!(
        table.starts_with("op,issued,completed,")
            && table.lines().any(|l| l.starts_with("dataset.write,1,1,")),
        "{table}"
    );
}

/// `h5prov report --json` of a trace directory.
fn report(traces: &Path) -> serde_json::Value {
    let out = h5prov_ok(&[
        "report",
        "--json",
        "--no-progress",
        &traces.to_string_lossy(),
    ]);
    serde_json::from_slice(&out).unwrap()
}

fn async_row<'a>(v: &'a serde_json::Value, op: &str) -> &'a serde_json::Value {
    v["async_ops"]
        .as_array()
        .and_then(|a| a.iter().find(|r| r["op"] == op))
        .unwrap_or_else(|| panic!("no {op} in async_ops: {}", v["async_ops"]))
}

fn fires(v: &serde_json::Value, code: &str) -> bool {
    v["insights"]
        .as_array()
        .is_some_and(|a| a.iter().any(|i| i["code"] == code))
}

#[test]
fn waiting_right_after_issuing_is_an_insight() {
    let dir = scratch("async-right-after");
    ok_stdout(Stack::Over, &async_write(), &["w.h5", "64", "0"], &dir);
    let v = report(&dir.join("traces"));
    let w = async_row(&v, "dataset.write");
    assert_eq!(w["waited_right_after"].as_u64(), Some(1), "{w}");
    assert!(fires(&v, "async_waited_right_after"), "{}", v["insights"]);
}

/// h5prov asks nothing about an object whose create is still in flight: with
/// `HDF5_ASYNC_EXE_FCLOSE=1` vol-async runs no operation before the file is closed or waited
/// for unless something needs an answer, so the file must not exist yet when the calls
/// have returned. (A query of h5prov's about the new file or dataset made vol-async run
/// the queued create first.)
#[test]
fn h5prov_over_vol_async_runs_nothing_early() {
    let env = [("HDF5_ASYNC_EXE_FCLOSE", "1")];
    for stack in [Stack::Async, Stack::Over] {
        let dir = scratch(&format!("async-delay-{stack:?}"));
        let out = ok_stdout_env(stack, &async_write(), &["w.h5", "1", "0"], &dir, &env);
        assert_eq!(value(&out, "exists_after_issue"), 0.0, "{stack:?}:\n{out}");
        assert!(out.contains("read_back=ok"), "{stack:?}:\n{out}");
    }
}

/// h5prov describes a file created asynchronously (its FAPL's alignment and library
/// bounds, its file system, its identity) when the create has completed, not when it was
/// issued: the five property queries, the `statfs` and the `stat` were a third of h5prov's
/// own issue time of `H5Fcreate_async` (docs/ASYNC.md). With `HDF5_ASYNC_EXE_FCLOSE=1` the
/// file does not exist yet when the calls return, so the file's row has a file system and
/// an identity only if they were taken after the create ran (at issue, as before, a
/// `statfs` and a `stat` of the missing file found nothing).
#[test]
fn an_async_created_file_is_described_at_its_completion_not_at_its_issue() {
    let env = [("HDF5_ASYNC_EXE_FCLOSE", "1")];
    let dir = scratch("async-describe-late");
    let out = ok_stdout_env(Stack::Over, &async_write(), &["w.h5", "1", "0"], &dir, &env);
    assert_eq!(value(&out, "exists_after_issue"), 0.0, "{out}");
    let objects = read_objects(&dir.join("traces"));
    let created: Vec<_> = objects
        .iter()
        .filter(|o| o.kind == "file" && o.intent == "create")
        .collect();
    assert_eq!(created.len(), 1, "{objects:?}");
    let f = created[0];
    assert!(f.file.ends_with("w.h5"), "{f:?}");
    assert!(f.dev != 0 && f.ino != 0, "no identity: {f:?}");
    let meta = std::fs::metadata(dir.join("w.h5")).unwrap();
    use std::os::unix::fs::MetadataExt;
    assert_eq!((f.dev, f.ino), (meta.dev(), meta.ino()), "{f:?}");
    assert!(!f.fs.is_empty(), "no file system: {f:?}");
    assert!(
        !f.libver.is_empty() && !f.align.is_empty(),
        "no FAPL properties: {f:?}"
    );
    // A new file: found with no size, closed with the data in it.
    assert_eq!(f.open_size, 0, "{f:?}");
    assert!(f.close_size >= 1 << 20, "{f:?}");
}

/// h5prov makes no system call on a file whose asynchronous create it issues: the `stat` of
/// the file "as the process found it", before the call, was most of h5prov's own issue
/// time of `H5Fcreate_async` over vol-async (a path lookup of a name not yet there;
/// docs/ASYNC.md). Observed with `strace -f`: with `HDF5_ASYNC_EXE_FCLOSE=1` vol-async's
/// thread creates the file only at the wait, so a `stat` of the file by the application's
/// thread before the `openat(O_CREAT)` that makes it was made at issue (the program's own
/// `access` of the file, its check that nothing ran early, is not traced). After the create,
/// the application's thread does `stat` it (h5prov's description at completion): the
/// check sees h5prov's calls.
#[test]
fn an_async_create_makes_no_system_call_on_its_file_at_issue() {
    let env = [("HDF5_ASYNC_EXE_FCLOSE", "1")];
    let dir = scratch("async-create-no-stat");
    let log = dir.join("strace.log");
    let prog = async_write();
    let args = [
        "-f",
        "-qq",
        "-o",
        log.to_str().unwrap(),
        "-e",
        "trace=%%stat,%%statfs,openat",
        prog.to_str().unwrap(),
        "w.h5",
        "1",
        "0",
    ];
    let out = ok_stdout_env(Stack::Over, Path::new("strace"), &args, &dir, &env);
    assert_eq!(value(&out, "exists_after_issue"), 0.0, "{out}");
    let text = std::fs::read_to_string(&log).unwrap();
    // "TID call(args) = result"; the first line is the application's thread (its loader).
    let calls: Vec<(&str, &str)> = text
        .lines()
        .filter_map(|l| l.split_once(' '))
        .map(|(tid, rest)| (tid, rest.trim_start()))
        .collect();
    let main = calls.first().expect("strace logged nothing").0;
    let on_file = |c: &str| c.contains("\"w.h5\"");
    let is_stat = |c: &str| {
        ["stat(", "lstat(", "statx(", "newfstatat(", "fstatat64("]
            .iter()
            .any(|s| c.starts_with(s))
    };
    let created = calls
        .iter()
        .position(|(_, c)| c.starts_with("openat(") && on_file(c) && c.contains("O_CREAT"))
        .unwrap_or_else(|| panic!("no openat(O_CREAT) of w.h5 in {}", log.display()));
    let before: Vec<_> = calls[..created]
        .iter()
        .filter(|(t, c)| *t == main && on_file(c) && (is_stat(c) || c.starts_with("statfs(")))
        .collect();
    assert!(
        before.is_empty(),
        "stat at issue, before the create ran: {before:?}"
    );
    assert!(
        calls[created..]
            .iter()
            .any(|(t, c)| *t == main && on_file(c) && is_stat(c)),
        "the application's thread never looked at w.h5 after it was made (strace log {})",
        log.display()
    );
}

/// Whether an asynchronous create truncated a file is told at its completion by the file's
/// birth time (no `stat` before it: see above): a second run over the file the first run
/// made gives `truncate`, the first `create`. The version the truncation destroyed is not
/// known (size and mtime 0), so the PROV export gives none (a version of size 0 and mtime 0
/// would be invented). Where the file system keeps no birth time, the intent is unknown.
#[test]
fn an_async_create_tells_a_truncation_by_the_files_birth_time() {
    let env = [("HDF5_ASYNC_EXE_FCLOSE", "1")];
    let dir = scratch("async-create-truncate");
    let traces = dir.join("traces");
    let file_row = |traces: &Path| {
        let rows: Vec<_> = read_objects(traces)
            .into_iter()
            .filter(|o| o.kind == "file" && o.file.ends_with("w.h5") && o.created > 0)
            .collect();
        assert_eq!(rows.len(), 1, "{rows:?}");
        rows.into_iter().next().unwrap()
    };
    let out = ok_stdout_env(Stack::Over, &async_write(), &["w.h5", "1", "0"], &dir, &env);
    assert!(out.contains("read_back=ok"), "{out}");
    let born = std::fs::metadata(dir.join("w.h5"))
        .unwrap()
        .created()
        .is_ok();
    let first = file_row(&traces);
    assert_eq!(first.intent, if born { "create" } else { "" }, "{first:?}");
    let first_traces = dir.join("traces-1");
    std::fs::rename(&traces, &first_traces).unwrap();

    let out = ok_stdout_env(Stack::Over, &async_write(), &["w.h5", "1", "0"], &dir, &env);
    assert!(out.contains("read_back=ok"), "{out}");
    let second = file_row(&traces);
    assert_eq!(
        second.intent,
        if born { "truncate" } else { "" },
        "{second:?}"
    );
    assert_eq!(
        (second.open_size, second.open_mtime_ns),
        (0, 0),
        "{second:?}"
    );
    assert_eq!(
        (second.dev, second.ino),
        (first.dev, first.ino),
        "{second:?}"
    );
    assert!(second.close_size >= 1 << 20, "{second:?}");

    // PROV: the first run generated a version, the second generated one; no version of
    // size 0 and mtime 0 is invented for what the truncation destroyed.
    let prov = dir.join("prov.json");
    h5prov_ok(&[
        "export",
        "--prov",
        prov.to_str().unwrap(),
        first_traces.to_str().unwrap(),
        traces.to_str().unwrap(),
    ]);
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&prov).unwrap()).unwrap();
    let versions: Vec<_> = doc["entity"]
        .as_object()
        .unwrap()
        .values()
        .filter(|e| e["prov:type"]["$"] == "h5prov:FileVersion")
        .collect();
    assert_eq!(versions.len(), 2, "{versions:?}");
    assert!(
        versions.iter().all(|v| v["h5prov:size"] != 0),
        "a version of no size: {versions:?}"
    );
}

/// h5prov sets up its trace session (creates the trace files, compresses their headers,
/// writes the metadata record, makes the thread's buffer) when HDF5 parses
/// `HDF5_VOL_CONNECTOR` at library start, not inside the application's first file create:
/// that setup made the issue of `H5Fcreate_async` through h5prov 2-3x vol-async's own.
/// The program looks for the trace directory after `H5EScreate` (which starts the library)
/// and before its first `H5Fcreate_async`. (Timing the issue is the benchmark in
/// docs/ASYNC.md, not a test.)
///
/// The first record's one-time work is done then too. That record goes into the first page
/// of the starting thread's slot in the crash sidecar (`*.pending`, a shared file mapping
/// whose blocks were allocated but never written). The write fault of that page (the file
/// system's first dirtying of the file, 40–90 µs on ext4), the binary encoder's tables and
/// the staging buffer's first page were paid by the first record, inside the first
/// `H5Fcreate_async`: most of why its issue through h5prov over vol-async took ~1.7x HDF5's
/// pass-through's (docs/ASYNC.md, "The cold create"). Observable: the slot's page is in
/// memory after the library started and before the first create (`mincore`; before, only
/// the sidecar's header page was). A file system whose `fallocate` puts pages in memory
/// (tmpfs) would make that pass without the change; the test directory is on disk.
#[test]
fn h5prov_sets_up_its_trace_session_and_first_record_before_the_first_async_create() {
    let dir = scratch("async-session-early");
    let traces = dir.join("traces");
    let env = [("ASYNC_WRITE_TRACES", traces.to_str().unwrap())];
    let out = ok_stdout_env(Stack::Over, &async_write(), &["w.h5", "1", "0"], &dir, &env);
    assert_eq!(value(&out, "traces_before_create"), 1.0, "{out}");
    assert!(value(&out, "sidecar_pages_before_create") >= 1.0, "{out}");
    assert!(out.contains("read_back=ok"), "{out}");
    // The first file create was still recorded, as an operation left in flight, in the
    // page made ready for it.
    let recs = read_records(&traces);
    assert!(
        recs.iter()
            .any(|r| r.op == "file.create" && r.is_async == 1 && r.req != 0),
        "{recs:?}"
    );
}

/// h5prov leaves the work of an asynchronous file close (the rows of the file and of the
/// objects parked in it, the drain of the record buffers to the trace) for the close's
/// request to be freed, after it ran: that work was most of h5prov's own issue time of
/// `H5Fclose_async` (docs/ASYNC.md). Observable: the trace files do not grow while
/// `H5Dclose_async` + `H5Fclose_async` are issued (before, the close drained every
/// buffer into them), and after the wait every row and record is there.
#[test]
fn an_async_file_close_drains_the_trace_at_its_completion_not_at_its_issue() {
    let dir = scratch("async-close-late");
    let traces = dir.join("traces");
    let env = [("ASYNC_WRITE_TRACES", traces.to_str().unwrap())];
    let out = ok_stdout_env(Stack::Over, &async_write(), &["w.h5", "1", "0"], &dir, &env);
    assert!(out.contains("read_back=ok"), "{out}");
    assert_eq!(value(&out, "trace_growth_at_close_issue"), 0.0, "{out}");
    // Nothing lost: the close left in flight, its completion, and the file's row (with its
    // size at close, taken after the close ran) and the dataset's.
    let recs = read_records(&traces);
    let close = recs
        .iter()
        .find(|r| r.op == "file.close" && r.is_async == 1 && r.req != 0)
        .unwrap_or_else(|| panic!("no file.close left in flight: {recs:?}"));
    assert!(
        recs.iter()
            .any(|r| r.op == "request.free" && r.req == close.req),
        "{recs:?}"
    );
    let objects = read_objects(&traces);
    let created: Vec<_> = objects
        .iter()
        .filter(|o| o.kind == "file" && o.intent == "create")
        .collect();
    assert_eq!(created.len(), 1, "{objects:?}");
    assert!(created[0].close_size >= 1 << 20, "{:?}", created[0]);
    assert!(
        objects
            .iter()
            .any(|o| o.kind == "dataset" && o.file.ends_with("w.h5")),
        "{objects:?}"
    );
}

#[test]
fn the_async_column_is_0_on_the_native_connector_even_with_an_event_set() {
    let dir = scratch("async-native");
    let out = ok_stdout(Stack::H5provOnly, &async_write(), &["w.h5", "1", "0"], &dir);
    assert_eq!(value(&out, "in_flight"), 0.0, "{out}");
    let recs = read_records(&dir.join("traces"));
    let issued: Vec<_> = recs
        .iter()
        .filter(|r| {
            matches!(
                r.op.as_str(),
                "dataset.write" | "dataset.create" | "file.create"
            )
        })
        .collect();
    assert!(issued.len() >= 3, "{recs:?}");
    assert!(
        issued.iter().all(|r| r.is_async == 0),
        "the native connector ran them synchronously: {issued:?}"
    );
}

/// `h5prov run` with the user's `HDF5_VOL_CONNECTOR=async ...` and vol-async's plugin
/// directory in `HDF5_PLUGIN_PATH`: vol-async is stacked under h5prov (by its value, 512),
/// not replaced. Proof that it is underneath: h5prov records the file create as an
/// operation vol-async left in flight (a request), which the native connector never gives.
#[test]
fn h5prov_run_stacks_the_users_vol_async_under_h5prov() {
    let dir = scratch("async-h5prov-run");
    let traces = dir.join("traces");
    let program = async_write();
    let lib = threadsafe_dir().join("lib");
    let args = [
        "run",
        "--path",
        traces.to_str().unwrap(),
        "--",
        "timeout",
        "-s",
        "KILL",
        HANG_SECS,
        program.to_str().unwrap(),
        "w.h5",
        "1",
        "0",
    ];
    let one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let (desc, out) = (1..=RUNS)
        .map(|_| {
            let _ = std::fs::remove_dir_all(&traces);
            let r = Run::app(&h5prov_tests::analyzer(), &args, &dir)
                .env("LD_LIBRARY_PATH", &lib.to_string_lossy())
                .env(
                    "HDF5_PLUGIN_PATH",
                    &vol_async_dir().join("plugin").to_string_lossy(),
                )
                .env("HDF5_VOL_CONNECTOR", "async under_vol=0;under_info={}");
            let desc = r.describe();
            (desc, r.output())
        })
        // `h5prov run` reports the program's SIGKILL (a hang, see `HANG_SECS`) as 137.
        .find(|(_, out)| out.status.code() != Some(137))
        .expect("hung every time");
    drop(one);
    let text = describe_output(&desc, &out);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("read_back=ok"), "{text}");
    let recs = read_records(&traces);
    assert!(
        recs.iter()
            .any(|r| r.op == "file.create" && r.is_async == 1 && r.req != 0),
        "no asynchronous file.create: vol-async was not under h5prov\n{text}"
    );
}

/// A synchronous and two asynchronous opens of one dataset, all open at once, share one
/// state node, as synchronous opens do (the homomorphic tree: one node per object): one
/// summary row for the dataset, with 3 opens and 2 writes. h5prov asks nothing about an
/// object whose open is in flight; the asynchronous opens take the dataset's identity from
/// the name the synchronous open resolved at the same location (`tests/c/async_shared.c`).
/// Before, each asynchronous open had a node of its own: three rows.
#[test]
fn async_opens_share_the_node_of_the_object_they_open() {
    let exe = compile_c("cc", "async_shared", Some(&threadsafe_dir()), &[]);
    let dir = scratch("async-shared-nodes");
    let out = ok_stdout(Stack::Over, &exe, &["s.h5"], &dir);
    assert!(out.contains("done=1"), "{out}");
    let recs = read_records(&dir.join("traces"));
    // The two opens really were left in flight (vol-async handed back requests).
    let in_flight = recs
        .iter()
        .filter(|r| r.op == "dataset.open" && r.is_async == 1 && r.req != 0)
        .count();
    assert_eq!(in_flight, 2, "{recs:?}");
    let objects = read_objects(&dir.join("traces"));
    let opened: Vec<_> = objects
        .iter()
        .filter(|o| o.kind == "dataset" && o.created == 0)
        .collect();
    assert_eq!(opened.len(), 1, "one node for the three opens: {objects:?}");
    let d = opened[0];
    assert_eq!(
        (d.path.as_str(), d.opens, d.writes),
        ("/data", 3, 2),
        "{d:?}"
    );
    assert!(!d.token.is_empty(), "{d:?}");
    assert!(d.file.ends_with("s.h5"), "{d:?}");
}
