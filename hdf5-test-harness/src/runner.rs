//! `run`: HDF5's regression suites from the build tree, once per connector mode, each diffed
//! against the native baseline.

use crate::apitest::parse_api_output;
use crate::buildtree::BuildTree;
use crate::ctest::{parse_progress_line, parse_show_only_json, CtestTest};
use crate::diff::{diff_suite, render, SuiteDiff};
use crate::error::{Context, Error, Result};
use crate::expected::ExpectedDifferences;
use crate::mode::Mode;
use crate::probe::Probe;
use crate::process::{describe_status, find_program, fresh_dir, run_to_files};
use crate::results::{
    dedup_names, Counts, Outcome, Suite, SuiteResult, TestResult, RESULT_FORMAT_VERSION,
};
use crate::suites::{self, VolTest};
use crate::traces::{self, TraceTally};
use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// Settings of one `run`.
#[derive(Debug)]
pub struct RunOptions {
    /// Modes requested; native is added first when missing.
    pub modes: Vec<Mode>,
    /// Suites to run, in order.
    pub suites: Vec<Suite>,
    /// `HDF5_PLUGIN_PATH` for modes other than native.
    pub plugin_path: PathBuf,
    /// Results directory.
    pub out: PathBuf,
    /// Parallel jobs for the vol and tools suites.
    pub jobs: usize,
    /// The HDF5 build tree to run from.
    pub build: BuildTree,
    /// Allowed differences.
    pub expected: ExpectedDifferences,
    /// Run native again even when results for the same build are saved.
    pub rerun_native: bool,
    /// At most this many tests listed per kind of difference.
    pub max_listed: usize,
    /// testpar: run every parallel test, not only [`crate::testpar::CI_SUBSET`].
    pub testpar_full: bool,
    /// Keep the traces of modes through h5prov instead of removing them once counted.
    pub keep_traces: bool,
}

/// Environment changes for one mode.
#[derive(Debug, Clone)]
struct ModeEnv {
    set: Vec<(String, String)>,
    unset: Vec<String>,
}

impl ModeEnv {
    fn apply(&self, cmd: &mut Command) {
        for k in &self.unset {
            cmd.env_remove(k);
        }
        for (k, v) in &self.set {
            cmd.env(k, v);
        }
    }
}

struct Ctx<'a> {
    opts: &'a RunOptions,
    build_id: String,
    /// The build tree's ctest list (listed when the vol or testpar suite runs).
    all_tests: Vec<CtestTest>,
    /// The ctest list with the `h5_api_test_<area>` tests (listed when the api suite runs).
    api_tests: Vec<CtestTest>,
    /// The ctest list of `<build>/tools` (listed when the tools suite runs).
    tools_tests: Vec<CtestTest>,
    timeout_prog: PathBuf,
    /// Traces counted while the current suite runs (the vol suite sweeps after each test).
    tally: Mutex<TraceTally>,
}

fn now_unix() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

fn ctest_list(dir: &Path) -> Result<Vec<CtestTest>> {
    let out = Command::new("ctest")
        .arg("--show-only=json-v1")
        .current_dir(dir)
        .output()
        .context(|| format!("running `ctest --show-only=json-v1` in {}", dir.display()))?;
    if !out.status.success() {
        return Err(Error::new(format!(
            "`ctest --show-only=json-v1` in {} failed: {}",
            dir.display(),
            String::from_utf8_lossy(&out.stderr)
        )));
    }
    parse_show_only_json(
        &String::from_utf8_lossy(&out.stdout),
        &format!("ctest in {}", dir.display()),
    )
}

/// `LD_LIBRARY_PATH` with `lib` first: the test programs must load the libhdf5 of the build
/// tree they come from, even when the caller's environment points at another HDF5 (the
/// serial one of `scripts/common.sh` while the parallel variant runs). `LD_LIBRARY_PATH`
/// wins over the programs' RUNPATH.
pub fn library_path_with(lib: &Path, current: Option<&std::ffi::OsStr>) -> String {
    match current.map(|c| c.to_string_lossy().into_owned()) {
        Some(c) if !c.is_empty() => format!("{}:{c}", lib.display()),
        _ => lib.display().to_string(),
    }
}

fn mode_env(mode: &Mode, plugin_path: &Path, lib: &Path) -> (ModeEnv, Option<String>) {
    let (mut env, note) = connector_env(mode, plugin_path);
    env.set.push((
        "LD_LIBRARY_PATH".to_string(),
        library_path_with(lib, std::env::var_os("LD_LIBRARY_PATH").as_deref()),
    ));
    (env, note)
}

