//! Building the workloads and running them, modes interleaved round by round.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde::Serialize;

use crate::config::{Mode, Settings, Workload};
use crate::proc::{run_group, GroupResult, Launch};
use crate::trace::{self, TraceStats};
use crate::BenchError;

/// The measurements of one run (one mode, one round, all processes).
#[derive(Clone, Debug, Serialize)]
pub struct RunRecord {
    /// Round index (0-based).
    pub round: usize,
    /// Position of this run within its round (modes rotate between rounds).
    pub slot: usize,
    /// Whole process group, spawn to last exit, ns.
    pub wall_ns: u64,
    /// The workload's own timed section (`ns=`), maximum over ranks.
    pub kernel_ns: u64,
    /// The CPU time of the timed section (`cpu_ns=`: all threads, user and system;
    /// unlike `kernel_ns` it leaves out time a shared VM's hypervisor took away),
    /// maximum over ranks; 0 if not reported.
    pub kernel_cpu_ns: u64,
    /// HDF5 library start-up before the timed section (`init_ns=`: `H5open`,
    /// which loads the VOL connector), maximum over ranks; 0 if not reported.
    pub init_ns: u64,
    /// HDF5 API calls in the timed section, summed over ranks (`calls=`; 0 if not reported).
    pub calls: u64,
    /// Calls that reach the VOL connector, summed over ranks (`vol_calls=`).
    pub vol_calls: u64,
    /// Data bytes written or read, summed over ranks (`bytes=`).
    pub io_bytes: u64,
    /// Largest peak RSS of any process, KiB.
    pub peak_rss_kb: u64,
    /// Sum over processes of their peak RSS, KiB.
    pub sum_rss_kb: u64,
    /// What the tracer wrote, for h5prov modes.
    pub trace: Option<TraceStats>,
}

/// All runs of one workload at one process count.
#[derive(Clone, Debug)]
pub struct CaseRuns {
    /// The workload.
    pub workload: Workload,
    /// Processes per run.
    pub procs: usize,
    /// Runs per mode, in the order of `Settings::modes`.
    pub runs: Vec<(Mode, Vec<RunRecord>)>,
}

/// The directory holding `libh5prov.so` has it.
pub fn h5prov_available(plugin_path: &Path) -> bool {
    plugin_path.join("libh5prov.so").is_file()
}

/// Compiles the workloads with `workloads/build.sh` into `settings.bin_dir`.
pub fn build_workloads(settings: &Settings) -> Result<(), BenchError> {
    let script = settings.repo.join("workloads/build.sh");
    let mut cmd = Command::new("sh");
    cmd.arg(&script);
    if settings.mpi {
        // The parallel HDF5 (the bootstrap's `--variant parallel` link) unless HDF5_DIR is a
        // parallel installation; cargo and scripts/common.sh export the serial one.
        let chosen = std::env::var("HDF5_DIR").ok().filter(|d| {
            fs::read_to_string(Path::new(d).join("include/H5pubconf.h"))
                .is_ok_and(|t| t.contains("#define H5_HAVE_PARALLEL 1"))
        });
        let dir = chosen.map_or_else(|| settings.repo.join(".deps/hdf5-parallel"), PathBuf::from);
        cmd.arg("--mpi").env("HDF5_DIR", dir);
    }
    let out = cmd
        .arg(&settings.bin_dir)
        .output()
        .map_err(|e| BenchError::new(format!("cannot run {}: {e}", script.display())))?;
    if !out.status.success() {
        return Err(BenchError::new(format!(
            "{} {} failed ({}):\n{}{}",
            script.display(),
            settings.bin_dir.display(),
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )));
    }
    Ok(())
}

/// Command-line arguments of a workload writing into `out_dir` (reading from `data_dir`).
pub fn workload_args(
    w: Workload,
    settings: &Settings,
    out_dir: &Path,
    data_dir: Option<&Path>,
) -> Vec<String> {
    let s = &settings.sizes;
    match w {
        Workload::MetadataHeavy => vec![
            "-d".into(),
            out_dir.display().to_string(),
            "-n".into(),
            s.meta_iters.to_string(),
        ],
        Workload::VpicWrite => vec![
            "-d".into(),
            out_dir.display().to_string(),
            "-p".into(),
            s.vpic_particles.to_string(),
            "-t".into(),
            s.vpic_timesteps.to_string(),
        ],
        Workload::BdcatsRead => vec![
            "-d".into(),
            data_dir.unwrap_or(out_dir).display().to_string(),
        ],
    }
}

fn fresh_dir(p: &Path) -> Result<(), BenchError> {
    if p.exists() {
        fs::remove_dir_all(p)
            .map_err(|e| BenchError::new(format!("cannot empty {}: {e}", p.display())))?;
    }
    fs::create_dir_all(p)
        .map_err(|e| BenchError::new(format!("cannot create {}: {e}", p.display())))?;
    Ok(())
}

/// Writes the files `bdcats_read` reads (natively, untimed): `procs` files of
/// the configured VPIC size, in `work_dir/data/vpic-np<procs>`.
pub fn prepare_bdcats_data(settings: &Settings, procs: usize) -> Result<PathBuf, BenchError> {
    let dir = settings.work_dir.join(format!("data/vpic-np{procs}"));
    fresh_dir(&dir)?;
    let launch = Launch {
        program: settings.program(Workload::VpicWrite),
        args: workload_args(Workload::VpicWrite, settings, &dir, None),
        env: Mode::Native.env(&settings.plugin_path, &dir, None),
        procs,
        wrapper: Vec::new(),
        mpi: settings.mpi,
    };
    run_group(&launch, &settings.work_dir.join("data/logs"))?;
    Ok(dir)
}

