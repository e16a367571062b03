//! The analyzer benchmark (issue 6, part 4): `h5prov report` against a pandas script
//! computing the same aggregates, on the same real trace set (see [`crate::traceset`]).
//!
//! Each round runs `h5prov report DIR` (terminal report to `/dev/null`) and
//! `python3 bench/pandas_aggregate.py --json OUT DIR`, in an order that alternates between
//! rounds. After the rounds, `h5prov report DIR --json` runs once (its output is what is
//! compared; at the analyzer's present speed a round of it would cost as much as the
//! terminal report). Every run is one child process whose wall time (spawn to exit) and
//! peak RSS (`ru_maxrss` from `wait4(2)`) are measured. The per-operation and
//! per-rank-per-operation counts and totals of the `--json` report and the last pandas
//! output must agree exactly.
//!
//! Then, once each: `h5prov export --parquet` of the set (time, peak RSS, Parquet bytes
//! per record against the CSV traces), `h5prov report` of that export, and DuckDB's
//! hot-function query over it (`bench/duckdb_hot.py`, the `hot_functions_all_jobs` recipe
//! of `docs/PARQUET.md`), whose counts and totals per operation must equal the report's.
//!
//! Last, the many-objects (PyTables-like) line ([`crate::objects`]): `h5prov report --json`
//! on sets of 10k, 100k and 1M distinct objects made from the real source traces (`--objects`
//! sets the sizes; `--objects-only` runs the line alone and writes `analyzer-objects.md`).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde::Serialize;

use crate::proc::run_measured;
use crate::stats::Summary;
use crate::traceset::{self, SetManifest, SetSpec};
use crate::BenchError;

/// Version of the JSON layout of `analyzer.json`.
pub const ANALYZER_REPORT_VERSION: u32 = 3;

/// Records in the default set.
pub const DEFAULT_RECORDS: u64 = 10_000_000;
/// Process files in the default set.
pub const DEFAULT_FILES: usize = 64;
/// Records with `--quick`.
pub const QUICK_RECORDS: u64 = 200_000;
/// Process files with `--quick`.
pub const QUICK_FILES: usize = 4;

/// Target: analyzer throughput, records per second.
pub const TARGET_RECORDS_PER_S: f64 = 2_000_000.0;
/// Target: pandas time / analyzer time.
pub const TARGET_SPEEDUP: f64 = 3.0;
/// Target: analyzer peak RSS for 10M records, MB (10^6 bytes).
pub const TARGET_PEAK_MB: f64 = 300.0;
/// Processes of the scaling target...
pub const TARGET_FILES: usize = 4096;
/// ...and the time to report on them, s.
pub const TARGET_FILES_S: f64 = 30.0;

/// Everything the analyzer benchmark needs.
#[derive(Clone, Debug)]
pub struct AnalyzerSettings {
    /// Repository root (`workloads/`, `bench/pandas_aggregate.py`).
    pub repo: PathBuf,
    /// Cache and scratch directory (`target/bench-work/analyzer`).
    pub work_dir: PathBuf,
    /// Where `analyzer.md` and `analyzer.json` go.
    pub out_dir: PathBuf,
    /// Directory holding `libh5prov.so` (for the source traces).
    pub plugin_path: PathBuf,
    /// The `h5prov` binary to measure (copied into the work directory first).
    pub h5prov: PathBuf,
    /// Trace records in the set.
    pub records: u64,
    /// Process files in the set.
    pub files: usize,
    /// Interleaved rounds.
    pub rounds: usize,
    /// Python interpreter for pandas; `None` skips pandas.
    pub python: Option<String>,
    /// Python interpreter with `duckdb`, or why DuckDB is skipped.
    pub duckdb_python: Result<String, String>,
    /// Smoke run.
    pub quick: bool,
    /// Ignore the cached source and set.
    pub regenerate: bool,
    /// Object counts of the many-objects line ([`crate::objects`]); empty skips it.
    pub objects: Vec<u64>,
}

impl AnalyzerSettings {
    /// The trace set these settings describe (made or found by [`traceset`]).
    fn set_spec(&self) -> SetSpec {
        SetSpec {
            repo: self.repo.clone(),
            work_dir: self.work_dir.clone(),
            plugin_path: self.plugin_path.clone(),
            records: self.records,
            files: self.files,
            regenerate: self.regenerate,
        }
    }
}

/// One tool's measurements.
#[derive(Clone, Debug, Serialize)]
pub struct ToolSummary {
    /// `h5prov report`, `h5prov report --json` or `pandas`.
    pub tool: String,
    /// The command line (the set directory shown as `DIR`).
    pub command: String,
    /// Runs.
    pub runs: usize,
    /// Wall time of the process, s.
    pub seconds: Summary,
    /// Records / wall time.
    pub records_per_s: Summary,
    /// Peak RSS, MB (10^6 bytes).
    pub peak_rss_mb: Summary,
    /// pandas and DuckDB only: the script's own time (reading and aggregating, or the
    /// query; no interpreter start-up or `import`), s.
    pub self_seconds: Option<Summary>,
}

/// The Parquet export of the set and DuckDB's query of it.
#[derive(Clone, Debug, Default, Serialize)]
pub struct ParquetSummary {
    /// Bytes of the export's `records/` table.
    pub records_bytes: u64,
    /// Bytes of the whole export (all four tables).
    pub export_bytes: u64,
    /// Bytes of the CSV trace files (`.trace.csv`, header lines included).
    pub csv_trace_bytes: u64,
    /// `records/` bytes per trace record.
    pub parquet_bytes_per_record: f64,
    /// CSV trace bytes per trace record.
    pub csv_bytes_per_record: f64,
    /// `h5prov report` of the export gives the same operations (count, total) as of the
    /// traces.
    pub report_agrees: bool,
    /// DuckDB's hot-function query, when it ran.
    pub duckdb: Option<DuckDbSummary>,
    /// Why DuckDB did not run.
    pub duckdb_skipped: Option<String>,
}

/// DuckDB's hot-function query against `h5prov report`.
#[derive(Clone, Debug, Default, Serialize)]
pub struct DuckDbSummary {
    /// `duckdb.__version__`.
    pub version: String,
    /// The query's own time (connect, view, query), s.
    pub query_s: f64,
    /// The whole process (interpreter, `import duckdb`), s.
    pub wall_s: f64,
    /// Median wall time of `h5prov report` on the traces, s.
    pub report_s: f64,
    /// Operations DuckDB returned.
    pub ops: usize,
    /// DuckDB's count and total per operation equal `h5prov report --json`'s.
    pub agrees: bool,
    /// Differences (the first 20).
    pub mismatches: Vec<String>,
}

/// One run.
#[derive(Clone, Debug, Serialize)]
pub struct RawTiming {
    /// Tool name.
    pub tool: String,
    /// Round (0-based; `rounds` for the single `--json` run after them).
    pub round: usize,
    /// Position within the round.
    pub slot: usize,
    /// Wall time, ns.
    pub wall_ns: u64,
    /// Peak RSS, KiB.
    pub peak_rss_kb: u64,
    /// pandas' own seconds.
    pub self_seconds: Option<f64>,
}