fn connector_env(mode: &Mode, plugin_path: &Path) -> (ModeEnv, Option<String>) {
    let vars = [
        "HDF5_VOL_CONNECTOR".to_string(),
        "HDF5_PLUGIN_PATH".to_string(),
    ];
    match &mode.connector {
        None => (
            ModeEnv {
                set: vec![],
                unset: vars.to_vec(),
            },
            None,
        ),
        Some(c) => {
            let mut set = vec![("HDF5_VOL_CONNECTOR".to_string(), c.clone())];
            let mut unset = vec![];
            let mut note = None;
            if plugin_path.is_dir() {
                set.push((
                    "HDF5_PLUGIN_PATH".to_string(),
                    plugin_path.display().to_string(),
                ));
            } else {
                unset.push("HDF5_PLUGIN_PATH".to_string());
                note = Some(format!(
                    "plugin path {} does not exist: HDF5_PLUGIN_PATH left unset{}",
                    plugin_path.display(),
                    if suites::needs_plugins(c) {
                        " (this mode needs a plugin: expect the probe to fail)"
                    } else {
                        ""
                    }
                ));
            }
            (ModeEnv { set, unset }, note)
        }
    }
}

/// Runs everything; returns `true` when no unexpected regression (or run error) occurred.
pub fn run(opts: &RunOptions) -> Result<bool> {
    let timeout_prog = find_program("timeout").ok_or_else(|| {
        Error::new("coreutils `timeout` not found on PATH (needed to bound test run times)")
    })?;
    if find_program("ctest").is_none() {
        return Err(Error::new("`ctest` not found on PATH (install cmake)"));
    }
    opts.build.require(&opts.suites)?;
    if opts.suites.contains(&Suite::Testpar) {
        if !opts.build.parallel {
            return Err(Error::new(format!(
                "--suite testpar needs a parallel HDF5 build tree, and {} is serial (HDF5_ENABLE_PARALLEL is not ON); \
                 build one with `hdf5-test-harness build-hdf5 --variant parallel` and pass --variant parallel",
                opts.build.dir.display()
            )));
        }
        if find_program("mpiexec").is_none() && find_program("mpirun").is_none() {
            return Err(Error::new(
                "--suite testpar: neither mpiexec nor mpirun is on PATH (install openmpi-bin)",
            ));
        }
    }
    std::fs::create_dir_all(&opts.out).context(|| format!("creating {}", opts.out.display()))?;
    let wants = |s: Suite| opts.suites.contains(&s);
    // HDF5 1.14 lists its API tests with the rest; the v2 variant's are in a directory of
    // their own (its build tree has no tests).
    let api_in_tree = opts.build.api_dir.as_deref() == Some(opts.build.dir.as_path());
    let all_tests =
        if wants(Suite::Vol) || wants(Suite::Testpar) || (wants(Suite::Api) && api_in_tree) {
            ctest_list(&opts.build.dir)?
        } else {
            Vec::new()
        };
    let api_tests = match &opts.build.api_dir {
        Some(d) if wants(Suite::Api) && !api_in_tree => ctest_list(d)?,
        _ => all_tests.clone(),
    };
    let ctx = Ctx {
        opts,
        build_id: opts.build.build_id(),
        all_tests,
        api_tests,
        tools_tests: if wants(Suite::Tools) {
            ctest_list(&opts.build.dir.join("tools"))?
        } else {
            Vec::new()
        },
        timeout_prog,
        tally: Mutex::new(TraceTally::default()),
    };
    // Earlier runs (before traces were swept) left h5prov-traces directories in the build
    // tree where the tools tests run.
    let stale = traces::sweep_all(
        &[&opts.build.dir.join("tools")],
        Path::new(traces::DEFAULT_TRACE_DIR),
        false,
    )?;
    if stale.processes > 0 {
        println!(
            "removed stale traces of {} processes ({:.1} MB) from {}",
            stale.processes,
            stale.bytes as f64 / 1e6,
            opts.build.dir.join("tools").display()
        );
    }
    let probe = Probe::build(&opts.build, &opts.out.join("probe"))?;
    let kind = match (opts.build.parallel, opts.build.threadsafe) {
        (true, _) => ", parallel",
        (false, true) => ", thread-safe",
        (false, false) => "",
    };
    match opts.build.version {
        Some(v) => println!(
            "HDF5 build tree: {} (HDF5 {v}{kind})",
            opts.build.dir.display()
        ),
        None => println!("HDF5 build tree: {}{kind}", opts.build.dir.display()),
    }
    if let Some(api) = opts
        .build
        .api_dir
        .as_ref()
        .filter(|d| **d != opts.build.dir)
    {
        println!(
            "API tests: {} (HDF5 1.14.5's test/API built against this HDF5)",
            api.display()
        );
    }
    println!(
        "results: {}   jobs: {}   plugin path: {}",
        opts.out.display(),
        opts.jobs,
        opts.plugin_path.display()
    );

    let mut modes = vec![Mode::native()];
    let native_explicit = opts.modes.iter().any(|m| m.label == "native");
    modes.extend(opts.modes.iter().filter(|m| m.label != "native").cloned());

    let mut results: Vec<(String, Suite, Option<SuiteResult>)> = Vec::new();
    let mut mode_errors: Vec<String> = Vec::new();
    for mode in &modes {
        let (env, note) = mode_env(mode, &opts.plugin_path, &opts.build.dir.join("bin"));
        let label = &mode.label;
        println!();
        println!(
            "== mode {label}: HDF5_VOL_CONNECTOR={}",
            mode.connector.as_deref().unwrap_or("(unset)")
        );
        if let Some(n) = note {
            println!("[{label}] note: {n}");
        }
        // Reuse native results from the same build unless asked not to.
        let mut todo = Vec::new();
        for &suite in &opts.suites {
            let path = SuiteResult::path(&opts.out, label, suite);
            let reusable = mode.is_native() && !native_explicit && !opts.rerun_native;
            match reusable
                .then(|| SuiteResult::load(&path))
                .and_then(|r| r.ok())
            {
                Some(r) if r.build_id == ctx.build_id && r.errors.is_empty() => {
                    println!(
                        "[{label}] {suite}: reusing saved results from {} (same HDF5 build)",
                        path.display()
                    );
                    println!("[{label}] {}", r.summary_line(suite.name()));
                    results.push((label.clone(), suite, Some(r)));
                }
                _ => todo.push(suite),
            }
        }
        if todo.is_empty() {
            continue;
        }
        let scratch = opts.out.join("work").join(label).join("probe");
        let probe_record = match probe
            .check(mode.expected_connector_name(), &scratch, |c| env.apply(c))
        {
            Ok(r) => {
                println!(
                    "[{label}] probe: default FAPL and a created file use connector '{}' (proof of loading)",
                    r.file_connector
                );
                r
            }
            Err(e) => {
                eprintln!("[{label}] ERROR: {e}");
                mode_errors.push(format!(
                    "{label}: connector not loaded; its suites were not run"
                ));
                for suite in todo {
                    results.push((label.clone(), suite, None));
                }
                continue;
            }
        };
        for suite in todo {
            let start = Instant::now();
            let started_unix = now_unix();
            let (tests, errors) = match suite {
                Suite::Api => run_api(&ctx, mode, &env)?,
                Suite::Vol => run_vol(&ctx, mode, &env)?,
                Suite::Tools => run_tools(&ctx, mode, &env)?,
                Suite::Testpar => run_testpar(&ctx, mode, &env)?,
            };
            let (trace_tally, errors) = sweep_suite(&ctx, mode, suite, errors)?;
            let result = SuiteResult {
                format_version: RESULT_FORMAT_VERSION,
                mode: label.clone(),
                connector: mode.connector.clone(),
                suite,
                build_id: ctx.build_id.clone(),
                build_dir: opts.build.dir.display().to_string(),
                started_unix,
                seconds: start.elapsed().as_secs_f64(),
                probe: probe_record.clone(),
                tests,
                errors,
                traces: trace_tally,
            };
            result.save(&SuiteResult::path(&opts.out, label, suite))?;
            for e in &result.errors {
                eprintln!("[{label}] {suite}: ERROR: {e}");
            }
            println!("[{label}] {}", result.summary_line(suite.name()));
            if let Some(t) = &result.traces {
                println!("[{label}] {suite}: {}", t.line(!opts.keep_traces));
            }
            results.push((label.clone(), suite, Some(result)));
        }
    }
    Ok(report(opts, &results, &mode_errors))
}

