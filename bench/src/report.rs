//! Turning runs into the report: pair-by-pair ratios, per-call costs, trace
//! volume, memory; rendered as Markdown and JSON.

use std::fmt::Write as _;

use serde::Serialize;

use crate::callgrind::CallgrindRow;
use crate::config::{Mode, Sizes, Workload};
use crate::runner::{CaseRuns, RunRecord};
use crate::stats::Summary;

/// Version of the JSON layout below.
pub const REPORT_VERSION: u32 = 1;

/// Summary of one mode within one case.
#[derive(Clone, Debug, Serialize)]
pub struct ModeSummary {
    /// Mode name.
    pub mode: String,
    /// Number of runs.
    pub runs: usize,
    /// Process-group wall time, ms.
    pub wall_ms: Summary,
    /// The workload's timed section, ms (max over ranks).
    pub kernel_ms: Summary,
    /// HDF5 start-up (`H5open`, connector load) before the timed section, ms.
    pub init_ms: Summary,
    /// Kernel time / native's, per round, then summarised.
    pub ratio_native: Option<Summary>,
    /// Kernel time / pass_through's, per round, then summarised.
    pub ratio_pass_through: Option<Summary>,
    /// Kernel CPU time / native's, per round (when the workload reports `cpu_ns=`).
    pub cpu_ratio_native: Option<Summary>,
    /// Kernel CPU time / pass_through's, per round (when the workload reports `cpu_ns=`).
    pub cpu_ratio_pass_through: Option<Summary>,
    /// Wall time / native's, per round.
    pub wall_ratio_native: Option<Summary>,
    /// Wall time / pass_through's, per round.
    pub wall_ratio_pass_through: Option<Summary>,
    /// A streaming mode: the same mode without streaming, its baseline.
    pub stream_off: Option<String>,
    /// Kernel time / the same mode's without streaming, per round, then summarised.
    pub ratio_stream_off: Option<Summary>,
    /// Wall time / the same mode's without streaming, per round, then summarised.
    pub wall_ratio_stream_off: Option<Summary>,
    /// An h5prov mode that has a `baseline-` twin in the run: the twin's name.
    pub baseline: Option<String>,
    /// Kernel time / the `baseline-` twin's, per round, then summarised.
    pub ratio_baseline: Option<Summary>,
    /// Kernel CPU time / the `baseline-` twin's, per round (when `cpu_ns=` is reported).
    pub cpu_ratio_baseline: Option<Summary>,
    /// Kernel ns per API call of one process (metadata-heavy).
    pub ns_per_call: Option<Summary>,
    /// Per round: (kernel ns − native's) / calls per process.
    pub added_ns_per_call_vs_native: Option<Summary>,
    /// Per round: (kernel ns − pass_through's) / calls per process.
    pub added_ns_per_call_vs_pass_through: Option<Summary>,
    /// Largest per-process peak RSS, MiB.
    pub peak_rss_mib: Summary,
    /// Trace directory size, bytes.
    pub trace_bytes: Option<Summary>,
    /// Trace records.
    pub trace_records: Option<Summary>,
    /// Median trace bytes / median records.
    pub trace_bytes_per_record: Option<f64>,
    /// Median trace bytes / VOL-reaching HDF5 calls of the run.
    pub trace_bytes_per_op: Option<f64>,
    /// VOL-reaching HDF5 calls per run (all ranks).
    pub vol_calls: u64,
}

/// One workload at one process count.
#[derive(Clone, Debug, Serialize)]
pub struct CaseReport {
    /// Workload name.
    pub workload: String,
    /// Processes per run.
    pub procs: usize,
    /// Per mode.
    pub modes: Vec<ModeSummary>,
    /// Every run, for later comparison.
    pub raw: Vec<RawRun>,
}

/// One run, flattened for JSON.
#[derive(Clone, Debug, Serialize)]
pub struct RawRun {
    /// Mode name.
    pub mode: String,
    /// The measurements.
    #[serde(flatten)]
    pub run: RunRecord,
}