/// How the two tools' numbers compare.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Agreement {
    /// Records the analyzer read (`run.records`).
    pub analyzer_records: u64,
    /// Records pandas read.
    pub pandas_records: u64,
    /// Distinct ranks the analyzer saw.
    pub analyzer_ranks: u64,
    /// Operations compared.
    pub ops: usize,
    /// (rank, operation) pairs compared.
    pub rank_ops: usize,
    /// Differences found (the first 20).
    pub mismatches: Vec<String>,
    /// Largest |analyzer − pandas| / pandas of p50, p95 and p99 over operations with at
    /// least 100 calls (the analyzer's quantiles are ±1 % sketches; informative only).
    pub max_quantile_rel_diff: Option<f64>,
    /// Counts and totals per operation and per rank per operation agree exactly.
    pub ok: bool,
}

/// A stated target.
#[derive(Clone, Debug, Serialize)]
pub struct Target {
    /// What is measured.
    pub name: String,
    /// The target, as text.
    pub target: String,
    /// The measured value, as text.
    pub value: String,
    /// Met, missed, or `None` when not measured.
    pub met: Option<bool>,
    /// Caveat.
    pub note: Option<String>,
}

/// The whole analyzer report.
#[derive(Clone, Debug, Serialize)]
pub struct AnalyzerReport {
    /// [`ANALYZER_REPORT_VERSION`].
    pub report_version: u32,
    /// Seconds since the Unix epoch when written.
    pub generated_unix_s: u64,
    /// Host name.
    pub host: String,
    /// Online CPUs (the analyzer uses all of them; pandas one).
    pub cpus: usize,
    /// `/proc/loadavg` before the first and after the last timed run (other work on the
    /// machine inflates every number here).
    pub loadavg: [String; 2],
    /// `--quick` run.
    pub quick: bool,
    /// Interleaved rounds.
    pub rounds: usize,
    /// Trace records.
    pub records: u64,
    /// Process files (= ranks).
    pub files: usize,
    /// The set directory.
    pub set_dir: String,
    /// Bytes of the set (traces, objects, meta).
    pub set_bytes: u64,
    /// Bytes of the trace files.
    pub trace_bytes: u64,
    /// The set came from the cache.
    pub set_cached: bool,
    /// Seconds spent preparing the set in this run (source runs and copying).
    pub prepare_s: f64,
    /// How the set was made.
    pub set: SetManifest,
    /// The measured `h5prov` (copied from this path), with its size.
    pub h5prov: String,
    /// `h5prov --version`.
    pub h5prov_version: String,
    /// Python and pandas versions, when pandas ran.
    pub python: Option<String>,
    /// Notes (what was skipped and why).
    pub notes: Vec<String>,
    /// Per tool.
    pub tools: Vec<ToolSummary>,
    /// pandas wall / `h5prov report` wall, paired per round.
    pub ratio_pandas_over_analyzer: Option<Summary>,
    /// pandas wall of each round / the wall of the one `h5prov report --json` run.
    pub ratio_pandas_over_analyzer_json: Option<Summary>,
    /// pandas' own seconds (no start-up, no import) / `h5prov report` wall, per round.
    pub ratio_pandas_self_over_analyzer: Option<Summary>,
    /// Agreement of the two tools' aggregates, when pandas ran.
    pub agreement: Agreement,
    /// The Parquet export and DuckDB.
    pub parquet: ParquetSummary,
    /// `h5prov export --prov` of the set: the PROV-JSON's bytes and the export's own
    /// summary line (processes, file versions, datasets, relations).
    pub prov: ProvSummary,
    /// The targets of issue 6.
    pub targets: Vec<Target>,
    /// The many-objects (PyTables-like) line, unless skipped (`--objects 0`).
    pub objects: Option<crate::objects::ObjectsLine>,
    /// Every run.
    pub raw: Vec<RawTiming>,
}

/// What `h5prov export --prov` made of the set.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ProvSummary {
    /// Bytes of the PROV-JSON document.
    pub bytes: u64,
    /// The export's summary line: `wrote N process(es), N file version(s), ...`.
    pub graph: String,
}

/// Builds `h5prov` with cargo (`--release` if `release`) and returns the path of the
/// binary cargo reports. Uses `$CARGO` (set by `cargo run`/`cargo test`) or `cargo`, in
/// `repo`, with the caller's `CARGO_TARGET_DIR`.
pub fn build_h5prov(repo: &Path, release: bool) -> Result<PathBuf, BenchError> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(&cargo);
    cmd.current_dir(repo)
        .args(["build", "-p", "h5prov-analyzer", "--bin", "h5prov"])
        .arg("--message-format=json-render-diagnostics")
        .stdin(Stdio::null())
        .stderr(Stdio::inherit());
    if release {
        cmd.arg("--release");
    }
    let out = cmd
        .output()
        .map_err(|e| BenchError::new(format!("cannot run {}: {e}", Path::new(&cargo).display())))?;
    if !out.status.success() {
        return Err(BenchError::new(format!(
            "cargo build -p h5prov-analyzer failed ({}); pass --h5prov PATH to use a built binary",
            out.status
        )));
    }
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["reason"] == "compiler-artifact" && v["target"]["name"] == "h5prov")
        .find_map(|v| v["executable"].as_str().map(PathBuf::from))
        .ok_or_else(|| BenchError::new("cargo build did not report the h5prov executable"))
}

/// `python -c 'import duckdb'`: DuckDB's version, or why not.
pub fn duckdb_version(python: &str) -> Result<String, String> {
    let out = Command::new(python)
        .args(["-c", "import duckdb; print(duckdb.__version__)"])
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {python}: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    } else {
        Err(format!(
            "{python} cannot import duckdb (pip install duckdb, or pass --python with an \
             interpreter that has it)"
        ))
    }
}