/// Prints the summary, timings, differences and verdict; returns `true` when all is well.
fn report(
    opts: &RunOptions,
    results: &[(String, Suite, Option<SuiteResult>)],
    mode_errors: &[String],
) -> bool {
    println!();
    println!("== summary");
    for (label, suite, r) in results {
        match r {
            Some(r) => println!("{}", r.summary_line(&format!("{label}/{suite}"))),
            None => println!("{label}/{suite}: not run (connector not loaded)"),
        }
    }
    println!();
    println!("== time per suite");
    for (label, suite, r) in results
        .iter()
        .filter_map(|(l, s, r)| r.as_ref().map(|r| (l, s, r)))
    {
        println!("  {label}/{suite}: {:.1} s", r.seconds);
    }
    let mut ok = mode_errors.is_empty();
    let mut verdict = Vec::new();
    let natives: HashMap<Suite, &SuiteResult> = results
        .iter()
        .filter(|(l, _, _)| l == "native")
        .filter_map(|(_, s, r)| r.as_ref().map(|r| (*s, r)))
        .collect();
    for (suite, n) in &natives {
        let c = n.counts();
        if c.failed > 0 {
            verdict.push(format!(
                "warning: native/{suite} has {} failing tests (baseline, not counted)",
                c.failed
            ));
        }
        if !n.errors.is_empty() {
            ok = false;
            verdict.push(format!(
                "native/{suite}: run errors: {}",
                n.errors.join("; ")
            ));
        }
    }
    println!();
    println!("== differences from native");
    let mut any_diff = false;
    for (label, suite, r) in results {
        if label == "native" {
            continue;
        }
        let (Some(r), Some(n)) = (r, natives.get(suite)) else {
            continue;
        };
        let d: SuiteDiff = diff_suite(n, r, &opts.expected);
        let text = render(&d, opts.max_listed);
        if !text.is_empty() {
            any_diff = true;
            print!("{text}");
        }
        if d.regressions() > 0 {
            ok = false;
            verdict.push(format!(
                "{label}/{suite}: {} unexpected regressions",
                d.regressions()
            ));
        }
        if !r.errors.is_empty() {
            ok = false;
            verdict.push(format!(
                "{label}/{suite}: run errors: {}",
                r.errors.join("; ")
            ));
        }
    }
    if !any_diff {
        println!("(none: every mode matches native on every suite)");
    }
    println!();
    verdict.extend(mode_errors.iter().cloned());
    for v in &verdict {
        println!("{v}");
    }
    println!("{}", if ok { "RESULT: OK" } else { "RESULT: FAILED" });
    ok
}

