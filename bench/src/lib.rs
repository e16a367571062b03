//! h5prov-bench: h5prov's overhead measured side by side with native HDF5 and
//! HDF5's own C `pass_through` connector (issue 6).
//!
//! The workloads are the C programs in `workloads/` (built by
//! `workloads/build.sh`). Each runs as 1 and as `P` concurrent processes (rank
//! through `PMI_RANK`/`PMI_SIZE`), in every mode, with modes interleaved round by
//! round. Ratios to native and to `pass_through` are computed pair by pair
//! within a round and then summarised by median and range, which cancels most
//! of the slow drift of these shared machines. See [`run`] for the whole flow.
//!
//! The analyzer benchmark ([`analyzer`], `h5prov-bench analyzer`) times `h5prov report`
//! against `bench/pandas_aggregate.py` on millions of real trace records ([`traceset`]).
//!
//! Unsafe code is limited to one `wait4(2)` call in [`proc`].
#![deny(unsafe_code)]
#![deny(missing_docs)]

pub mod analyzer;
pub mod callgrind;
pub mod collector;
pub mod config;
pub mod objects;
pub mod proc;
pub mod report;
pub mod runner;
pub mod stats;
pub mod trace;
pub mod traceset;

use std::fmt;
use std::fs;
use std::io;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use config::{Mode, Settings};
use report::{Report, REPORT_VERSION};

/// An error message meant for the person running the benchmark.
#[derive(Debug)]
pub struct BenchError(String);

impl BenchError {
    /// Wraps a message.
    pub fn new(msg: impl Into<String>) -> Self {
        BenchError(msg.into())
    }
}

impl fmt::Display for BenchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BenchError {}

impl From<io::Error> for BenchError {
    fn from(e: io::Error) -> Self {
        BenchError(e.to_string())
    }
}

/// Removes the h5prov modes when `libh5prov.so` is missing from the plugin
/// directory (unless `require` is set, which makes that an error). Returns the
/// skip notes for the report. A `baseline-` mode without a baseline plugin that holds
/// `libh5prov.so` is always an error: it was asked for by name or by
/// `--baseline-plugin-path`.
pub fn filter_modes(settings: &mut Settings, require: bool) -> Result<Vec<String>, BenchError> {
    if settings.modes.iter().any(Mode::is_baseline) {
        let Some(dir) = &settings.baseline_plugin_path else {
            return Err(BenchError::new(
                "a baseline- mode needs --baseline-plugin-path DIR (the directory of the \
                 baseline libh5prov.so)",
            ));
        };
        if !runner::h5prov_available(dir) {
            return Err(BenchError::new(format!(
                "--baseline-plugin-path: {} does not exist",
                dir.join("libh5prov.so").display()
            )));
        }
    }
    let wanted: Vec<Mode> = settings
        .modes
        .iter()
        .copied()
        .filter(|m| m.is_h5prov() && !m.is_baseline())
        .collect();
    if wanted.is_empty() || runner::h5prov_available(&settings.plugin_path) {
        return Ok(Vec::new());
    }
    let lib = settings.plugin_path.join("libh5prov.so");
    if require {
        return Err(BenchError::new(format!(
            "--require-h5prov: {} does not exist (build the connector and copy it there, \
             or pass --plugin-path)",
            lib.display()
        )));
    }
    settings.modes.retain(|m| !m.is_h5prov() || m.is_baseline());
    let names: Vec<String> = wanted.iter().map(Mode::name).collect();
    Ok(vec![format!(
        "{} — {} not found",
        names.join(", "),
        lib.display()
    )])
}

/// Copies `libh5prov.so` from `src` into `dir`, emptied first.
fn copy_plugin(src: &Path, dir: &Path) -> Result<(), BenchError> {
    let src = src.join("libh5prov.so");
    if dir.exists() {
        fs::remove_dir_all(dir)?;
    }
    fs::create_dir_all(dir)?;
    fs::copy(&src, dir.join("libh5prov.so")).map_err(|e| {
        BenchError::new(format!(
            "cannot copy {} to {}: {e}",
            src.display(),
            dir.display()
        ))
    })?;
    Ok(())
}

/// Copies `libh5prov.so` into `work_dir/plugin` (and the baseline's into
/// `work_dir/plugin-baseline`) and points the settings there,
/// so every run of the benchmark uses the same binary even when the connector
/// is rebuilt meanwhile (overwriting a mapped library kills the process that
/// maps it with SIGBUS), and HDF5 finds no other `lib*.so` to probe.
pub fn snapshot_plugin(settings: &Settings) -> Result<Settings, BenchError> {
    let mut s = settings.clone();
    if settings
        .modes
        .iter()
        .any(|m| m.is_h5prov() && !m.is_baseline())
    {
        let dir = settings.work_dir.join("plugin");
        copy_plugin(&settings.plugin_path, &dir)?;
        s.plugin_path = dir;
    }
    if let Some(b) = &settings.baseline_plugin_path {
        if settings.modes.iter().any(Mode::is_baseline) {
            let dir = settings.work_dir.join("plugin-baseline");
            copy_plugin(b, &dir)?;
            s.baseline_plugin_path = Some(dir);
        }
    }
    Ok(s)
}