/// `python -c 'import pandas'`: Python and pandas versions, or why not.
pub fn pandas_version(python: &str) -> Result<String, String> {
    let out = Command::new(python)
        .args([
            "-c",
            "import sys, pandas; print('Python', sys.version.split()[0], '/ pandas', pandas.__version__)",
        ])
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {python}: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    } else {
        Err(format!(
            "{python} cannot import pandas (pip install pandas): {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tool {
    Report,
    ReportJson,
    Pandas,
    Export,
    ReportParquet,
    DuckDb,
    ExportProv,
}

impl Tool {
    fn name(self) -> &'static str {
        match self {
            Tool::Report => "h5prov report",
            Tool::ReportJson => "h5prov report --json",
            Tool::Pandas => "pandas",
            Tool::Export => "h5prov export --parquet",
            Tool::ReportParquet => "h5prov report (Parquet)",
            Tool::DuckDb => "DuckDB hot functions",
            Tool::ExportProv => "h5prov export --prov",
        }
    }

    /// The file in `runs_dir` that holds this tool's stderr of round `round`.
    fn err_log(self, runs_dir: &Path, round: usize) -> PathBuf {
        runs_dir.join(format!("{}-r{round}.err", self.name().replace(' ', "_")))
    }
}

fn loadavg() -> String {
    fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

/// Copies `h5prov` into `dir` (copy, then rename): a rebuild meanwhile does not change
/// the measured binary.
fn snapshot_binary(src: &Path, dir: &Path) -> Result<PathBuf, BenchError> {
    fs::create_dir_all(dir)?;
    let tmp = dir.join(".h5prov.tmp");
    fs::copy(src, &tmp).map_err(|e| {
        BenchError::new(format!(
            "cannot copy the analyzer {}: {e} (build it: cargo build --release -p h5prov-analyzer, \
             or pass --h5prov PATH)",
            src.display()
        ))
    })?;
    let dst = dir.join("h5prov");
    fs::rename(&tmp, &dst)?;
    Ok(dst)
}

/// Runs the analyzer benchmark. `progress` gets one line per step and run.
pub fn run(
    s: &AnalyzerSettings,
    progress: &mut dyn FnMut(&str),
) -> Result<AnalyzerReport, BenchError> {
    if s.rounds == 0 {
        return Err(BenchError::new("--rounds must be at least 1"));
    }
    let mut notes = Vec::new();
    let python = match &s.python {
        Some(py) => Some((
            py.clone(),
            pandas_version(py).map_err(|e| {
                BenchError::new(format!(
                    "{e}; or pass --no-pandas to time the analyzer only"
                ))
            })?,
        )),
        None => {
            notes.push("pandas skipped (--no-pandas): no speed ratio, no agreement check".into());
            None
        }
    };
    let h5prov = snapshot_binary(&s.h5prov, &s.work_dir.join("bin"))?;
    let h5prov_desc = format!(
        "{} ({} bytes)",
        s.h5prov.display(),
        fs::metadata(&h5prov).map(|m| m.len()).unwrap_or(0)
    );
    let version = Command::new(&h5prov)
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();

    // Made by a child process (the memory of making it would otherwise count in every
    // measured program's peak RSS: Linux adds the parent's RSS at `exec` to a child's),
    // then found in the cache.
    let exe = std::env::current_exe()?;
    let mut child = Command::new(&exe);
    child
        .args(["analyzer", "--prepare-set", "--no-pandas"])
        .arg("--records")
        .arg(s.records.to_string())
        .arg("--files")
        .arg(s.files.to_string())
        .arg("--work-dir")
        .arg(&s.work_dir)
        .arg("--plugin-path")
        .arg(&s.plugin_path)
        .arg("--h5prov")
        .arg(&s.h5prov)
        .stdin(Stdio::null());
    if s.regenerate {
        child.arg("--regenerate");
    }
    let status = child
        .status()
        .map_err(|e| BenchError::new(format!("cannot run {}: {e}", exe.display())))?;
    if !status.success() {
        return Err(BenchError::new(format!(
            "making the trace set failed ({status})"
        )));
    }
    let made = prepare_set(
        &AnalyzerSettings {
            regenerate: false,
            ..s.clone()
        },
        progress,
    )?;
    let set = match read_made(&s.work_dir) {
        Some((cached, source_cached, prepare_s)) => traceset::TraceSet {
            cached,
            source_cached,
            prepare_s,
            ..made
        },
        None => made,
    };
    // Reads every file once (untimed, so all runs find them in the page cache) and checks
    // the record count.
    let measured = crate::trace::measure(&set.dir)?;
    if measured.records != s.records {
        return Err(BenchError::new(format!(
            "{}: {} trace records, {} expected",
            set.dir.display(),
            measured.records,
            s.records
        )));
    }

    let runs_dir = s.work_dir.join("runs");
    if runs_dir.exists() {
        fs::remove_dir_all(&runs_dir)?;
    }
    fs::create_dir_all(&runs_dir)?;
    let report_json = runs_dir.join("h5prov-report.json");
    let pandas_json = runs_dir.join("pandas.json");
    let script = s.repo.join("bench/pandas_aggregate.py");

    let mut tools = vec![Tool::Report];
    if python.is_some() {
        tools.push(Tool::Pandas);
    }
    // Rounds of the alternating tools, then one `--json` run (round = rounds).
    let mut schedule: Vec<(usize, usize, Tool)> = Vec::new();
    for round in 0..s.rounds {
        for slot in 0..tools.len() {
            schedule.push((round, slot, tools[(round + slot) % tools.len()]));
        }
    }
    schedule.push((s.rounds, 0, Tool::ReportJson));
    tools.insert(1, Tool::ReportJson);
    schedule.push((s.rounds, 1, Tool::Export));
    schedule.push((s.rounds, 2, Tool::ReportParquet));
    tools.extend([Tool::Export, Tool::ReportParquet]);
    let duckdb = s.duckdb_python.as_ref().ok().map(|py| {
        (
            py.clone(),
            duckdb_version(py).unwrap_or_else(|_| "?".into()),
        )
    });
    if duckdb.is_some() {
        schedule.push((s.rounds, 3, Tool::DuckDb));
        tools.push(Tool::DuckDb);
    }
    schedule.push((s.rounds, 4, Tool::ExportProv));
    tools.push(Tool::ExportProv);
    let export_dir = s.work_dir.join("export");
    if export_dir.exists() {
        fs::remove_dir_all(&export_dir)?;
    }
    let mut raw: Vec<RawTiming> = Vec::new();
    let load_start = loadavg();
    let files = RunFiles {
        h5prov: &h5prov,
        python: python.as_ref().map(|p| p.0.as_str()),
        script: &script,
        set_dir: &set.dir,
        runs_dir: &runs_dir,
        report_json: &report_json,
        pandas_json: &pandas_json,
        export_dir: &export_dir,
        duckdb_python: duckdb.as_ref().map(|d| d.0.as_str()),
        recipes: &s.repo.join("docs/PARQUET.md"),
    };
    for (round, slot, tool) in schedule {
        let rec = run_tool(&files, tool, round, slot)?;
        progress(&format!(
            "[analyzer] {} {:<22} {:>8.2} s  {:>6.0} MB{}",
            if round < s.rounds {
                format!("round {}/{}", round + 1, s.rounds)
            } else {
                "once".to_string()
            },
            tool.name(),
            rec.wall_ns as f64 / 1e9,
            rec.peak_rss_kb as f64 * 1024.0 / 1e6,
            rec.self_seconds
                .map_or(String::new(), |x| format!("  (script's own {x:.2} s)"))
        ));
        raw.push(rec);
    }

    // The many-objects line, after the rounds (its sets are made, reported on and removed
    // one by one).
    let objects = objects_line(s, &h5prov, &set.manifest.source, progress)?;
    let load_end = loadavg();
    let analyzer_json = read_value(&report_json)?;
    let report_median = {
        let mut v: Vec<f64> = raw
            .iter()
            .filter(|r| r.tool == Tool::Report.name())
            .map(|r| r.wall_ns as f64 / 1e9)
            .collect();
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
    };
    let parquet = parquet_summary(
        &files,
        &analyzer_json,
        set.manifest.trace_bytes,
        s.records,
        duckdb.as_ref().map(|d| d.1.as_str()),
        raw.iter().find(|r| r.tool == Tool::DuckDb.name()),
        report_median,
        s.duckdb_python.as_ref().err(),
    )?;
    if !parquet.report_agrees {
        notes.push("`h5prov report` of the Parquet export DISAGREES with the traces'".into());
    }
    let prov = ProvSummary {
        bytes: fs::metadata(runs_dir.join("prov.json")).map_or(0, |m| m.len()),
        // run_tool's stderr log of the one run (round `s.rounds`); the line ends " to OUT".
        graph: fs::read_to_string(Tool::ExportProv.err_log(&runs_dir, s.rounds))
            .unwrap_or_default()
            .lines()
            .find_map(|l| l.strip_prefix("wrote "))
            .map_or_else(String::new, |l| {
                l.rsplit_once(" to ").map_or(l, |(g, _)| g).to_string()
            }),
    };
    let _ = fs::remove_file(runs_dir.join("prov.json"));
    let agreement = if python.is_some() {
        compare(&analyzer_json, &read_value(&pandas_json)?)
    } else {
        let mut a = Agreement {
            analyzer_records: analyzer_json["run"]["records"].as_u64().unwrap_or(0),
            analyzer_ranks: analyzer_json["run"]["ranks"].as_u64().unwrap_or(0),
            ..Agreement::default()
        };
        a.ok = a.analyzer_records == s.records;
        a
    };
    if agreement.analyzer_records != s.records {
        notes.push(format!(
            "the analyzer read {} records, the set has {}",
            agreement.analyzer_records, s.records
        ));
    }

    let records = s.records as f64;
    let summarise = |tool: Tool, command: String| -> Option<ToolSummary> {
        let rs: Vec<&RawTiming> = raw.iter().filter(|r| r.tool == tool.name()).collect();
        let secs: Vec<f64> = rs.iter().map(|r| r.wall_ns as f64 / 1e9).collect();
        Some(ToolSummary {
            tool: tool.name().to_string(),
            command,
            runs: rs.len(),
            seconds: Summary::of(&secs)?,
            records_per_s: Summary::of(&secs.iter().map(|x| records / x).collect::<Vec<_>>())?,
            peak_rss_mb: Summary::of(
                &rs.iter()
                    .map(|r| r.peak_rss_kb as f64 * 1024.0 / 1e6)
                    .collect::<Vec<_>>(),
            )?,
            self_seconds: Summary::of(
                &rs.iter().filter_map(|r| r.self_seconds).collect::<Vec<_>>(),
            ),
        })
    };
    let py_name = python.as_ref().map_or("python3", |p| p.0.as_str());
    let summaries: Vec<ToolSummary> = tools
        .iter()
        .filter_map(|&t| {
            let cmd = match t {
                Tool::Report => "h5prov report DIR --no-progress > /dev/null".to_string(),
                Tool::ReportJson => "h5prov report DIR --no-progress --json > OUT".to_string(),
                Tool::Pandas => {
                    format!("{py_name} bench/pandas_aggregate.py --json OUT DIR > /dev/null")
                }
                Tool::Export => {
                    "h5prov export --parquet EXPORT DIR --job bench --no-progress".to_string()
                }
                Tool::ReportParquet => {
                    "h5prov report EXPORT --no-progress --json > OUT".to_string()
                }
                Tool::DuckDb => format!(
                    "{} bench/duckdb_hot.py --json OUT EXPORT docs/PARQUET.md",
                    duckdb.as_ref().map_or("python3", |d| d.0.as_str())
                ),
                Tool::ExportProv => "h5prov export --prov OUT.json DIR".to_string(),
            };
            summarise(t, cmd)
        })
        .collect();
    // pandas / analyzer per round; the single `--json` run is paired with every round.
    let paired = |num: &dyn Fn(&RawTiming) -> Option<f64>, den: Tool| -> Option<Summary> {
        let v: Vec<f64> = (0..s.rounds)
            .filter_map(|round| {
                let p = raw
                    .iter()
                    .find(|r| r.round == round && r.tool == Tool::Pandas.name())?;
                let a = raw.iter().find(|r| {
                    (r.round == round || den == Tool::ReportJson) && r.tool == den.name()
                })?;
                Some(num(p)? / (a.wall_ns as f64 / 1e9))
            })
            .collect();
        Summary::of(&v)
    };
    let wall = |r: &RawTiming| Some(r.wall_ns as f64 / 1e9);
    let ratio = paired(&wall, Tool::Report);
    let ratio_json = paired(&wall, Tool::ReportJson);
    let ratio_self = paired(&|r: &RawTiming| r.self_seconds, Tool::Report);

    let report_sum = summaries.iter().find(|t| t.tool == Tool::Report.name());
    let peak_mb = summaries
        .iter()
        .filter(|t| t.tool == Tool::Report.name() || t.tool == Tool::ReportJson.name())
        .map(|t| t.peak_rss_mb.max)
        .fold(0.0, f64::max);
    let mut targets = Vec::new();
    if let Some(r) = report_sum {
        let rps = r.records_per_s.median;
        targets.push(Target {
            name: "analyzer throughput".into(),
            target: format!("≥ {:.0} records/s", TARGET_RECORDS_PER_S),
            value: format!("{rps:.0} records/s (median, `h5prov report`)"),
            met: Some(rps >= TARGET_RECORDS_PER_S),
            note: None,
        });
    }
    targets.push(match (ratio, ratio_self) {
        (Some(x), Some(c)) => Target {
            name: "speed vs pandas".into(),
            target: format!("≥ {TARGET_SPEEDUP:.0}× faster"),
            value: format!(
                "{:.1}× (median of per-round pandas wall / `h5prov report` wall); {:.1}× against \
                 pandas' own time without start-up and import",
                x.median, c.median
            ),
            met: Some(x.median >= TARGET_SPEEDUP),
            note: (x.median >= TARGET_SPEEDUP && c.median < TARGET_SPEEDUP)
                .then(|| "met on process wall time only".to_string()),
        },
        _ => Target {
            name: "speed vs pandas".into(),
            target: format!("≥ {TARGET_SPEEDUP:.0}× faster"),
            value: "not measured (pandas skipped)".into(),
            met: None,
            note: None,
        },
    });
    targets.push(Target {
        name: "analyzer peak memory".into(),
        target: format!("< {TARGET_PEAK_MB:.0} MB for 10M records"),
        value: format!("{peak_mb:.0} MB (largest of all `h5prov report` runs)"),
        met: Some(peak_mb < TARGET_PEAK_MB),
        note: (s.records != DEFAULT_RECORDS || s.files != DEFAULT_FILES).then(|| {
            format!(
                "measured at {} records in {} files, not 10M in 64",
                s.records, s.files
            )
        }),
    });
    if s.files >= TARGET_FILES {
        let t = report_median;
        targets.push(Target {
            name: format!("{TARGET_FILES}-process set"),
            target: format!("reported in < {TARGET_FILES_S:.0} s"),
            value: format!("{t:.2} s (median, `h5prov report`)"),
            met: Some(t < TARGET_FILES_S),
            note: (s.files != TARGET_FILES).then(|| format!("{} files", s.files)),
        });
    }
    if !agreement.ok && python.is_some() {
        notes.push("the analyzer and pandas DISAGREE (see the agreement section)".into());
    }

    Ok(AnalyzerReport {
        report_version: ANALYZER_REPORT_VERSION,
        generated_unix_s: crate::unix_now_s(),
        host: crate::host_name(),
        cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
        loadavg: [load_start, load_end],
        quick: s.quick,
        rounds: s.rounds,
        records: s.records,
        files: s.files,
        set_dir: set.dir.display().to_string(),
        set_bytes: set.manifest.bytes,
        trace_bytes: set.manifest.trace_bytes,
        set_cached: set.cached,
        prepare_s: set.prepare_s,
        set: set.manifest,
        h5prov: h5prov_desc,
        h5prov_version: version,
        python: python.map(|p| p.1),
        notes,
        tools: summaries,
        ratio_pandas_over_analyzer: ratio,
        ratio_pandas_over_analyzer_json: ratio_json,
        ratio_pandas_self_over_analyzer: ratio_self,
        agreement,
        parquet,
        prov,
        targets,
        objects,
        raw,
    })
}

/// The many-objects line of `s` ([`crate::objects::run`]) on the source traces in
/// `s.work_dir/source`; `None` when `s.objects` is empty.
fn objects_line(
    s: &AnalyzerSettings,
    h5prov: &Path,
    source: &traceset::SourceManifest,
    progress: &mut dyn FnMut(&str),
) -> Result<Option<crate::objects::ObjectsLine>, BenchError> {
    if s.objects.is_empty() {
        return Ok(None);
    }
    crate::objects::run(
        h5prov,
        &s.work_dir.join("source"),
        source,
        &s.work_dir,
        &s.objects,
        progress,
    )
    .map(Some)
}

/// `h5prov-bench analyzer --objects-only`: the many-objects line alone, on the source
/// traces (made or found as the full benchmark does). Writes `analyzer-objects.md` and
/// `analyzer-objects.json` into `s.out_dir`; returns the Markdown.
pub fn run_objects_only(
    s: &AnalyzerSettings,
    progress: &mut dyn FnMut(&str),
) -> Result<String, BenchError> {
    let h5prov = snapshot_binary(&s.h5prov, &s.work_dir.join("bin"))?;
    let (_, source, _) = traceset::ensure_source(&s.set_spec(), progress)?;
    let load_start = loadavg();
    let line = objects_line(s, &h5prov, &source, progress)?
        .ok_or_else(|| BenchError::new("--objects-only with no object counts"))?;
    let load_end = loadavg();
    let md = format!(
        "# h5prov analyzer benchmark: many objects\n\n- host `{}`, {} CPUs; load average \
         before `{load_start}`, after `{load_end}`\n\n{}",
        crate::host_name(),
        std::thread::available_parallelism().map_or(1, |n| n.get()),
        crate::objects::markdown(&line)
    );
    fs::create_dir_all(&s.out_dir)?;
    fs::write(s.out_dir.join("analyzer-objects.md"), &md)?;
    let json = serde_json::json!({
        "report_version": ANALYZER_REPORT_VERSION,
        "generated_unix_s": crate::unix_now_s(),
        "host": crate::host_name(),
        "loadavg": [load_start, load_end],
        "objects": line,
    });
    fs::write(
        s.out_dir.join("analyzer-objects.json"),
        serde_json::to_string_pretty(&json).unwrap_or_default() + "\n",
    )?;
    Ok(md)
}

/// Makes (or finds) the set of `s` ([`traceset::ensure`]), and notes in the work
/// directory whether it was cached and how long it took (for the parent's report).
pub fn prepare_set(
    s: &AnalyzerSettings,
    progress: &mut dyn FnMut(&str),
) -> Result<traceset::TraceSet, BenchError> {
    let set = traceset::ensure(&s.set_spec(), progress)?;
    if s.regenerate || !set.cached {
        fs::write(
            s.work_dir.join("made.json"),
            serde_json::json!([set.cached, set.source_cached, set.prepare_s]).to_string(),
        )?;
    }
    Ok(set)
}

/// What the child that made the set noted (and removes the note).
fn read_made(work_dir: &Path) -> Option<(bool, bool, f64)> {
    let path = work_dir.join("made.json");
    let v: serde_json::Value = serde_json::from_slice(&fs::read(&path).ok()?).ok()?;
    let _ = fs::remove_file(&path);
    Some((v[0].as_bool()?, v[1].as_bool()?, v[2].as_f64()?))
}

/// Paths one timed run needs.
struct RunFiles<'a> {
    h5prov: &'a Path,
    python: Option<&'a str>,
    script: &'a Path,
    set_dir: &'a Path,
    runs_dir: &'a Path,
    report_json: &'a Path,
    pandas_json: &'a Path,
    export_dir: &'a Path,
    duckdb_python: Option<&'a str>,
    recipes: &'a Path,
}

/// The files of `dir` and below, bytes.
fn dir_bytes(dir: &Path) -> u64 {
    let Ok(rd) = fs::read_dir(dir) else {
        return 0;
    };
    rd.filter_map(Result::ok)
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => dir_bytes(&e.path()),
            _ => e.metadata().map_or(0, |m| m.len()),
        })
        .sum()
}