/// `diff`: recomputes the differences between saved native results and `mode`.
pub fn diff_saved(
    out: &Path,
    mode: &str,
    suites: &[Suite],
    expected: &ExpectedDifferences,
    max_listed: usize,
) -> Result<bool> {
    let mut ok = true;
    let mut found = false;
    for &suite in suites {
        let mpath = SuiteResult::path(out, mode, suite);
        let npath = SuiteResult::path(out, "native", suite);
        if !mpath.exists() {
            continue;
        }
        found = true;
        let m = SuiteResult::load(&mpath)?;
        let n = SuiteResult::load(&npath)
            .map_err(|e| Error::new(format!("{e} (native baseline for {mode}/{suite})")))?;
        if n.build_id != m.build_id {
            println!(
                "warning: {} and {} come from different HDF5 builds",
                npath.display(),
                mpath.display()
            );
        }
        println!("{}", n.summary_line(&format!("native/{suite}")));
        println!("{}", m.summary_line(&format!("{mode}/{suite}")));
        let d = diff_suite(&n, &m, expected);
        print!("{}", render(&d, max_listed));
        if d.regressions() > 0 || !m.errors.is_empty() {
            ok = false;
        }
    }
    if !found {
        return Err(Error::new(format!(
            "no saved results for mode '{mode}' in {} (run `hdf5-test-harness run --mode {mode}` first)",
            out.display()
        )));
    }
    println!("{}", if ok { "RESULT: OK" } else { "RESULT: FAILED" });
    Ok(ok)
}

/// Counts and (unless `--keep-traces`) removes what a suite's traced processes wrote: the
/// mode's `path=`, or the default directory below the mode's work folders (and below the
/// build tree's tools, where ctest runs them). Trace write errors become suite errors.
/// `None` when nothing was traced by a mode whose string does not name h5prov.
fn sweep_suite(
    ctx: &Ctx,
    mode: &Mode,
    suite: Suite,
    mut errors: Vec<String>,
) -> Result<(Option<TraceTally>, Vec<String>)> {
    let mut tally = std::mem::take(&mut *ctx.tally.lock().unwrap_or_else(|p| p.into_inner()));
    // Every mode with a connector: h5prov can be stacked below one whose string does not
    // name it (`pass_through under_vol=416;...`).
    let Some(conn) = mode.connector.as_deref() else {
        return Ok((None, errors));
    };
    let dir = traces::trace_dir(conn);
    let work = ctx.opts.out.join("work").join(&mode.label);
    let tools = ctx.opts.build.dir.join("tools");
    let mut roots = vec![work.as_path()];
    if suite == Suite::Tools {
        roots.push(&tools);
    }
    tally.merge(traces::sweep_all(&roots, &dir, ctx.opts.keep_traces)?);
    errors.extend(tally.errors());
    let traced = tally.processes > 0 || conn.contains("h5prov");
    Ok((traced.then_some(tally), errors))
}