/// The whole report.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// [`REPORT_VERSION`].
    pub report_version: u32,
    /// Seconds since the Unix epoch when written.
    pub generated_unix_s: u64,
    /// Host name.
    pub host: String,
    /// Online CPUs.
    pub cpus: usize,
    /// `--quick` run.
    pub quick: bool,
    /// MPI mode (`mpirun -np N`, the `-mpi` workloads, one shared file).
    pub mpi: bool,
    /// The CPUs the timed workload processes were pinned to (`--pin`), if any.
    pub pin: Option<String>,
    /// Interleaved rounds.
    pub rounds: usize,
    /// Problem sizes.
    pub sizes: Sizes,
    /// Plugin directory used for h5prov.
    pub plugin_path: String,
    /// The h5prov plugin measured (copied from the plugin path at start), if any.
    pub plugin: Option<String>,
    /// Plugin directory of the `baseline-` modes (`--baseline-plugin-path`), if any ran.
    pub baseline_plugin_path: Option<String>,
    /// The baseline plugin measured (copied at start), if any.
    pub baseline_plugin: Option<String>,
    /// Modes that were asked for and not run, with the reason.
    pub skipped: Vec<String>,
    /// Results per case.
    pub cases: Vec<CaseReport>,
    /// Callgrind results, when asked for.
    pub callgrind: Option<Vec<CallgrindRow>>,
}

fn runs_of(case: &CaseRuns, name: &str) -> Option<Vec<RunRecord>> {
    case.runs
        .iter()
        .find(|(m, _)| m.name() == name)
        .map(|(_, r)| r.clone())
}

/// Per-round values `f(run, baseline_run)` for rounds both have.
fn paired(
    runs: &[RunRecord],
    base: Option<&Vec<RunRecord>>,
    f: impl Fn(&RunRecord, &RunRecord) -> f64,
) -> Option<Summary> {
    let base = base?;
    let v: Vec<f64> = runs
        .iter()
        .filter_map(|r| base.iter().find(|b| b.round == r.round).map(|b| f(r, b)))
        .collect();
    Summary::of(&v)
}