/// Fails unless an h5prov run left files in its trace directory: HDF5 falls
/// back to native silently when a connector cannot be loaded.
pub fn check_trace(mode: Mode, dir: &Path) -> Result<TraceStats, BenchError> {
    let stats = trace::measure(dir)?;
    if stats.files == 0 {
        return Err(BenchError::new(format!(
            "mode {mode}: the trace directory {} is empty, so libh5prov.so was not loaded \
             (HDF5 silently falls back to the native connector). Check the plugin path, \
             HDF5_VOL_CONNECTOR and the workload's stderr.",
            dir.display()
        )));
    }
    if mode.streams() {
        check_streamed(mode, dir)?;
    }
    Ok(stats)
}

/// A streaming mode's processes sent messages to the collector (`stream_sent` in each
/// `meta.json`): otherwise the run did not measure streaming. (Drops are the design's
/// answer to a slow collector, not an error.)
fn check_streamed(mode: Mode, dir: &Path) -> Result<(), BenchError> {
    let mut metas = 0;
    for e in std::fs::read_dir(dir)?.flatten() {
        let p = e.path();
        if !p.to_string_lossy().ends_with(".meta.json") {
            continue;
        }
        metas += 1;
        let m: serde_json::Value = serde_json::from_slice(&std::fs::read(&p)?)
            .map_err(|e| BenchError::new(format!("{}: {e}", p.display())))?;
        let sent = m["stream_sent"].as_u64();
        if sent.unwrap_or(0) == 0 {
            return Err(BenchError::new(format!(
                "mode {mode}: {} says stream_sent={sent:?}: the process sent nothing to the \
                 collector",
                p.display()
            )));
        }
    }
    if metas == 0 {
        return Err(BenchError::new(format!(
            "mode {mode}: no meta.json in {}",
            dir.display()
        )));
    }
    Ok(())
}

/// Runs `w` once in `mode` and measures it. The run's files are deleted
/// afterwards (kept when it fails, for inspection).
pub fn run_once(
    settings: &Settings,
    w: Workload,
    procs: usize,
    mode: Mode,
    round: usize,
    slot: usize,
    data_dir: Option<&Path>,
) -> Result<RunRecord, BenchError> {
    let run_dir = settings.work_dir.join(format!(
        "runs/{}-np{procs}/{}-r{round}",
        w.name(),
        mode.name()
    ));
    let out_dir = run_dir.join("out");
    let trace_dir = run_dir.join("traces");
    fresh_dir(&out_dir)?;
    fresh_dir(&trace_dir)?;
    let launch = Launch {
        program: settings.program(w),
        args: workload_args(w, settings, &out_dir, data_dir),
        env: mode.env(
            settings.plugin_for(mode),
            &trace_dir,
            settings.collector.as_deref(),
        ),
        procs,
        wrapper: settings.pin.as_ref().map_or_else(Vec::new, |cpus| {
            vec!["taskset".into(), "-c".into(), cpus.clone()]
        }),
        mpi: settings.mpi,
    };
    let g: GroupResult = run_group(&launch, &run_dir.join("logs"))?;
    let trace = if mode.is_h5prov() {
        Some(check_trace(mode, &trace_dir)?)
    } else {
        None
    };
    let rec = RunRecord {
        round,
        slot,
        wall_ns: g.wall_ns,
        kernel_ns: g.max("ns"),
        kernel_cpu_ns: g.max("cpu_ns"),
        init_ns: g.max("init_ns"),
        calls: g.sum("calls"),
        vol_calls: g.sum("vol_calls"),
        io_bytes: g.sum("bytes"),
        peak_rss_kb: g.procs.iter().map(|p| p.max_rss_kb).max().unwrap_or(0),
        sum_rss_kb: g.procs.iter().map(|p| p.max_rss_kb).sum(),
        trace,
    };
    fs::remove_dir_all(&run_dir)?;
    Ok(rec)
}

/// Runs one workload at one process count: an untimed native warm-up, then
/// `settings.rounds` rounds of every mode. Round `r` starts at mode `r mod M`
/// (A B C, B C A, C A B, ...) so no mode always runs first or after the same
/// neighbour. `progress` receives one line per run.
pub fn run_case(
    settings: &Settings,
    w: Workload,
    procs: usize,
    progress: &mut dyn FnMut(&str),
) -> Result<CaseRuns, BenchError> {
    let data_dir = match w {
        Workload::BdcatsRead => Some(prepare_bdcats_data(settings, procs)?),
        _ => None,
    };
    let data = data_dir.as_deref();
    run_once(settings, w, procs, Mode::Native, 0, 0, data)?;

    let m = settings.modes.len();
    let mut runs: Vec<(Mode, Vec<RunRecord>)> =
        settings.modes.iter().map(|&md| (md, Vec::new())).collect();
    for round in 0..settings.rounds {
        for slot in 0..m {
            let idx = (round + slot) % m;
            let mode = settings.modes[idx];
            let rec = run_once(settings, w, procs, mode, round, slot, data)?;
            progress(&format!(
                "[{} np={procs}] round {}/{} {:<20} wall {:>8.1} ms  kernel {:>8.1} ms  kernel CPU {:>8.1} ms",
                w.name(),
                round + 1,
                settings.rounds,
                mode.name(),
                rec.wall_ns as f64 / 1e6,
                rec.kernel_ns as f64 / 1e6,
                rec.kernel_cpu_ns as f64 / 1e6
            ));
            runs[idx].1.push(rec);
        }
    }
    if let Some(d) = data_dir {
        fs::remove_dir_all(d)?;
    }
    Ok(CaseRuns {
        workload: w,
        procs,
        runs,
    })
}