/// After one vol test in `folder`: counts its traces (a relative trace directory is the
/// worker's own) and removes them, or moves them next to its logs when it failed.
fn sweep_vol_test(ctx: &Ctx, mode: &Mode, folder: &Path, logs: &Path, r: &TestResult) {
    let Some(conn) = mode.connector.as_deref() else {
        return;
    };
    let dir = traces::trace_dir(conn);
    let here = folder.join(&dir);
    if dir.is_absolute() || ctx.opts.keep_traces || !here.is_dir() {
        return;
    }
    let swept = if r.outcome == Outcome::Failed {
        let kept = logs.join(format!("{}.traces", r.name));
        let _ = std::fs::remove_dir_all(&kept);
        std::fs::rename(&here, &kept)
            .context(|| format!("moving {}", here.display()))
            .and_then(|()| traces::sweep(&kept, true))
    } else {
        traces::sweep(&here, false)
    };
    // A failure to sweep is left to the end-of-suite sweep, which reports it.
    if let Ok(t) = swept {
        ctx.tally.lock().unwrap_or_else(|p| p.into_inner()).merge(t);
    }
}

/// The outcome of a program that ended as expected: skipped when it said so.
fn passed_or_skipped(skipped: bool) -> (Outcome, Option<String>) {
    if skipped {
        (
            Outcome::Skipped,
            Some("the program skipped itself".to_string()),
        )
    } else {
        (Outcome::Passed, None)
    }
}

fn logs_dir(ctx: &Ctx, mode: &Mode) -> PathBuf {
    ctx.opts.out.join(&mode.label).join("logs")
}

fn timed_command(ctx: &Ctx, secs: f64, program: &str, args: &[String]) -> Command {
    let mut cmd = Command::new(&ctx.timeout_prog);
    cmd.arg("-k")
        .arg("10")
        .arg(format!("{}", secs.ceil() as u64))
        .arg(program)
        .args(args);
    cmd
}

fn run_api(ctx: &Ctx, mode: &Mode, env: &ModeEnv) -> Result<(Vec<TestResult>, Vec<String>)> {
    let areas = suites::api_areas(&ctx.api_tests)?;
    let work = ctx.opts.out.join("work").join(&mode.label).join("api");
    fresh_dir(&work)?;
    let logs = logs_dir(ctx, mode).join("api");
    fresh_dir(&logs)?;
    println!(
        "[{}] api: running h5_api_test for {} areas",
        mode.label,
        areas.len()
    );
    let mut tests = Vec::new();
    let mut errors = Vec::new();
    for (area, command) in areas {
        let mut cmd = timed_command(
            ctx,
            suites::DEFAULT_TIMEOUT_SECS,
            &command[0],
            &command[1..],
        );
        cmd.current_dir(&work);
        env.apply(&mut cmd);
        let (out, err) = (
            logs.join(format!("{area}.out")),
            logs.join(format!("{area}.err")),
        );
        let (status, _) = run_to_files(&mut cmd, &out, &err)?;
        let stdout = String::from_utf8_lossy(
            &std::fs::read(&out).context(|| format!("reading {}", out.display()))?,
        )
        .into_owned();
        let parsed = parse_api_output(&area, &stdout);
        let expected = mode.expected_connector_name();
        match parsed.connector.as_deref() {
            Some(c) if c == expected => {}
            other => errors.push(format!(
                "area {area}: h5_api_test reported connector {other:?}, expected '{expected}' (see {})",
                out.display()
            )),
        }
        if parsed.totals.is_none() {
            errors.push(format!(
                "area {area}: h5_api_test ended ({}) before printing its totals (see {} and {})",
                describe_status(status, true),
                out.display(),
                err.display()
            ));
        } else if !status.success() && !parsed.tests.iter().any(|t| t.outcome == Outcome::Failed) {
            errors.push(format!(
                "area {area}: h5_api_test ended with {} without a failed test",
                describe_status(status, true)
            ));
        }
        if let Some(t) = parsed.totals {
            let c = Counts::of(&parsed.tests);
            if (c.passed, c.skipped) != (t.passed, t.skipped) {
                println!(
                    "[{}] api: note: area {area}: parsed {} passed/{} skipped, h5_api_test's totals say {}/{} (see {})",
                    mode.label,
                    c.passed,
                    c.skipped,
                    t.passed,
                    t.skipped,
                    out.display()
                );
            }
        }
        tests.extend(parsed.tests);
    }
    dedup_names(&mut tests);
    Ok((tests, errors))
}