/// This machine's host name, for the reports.
pub(crate) fn host_name() -> String {
    fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".into())
}

/// Seconds since the Unix epoch (0 if the clock is before it), for the reports.
pub(crate) fn unix_now_s() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// Builds the workloads, runs every case (and callgrind if asked), and
/// returns the report. `progress` gets one line per run.
pub fn run(
    settings: &Settings,
    skipped: Vec<String>,
    progress: &mut dyn FnMut(&str),
) -> Result<Report, BenchError> {
    if settings.modes.is_empty() {
        return Err(BenchError::new("no modes to run"));
    }
    runner::build_workloads(settings)?;
    fs::create_dir_all(&settings.work_dir)?;
    let plugin_path = settings.plugin_path.display().to_string();
    let baseline_plugin_path = settings
        .baseline_plugin_path
        .as_ref()
        .filter(|_| settings.modes.iter().any(Mode::is_baseline))
        .map(|p| p.display().to_string());
    let snapshot;
    let settings = if settings.modes.iter().any(Mode::is_h5prov) {
        snapshot = snapshot_plugin(settings)?;
        &snapshot
    } else {
        settings
    };
    // The streaming modes stream to one collector for the whole run, as a site's would
    // run beside the jobs.
    let collector;
    let streaming;
    let settings = if settings.modes.iter().any(Mode::streams) {
        collector = Collector::start(settings, progress)?;
        streaming = Settings {
            collector: Some(collector.listen.clone()),
            ..settings.clone()
        };
        &streaming
    } else {
        settings
    };
    let mut cases = Vec::new();
    for &w in &settings.workloads {
        for &p in &settings.procs {
            let c = runner::run_case(settings, w, p, progress)?;
            cases.push(report::summarise(&c));
        }
    }
    let callgrind = if settings.callgrind {
        Some(callgrind::run(settings, progress)?)
    } else {
        None
    };
    Ok(Report {
        report_version: REPORT_VERSION,
        generated_unix_s: unix_now_s(),
        host: host_name(),
        cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
        quick: settings.quick,
        mpi: settings.mpi,
        pin: settings.pin.clone(),
        rounds: settings.rounds,
        sizes: settings.sizes,
        plugin_path,
        plugin: plugin_info(&settings.plugin_path),
        baseline_plugin: baseline_plugin_path.as_ref().and_then(|_| {
            settings
                .baseline_plugin_path
                .as_deref()
                .and_then(plugin_info)
        }),
        baseline_plugin_path,
        skipped,
        cases,
        callgrind,
    })
}

/// An `h5prov collect` for the streaming modes, stopped when dropped.
struct Collector {
    child: std::process::Child,
    /// Its stdout, kept open: a collector whose stdout is closed stops at its next line.
    _stdout: std::io::BufReader<std::process::ChildStdout>,
    /// Its `--listen` address.
    listen: String,
}

impl Collector {
    /// Builds `h5prov` and starts `h5prov collect` on loopback ports the system picks.
    fn start(settings: &Settings, progress: &mut dyn FnMut(&str)) -> Result<Collector, BenchError> {
        use std::io::BufRead;
        let exe = analyzer::build_h5prov(&settings.repo, true)?;
        let mut child = std::process::Command::new(&exe)
            .args([
                "collect",
                "--listen",
                "127.0.0.1:0",
                "--metrics",
                "127.0.0.1:0",
            ])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .map_err(|e| BenchError::new(format!("cannot start {} collect: {e}", exe.display())))?;
        let (mut first, mut second) = (String::new(), String::new());
        let mut out = std::io::BufReader::new(child.stdout.take().expect("piped stdout"));
        // `listen ADDR`, then `metrics ADDR`.
        for line in [&mut first, &mut second] {
            out.read_line(line)
                .map_err(|e| BenchError::new(format!("h5prov collect: {e}")))?;
        }
        let Some(listen) = first.trim().strip_prefix("listen ") else {
            let _ = child.kill();
            return Err(BenchError::new(format!(
                "h5prov collect did not say where it listens (said {first:?})"
            )));
        };
        progress(&format!("[stream] h5prov collect listening on {listen}"));
        Ok(Collector {
            listen: listen.to_string(),
            child,
            _stdout: out,
        })
    }
}

impl Drop for Collector {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Size and modification time of the `libh5prov.so` that was measured.
fn plugin_info(dir: &Path) -> Option<String> {
    let meta = fs::metadata(dir.join("libh5prov.so")).ok()?;
    let mtime = meta
        .modified()
        .ok()?
        .duration_since(UNIX_EPOCH)
        .ok()?
        .as_secs();
    Some(format!(
        "libh5prov.so, {} bytes, modified at unix time {mtime}",
        meta.len()
    ))
}

/// Writes `report.md` and `report.json` into `dir`; returns the Markdown.
pub fn write_report(report: &Report, dir: &Path) -> Result<String, BenchError> {
    fs::create_dir_all(dir)?;
    let md = report::markdown(report);
    fs::write(dir.join("report.md"), &md)?;
    let json = serde_json::to_string_pretty(report)
        .map_err(|e| BenchError::new(format!("cannot serialise the report: {e}")))?;
    fs::write(dir.join("report.json"), json + "\n")?;
    Ok(md)
}