/// `op -> (count, total_ns)` of a `--json` report's `ops`.
fn report_ops(report: &serde_json::Value) -> BTreeMap<String, (u64, u64)> {
    op_totals(&report["ops"])
}

/// `op -> (count, total_ns)` of an array of `{op, count, total_ns}` rows (a report's
/// `ops`, DuckDB's `hot`).
fn op_totals(rows: &serde_json::Value) -> BTreeMap<String, (u64, u64)> {
    rows.as_array()
        .map(|a| {
            a.iter()
                .map(|r| {
                    (
                        r["op"].as_str().unwrap_or_default().to_string(),
                        (
                            r["count"].as_u64().unwrap_or(0),
                            r["total_ns"].as_u64().unwrap_or(0),
                        ),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Sizes of the export, and the report of it and DuckDB's query against the traces'.
#[allow(clippy::too_many_arguments)]
fn parquet_summary(
    f: &RunFiles<'_>,
    analyzer_json: &serde_json::Value,
    csv_trace_bytes: u64,
    records: u64,
    duckdb_version: Option<&str>,
    duckdb_run: Option<&RawTiming>,
    report_s: f64,
    duckdb_skipped: Option<&String>,
) -> Result<ParquetSummary, BenchError> {
    let ops = report_ops(analyzer_json);
    let records_bytes = dir_bytes(&f.export_dir.join("records"));
    let n = records.max(1) as f64;
    let from_parquet = read_value(&f.runs_dir.join("h5prov-report-parquet.json"))?;
    let mut p = ParquetSummary {
        records_bytes,
        export_bytes: dir_bytes(f.export_dir),
        csv_trace_bytes,
        parquet_bytes_per_record: records_bytes as f64 / n,
        csv_bytes_per_record: csv_trace_bytes as f64 / n,
        report_agrees: !ops.is_empty() && report_ops(&from_parquet) == ops,
        duckdb: None,
        duckdb_skipped: duckdb_skipped.cloned(),
    };
    if let (Some(version), Some(run)) = (duckdb_version, duckdb_run) {
        let hot = read_value(&f.runs_dir.join("duckdb.json"))?;
        let got = op_totals(&hot["hot"]);
        let mut bad = Vec::new();
        for (op, a) in &ops {
            match got.get(op) {
                Some(d) if d == a => {}
                d => bad.push(format!("{op}: report {a:?}, DuckDB {d:?}")),
            }
        }
        for op in got.keys().filter(|k| !ops.contains_key(*k)) {
            bad.push(format!("{op}: only in DuckDB"));
        }
        p.duckdb = Some(DuckDbSummary {
            version: version.to_string(),
            query_s: run.self_seconds.unwrap_or(f64::NAN),
            wall_s: run.wall_ns as f64 / 1e9,
            report_s,
            ops: got.len(),
            agrees: bad.is_empty() && !got.is_empty(),
            mismatches: bad.into_iter().take(20).collect(),
        });
    }
    Ok(p)
}

/// Runs `tool` once on the set and measures it.
fn run_tool(
    f: &RunFiles<'_>,
    tool: Tool,
    round: usize,
    slot: usize,
) -> Result<RawTiming, BenchError> {
    let err_log = tool.err_log(f.runs_dir, round);
    let mut cmd = match tool {
        Tool::Report | Tool::ReportJson => {
            let mut c = Command::new(f.h5prov);
            c.arg("report").arg(f.set_dir).arg("--no-progress");
            if tool == Tool::ReportJson {
                c.arg("--json").stdout(File::create(f.report_json)?);
            } else {
                c.stdout(Stdio::null());
            }
            c
        }
        Tool::Pandas => {
            let mut c = Command::new(f.python.unwrap_or("python3"));
            c.arg(f.script)
                .arg("--json")
                .arg(f.pandas_json)
                .arg(f.set_dir)
                .stdout(Stdio::null());
            c
        }
        Tool::Export => {
            let mut c = Command::new(f.h5prov);
            c.arg("export")
                .arg("--parquet")
                .arg(f.export_dir)
                .arg(f.set_dir)
                .args(["--job", "bench", "--no-progress"])
                .stdout(Stdio::null());
            c
        }
        Tool::ReportParquet => {
            let mut c = Command::new(f.h5prov);
            c.arg("report")
                .arg(f.export_dir)
                .args(["--no-progress", "--json"])
                .stdout(File::create(f.runs_dir.join("h5prov-report-parquet.json"))?);
            c
        }
        Tool::ExportProv => {
            let mut c = Command::new(f.h5prov);
            c.arg("export")
                .arg("--prov")
                .arg(f.runs_dir.join("prov.json"))
                .arg(f.set_dir)
                .stdout(Stdio::null());
            c
        }
        Tool::DuckDb => {
            let mut c = Command::new(f.duckdb_python.unwrap_or("python3"));
            c.arg(f.script.with_file_name("duckdb_hot.py"))
                .arg("--json")
                .arg(f.runs_dir.join("duckdb.json"))
                .arg(f.export_dir)
                .arg(f.recipes)
                .stdout(Stdio::null());
            c
        }
    };
    cmd.stdin(Stdio::null()).stderr(File::create(&err_log)?);
    let m = run_measured(&mut cmd, tool.name(), Some(&err_log))?;
    let self_seconds = matches!(tool, Tool::Pandas | Tool::DuckDb)
        .then(|| script_seconds(&fs::read_to_string(&err_log).unwrap_or_default()))
        .flatten();
    Ok(RawTiming {
        tool: tool.name().to_string(),
        round,
        slot,
        wall_ns: m.wall_ns,
        peak_rss_kb: m.max_rss_kb,
        self_seconds,
    })
}

/// The `seconds=` of the script's `pandas: records=... seconds=...` (or `duckdb: ...`)
/// line.
fn script_seconds(stderr: &str) -> Option<f64> {
    stderr
        .lines()
        .rev()
        .find(|l| l.starts_with("pandas:") || l.starts_with("duckdb:"))?
        .split_whitespace()
        .find_map(|kv| kv.strip_prefix("seconds="))?
        .parse()
        .ok()
}

fn read_value(path: &Path) -> Result<serde_json::Value, BenchError> {
    let text = fs::read(path).map_err(|e| BenchError::new(format!("{}: {e}", path.display())))?;
    serde_json::from_slice(&text)
        .map_err(|e| BenchError::new(format!("{}: not JSON: {e}", path.display())))
}

/// Compares `h5prov report --json` with `pandas_aggregate.py --json`: records, per
/// operation count/total/max, per rank and operation count/total, exactly.
pub fn compare(analyzer: &serde_json::Value, pandas: &serde_json::Value) -> Agreement {
    let u = |v: &serde_json::Value| v.as_u64();
    let mut a = Agreement {
        analyzer_records: u(&analyzer["run"]["records"]).unwrap_or(0),
        pandas_records: u(&pandas["records"]).unwrap_or(0),
        analyzer_ranks: u(&analyzer["run"]["ranks"]).unwrap_or(0),
        ..Agreement::default()
    };
    let mut bad = Vec::new();
    if a.analyzer_records != a.pandas_records {
        bad.push(format!(
            "records: analyzer {} pandas {}",
            a.analyzer_records, a.pandas_records
        ));
    }
    let empty = Vec::new();
    let arr = |v: &serde_json::Value| v.as_array().unwrap_or(&empty).clone();
    // op -> (count, total, max, [p50, p95, p99])
    type OpRow = (Option<u64>, Option<u64>, Option<u64>, [f64; 3]);
    let mut ops_a: BTreeMap<String, OpRow> = BTreeMap::new();
    for r in arr(&analyzer["ops"]) {
        let q = |k: &str| r[k].as_f64().unwrap_or(f64::NAN);
        ops_a.insert(
            r["op"].as_str().unwrap_or_default().to_string(),
            (
                u(&r["count"]),
                u(&r["total_ns"]),
                u(&r["max_ns"]),
                [q("p50_ns"), q("p95_ns"), q("p99_ns")],
            ),
        );
    }
    let mut ops_p: BTreeMap<String, OpRow> = BTreeMap::new();
    for r in arr(&pandas["hot"]) {
        let q = |k: &str| r[k].as_f64().unwrap_or(f64::NAN);
        ops_p.insert(
            r["op"].as_str().unwrap_or_default().to_string(),
            (
                u(&r["count"]),
                u(&r["total"]),
                u(&r["max"]),
                [q("p50"), q("p95"), q("p99")],
            ),
        );
    }
    let mut qdiff: Option<f64> = None;
    for (op, pa) in &ops_a {
        match ops_p.get(op) {
            None => bad.push(format!("op {op}: only in the analyzer")),
            Some(pp) => {
                for (what, x, y) in [
                    ("count", pa.0, pp.0),
                    ("total", pa.1, pp.1),
                    ("max", pa.2, pp.2),
                ] {
                    if x.is_none() || x != y {
                        bad.push(format!("op {op} {what}: analyzer {x:?} pandas {y:?}"));
                    }
                }
                if pp.0.unwrap_or(0) >= 100 {
                    for (qa, qp) in pa.3.iter().zip(pp.3.iter()) {
                        if qp.is_finite() && *qp > 0.0 && qa.is_finite() {
                            let d = (qa - qp).abs() / qp;
                            qdiff = Some(qdiff.map_or(d, |m: f64| m.max(d)));
                        }
                    }
                }
            }
        }
    }
    for op in ops_p.keys().filter(|k| !ops_a.contains_key(*k)) {
        bad.push(format!("op {op}: only in pandas"));
    }
    // (rank, op) -> (count, total); the analyzer's rows are per (rank, pid).
    let mut ro_a: BTreeMap<(i64, String), (u64, u64)> = BTreeMap::new();
    for r in arr(&analyzer["rank_ops"]) {
        let e = ro_a
            .entry((
                r["rank"].as_i64().unwrap_or(i64::MIN),
                r["op"].as_str().unwrap_or_default().to_string(),
            ))
            .or_default();
        e.0 += u(&r["count"]).unwrap_or(0);
        e.1 += u(&r["total_ns"]).unwrap_or(0);
    }
    let mut ro_p: BTreeMap<(i64, String), (u64, u64)> = BTreeMap::new();
    for r in arr(&pandas["per_rank"]) {
        ro_p.insert(
            (
                r["rank"].as_i64().unwrap_or(i64::MIN),
                r["op"].as_str().unwrap_or_default().to_string(),
            ),
            (u(&r["count"]).unwrap_or(0), u(&r["total"]).unwrap_or(0)),
        );
    }
    for (k, va) in &ro_a {
        match ro_p.get(k) {
            Some(vp) if vp == va => {}
            Some(vp) => bad.push(format!(
                "rank {} op {}: analyzer count/total {va:?} pandas {vp:?}",
                k.0, k.1
            )),
            None => bad.push(format!("rank {} op {}: only in the analyzer", k.0, k.1)),
        }
    }
    for k in ro_p.keys().filter(|k| !ro_a.contains_key(*k)) {
        bad.push(format!("rank {} op {}: only in pandas", k.0, k.1));
    }
    a.ops = ops_a.len();
    a.rank_ops = ro_a.len();
    a.max_quantile_rel_diff = qdiff;
    a.ok = bad.is_empty() && a.ops > 0 && a.analyzer_records > 0;
    a.mismatches = bad.into_iter().take(20).collect();
    a
}

fn met(t: &Target) -> &'static str {
    match t.met {
        Some(true) => "**met**",
        Some(false) => "**missed**",
        None => "not measured",
    }
}

/// Renders the analyzer report as Markdown.
pub fn markdown(r: &AnalyzerReport) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# h5prov analyzer benchmark\n");
    let _ = writeln!(
        s,
        "- host `{}`, {} CPUs, {} interleaved rounds{}; generated at unix time {}",
        r.host,
        r.cpus,
        r.rounds,
        if r.quick {
            " (**--quick**: smoke size, numbers meaningless)"
        } else {
            ""
        },
        r.generated_unix_s
    );
    let sources: Vec<String> = r
        .set
        .source
        .runs
        .iter()
        .map(|run| {
            format!(
                "`{} {}` at `level={}` ({} processes, {}–{} records each)",
                run.workload,
                run.args.join(" "),
                run.level,
                run.procs,
                run.records.iter().min().unwrap_or(&0),
                run.records.iter().max().unwrap_or(&0)
            )
        })
        .collect();
    let _ = writeln!(
        s,
        "- trace set: **{} records in {} process files** ({:.0} MB of traces, {:.0} MB with \
         objects and meta files), `{}`{}",
        r.records,
        r.files,
        r.trace_bytes as f64 / 1e6,
        r.set_bytes as f64 / 1e6,
        r.set_dir,
        if r.set_cached {
            " — reused from the cache".to_string()
        } else {
            format!(" — made in {:.1} s", r.prepare_s)
        }
    );
    let _ = writeln!(
        s,
        "- made from real h5prov runs through `libh5prov.so`: {}; file i holds the first \
         records of source process i mod {}, copied byte for byte except the rank/pid columns \
         (rank i, pid {}+i), with the objects rows of the objects those records touch (that \
         started before the last of them ended) and its meta file (rank, pid, world size, \
         records adjusted)",
        sources.join(" and "),
        r.set.source.order().len(),
        traceset::PID_BASE
    );
    let _ = writeln!(
        s,
        "- load average (1, 5, 15 min) before the first timed run: {}; after the last: {}",
        r.loadavg[0], r.loadavg[1]
    );
    let _ = writeln!(s, "- analyzer: {} — `{}`", r.h5prov, r.h5prov_version);
    if let Some(p) = &r.python {
        let _ = writeln!(s, "- {p}");
    }
    for n in &r.notes {
        let _ = writeln!(s, "- note: {n}");
    }
    let _ = writeln!(
        s,
        "- each run is one process: wall time from spawn to exit, peak RSS = `ru_maxrss` from \
         `wait4` (MB = 10^6 bytes); `h5prov report` and pandas alternate, round r starting \
         with tool r mod 2; `--json` runs once after the rounds; median (min–max). The files \
         are read once before the rounds, so every run finds them in the page cache. The \
         analyzer uses all {} CPUs and computes its whole report; pandas computes two tables \
         on one CPU.\n",
        r.cpus
    );
    let _ = writeln!(
        s,
        "| tool | seconds | records/s | peak RSS MB | script's own seconds |"
    );
    let _ = writeln!(s, "|---|---|---|---|---|");
    for t in &r.tools {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} |",
            t.tool,
            t.seconds.fmt(2),
            t.records_per_s.fmt(0),
            t.peak_rss_mb.fmt(0),
            t.self_seconds
                .as_ref()
                .map_or_else(|| "–".to_string(), |x| x.fmt(2))
        );
    }
    let _ = writeln!(s);
    for t in &r.tools {
        let _ = writeln!(s, "- {}: `{}`", t.tool, t.command);
    }
    if let Some(x) = &r.ratio_pandas_over_analyzer {
        let _ = writeln!(
            s,
            "\n**Speed ratio pandas / analyzer** (per round, wall): {}× against `h5prov report`, \
             {}× against `h5prov report --json`; {}× counting only pandas' own time (no \
             interpreter start-up, no `import pandas`).",
            x.fmt(2),
            r.ratio_pandas_over_analyzer_json
                .as_ref()
                .map_or_else(|| "–".to_string(), |x| x.fmt(2)),
            r.ratio_pandas_self_over_analyzer
                .as_ref()
                .map_or_else(|| "–".to_string(), |x| x.fmt(2))
        );
    }
    let p = &r.parquet;
    let _ = writeln!(s, "\n## Parquet export and DuckDB\n");
    let _ = writeln!(
        s,
        "- Parquet `records/` table: **{:.1} bytes per record** against {:.1} for the CSV \
         traces ({:.1}× smaller; {:.0} MB against {:.0} MB; the whole export with objects, \
         processes and files: {:.0} MB)",
        p.parquet_bytes_per_record,
        p.csv_bytes_per_record,
        p.csv_bytes_per_record / p.parquet_bytes_per_record.max(f64::MIN_POSITIVE),
        p.records_bytes as f64 / 1e6,
        p.csv_trace_bytes as f64 / 1e6,
        p.export_bytes as f64 / 1e6
    );
    if let Some(t) = r.tools.iter().find(|t| t.tool == Tool::ExportProv.name()) {
        let _ = writeln!(
            s,
            "- {}: **{:.2} s**, peak RSS {:.0} MB, PROV-JSON {:.0} MB ({})",
            t.tool,
            t.seconds.median,
            t.peak_rss_mb.max,
            r.prov.bytes as f64 / 1e6,
            r.prov.graph
        );
    }
    for t in r
        .tools
        .iter()
        .filter(|t| t.tool == Tool::Export.name() || t.tool == Tool::ReportParquet.name())
    {
        let _ = writeln!(
            s,
            "- {}: **{:.2} s**, peak RSS {:.0} MB",
            t.tool, t.seconds.median, t.peak_rss_mb.max
        );
    }
    let _ = writeln!(
        s,
        "- `h5prov report` of the export: {}",
        if p.report_agrees {
            "same operations (count, total) as of the traces"
        } else {
            "**DIFFERS** from the report of the traces"
        }
    );
    match (&p.duckdb, &p.duckdb_skipped) {
        (Some(d), _) => {
            let _ = writeln!(
                s,
                "- DuckDB {} hot-function query (`hot_functions_all_jobs`): **{:.2} s** \
                 (process with interpreter and import: {:.2} s) against `h5prov report` \
                 {:.2} s: {:.1}× ; {} ({} operations, count and total per operation)",
                d.version,
                d.query_s,
                d.wall_s,
                d.report_s,
                d.report_s / d.query_s,
                if d.agrees {
                    "**agrees** with `h5prov report --json`"
                } else {
                    "**DISAGREES** with `h5prov report --json`"
                },
                d.ops
            );
            for m in &d.mismatches {
                let _ = writeln!(s, "  - {m}");
            }
        }
        (None, Some(why)) => {
            let _ = writeln!(s, "- DuckDB skipped: {why}");
        }
        (None, None) => {}
    }
    let a = &r.agreement;
    let _ = writeln!(s, "\n## Agreement\n");
    if r.python.is_some() {
        let _ = writeln!(
            s,
            "{}: records analyzer {} / pandas {}; {} operations (count, total, max of \
             `total_ns`) and {} (rank, operation) pairs (count, total) compared exactly; {} \
             ranks.{}",
            if a.ok { "**agree**" } else { "**DISAGREE**" },
            a.analyzer_records,
            a.pandas_records,
            a.ops,
            a.rank_ops,
            a.analyzer_ranks,
            a.max_quantile_rel_diff.map_or(String::new(), |d| format!(
                " Largest p50/p95/p99 difference (ops with ≥ 100 calls; the analyzer's \
                 quantiles are ±1 % sketches, pandas interpolates): {:.2} %.",
                d * 100.0
            ))
        );
        for m in &a.mismatches {
            let _ = writeln!(s, "- {m}");
        }
    } else {
        let _ = writeln!(
            s,
            "pandas skipped; the analyzer read {} records ({} ranks).",
            a.analyzer_records, a.analyzer_ranks
        );
    }
    let _ = writeln!(s, "\n## Targets\n");
    let _ = writeln!(s, "| target | measured | |");
    let _ = writeln!(s, "|---|---|---|");
    for t in &r.targets {
        let _ = writeln!(
            s,
            "| {}: {} | {} | {}{} |",
            t.name,
            t.target,
            t.value,
            met(t),
            t.note
                .as_ref()
                .map_or_else(String::new, |n| format!(" ({n})"))
        );
    }
    let _ = writeln!(s);
    if let Some(o) = &r.objects {
        s.push_str(&crate::objects::markdown(o));
        let _ = writeln!(s);
    }
    s
}

/// Writes `analyzer.md` and `analyzer.json` into `dir`; returns the Markdown.
pub fn write_report(r: &AnalyzerReport, dir: &Path) -> Result<String, BenchError> {
    fs::create_dir_all(dir)?;
    let md = markdown(r);
    fs::write(dir.join("analyzer.md"), &md)?;
    let json = serde_json::to_string_pretty(r)
        .map_err(|e| BenchError::new(format!("cannot serialise the report: {e}")))?;
    fs::write(dir.join("analyzer.json"), json + "\n")?;
    Ok(md)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn compares_counts_and_totals_exactly() {
        let analyzer = json!({
            "run": {"records": 3, "ranks": 2},
            "ops": [{"op": "a", "count": 2, "total_ns": 30, "max_ns": 20,
                     "p50_ns": 10, "p95_ns": 20, "p99_ns": 20},
                    {"op": "b", "count": 1, "total_ns": 5, "max_ns": 5,
                     "p50_ns": 5, "p95_ns": 5, "p99_ns": 5}],
            "rank_ops": [{"rank": 0, "pid": 1, "op": "a", "count": 2, "total_ns": 30},
                         {"rank": 1, "pid": 2, "op": "b", "count": 1, "total_ns": 5}]
        });
        let mut pandas = json!({
            "records": 3,
            "hot": [{"op": "a", "count": 2, "total": 30, "max": 20, "p50": 15.0, "p95": 19.5, "p99": 19.9},
                    {"op": "b", "count": 1, "total": 5, "max": 5, "p50": 5.0, "p95": 5.0, "p99": 5.0}],
            "per_rank": [{"rank": 0, "op": "a", "count": 2, "total": 30},
                         {"rank": 1, "op": "b", "count": 1, "total": 5}]
        });
        let a = compare(&analyzer, &pandas);
        assert!(a.ok, "{a:?}");
        assert_eq!((a.ops, a.rank_ops, a.analyzer_ranks), (2, 2, 2));
        pandas["per_rank"][1]["total"] = json!(6);
        pandas["hot"][0]["max"] = json!(21);
        let a = compare(&analyzer, &pandas);
        assert!(!a.ok);
        assert_eq!(a.mismatches.len(), 2, "{:?}", a.mismatches);
    }

    #[test]
    fn reads_pandas_seconds() {
        let e = "warning\npandas: records=10 files=1 seconds=1.250 records_per_s=8\n";
        assert_eq!(script_seconds(e), Some(1.25));
        assert_eq!(script_seconds("duckdb: rows=3 seconds=0.5\n"), Some(0.5));
        assert_eq!(script_seconds("nothing"), None);
    }
}