fn run_vol(ctx: &Ctx, mode: &Mode, env: &ModeEnv) -> Result<(Vec<TestResult>, Vec<String>)> {
    let tests = suites::vol_tests(&ctx.all_tests)?;
    let mut units = suites::dependency_units(&tests);
    // Longest first (by the saved native times), so the parallel workers finish together.
    if let Ok(native) = SuiteResult::load(&SuiteResult::path(&ctx.opts.out, "native", Suite::Vol)) {
        let times: HashMap<&str, f64> = native
            .tests
            .iter()
            .map(|t| (t.name.as_str(), t.seconds.unwrap_or(0.0)))
            .collect();
        let cost = |u: &Vec<usize>| {
            u.iter()
                .map(|&i| times.get(tests[i].name.as_str()).copied().unwrap_or(0.0))
                .sum::<f64>()
        };
        units.sort_by(|a, b| cost(b).total_cmp(&cost(a)));
    }
    let testfiles = ctx.opts.build.dir.join("test/vol_native/testfiles");
    let work = ctx.opts.out.join("work").join(&mode.label).join("vol");
    fresh_dir(&work)?;
    let logs = logs_dir(ctx, mode).join("vol");
    fresh_dir(&logs)?;
    let workers = ctx.opts.jobs.clamp(1, units.len().max(1));
    println!(
        "[{}] vol: running {} test programs with {workers} workers (each in its own copy of test/vol_native)",
        mode.label,
        tests.len()
    );
    let queue = Mutex::new(units.into_iter().collect::<VecDeque<_>>());
    let done: Mutex<Vec<(usize, TestResult)>> = Mutex::new(Vec::new());
    let failures: Mutex<Vec<String>> = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for w in 0..workers {
            let (queue, done, failures, tests, work, logs, testfiles) =
                (&queue, &done, &failures, &tests, &work, &logs, &testfiles);
            s.spawn(move || {
                let folder = work.join(format!("w{w}"));
                if let Err(e) = crate::process::copy_tree(testfiles, &folder.join("testfiles")) {
                    failures
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .push(format!("worker {w}: {e}"));
                    return;
                }
                loop {
                    let unit = queue.lock().unwrap_or_else(|p| p.into_inner()).pop_front();
                    let Some(unit) = unit else { break };
                    for i in unit {
                        match run_vol_test(ctx, env, &tests[i], &folder, logs) {
                            Ok(r) => {
                                sweep_vol_test(ctx, mode, &folder, logs, &r);
                                done.lock().unwrap_or_else(|p| p.into_inner()).push((i, r))
                            }
                            Err(e) => failures
                                .lock()
                                .unwrap_or_else(|p| p.into_inner())
                                .push(e.to_string()),
                        }
                    }
                }
            });
        }
    });
    let mut done = done.into_inner().unwrap_or_else(|p| p.into_inner());
    done.sort_by_key(|(i, _)| *i);
    let errors = failures.into_inner().unwrap_or_else(|p| p.into_inner());
    Ok((done.into_iter().map(|(_, r)| r).collect(), errors))
}

fn run_vol_test(
    ctx: &Ctx,
    env: &ModeEnv,
    t: &VolTest,
    folder: &Path,
    logs: &Path,
) -> Result<TestResult> {
    let mut cmd = timed_command(ctx, t.timeout, &t.program, &t.args);
    cmd.current_dir(folder).env("srcdir", folder);
    env.apply(&mut cmd);
    let (out, err) = (
        logs.join(format!("{}.out", t.name)),
        logs.join(format!("{}.err", t.name)),
    );
    let (status, secs) = run_to_files(&mut cmd, &out, &err)?;
    let stdout = String::from_utf8_lossy(&std::fs::read(&out).unwrap_or_default()).into_owned();
    let (outcome, detail) = if status.code() == Some(t.expect) {
        passed_or_skipped(suites::program_skipped(&stdout))
    } else {
        (
            Outcome::Failed,
            Some(format!(
                "{} (expected exit {})",
                describe_status(status, true),
                t.expect
            )),
        )
    };
    Ok(TestResult {
        name: t.name.clone(),
        outcome,
        detail,
        seconds: Some(secs),
    })
}

/// Symlinks plugin libraries into directories that some tools tests use as their own
/// `HDF5_PLUGIN_PATH`; removed again on drop.
struct PluginOverlay {
    links: Vec<PathBuf>,
}

impl PluginOverlay {
    fn new(plugin_path: &Path, dirs: &[String]) -> Result<Self> {
        let mut overlay = PluginOverlay { links: Vec::new() };
        let entries = std::fs::read_dir(plugin_path)
            .context(|| format!("reading plugin directory {}", plugin_path.display()))?;
        let libs: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                let name = p
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                name.starts_with("lib") && name.contains(".so")
            })
            .collect();
        for dir in dirs {
            for lib in &libs {
                let Some(name) = lib.file_name() else {
                    continue;
                };
                let link = Path::new(dir).join(name);
                if !Path::new(dir).is_dir() {
                    continue;
                }
                match std::fs::symlink_metadata(&link) {
                    // A link is ours to replace: one left by a run that was killed before
                    // removing it points at another (maybe deleted) checkout's library.
                    Ok(m) if m.file_type().is_symlink() => std::fs::remove_file(&link)
                        .context(|| format!("removing the stale link {}", link.display()))?,
                    // A real file of that name is not ours: leave it.
                    Ok(_) => continue,
                    Err(_) => {}
                }
                std::os::unix::fs::symlink(lib, &link)
                    .context(|| format!("linking {} -> {}", link.display(), lib.display()))?;
                overlay.links.push(link);
            }
        }
        Ok(overlay)
    }
}