/// Summarises one case.
pub fn summarise(case: &CaseRuns) -> CaseReport {
    let native = runs_of(case, &Mode::Native.name());
    let pt = runs_of(case, &Mode::PassThrough.name());
    let procs = case.procs.max(1) as f64;
    let per_call = case.workload == Workload::MetadataHeavy;
    let calls_pp = |r: &RunRecord| (r.calls as f64 / procs).max(1.0);
    let mut modes = Vec::new();
    let mut raw = Vec::new();
    for (mode, runs) in &case.runs {
        if runs.is_empty() {
            continue;
        }
        let col = |f: &dyn Fn(&RunRecord) -> f64| {
            Summary::of(&runs.iter().map(f).collect::<Vec<_>>()).expect("non-empty runs")
        };
        let kernel_ratio = |r: &RunRecord, b: &RunRecord| r.kernel_ns as f64 / b.kernel_ns as f64;
        let wall_ratio = |r: &RunRecord, b: &RunRecord| r.wall_ns as f64 / b.wall_ns as f64;
        let cpu_ratio =
            |r: &RunRecord, b: &RunRecord| r.kernel_cpu_ns as f64 / b.kernel_cpu_ns as f64;
        // Only when every run of the mode and of its baseline reported its CPU time.
        let reported = |rs: &[RunRecord]| rs.iter().all(|r| r.kernel_cpu_ns > 0);
        let cpu_paired = |base: Option<&Vec<RunRecord>>| {
            base.filter(|b| reported(b) && reported(runs))
                .and_then(|b| paired(runs, Some(b), cpu_ratio))
        };
        let added =
            |r: &RunRecord, b: &RunRecord| (r.kernel_ns as f64 - b.kernel_ns as f64) / calls_pp(r);
        let traces: Vec<_> = runs.iter().filter_map(|r| r.trace).collect();
        let trace_bytes = Summary::of(&traces.iter().map(|t| t.bytes as f64).collect::<Vec<_>>());
        let trace_records =
            Summary::of(&traces.iter().map(|t| t.records as f64).collect::<Vec<_>>());
        let vol_calls = runs[0].vol_calls;
        let off = mode.streams().then(|| mode.without_stream().name());
        let off_runs = off.as_deref().and_then(|n| runs_of(case, n));
        let twin = (!mode.is_baseline())
            .then(|| mode.as_baseline())
            .flatten()
            .map(|m| m.name())
            .filter(|n| runs_of(case, n).is_some());
        let twin_runs = twin.as_deref().and_then(|n| runs_of(case, n));
        modes.push(ModeSummary {
            ratio_baseline: paired(runs, twin_runs.as_ref(), kernel_ratio),
            cpu_ratio_baseline: cpu_paired(twin_runs.as_ref()),
            baseline: twin,
            ratio_stream_off: paired(runs, off_runs.as_ref(), kernel_ratio),
            wall_ratio_stream_off: paired(runs, off_runs.as_ref(), wall_ratio),
            stream_off: off,
            mode: mode.name(),
            runs: runs.len(),
            wall_ms: col(&|r| r.wall_ns as f64 / 1e6),
            kernel_ms: col(&|r| r.kernel_ns as f64 / 1e6),
            init_ms: col(&|r| r.init_ns as f64 / 1e6),
            ratio_native: paired(runs, native.as_ref(), kernel_ratio),
            ratio_pass_through: paired(runs, pt.as_ref(), kernel_ratio),
            cpu_ratio_native: cpu_paired(native.as_ref()),
            cpu_ratio_pass_through: cpu_paired(pt.as_ref()),
            wall_ratio_native: paired(runs, native.as_ref(), wall_ratio),
            wall_ratio_pass_through: paired(runs, pt.as_ref(), wall_ratio),
            ns_per_call: per_call.then(|| col(&|r| r.kernel_ns as f64 / calls_pp(r))),
            added_ns_per_call_vs_native: if per_call {
                paired(runs, native.as_ref(), added)
            } else {
                None
            },
            added_ns_per_call_vs_pass_through: if per_call {
                paired(runs, pt.as_ref(), added)
            } else {
                None
            },
            peak_rss_mib: col(&|r| r.peak_rss_kb as f64 / 1024.0),
            trace_bytes_per_record: match (trace_bytes, trace_records) {
                (Some(b), Some(r)) if r.median > 0.0 => Some(b.median / r.median),
                _ => None,
            },
            trace_bytes_per_op: match trace_bytes {
                Some(b) if vol_calls > 0 => Some(b.median / vol_calls as f64),
                _ => None,
            },
            trace_bytes,
            trace_records,
            vol_calls,
        });
        raw.extend(runs.iter().map(|r| RawRun {
            mode: mode.name(),
            run: r.clone(),
        }));
    }
    CaseReport {
        workload: case.workload.name().to_string(),
        procs: case.procs,
        modes,
        raw,
    }
}

fn opt(s: &Option<Summary>, prec: usize) -> String {
    s.as_ref().map_or_else(|| "–".to_string(), |s| s.fmt(prec))
}

/// A figure against a baseline mode: "baseline" for the mode compared with itself.
fn base_or_prec(mode: &str, baseline: &str, s: &Option<Summary>, prec: usize) -> String {
    if mode == baseline {
        "baseline".to_string()
    } else {
        opt(s, prec)
    }
}

/// A ratio cell with the median's 95 % interval: "baseline" for the mode compared with
/// itself.
fn ratio_cell(mode: &str, baseline: &str, s: &Option<Summary>) -> String {
    match s {
        _ if mode == baseline => "baseline".to_string(),
        Some(s) => s.fmt_ci(3),
        None => "–".to_string(),
    }
}

fn optf(v: Option<f64>, prec: usize) -> String {
    v.map_or_else(|| "–".to_string(), |v| format!("{v:.prec$}"))
}