impl Drop for PluginOverlay {
    fn drop(&mut self) {
        for l in &self.links {
            let _ = std::fs::remove_file(l);
        }
    }
}

fn run_tools(ctx: &Ctx, mode: &Mode, env: &ModeEnv) -> Result<(Vec<TestResult>, Vec<String>)> {
    let tools_dir = ctx.opts.build.dir.join("tools");
    let logs = logs_dir(ctx, mode).join("tools");
    fresh_dir(&logs)?;
    let _overlay = match &mode.connector {
        Some(c) if suites::needs_plugins(c) && ctx.opts.plugin_path.is_dir() => {
            let dirs = suites::tools_plugin_dirs(&ctx.tools_tests);
            let o = PluginOverlay::new(&ctx.opts.plugin_path, &dirs)?;
            if !o.links.is_empty() {
                println!(
                    "[{}] tools: linked {} plugin libraries into {} for the tests that set their own HDF5_PLUGIN_PATH",
                    mode.label,
                    o.links.len(),
                    dirs.join(", ")
                );
            }
            Some(o)
        }
        _ => None,
    };
    println!(
        "[{}] tools: running {} ctest tests in {} with -j{}",
        mode.label,
        ctx.tools_tests.len(),
        tools_dir.display(),
        ctx.opts.jobs
    );
    let mut cmd = Command::new("ctest");
    cmd.arg("-j")
        .arg(ctx.opts.jobs.to_string())
        .current_dir(&tools_dir);
    env.apply(&mut cmd);
    let (out, err) = (logs.join("ctest.out"), logs.join("ctest.err"));
    let (status, _) = run_to_files(&mut cmd, &out, &err)?;
    for f in ["LastTest.log", "LastTestsFailed.log"] {
        let src = tools_dir.join("Testing/Temporary").join(f);
        if src.is_file() {
            let _ = std::fs::copy(&src, logs.join(f));
        }
    }
    let text = String::from_utf8_lossy(
        &std::fs::read(&out).context(|| format!("reading {}", out.display()))?,
    )
    .into_owned();
    let mut by_number: HashMap<usize, TestResult> = HashMap::new();
    let mut errors = Vec::new();
    for line in text.lines() {
        let Some(p) = parse_progress_line(line) else {
            continue;
        };
        let name = match ctx.tools_tests.get(p.number.wrapping_sub(1)) {
            Some(t) if t.name.starts_with(&p.name) || p.name.starts_with(&t.name) => t.name.clone(),
            _ => {
                errors.push(format!(
                    "ctest line for test #{} ({}) does not match the ctest list",
                    p.number, p.name
                ));
                p.name.clone()
            }
        };
        by_number.insert(
            p.number,
            TestResult {
                name,
                outcome: p.outcome,
                detail: p.detail,
                seconds: p.seconds,
            },
        );
    }
    if by_number.len() != ctx.tools_tests.len() {
        errors.push(format!(
            "ctest reported {} of {} tools tests ({}; see {})",
            by_number.len(),
            ctx.tools_tests.len(),
            describe_status(status, false),
            out.display()
        ));
    }
    let mut numbers: Vec<usize> = by_number.keys().copied().collect();
    numbers.sort_unstable();
    let mut tests: Vec<TestResult> = numbers
        .into_iter()
        .filter_map(|n| by_number.remove(&n))
        .collect();
    dedup_names(&mut tests);
    Ok((tests, errors))
}

/// `testpar`: every selected parallel test program, one after another (each takes 4 ranks),
/// with its ctest command (`mpiexec -n 4 --oversubscribe <program> <args>`) and environment,
/// the mode's connector variables, and [`crate::testpar::mpi_env`], in a private copy of
/// `<build>/testpar` (`srcdir` points there). Exit status 0 is a pass; a program that prints
/// only skip markers counts as skipped.
fn run_testpar(ctx: &Ctx, mode: &Mode, env: &ModeEnv) -> Result<(Vec<TestResult>, Vec<String>)> {
    let testpar_dir = ctx.opts.build.dir.join("testpar");
    let tests = crate::testpar::select(
        crate::testpar::testpar_tests(&ctx.all_tests, &testpar_dir.display().to_string())?,
        ctx.opts.testpar_full,
    )?;
    let work = ctx.opts.out.join("work").join(&mode.label).join("testpar");
    fresh_dir(&work)?;
    // The tests write their files into the working directory; a few read srcdir's.
    for entry in std::fs::read_dir(&testpar_dir)
        .context(|| format!("reading {}", testpar_dir.display()))?
        .flatten()
    {
        let p = entry.path();
        if p.is_file() {
            std::fs::copy(&p, work.join(entry.file_name()))
                .context(|| format!("copying {} into {}", p.display(), work.display()))?;
        }
    }
    let logs = logs_dir(ctx, mode).join("testpar");
    fresh_dir(&logs)?;
    let launcher_env = crate::testpar::mpi_env(|k| std::env::var_os(k).is_some());
    println!(
        "[{}] testpar: running {} parallel test programs ({}) one after another",
        mode.label,
        tests.len(),
        if ctx.opts.testpar_full {
            "all of testpar/ and testpar/API"
        } else {
            "the CI subset; --testpar-full for all"
        }
    );
    let mut results = Vec::new();
    let mut errors = Vec::new();
    for t in &tests {
        let dir = work.join(&t.subdir);
        std::fs::create_dir_all(&dir).context(|| format!("creating {}", dir.display()))?;
        let mut cmd = timed_command(ctx, t.timeout, &t.command[0], &t.command[1..]);
        cmd.current_dir(&dir).env("srcdir", &work);
        for (k, v) in t.environment.iter().chain(&launcher_env) {
            cmd.env(k, v);
        }
        env.apply(&mut cmd);
        let (out, err) = (
            logs.join(format!("{}.out", t.name)),
            logs.join(format!("{}.err", t.name)),
        );
        let (status, secs) = run_to_files(&mut cmd, &out, &err)?;
        let stdout = String::from_utf8_lossy(&std::fs::read(&out).unwrap_or_default()).into_owned();
        let (outcome, detail) = if t.will_fail {
            // ctest's WILL_FAIL: the program must fail (t_pflush1 exits leaving its file open).
            if status.success() {
                (
                    Outcome::Failed,
                    Some("exit status 0, but ctest marks it WILL_FAIL".to_string()),
                )
            } else {
                (Outcome::Passed, None)
            }
        } else if status.success() {
            passed_or_skipped(crate::testpar::program_skipped(&stdout))
        } else {
            (
                Outcome::Failed,
                Some(format!(
                    "{} (see {})",
                    describe_status(status, true),
                    err.display()
                )),
            )
        };
        if t.name.starts_with(crate::testpar::API_PARALLEL_PREFIX) {
            let expected = mode.expected_connector_name();
            match crate::testpar::api_connector(&stdout) {
                Some(c) if c == expected => {}
                other => errors.push(format!(
                    "{}: h5_api_test_parallel reported connector {other:?}, expected '{expected}' (see {})",
                    t.name,
                    out.display()
                )),
            }
        }
        println!(
            "[{}] testpar: {} {outcome} ({secs:.1} s)",
            mode.label, t.name
        );
        results.push(TestResult {
            name: t.name.clone(),
            outcome,
            detail,
            seconds: Some(secs),
        });
    }
    Ok((results, errors))
}

#[cfg(test)]
mod tests {
    use super::PluginOverlay;

    #[test]
    fn a_stale_link_left_by_a_killed_run_is_replaced_and_removed_after() {
        let root = std::env::temp_dir().join(format!("h5prov-overlay-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let (plugins, tests_dir) = (root.join("plugins"), root.join("tests"));
        std::fs::create_dir_all(&plugins).unwrap();
        std::fs::create_dir_all(&tests_dir).unwrap();
        let lib = plugins.join("libh5prov.so");
        std::fs::write(&lib, b"x").unwrap();
        // What a killed run leaves: a link to a checkout that is gone.
        let link = tests_dir.join("libh5prov.so");
        std::os::unix::fs::symlink(root.join("gone/libh5prov.so"), &link).unwrap();
        // And a real file of another name, which is not ours.
        std::fs::write(tests_dir.join("libdynlibls.so"), b"y").unwrap();
        {
            let o = PluginOverlay::new(&plugins, &[tests_dir.display().to_string()]).unwrap();
            assert_eq!(o.links, vec![link.clone()]);
            assert_eq!(std::fs::read_link(&link).unwrap(), lib);
        }
        assert!(
            std::fs::symlink_metadata(&link).is_err(),
            "removed when done"
        );
        assert!(tests_dir.join("libdynlibls.so").exists());
        std::fs::remove_dir_all(&root).unwrap();
    }
}