/// Renders the report as Markdown.
pub fn markdown(r: &Report) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# h5prov benchmark report\n");
    let _ = writeln!(
        s,
        "- host `{}`, {} CPUs, {} interleaved rounds{}; generated at unix time {}",
        r.host,
        r.cpus,
        r.rounds,
        if r.quick {
            " (**--quick**: smoke sizes, numbers meaningless)"
        } else {
            ""
        },
        r.generated_unix_s
    );
    let _ = writeln!(
        s,
        "- sizes: metadata-heavy {} iterations; vpic {} particles × {} timesteps per process",
        r.sizes.meta_iters, r.sizes.vpic_particles, r.sizes.vpic_timesteps
    );
    if let Some(cpus) = &r.pin {
        let _ = writeln!(
            s,
            "- every timed workload process pinned to CPU {cpus} (`taskset -c {cpus}`)"
        );
    }
    if r.mpi {
        let _ = writeln!(
            s,
            "- **MPI mode**: each process group is `mpirun -np N` of the `-mpi` workloads \
             (parallel HDF5, MPI-IO, one shared file, collective transfers by default); \
             per-process RSS is not measured"
        );
    }
    let _ = writeln!(s, "- plugin path `{}`", r.plugin_path);
    if let Some(p) = &r.plugin {
        let _ = writeln!(s, "- measured {p} (a copy taken at start)");
    }
    if let Some(b) = &r.baseline_plugin_path {
        let _ = writeln!(
            s,
            "- `baseline-` modes: the same options given to the `libh5prov.so` of `{b}`{}, \
             in the same interleaved rounds",
            r.baseline_plugin
                .as_ref()
                .map_or(String::new(), |p| format!(" ({p}, a copy taken at start)"))
        );
    }
    for sk in &r.skipped {
        let _ = writeln!(s, "- skipped: {sk}");
    }
    let _ = writeln!(
        s,
        "- *kernel* = the workload's own timed section (max over ranks); *start-up* = `H5open`, \
         which loads the connector, timed before the kernel (vpic-write, bdcats-read); *wall* = \
         whole process group incl. start-up. Ratios are computed pair by pair within each round, then \
         median [its 95 % confidence interval] (min–max); the interval is distribution-free \
         (order statistics), so a line such as 1.10 is crossed when the whole interval is on \
         one side of it. Wall time is noisy (±40 %) here; see callgrind for a repeatable measure. \
         *kernel CPU* = the process's CPU time in the kernel (`cpu_ns=`, all threads, user and \
         system): on a VM whose hypervisor takes the CPU away (steal) it is far steadier than \
         wall time, and on a quiet machine nearly equal to it for these single-threaded kernels.\n"
    );
    for c in &r.cases {
        let _ = writeln!(
            s,
            "## {}, {} process{}\n",
            c.workload,
            c.procs,
            if c.procs == 1 { "" } else { "es" }
        );
        let _ = writeln!(
            s,
            "| mode | kernel ms | start-up ms | wall ms | kernel ×native | kernel ×pass_through | wall ×native | peak RSS MiB |"
        );
        let _ = writeln!(s, "|---|---|---|---|---|---|---|---|");
        for m in &c.modes {
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} | {} | {} | {:.1} |",
                m.mode,
                m.kernel_ms.fmt(1),
                m.init_ms.fmt(2),
                m.wall_ms.fmt(1),
                ratio_cell(&m.mode, "native", &m.ratio_native),
                ratio_cell(&m.mode, "pass_through", &m.ratio_pass_through),
                ratio_cell(&m.mode, "native", &m.wall_ratio_native),
                m.peak_rss_mib.median
            );
        }
        if c.modes
            .iter()
            .any(|m| m.cpu_ratio_pass_through.is_some() || m.cpu_ratio_native.is_some())
        {
            let _ = writeln!(
                s,
                "\n| mode | kernel CPU ×native | kernel CPU ×pass_through |"
            );
            let _ = writeln!(s, "|---|---|---|");
            for m in &c.modes {
                let _ = writeln!(
                    s,
                    "| {} | {} | {} |",
                    m.mode,
                    ratio_cell(&m.mode, "native", &m.cpu_ratio_native),
                    ratio_cell(&m.mode, "pass_through", &m.cpu_ratio_pass_through)
                );
            }
        }
        if c.modes.iter().any(|m| m.baseline.is_some()) {
            let _ = writeln!(
                s,
                "\n| mode | against | kernel × baseline | kernel CPU × baseline |"
            );
            let _ = writeln!(s, "|---|---|---|---|");
            for m in c.modes.iter().filter(|m| m.baseline.is_some()) {
                let _ = writeln!(
                    s,
                    "| {} | {} | {} | {} |",
                    m.mode,
                    m.baseline.as_deref().unwrap_or(""),
                    ratio_cell(&m.mode, "", &m.ratio_baseline),
                    ratio_cell(&m.mode, "", &m.cpu_ratio_baseline)
                );
            }
        }
        if c.modes.iter().any(|m| m.ratio_stream_off.is_some()) {
            let _ = writeln!(
                s,
                "\n| streaming mode | against | kernel × stream off | wall × stream off |"
            );
            let _ = writeln!(s, "|---|---|---|---|");
            for m in c.modes.iter().filter(|m| m.ratio_stream_off.is_some()) {
                let _ = writeln!(
                    s,
                    "| {} | {} | {} | {} |",
                    m.mode,
                    m.stream_off.as_deref().unwrap_or(""),
                    opt(&m.ratio_stream_off, 3),
                    opt(&m.wall_ratio_stream_off, 3)
                );
            }
        }
        if c.modes.iter().any(|m| m.ns_per_call.is_some()) {
            let _ = writeln!(
                s,
                "\n| mode | ns/call | +ns/call vs native | +ns/call vs pass_through |"
            );
            let _ = writeln!(s, "|---|---|---|---|");
            for m in &c.modes {
                let _ = writeln!(
                    s,
                    "| {} | {} | {} | {} |",
                    m.mode,
                    opt(&m.ns_per_call, 0),
                    base_or_prec(&m.mode, "native", &m.added_ns_per_call_vs_native, 0),
                    base_or_prec(
                        &m.mode,
                        "pass_through",
                        &m.added_ns_per_call_vs_pass_through,
                        0
                    )
                );
            }
        }
        if c.modes.iter().any(|m| m.trace_bytes.is_some()) {
            let _ = writeln!(
                s,
                "\n| mode | trace KiB | records | bytes/record | bytes/HDF5 op |"
            );
            let _ = writeln!(s, "|---|---|---|---|---|");
            for m in c.modes.iter().filter(|m| m.trace_bytes.is_some()) {
                let _ = writeln!(
                    s,
                    "| {} | {} | {} | {} | {} |",
                    m.mode,
                    m.trace_bytes
                        .map_or("–".into(), |b| format!("{:.1}", b.median / 1024.0)),
                    m.trace_records
                        .map_or("–".into(), |b| format!("{:.0}", b.median)),
                    optf(m.trace_bytes_per_record, 1),
                    optf(m.trace_bytes_per_op, 1)
                );
            }
        }
        let _ = writeln!(s);
    }
    if let Some(rows) = &r.callgrind {
        let _ = writeln!(
            s,
            "## callgrind: metadata-heavy, instructions per HDF5 call\n"
        );
        let _ = writeln!(
            s,
            "Δinstructions/Δcalls between {} and {} iterations (excludes start-up).\n",
            rows.first().map_or(0, |r| r.iters.0),
            rows.first().map_or(0, |r| r.iters.1)
        );
        let _ = writeln!(
            s,
            "| mode | instr/call | instr/VOL call | +instr/call vs native | +instr/call vs pass_through | +instr/call vs baseline |"
        );
        let _ = writeln!(s, "|---|---|---|---|---|---|");
        for row in rows {
            let _ = writeln!(
                s,
                "| {} | {:.0} | {:.0} | {} | {} | {} |",
                row.mode,
                row.ir_per_call,
                row.ir_per_vol_call,
                optf(row.added_vs_native, 0),
                optf(row.added_vs_pass_through, 0),
                optf(row.added_vs_baseline, 0)
            );
        }
        let _ = writeln!(s);
    }
    s
}
