//! Detection: turns an [`Aggregate`] into a [`Report`] (hot functions, stragglers, objects,
//! transfer modes, phases, insights). Pure and deterministic: the same aggregate gives the
//! same report.

pub mod collective;
pub mod findings;
pub mod stats;

use crate::aggregate::check::TraceWarning;
use crate::aggregate::sketch::{LogSketch, RELATIVE_ACCURACY};
use crate::aggregate::timeline::{Phase, Window};
use crate::aggregate::{Aggregate, ObjStats, ObjectMap, SlowCall, SummaryStats};
use crate::analysis::collective::CollectiveSkew;
use crate::analysis::findings::{Insight, Thresholds};
use crate::analysis::stats::{Robust, Spread};
use crate::read::record::{OpClass, ProcKey};
use crate::read::stream_capture::{not_carried, STREAM_FORMAT};
use compact_str::CompactString;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// Everything `h5prov report` says about a run.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// What was read.
    pub run: RunInfo,
    /// Inconsistencies in what was read, one per kind ([`crate::aggregate::check`]); left out of the
    /// JSON when there are none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<TraceWarning>,
    /// Thresholds in force.
    pub thresholds: Thresholds,
    /// Per operation, by total time (descending).
    pub ops: Vec<OpRow>,
    /// Per operation family (`class.callback`), by total time.
    pub families: Vec<FamilyRow>,
    /// Per process.
    pub ranks: Vec<RankRow>,
    /// Per process and operation.
    pub rank_ops: Vec<RankOpRow>,
    /// Straggler calls per operation.
    pub straggler_calls: Vec<StragglerCalls>,
    /// Straggler ranks per operation.
    pub straggler_ranks: Vec<StragglerRanks>,
    /// Arrival skew at collective operations (MPI runs): who the other ranks wait for.
    pub collective_skew: Vec<CollectiveSkew>,
    /// Operations with a heavy tail (p99/p50).
    pub tail_heavy: Vec<TailHeavy>,
    /// Per container file.
    pub files: Vec<FileRow>,
    /// Per dataset, by time (descending).
    pub datasets: Vec<DatasetRow>,
    /// Independent / collective transfer breakdown.
    pub transfers: Transfers,
    /// Access sizes of all data reads and writes.
    pub access_sizes: AccessSizes,
    /// Fixed-width windows of the run (for plots).
    pub windows: Vec<Window>,
    /// I/O phases.
    pub phases: Vec<Phase>,
    /// Asynchronous operations (vol-async): issue time, time to completion, overlap, by
    /// total time to completion ([`crate::aggregate::asyncops`]); left out of the JSON when there
    /// are none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub async_ops: Vec<crate::aggregate::asyncops::AsyncOpRow>,
    /// Findings with recommendations, most severe first.
    pub insights: Vec<Insight>,
    /// Timing observations that are not insights ([`crate::insights::is_timing_note`]): a
    /// dominant operation, heavy tails, isolated slow calls, ranks slower or later with
    /// the same data.
    pub timing_notes: Vec<Insight>,
    /// Program → dataset → program data flow ([`dataflow`]); left out of the JSON when
    /// there is none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub dataflow: Vec<FlowEdge>,
}

/// Bytes one program moved to or from one dataset (every process of that program, in
/// every job read), from the objects files.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FlowEdge {
    /// The program ([`programs`]; `pid N` without a meta file).
    pub program: String,
    /// The dataset's container file.
    pub file: String,
    /// The dataset's path.
    pub dataset: String,
    /// Data bytes the program read from it.
    pub bytes_read: u64,
    /// Data bytes the program wrote to it.
    pub bytes_written: u64,
}

/// Datasets the dataflow graph shows at most: the ones that moved the most bytes.
pub const DATAFLOW_DATASETS: usize = 12;

/// The dataflow of the objects files ([`Aggregate::dataflow`]) by program and dataset: the
/// edges of the [`DATAFLOW_DATASETS`] datasets that moved the most bytes, by dataset
/// (most bytes first), then program.
///
/// The names of one file (`sim.h5` and `/run/sim.h5`, by their `(dev, ino)`) are one
/// file, named by the longest.
pub fn dataflow(agg: &Aggregate) -> Vec<FlowEdge> {
    let names = programs(agg);
    let flow = &agg.dataflow;
    let mut longest: BTreeMap<(u64, u64), &str> = BTreeMap::new();
    for (name, id) in &flow.identity {
        let l = longest.entry(*id).or_insert(name);
        if name.len() > l.len() {
            *l = name;
        }
    }
    let file_name = |f: &str| -> String {
        flow.identity
            .get(f)
            .and_then(|id| longest.get(id))
            .map_or(f, |l| l)
            .to_string()
    };
    let mut edges: BTreeMap<(String, &str, String), (u64, u64)> = BTreeMap::new();
    for ((rank, pid), sets) in &flow.bytes {
        let key = ProcKey {
            rank: *rank,
            pid: *pid,
        };
        let program = names
            .get(&key)
            .filter(|n| !n.is_empty())
            .cloned()
            .unwrap_or_else(|| format!("pid {pid}"));
        for ((file, path), (r, w)) in sets {
            let e = edges
                .entry((file_name(file), path.as_str(), program.clone()))
                .or_default();
            e.0 += r;
            e.1 += w;
        }
    }
    let mut totals: BTreeMap<(&str, &str), u64> = BTreeMap::new();
    for ((f, p, _), (r, w)) in &edges {
        *totals.entry((f, p)).or_default() += r + w;
    }
    let mut top: Vec<((&str, &str), u64)> = totals.into_iter().collect();
    top.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    top.truncate(DATAFLOW_DATASETS);
    top.iter()
        .flat_map(|((f, p), _)| {
            edges
                .range((f.to_string(), *p, String::new())..)
                .take_while(move |((ef, ep, _), _)| ef == f && ep == p)
                .map(|((f, p, prog), (r, w))| FlowEdge {
                    program: prog.clone(),
                    file: f.to_string(),
                    dataset: p.to_string(),
                    bytes_read: *r,
                    bytes_written: *w,
                })
        })
        .collect()
}

/// What was read and about the processes.
#[derive(Debug, Clone, Default, Serialize)]
pub struct RunInfo {
    /// Input directories as given.
    pub inputs: Vec<String>,
    /// Trace files read.
    pub trace_files: u64,
    /// Objects files read.
    pub objects_files: u64,
    /// Meta files read.
    pub meta_files: u64,
    /// Trace records.
    pub records: u64,
    /// Objects rows.
    pub object_rows: u64,
    /// Processes seen in records or meta files.
    pub processes: usize,
    /// Distinct MPI ranks (≥ 0).
    pub ranks: usize,
    /// MPI world size from meta files (-1 when not MPI).
    pub world_size: i64,
    /// Processes that used MPI-IO ([`mpi_io_procs`]): only these are MPI ranks to the
    /// insights; a launcher's rank variable alone only numbers a process.
    pub mpi_io_processes: usize,
    /// Hosts from meta files.
    pub hosts: Vec<String>,
    /// HDF5 versions from meta files.
    pub hdf5_versions: Vec<String>,
    /// Trace levels from meta files.
    pub levels: Vec<String>,
    /// Executables from meta files.
    pub executables: Vec<String>,
    /// The programs that ran (file name of the executable), most HDF5 time first: a
    /// directory may hold the traces of a whole test suite. Renderers show the first few
    /// and count the rest.
    pub programs: Vec<ProgramRow>,
    /// Runs of programs ([`process_groups`]): processes are compared with each other only
    /// within one run of one program.
    pub runs: usize,
    /// First call start, ns since the epoch.
    pub first_ns: u64,
    /// Last call end, ns since the epoch.
    pub last_ns: u64,
    /// `last_ns − first_ns`.
    pub wall_ns: u64,
    /// Sum of all call durations, ns.
    pub call_ns: u64,
    /// Sum of (total − under) over all calls: time in h5prov and HDF5's VOL layer, ns.
    pub self_ns: u64,
    /// h5prov's own recording time from meta files, ns.
    pub recording_ns: u64,
    /// Records the connector dropped (meta files).
    pub dropped: u64,
    /// Trace write errors the connector counted (meta files); left out of the JSON when 0.
    #[serde(skip_serializing_if = "is_zero")]
    pub write_errors: u64,
    /// `stream=`: messages sent to the collector (meta files); absent without streaming.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream_sent: Option<u64>,
    /// `stream=`: messages made but not sent (collector slow, gone or absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream_dropped: Option<u64>,
    /// Processes whose meta has no `end_ns` (did not finish).
    pub unfinished: usize,
    /// Processes that ended without closing HDF5 (`_exit`, `os._exit`, `kill -9`) and
    /// lost nothing: every buffered record was recovered from their pending sidecar, and
    /// their metas were finished from the data. Left out of the JSON when 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unclosed: u64,
    /// Processes that ended without closing HDF5 whose objects rows (per-object summaries)
    /// were rebuilt from their trace records, their objects files left unread
    /// ([`crate::read::rebuild`]: no token, dims, layout or dataset storage columns). Left
    /// out of the JSON when 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub objects_rebuilt: u64,
    /// The rows so rebuilt (counted in `object_rows` too). Left out of the JSON when 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub rebuilt_object_rows: u64,
    /// Files with a truncated last line, as `path:line`.
    pub truncated: Vec<String>,
    /// Malformed rows skipped with `--lenient`.
    pub malformed_rows: u64,
    /// The first malformed row, as `path:line: reason`.
    pub first_malformed: Option<String>,
    /// Meta files that could not be parsed or have keys of the wrong type (both ignored),
    /// as `path: reason`.
    pub bad_metas: Vec<String>,
    /// Whether any process had collective metadata reads enabled.
    pub coll_metadata_reads: bool,
    /// Whether any process had collective metadata writes enabled.
    pub coll_metadata_writes: bool,
    /// Relative error of every quantile in the report (0.01 = 1 %).
    pub quantile_relative_error: f64,
    /// What was read from stream captures (`h5prov collect --out`); absent when none were.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream_capture: Option<StreamCaptureInfo>,
}

/// One program of the run, for the report's header.
#[derive(Debug, Clone, Serialize)]
pub struct ProgramRow {
    /// File name of the executable (empty when no meta file names it).
    pub program: String,
    /// Its processes.
    pub processes: usize,
    /// Its runs ([`process_groups`]).
    pub runs: usize,
    /// Time in HDF5 calls of its processes, ns.
    pub call_ns: u64,
}

/// A report of a stream capture: what it held, and what a stream does not carry.
#[derive(Debug, Clone, Default, Serialize)]
pub struct StreamCaptureInfo {
    /// Capture files read.
    pub files: u64,
    /// Messages in them.
    pub messages: u64,
    /// Processes with messages, each read as if it had a trace file.
    pub processes: u64,
    /// Of them, processes whose `hello` the capture lacks (no executable, level, ...).
    pub without_hello: u64,
    /// Trace columns the stream does not carry: empty in every record, so e.g. time in
    /// the under connector is unknown and `self_ns` is the whole call.
    pub missing_columns: Vec<String>,
    /// What else a trace directory has and a capture does not.
    pub missing: Vec<String>,
}

/// Hot-function statistics of one operation.
#[derive(Debug, Clone, Serialize)]
pub struct OpRow {
    /// Operation name.
    pub op: String,
    /// Its family.
    pub family: String,
    /// `data write`, `data read` or `metadata`.
    pub class: String,
    /// Calls.
    pub count: u64,
    /// Total time, ns.
    pub total_ns: u64,
    /// Share of all call time (0–1).
    pub share: f64,
    /// Mean, ns.
    pub mean_ns: u64,
    /// Minimum (exact), ns.
    pub min_ns: u64,
    /// 25th percentile (±1 %), ns.
    pub p25_ns: u64,
    /// Median (±1 %), ns.
    pub p50_ns: u64,
    /// 75th percentile, ns.
    pub p75_ns: u64,
    /// 95th percentile, ns.
    pub p95_ns: u64,
    /// 99th percentile, ns.
    pub p99_ns: u64,
    /// Maximum (exact), ns.
    pub max_ns: u64,
    /// Total minus time in the under connector, ns.
    pub self_ns: u64,
    /// Data bytes.
    pub bytes: u64,
    /// Failed calls.
    pub errors: u64,
    /// 1-based rank when sorted by total time.
    pub rank_by_time: usize,
    /// 1-based rank when sorted by call count.
    pub rank_by_count: usize,
}

/// Statistics of one operation family.
#[derive(Debug, Clone, Serialize)]
pub struct FamilyRow {
    /// `class.callback`.
    pub family: String,
    /// Distinct operations in it.
    pub ops: usize,
    /// Calls.
    pub count: u64,
    /// Total time, ns.
    pub total_ns: u64,
    /// Share of all call time.
    pub share: f64,
    /// Mean, ns.
    pub mean_ns: u64,
    /// Median, ns.
    pub p50_ns: u64,
    /// 99th percentile, ns.
    pub p99_ns: u64,
    /// Maximum, ns.
    pub max_ns: u64,
    /// Total minus under, ns.
    pub self_ns: u64,
}

/// One process.
#[derive(Debug, Clone, Serialize)]
pub struct RankRow {
    /// MPI rank (-1 when not MPI).
    pub rank: i64,
    /// Process id.
    pub pid: u32,
    /// Calls.
    pub count: u64,
    /// Time in calls, ns.
    pub total_ns: u64,
    /// Total minus under, ns.
    pub self_ns: u64,
    /// Bytes read.
    pub bytes_read: u64,
    /// Bytes written.
    pub bytes_written: u64,
    /// First call, ns since the epoch.
    pub first_ns: u64,
    /// Last call end.
    pub last_ns: u64,
    /// Operation with the most time in this process.
    pub top_op: String,
    /// The program it ran (file name of the executable; empty when unknown).
    pub program: String,
    /// The run of that program it belongs to, as named in findings (`imbalance`, or
    /// `small_io run 2 of 3`; [`process_groups`]). Processes are compared with each other
    /// only within one run: a trace directory may hold several programs' runs, and
    /// several runs of one program, which are not peers.
    pub group: String,
}

/// One operation in one process.
#[derive(Debug, Clone, Serialize)]
pub struct RankOpRow {
    /// MPI rank.
    pub rank: i64,
    /// Process id.
    pub pid: u32,
    /// Operation.
    pub op: String,
    /// Calls.
    pub count: u64,
    /// Total, ns.
    pub total_ns: u64,
    /// Mean, ns.
    pub mean_ns: u64,
    /// Longest call, ns.
    pub max_ns: u64,
    /// Data bytes.
    pub bytes: u64,
    /// This process's share of the operation's total time.
    pub share_of_op: f64,
}

/// One straggler call.
#[derive(Debug, Clone, Serialize)]
pub struct StragglerCall {
    /// MPI rank.
    pub rank: i64,
    /// Process id.
    pub pid: u32,
    /// Thread id.
    pub tid: u64,
    /// Sequence number in the process's trace.
    pub seq: u64,
    /// Start, ns since the epoch.
    pub start_ns: u64,
    /// Start relative to the run's first call, ns.
    pub offset_ns: u64,
    /// Duration, ns.
    pub total_ns: u64,
    /// Duration / median.
    pub x_median: f64,
    /// Modified Z-score.
    pub z: f64,
    /// Container file.
    pub file: String,
    /// Object path.
    pub path: String,
}

/// The straggler calls of one operation.
#[derive(Debug, Clone, Serialize)]
pub struct StragglerCalls {
    /// Operation.
    pub op: String,
    /// Calls of the operation.
    pub count: u64,
    /// Median duration, ns.
    pub median_ns: u64,
    /// Which spread measure scored the calls.
    pub spread: Spread,
    /// Durations above this are stragglers, ns.
    pub cutoff_ns: u64,
    /// Estimated number of straggler calls (from the sketch, ±1 % in duration).
    pub stragglers: u64,
    /// The slowest of them (at most the number kept per operation).
    pub calls: Vec<StragglerCall>,
}

/// A rank flagged as straggler of one operation.
#[derive(Debug, Clone, Serialize)]
pub struct RankOutlier {
    /// MPI rank.
    pub rank: i64,
    /// Process id.
    pub pid: u32,
    /// Its total time in the operation, ns.
    pub total_ns: u64,
    /// Its modified Z-score (0 when the sample cannot score).
    pub z: f64,
    /// Total / median of per-rank totals.
    pub x_median: f64,
    /// Which rules flagged it: `z-score` and/or `drishti` on its time, and `bytes` when its
    /// data volume in the operation is itself an outlier (joined by `+`, e.g. `z-score+bytes`).
    pub rule: String,
    /// Its data bytes in the operation.
    pub bytes: u64,
    /// Bytes / median of per-rank bytes (0 when the operation moves no data).
    pub bytes_x_median: f64,
}

impl RankOutlier {
    /// A rank with total `t` in an operation whose per-rank totals have statistics `rob`,
    /// flagged by `rule` (bytes left for the caller).
    fn scored(p: ProcKey, t: u64, rob: &Robust, rule: &str) -> Self {
        RankOutlier {
            rank: p.rank,
            pid: p.pid,
            total_ns: t,
            z: rob.score(t as f64),
            x_median: if rob.median > 0.0 {
                t as f64 / rob.median
            } else {
                0.0
            },
            rule: rule.to_string(),
            bytes: 0,
            bytes_x_median: 0.0,
        }
    }
}

/// Straggler ranks of one operation.
#[derive(Debug, Clone, Serialize)]
pub struct StragglerRanks {
    /// Operation.
    pub op: String,
    /// The run of one program whose processes were compared ([`RankRow::group`]).
    pub group: String,
    /// Processes that called it.
    pub ranks: usize,
    /// The operation's share of all call time.
    pub op_share: f64,
    /// Median per-rank total, ns.
    pub median_total_ns: u64,
    /// Spread measure used for the Z-scores.
    pub spread: Spread,
    /// Fastest rank total, ns.
    pub fastest_ns: u64,
    /// Slowest rank total, ns.
    pub slowest_ns: u64,
    /// (slowest − fastest) / sum of totals (Drishti's rule fires above the threshold).
    pub imbalance: f64,
    /// The flagged ranks.
    pub outliers: Vec<RankOutlier>,
}

/// A tail-heavy operation.
#[derive(Debug, Clone, Serialize)]
pub struct TailHeavy {
    /// Operation.
    pub op: String,
    /// Calls.
    pub count: u64,
    /// Median, ns.
    pub p50_ns: u64,
    /// 99th percentile, ns.
    pub p99_ns: u64,
    /// p99 / p50.
    pub ratio: f64,
}

/// One container file.
#[derive(Debug, Clone, Serialize)]
pub struct FileRow {
    /// File name.
    pub file: String,
    /// Processes that used it.
    pub procs: usize,
    /// Calls on it.
    pub calls: u64,
    /// Time in calls on it, ns.
    pub total_ns: u64,
    /// Time in metadata calls, ns.
    pub meta_ns: u64,
    /// File opens/creates.
    pub opens: u64,
    /// Data reads.
    pub reads: u64,
    /// Data writes.
    pub writes: u64,
    /// Bytes read.
    pub bytes_read: u64,
    /// Bytes written.
    pub bytes_written: u64,
    /// Achieved bandwidth of data calls, bytes/s.
    pub bandwidth_bps: f64,
    /// Datasets created (records, else summaries).
    pub datasets_created: u64,
    /// Datasets opened (summaries).
    pub datasets_opened: u64,
    /// Time in `dataset.close`, ns.
    pub dataset_close_ns: u64,
    /// Longest first-open-to-last-close of a process, ns (summaries).
    pub open_ns: u64,
    /// No writes and no creates were seen.
    pub read_only: bool,
    /// Access-size histogram (power-of-two buckets).
    pub sizes: Vec<u64>,
}

/// One dataset. There can be hundreds of thousands, all held at the analyzer's peak of
/// memory, so no field allocates unless it must.
#[derive(Debug, Clone, Serialize)]
pub struct DatasetRow {
    /// Container file (one string shared by the rows of the file's datasets).
    pub file: Arc<str>,
    /// Dataset path (inline when short, as paths nearly always are).
    pub path: CompactString,
    /// Layout (summaries).
    pub layout: CompactString,
    /// Dimensions (summaries).
    pub dims: CompactString,
    /// Element size (summaries).
    pub type_size: u64,
    /// Processes that used it.
    pub procs: usize,
    /// Opens and creates.
    pub opens: u64,
    /// Data reads.
    pub reads: u64,
    /// Data writes.
    pub writes: u64,
    /// Bytes read.
    pub bytes_read: u64,
    /// Bytes written.
    pub bytes_written: u64,
    /// Time in reads, ns.
    pub read_ns: u64,
    /// Time in writes, ns.
    pub write_ns: u64,
    /// Time in all calls on it, ns.
    pub total_ns: u64,
    /// (bytes read + written) / (read + write time), bytes/s.
    pub bandwidth_bps: f64,
    /// Independent transfers.
    pub ind_io: u64,
    /// Collective transfers.
    pub coll_io: u64,
    /// Requested collective, done independently.
    pub broken_coll_io: u64,
    /// Access sizes (bucket i = [2^(i−1), 2^i) bytes).
    pub sizes: crate::aggregate::SizeHist,
    /// `records`, `summary` or `records+summary`.
    pub source: &'static str,
}

#[cfg(test)]
impl DatasetRow {
    /// A dataset of `f.h5` only written, `writes` times for `bytes_written` bytes in 1 µs
    /// (1.5 µs in all), by one process that opened it once: the rules' unit tests' row.
    pub(crate) fn written(
        path: &str,
        layout: &str,
        dims: &str,
        type_size: u64,
        writes: u64,
        bytes_written: u64,
    ) -> DatasetRow {
        DatasetRow {
            file: "f.h5".into(),
            path: path.into(),
            layout: layout.into(),
            dims: dims.into(),
            type_size,
            writes,
            bytes_written,
            write_ns: 1000,
            procs: 1,
            opens: 1,
            reads: 0,
            bytes_read: 0,
            read_ns: 0,
            total_ns: 1500,
            bandwidth_bps: 0.0,
            ind_io: 0,
            coll_io: 0,
            broken_coll_io: 0,
            sizes: Default::default(),
            source: "objects",
        }
    }
}

/// Independent / collective breakdown.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Transfers {
    /// Independent transfers (summaries, else records).
    pub independent: u64,
    /// Collective transfers.
    pub collective: u64,
    /// Requested collective, not done collectively.
    pub broken_collective: u64,
    /// Records by requested → actual mode.
    pub by_mode: Vec<TransferMode>,
}

/// Records of one requested/actual transfer-mode pair.
#[derive(Debug, Clone, Serialize)]
pub struct TransferMode {
    /// Requested (`xfer`).
    pub requested: String,
    /// Actual (`xfer_actual`).
    pub actual: String,
    /// Data records.
    pub count: u64,
}

/// Access-size histograms for the whole run.
#[derive(Debug, Clone, Default, Serialize)]
pub struct AccessSizes {
    /// Reads per power-of-two bucket.
    pub reads: Vec<u64>,
    /// Writes per power-of-two bucket.
    pub writes: Vec<u64>,
}

fn is_zero(x: &u64) -> bool {
    *x == 0
}

fn r(x: f64) -> u64 {
    x.round() as u64
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

/// Bandwidth in bytes/s of `bytes` moved in `ns`.
pub fn bandwidth(bytes: u64, ns: u64) -> f64 {
    if ns == 0 {
        0.0
    } else {
        bytes as f64 * 1e9 / ns as f64
    }
}

fn uniq(v: impl Iterator<Item = String>) -> Vec<String> {
    v.filter(|s| !s.is_empty())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect()
}

pub(crate) fn run_info(agg: &Aggregate, inputs: &[String]) -> RunInfo {
    let d = &agg.diag;
    let mut procs: BTreeSet<ProcKey> = agg.procs.keys().copied().collect();
    procs.extend(agg.metas.iter().map(|m| ProcKey {
        rank: m.rank,
        pid: m.pid,
    }));
    let ranks = procs
        .iter()
        .filter(|p| p.rank >= 0)
        .map(|p| p.rank)
        .collect::<BTreeSet<_>>()
        .len();
    let ms = &agg.metas;
    RunInfo {
        inputs: inputs.to_vec(),
        trace_files: d.trace_files,
        objects_files: d.objects_files,
        meta_files: d.meta_files,
        records: d.records,
        object_rows: d.object_rows,
        processes: procs.len(),
        ranks,
        world_size: ms.iter().map(|m| m.world_size).max().unwrap_or(-1),
        mpi_io_processes: mpi_io_procs(agg).len(),
        hosts: uniq(ms.iter().map(|m| m.host.clone())),
        hdf5_versions: uniq(ms.iter().map(|m| m.hdf5_version.clone())),
        levels: uniq(ms.iter().map(|m| m.level.clone())),
        executables: uniq(ms.iter().map(|m| m.exe.clone())),
        programs: Vec::new(),
        runs: 0,
        first_ns: agg.first_ns,
        last_ns: agg.last_ns,
        wall_ns: agg.last_ns.saturating_sub(agg.first_ns),
        call_ns: agg.total_ns(),
        self_ns: agg.ops.values().map(|o| o.total_ns - o.under_ns).sum(),
        recording_ns: ms.iter().map(|m| m.self_ns).sum(),
        dropped: ms.iter().map(|m| m.dropped).sum(),
        write_errors: ms.iter().map(|m| m.write_errors).sum(),
        stream_sent: ms.iter().filter_map(|m| m.stream_sent).reduce(|a, b| a + b),
        stream_dropped: ms
            .iter()
            .filter_map(|m| m.stream_dropped)
            .reduce(|a, b| a + b),
        // A stream's processes have no end to miss.
        unfinished: ms
            .iter()
            .filter(|m| m.end_ns.is_none() && m.format != STREAM_FORMAT)
            .count(),
        unclosed: d.unclosed,
        objects_rebuilt: d.objects_rebuilt,
        rebuilt_object_rows: d.rebuilt_object_rows,
        truncated: d
            .truncated
            .iter()
            .map(|(p, l)| format!("{p}:{l}"))
            .collect(),
        malformed_rows: d.malformed_rows,
        first_malformed: d
            .first_malformed
            .as_ref()
            .map(|(p, l, r)| format!("{p}:{l}: {r}")),
        bad_metas: d
            .bad_metas
            .iter()
            .chain(&d.wrong_type_metas)
            .collect::<BTreeSet<_>>()
            .into_iter()
            .map(|(p, r)| format!("{p}: {r}"))
            .collect(),
        coll_metadata_reads: ms.iter().any(|m| m.coll_metadata_reads),
        coll_metadata_writes: ms.iter().any(|m| m.coll_metadata_writes),
        quantile_relative_error: RELATIVE_ACCURACY,
        stream_capture: (d.stream_files > 0).then(|| StreamCaptureInfo {
            files: d.stream_files,
            messages: d.stream_messages,
            processes: d.stream_processes,
            without_hello: d
                .stream_processes
                .saturating_sub(ms.iter().filter(|m| m.format == STREAM_FORMAT).count() as u64),
            missing_columns: not_carried().into_iter().map(String::from).collect(),
            missing: [
                "objects files (per-object summaries, dataset layouts)",
                "meta files (HDF5 version, command line, recording time, dropped records)",
                "interval messages (per-operation sums: not read)",
            ]
            .map(String::from)
            .to_vec(),
        }),
    }
}

pub(crate) fn op_rows(agg: &Aggregate, total: u64) -> Vec<OpRow> {
    let mut rows: Vec<OpRow> = agg
        .ops
        .iter()
        .map(|(name, s)| {
            let q = |p| r(s.sketch.quantile(p));
            OpRow {
                op: name.clone(),
                family: h5prov_format::op_family(name).to_string(),
                class: OpClass::of(name).name().to_string(),
                count: s.count,
                total_ns: s.total_ns,
                share: ratio(s.total_ns, total),
                mean_ns: s.total_ns / s.count.max(1),
                min_ns: s.sketch.min(),
                p25_ns: q(0.25),
                p50_ns: q(0.5),
                p75_ns: q(0.75),
                p95_ns: q(0.95),
                p99_ns: q(0.99),
                max_ns: s.max_ns,
                self_ns: s.total_ns - s.under_ns,
                bytes: s.bytes,
                errors: s.errors,
                rank_by_time: 0,
                rank_by_count: 0,
            }
        })
        .collect();
    rows.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.op.cmp(&b.op)));
    for (i, row) in rows.iter_mut().enumerate() {
        row.rank_by_count = i + 1;
    }
    rows.sort_by(|a, b| b.total_ns.cmp(&a.total_ns).then_with(|| a.op.cmp(&b.op)));
    for (i, row) in rows.iter_mut().enumerate() {
        row.rank_by_time = i + 1;
    }
    rows
}

pub(crate) fn family_rows(agg: &Aggregate, total: u64) -> Vec<FamilyRow> {
    let mut fam: BTreeMap<&str, (usize, u64, u64, u64, u64, LogSketch)> = BTreeMap::new();
    for (name, s) in &agg.ops {
        let e = fam.entry(h5prov_format::op_family(name)).or_default();
        e.0 += 1;
        e.1 += s.count;
        e.2 += s.total_ns;
        e.3 = e.3.max(s.max_ns);
        e.4 += s.total_ns - s.under_ns;
        e.5.merge(&s.sketch);
    }
    let mut rows: Vec<FamilyRow> = fam
        .into_iter()
        .map(|(f, (n, count, tot, max, selfns, sk))| FamilyRow {
            family: f.to_string(),
            ops: n,
            count,
            total_ns: tot,
            share: ratio(tot, total),
            mean_ns: tot / count.max(1),
            p50_ns: r(sk.quantile(0.5)),
            p99_ns: r(sk.quantile(0.99)),
            max_ns: max,
            self_ns: selfns,
        })
        .collect();
    rows.sort_by(|a, b| {
        b.total_ns
            .cmp(&a.total_ns)
            .then_with(|| a.family.cmp(&b.family))
    });
    rows
}

/// The processes that used MPI-IO: opened a file with the MPI-IO driver (objects files'
/// `mpio`), or, in traces without objects rows, made data calls in a run with transfers
/// in an MPI-IO mode (the connector records modes for MPI-IO files only).
pub fn mpi_io_procs(agg: &Aggregate) -> BTreeSet<ProcKey> {
    let mut procs: BTreeSet<ProcKey> = agg
        .file_access
        .values()
        .flat_map(|f| f.mpio_procs.iter().copied())
        .collect();
    // The fallback only without objects rows naming MPI-IO files: in a directory of
    // many programs, one MPI job's transfer modes do not make the others MPI ranks.
    if procs.is_empty() && agg.xfer.keys().any(|(req, _)| !req.is_empty()) {
        for (p, s) in &agg.procs {
            if s.ops.keys().any(|op| OpClass::of(op) != OpClass::Metadata) {
                procs.insert(*p);
            }
        }
    }
    procs
}

/// The program of each process (file name of its executable), from the metadata.
pub fn programs(agg: &Aggregate) -> BTreeMap<ProcKey, String> {
    agg.metas
        .iter()
        .map(|m| {
            (
                ProcKey {
                    rank: m.rank,
                    pid: m.pid,
                },
                program_name(&m.exe),
            )
        })
        .collect()
}

fn program_name(exe: &str) -> String {
    std::path::Path::new(exe)
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
}

/// The program and run of each process, as a label that names the group in findings.
///
/// A trace directory may hold many unrelated runs: a test suite's dozens of executables,
/// each run once or several times, next to an MPI job. Only the processes of one run of
/// one program are peers whose times and bytes can be compared. Processes are of one run
/// when they ran the same executable (file name) under the same launcher job id (empty
/// without a launcher), and then, in start order: processes with a launcher rank (and
/// the same world size) until a rank repeats or the world is complete — the four ranks
/// of one `mpirun` are one run even when one starts after another ended, a second
/// `mpirun` in the same batch job is another; processes without a rank while their
/// lifetimes (meta start to end, else first to last call) overlap — a program run three
/// times one after the other is three runs, and the workers a process forks or spawns
/// while it runs join its run.
///
/// The label is the program's name (`unknown program` without a meta file), followed by
/// ` run K of N` (by start time) when the program ran more than once.
pub fn process_groups(agg: &Aggregate) -> BTreeMap<ProcKey, String> {
    // (program, (job id, world size, or -1 without a rank)) → processes with their
    // lifetimes.
    type Life = (u64, u64, ProcKey);
    let mut by_prog: BTreeMap<String, BTreeMap<(&str, i64), Vec<Life>>> = BTreeMap::new();
    let mut seen: BTreeSet<ProcKey> = BTreeSet::new();
    let life = |p: &ProcKey, start: u64, end: Option<u64>| -> (u64, u64) {
        let s = agg.procs.get(p);
        let first = match (start, s.map_or(0, |s| s.first_ns)) {
            (0, f) => f,
            (a, 0) => a,
            (a, f) => a.min(f),
        };
        let last = end.unwrap_or(0).max(s.map_or(0, |s| s.last_ns));
        (first, last.max(first))
    };
    for m in &agg.metas {
        let p = ProcKey {
            rank: m.rank,
            pid: m.pid,
        };
        if !seen.insert(p) {
            continue;
        }
        let (a, b) = life(&p, m.start_ns, m.end_ns);
        by_prog
            .entry(program_name(&m.exe))
            .or_default()
            .entry((
                m.job_id.as_str(),
                if m.rank >= 0 { m.world_size } else { -1 },
            ))
            .or_default()
            .push((a, b, p));
    }
    for p in agg.procs.keys().filter(|p| !seen.contains(p)) {
        let (a, b) = life(p, 0, None);
        by_prog
            .entry(String::new())
            .or_default()
            .entry(("", if p.rank >= 0 { 0 } else { -1 }))
            .or_default()
            .push((a, b, *p));
    }
    let mut out = BTreeMap::new();
    for (prog, jobs) in by_prog {
        // Runs of this program: (start, processes).
        let mut runs: Vec<(u64, Vec<ProcKey>)> = Vec::new();
        for ((_, world), mut procs) in jobs {
            // By start: a ranked process joins the run before it unless it repeats one of
            // its ranks or the world is complete; one without a rank when it started
            // before that run's last process ended.
            procs.sort_unstable();
            let first = runs.len();
            let (mut end, mut ranks) = (0u64, BTreeSet::new());
            for (a, b, p) in procs {
                let joins = runs.len() > first
                    && if world == -1 {
                        a <= end
                    } else {
                        !ranks.contains(&p.rank) && (world <= 0 || (ranks.len() as i64) < world)
                    };
                if !joins {
                    runs.push((a, Vec::new()));
                    (end, ranks) = (0, BTreeSet::new());
                }
                runs.last_mut().expect("pushed").1.push(p);
                ranks.insert(p.rank);
                end = end.max(b);
            }
        }
        runs.sort_by_key(|r| r.0);
        let n = runs.len();
        let name = if prog.is_empty() {
            "unknown program".to_string()
        } else {
            prog
        };
        for (k, (_, procs)) in runs.into_iter().enumerate() {
            let label = if n > 1 {
                format!("{name} run {} of {n}", k + 1)
            } else {
                name.clone()
            };
            for p in procs {
                out.insert(p, label.clone());
            }
        }
    }
    out
}

/// The collective calls with each run's processes apart: calls are matched across the
/// processes that made the same collective calls on one file, and two runs of one MPI
/// program (or two programs) may use the same file name. Matched together, the second
/// run's ranks would be the first's "late arrivals".
pub(crate) fn collectives_by_run(
    c: crate::aggregate::collective::Collectives,
    groups: &BTreeMap<ProcKey, String>,
) -> crate::aggregate::collective::Collectives {
    if groups.values().collect::<BTreeSet<_>>().len() < 2 {
        return c;
    }
    let mut out = crate::aggregate::collective::Collectives::default();
    for ((op, file), procs) in c.calls {
        for (p, s) in procs {
            // The file part of the key only tells matches apart: the run goes with it.
            let g = groups.get(&p).map_or("", String::as_str);
            out.calls
                .entry((op.clone(), format!("{file}\u{1f}{g}")))
                .or_default()
                .insert(p, s);
        }
    }
    out
}

/// The programs of the run, most HDF5 time first, from [`process_groups`].
pub(crate) fn program_rows(agg: &Aggregate, groups: &BTreeMap<ProcKey, String>) -> Vec<ProgramRow> {
    let names = programs(agg);
    let mut rows: BTreeMap<&str, (BTreeSet<&str>, usize, u64)> = BTreeMap::new();
    for (p, g) in groups {
        let e = rows
            .entry(names.get(p).map_or("", String::as_str))
            .or_default();
        e.0.insert(g);
        e.1 += 1;
        e.2 += agg
            .procs
            .get(p)
            .map_or(0, |s| s.ops.values().map(|o| o.total_ns).sum::<u64>());
    }
    let mut rows: Vec<ProgramRow> = rows
        .into_iter()
        .map(|(program, (runs, processes, call_ns))| ProgramRow {
            program: program.to_string(),
            processes,
            runs: runs.len(),
            call_ns,
        })
        .collect();
    rows.sort_by(|a, b| {
        b.call_ns
            .cmp(&a.call_ns)
            .then_with(|| a.program.cmp(&b.program))
    });
    rows
}

pub(crate) fn rank_rows(
    agg: &Aggregate,
    groups: &BTreeMap<ProcKey, String>,
) -> (Vec<RankRow>, Vec<RankOpRow>) {
    let programs = programs(agg);
    let mut ranks = Vec::new();
    let mut rank_ops = Vec::new();
    for (p, s) in &agg.procs {
        let count = s.ops.values().map(|o| o.count).sum();
        let total = s.ops.values().map(|o| o.total_ns).sum();
        let top = s
            .ops
            .iter()
            .max_by(|a, b| a.1.total_ns.cmp(&b.1.total_ns).then_with(|| b.0.cmp(a.0)))
            .map(|(k, _)| k.clone())
            .unwrap_or_default();
        ranks.push(RankRow {
            rank: p.rank,
            pid: p.pid,
            count,
            total_ns: total,
            self_ns: s.ops.values().map(|o| o.total_ns - o.under_ns).sum(),
            bytes_read: s.bytes_read,
            bytes_written: s.bytes_written,
            first_ns: s.first_ns,
            last_ns: s.last_ns,
            top_op: top,
            program: programs.get(p).cloned().unwrap_or_default(),
            group: groups.get(p).cloned().unwrap_or_default(),
        });
        for (op, o) in &s.ops {
            let op_total = agg.ops.get(op).map_or(0, |x| x.total_ns);
            rank_ops.push(RankOpRow {
                rank: p.rank,
                pid: p.pid,
                op: op.clone(),
                count: o.count,
                total_ns: o.total_ns,
                mean_ns: o.total_ns / o.count.max(1),
                max_ns: o.max_ns,
                bytes: o.bytes,
                share_of_op: ratio(o.total_ns, op_total),
            });
        }
    }
    (ranks, rank_ops)
}

fn call_row(c: &SlowCall, median: f64, rob: &Robust, first: u64) -> StragglerCall {
    StragglerCall {
        rank: c.proc.rank,
        pid: c.proc.pid,
        tid: c.tid,
        seq: c.seq,
        start_ns: c.start_ns,
        offset_ns: c.start_ns.saturating_sub(first),
        total_ns: c.total_ns,
        x_median: if median > 0.0 {
            c.total_ns as f64 / median
        } else {
            0.0
        },
        z: rob.score(c.total_ns as f64),
        file: c.file.clone(),
        path: c.path.clone(),
    }
}

/// The robust scorer of an operation's call durations, from its sketch.
pub fn call_scorer(sk: &LogSketch) -> Robust {
    let m = sk.quantile(0.5);
    let (mad, mean_ad) = sk.deviations(m);
    Robust::from_parts(sk.count(), m, mad, mean_ad)
}

pub(crate) fn straggler_calls(agg: &Aggregate, th: &Thresholds, first: u64) -> Vec<StragglerCalls> {
    let mut out = Vec::new();
    for (op, s) in &agg.ops {
        let rob = call_scorer(&s.sketch);
        let cutoff = rob
            .cutoff(th.z_threshold)
            .max(rob.median * th.call_min_ratio);
        let calls: Vec<StragglerCall> = s
            .slow
            .calls
            .iter()
            .filter(|c| c.total_ns as f64 > cutoff)
            .map(|c| call_row(c, rob.median, &rob, first))
            .collect();
        if calls.is_empty() {
            continue;
        }
        out.push(StragglerCalls {
            op: op.clone(),
            count: s.count,
            median_ns: r(rob.median),
            spread: rob.spread,
            cutoff_ns: r(cutoff),
            stragglers: s.sketch.count_above(cutoff).max(calls.len() as u64),
            calls,
        });
    }
    // Worst offenders first: by how much time the listed stragglers cost over the median.
    out.sort_by(|a, b| {
        let cost = |x: &StragglerCalls| -> u64 {
            x.calls
                .iter()
                .map(|c| c.total_ns.saturating_sub(x.median_ns))
                .sum()
        };
        cost(b).cmp(&cost(a)).then_with(|| a.op.cmp(&b.op))
    });
    out
}

/// Finds straggler ranks among per-rank totals `(process, total_ns)` of one operation:
/// modified Z-score above the threshold and total at least `min_ratio` × the median, and
/// Drishti's rule
/// `(slowest − fastest) / sum > imbalance`, which flags the slowest rank. Returns the
/// scorer, the imbalance, and the outliers. One process: nothing. Two processes: only
/// Drishti's rule can fire (their Z-scores are ±0.6745). All equal: nothing.
pub fn rank_outliers(
    totals: &[(ProcKey, u64)],
    z_threshold: f64,
    min_ratio: f64,
    imbalance_threshold: f64,
) -> (Robust, f64, Vec<RankOutlier>) {
    let vals: Vec<f64> = totals.iter().map(|t| t.1 as f64).collect();
    let rob = Robust::of(&vals);
    if totals.len() < 2 {
        return (rob, 0.0, Vec::new());
    }
    let sum: u64 = totals.iter().map(|t| t.1).sum();
    let slow = totals
        .iter()
        .max_by(|a, b| a.1.cmp(&b.1).then_with(|| b.0.cmp(&a.0)))
        .expect("n>=2");
    let fast = totals.iter().map(|t| t.1).min().expect("n>=2");
    let imbalance = ratio(slow.1 - fast, sum);
    let drishti = imbalance > imbalance_threshold;
    let mut out = Vec::new();
    for &(p, t) in totals {
        let z = rob.score(t as f64);
        let by_z = z > z_threshold && t as f64 >= rob.median * min_ratio;
        let by_d = drishti && p == slow.0;
        if by_z || by_d {
            let rule = match (by_z, by_d) {
                (true, true) => "z-score+drishti",
                (true, false) => "z-score",
                _ => "drishti",
            };
            out.push(RankOutlier::scored(p, t, &rob, rule));
        }
    }
    out.sort_by(|a, b| {
        b.total_ns
            .cmp(&a.total_ns)
            .then_with(|| (a.rank, a.pid).cmp(&(b.rank, b.pid)))
    });
    (rob, imbalance, out)
}

/// Adds the ranks whose data volume in an operation is an outlier (same rules as for time,
/// applied to per-rank bytes) to the time outliers: a rank that moves ten times the data of
/// the others straggles on a busy file system even when a page cache hides it in this run.
fn add_byte_outliers(
    outliers: &mut Vec<RankOutlier>,
    times: &[(ProcKey, u64)],
    bytes: &[(ProcKey, u64)],
    th: &Thresholds,
) {
    let b: Vec<f64> = bytes.iter().map(|t| t.1 as f64).collect();
    let median = Robust::of(&b).median;
    for o in outliers.iter_mut() {
        let mine = bytes
            .iter()
            .find(|(p, _)| p.rank == o.rank && p.pid == o.pid)
            .map_or(0, |t| t.1);
        o.bytes = mine;
        o.bytes_x_median = if median > 0.0 {
            mine as f64 / median
        } else {
            0.0
        };
    }
    if bytes.iter().all(|t| t.1 == 0) {
        return;
    }
    let (_, _, by_bytes) = rank_outliers(bytes, th.z_threshold, th.rank_min_ratio, th.imbalance);
    let tv: Vec<f64> = times.iter().map(|t| t.1 as f64).collect();
    let time_stats = Robust::of(&tv);
    for bo in by_bytes {
        if let Some(o) = outliers
            .iter_mut()
            .find(|o| o.rank == bo.rank && o.pid == bo.pid)
        {
            o.rule.push_str("+bytes");
            continue;
        }
        let t = times
            .iter()
            .find(|(p, _)| p.rank == bo.rank && p.pid == bo.pid)
            .map_or(0, |t| t.1);
        let proc = ProcKey {
            rank: bo.rank,
            pid: bo.pid,
        };
        let mut o = RankOutlier::scored(proc, t, &time_stats, "bytes");
        o.bytes = bo.total_ns;
        o.bytes_x_median = bo.x_median;
        outliers.push(o);
    }
}

/// Names the late arrivals of collective operations as straggler ranks (rule
/// `late-arrival`): at a collective call the late rank's own call is short while the others
/// wait, so the time rules alone point at the waiting ranks.
pub(crate) fn add_late_arrivals(
    out: &mut Vec<StragglerRanks>,
    skew: &[CollectiveSkew],
    agg: &Aggregate,
    groups: &BTreeMap<ProcKey, String>,
    total: u64,
) {
    for s in skew {
        let Some(late) = &s.straggler else { continue };
        let proc = ProcKey {
            rank: late.rank,
            pid: late.pid,
        };
        // The late rank's peers: the processes of its run.
        let group = groups.get(&proc).map_or("", String::as_str);
        let mut totals: Vec<(ProcKey, u64)> = agg
            .procs
            .iter()
            .filter(|(p, _)| groups.get(p).map_or("", String::as_str) == group)
            .filter_map(|(p, ps)| ps.ops.get(&s.op).map(|o| (*p, o.total_ns)))
            .collect();
        totals.sort_unstable();
        let vals: Vec<f64> = totals.iter().map(|t| t.1 as f64).collect();
        let rob = Robust::of(&vals);
        let mine = totals.iter().find(|t| t.0 == proc).map_or(0, |t| t.1);
        let row = match out
            .iter_mut()
            .position(|r| r.op == s.op && r.group == group)
        {
            Some(i) => &mut out[i],
            None => {
                let op_total: u64 = totals.iter().map(|t| t.1).sum();
                out.push(StragglerRanks {
                    op: s.op.clone(),
                    group: group.to_string(),
                    ranks: totals.len(),
                    op_share: ratio(op_total, total),
                    median_total_ns: r(rob.median),
                    spread: rob.spread,
                    fastest_ns: totals.iter().map(|t| t.1).min().unwrap_or(0),
                    slowest_ns: totals.iter().map(|t| t.1).max().unwrap_or(0),
                    imbalance: 0.0,
                    outliers: Vec::new(),
                });
                out.last_mut().expect("pushed")
            }
        };
        match row
            .outliers
            .iter_mut()
            .find(|o| o.rank == late.rank && o.pid == late.pid)
        {
            Some(o) => o.rule.push_str("+late-arrival"),
            None => row
                .outliers
                .insert(0, RankOutlier::scored(proc, mine, &rob, "late-arrival")),
        }
    }
    sort_straggler_ranks(out);
}

/// Most time first, then by operation and group.
fn sort_straggler_ranks(out: &mut [StragglerRanks]) {
    out.sort_by(|a, b| {
        b.op_share
            .total_cmp(&a.op_share)
            .then_with(|| a.op.cmp(&b.op))
            .then_with(|| a.group.cmp(&b.group))
    });
}

pub(crate) fn straggler_ranks(
    agg: &Aggregate,
    groups: &BTreeMap<ProcKey, String>,
    th: &Thresholds,
    total: u64,
) -> Vec<StragglerRanks> {
    type PerRank = Vec<(ProcKey, u64)>;
    // Per run of a program and operation: only processes of one run are peers.
    let mut per_op: BTreeMap<(&str, &str), (PerRank, PerRank)> = BTreeMap::new();
    for (p, s) in &agg.procs {
        let group = groups.get(p).map_or("", String::as_str);
        for (op, o) in &s.ops {
            let e = per_op.entry((group, op)).or_default();
            e.0.push((*p, o.total_ns));
            e.1.push((*p, o.bytes));
        }
    }
    let mut out = Vec::new();
    for ((group, op), (totals, bytes)) in per_op {
        if totals.len() < 2 {
            continue;
        }
        let (rob, imbalance, mut outliers) =
            rank_outliers(&totals, th.z_threshold, th.rank_min_ratio, th.imbalance);
        add_byte_outliers(&mut outliers, &totals, &bytes, th);
        if outliers.is_empty() {
            continue;
        }
        // The share of the run's HDF5 time that this group spends in the operation.
        let op_total: u64 = totals.iter().map(|t| t.1).sum();
        out.push(StragglerRanks {
            op: op.to_string(),
            group: group.to_string(),
            ranks: totals.len(),
            op_share: ratio(op_total, total),
            median_total_ns: r(rob.median),
            spread: rob.spread,
            fastest_ns: totals.iter().map(|t| t.1).min().unwrap_or(0),
            slowest_ns: totals.iter().map(|t| t.1).max().unwrap_or(0),
            imbalance,
            outliers,
        });
    }
    sort_straggler_ranks(&mut out);
    out
}

pub(crate) fn tail_heavy(ops: &[OpRow], th: &Thresholds) -> Vec<TailHeavy> {
    let mut v: Vec<TailHeavy> = ops
        .iter()
        .filter(|o| o.count >= th.tail_min_calls && o.p50_ns > 0)
        .map(|o| TailHeavy {
            op: o.op.clone(),
            count: o.count,
            p50_ns: o.p50_ns,
            p99_ns: o.p99_ns,
            ratio: o.p99_ns as f64 / o.p50_ns as f64,
        })
        .filter(|t| t.ratio >= th.tail_ratio)
        .collect();
    v.sort_by(|a, b| b.ratio.total_cmp(&a.ratio).then_with(|| a.op.cmp(&b.op)));
    v
}

/// The dataset rows, from the object tables of the records (`objects`) and of the objects
/// files (`summaries`), most time first. Each container file's tables are freed once its
/// rows are made: on object-heavy traces the tables and the rows were the analyzer's peak
/// of memory together.
pub(crate) fn dataset_rows(
    mut objects: BTreeMap<String, ObjectMap<ObjStats>>,
    mut summaries: BTreeMap<String, ObjectMap<SummaryStats>>,
) -> Vec<DatasetRow> {
    // Both maps are sorted by (kind, path): per container file, join their dataset entries
    // in one pass (no key allocation or search per dataset; there can be hundreds of
    // thousands). Counted first, so the rows are built once into a vector of the right
    // size (collecting them in parallel held them twice, in the threads' lists and in the
    // result, at the analyzer's peak of memory).
    use crate::aggregate::join_sorted;
    fn joined<'a>(
        recs: Option<&'a ObjectMap<ObjStats>>,
        sums: Option<&'a ObjectMap<SummaryStats>>,
    ) -> impl Iterator<Item = (&'a str, Option<&'a ObjStats>, Option<&'a SummaryStats>)> {
        join_sorted(
            recs.into_iter().flat_map(|m| m.of_kind("dataset")),
            sums.into_iter().flat_map(|m| m.of_kind("dataset")),
        )
    }
    let files: BTreeSet<String> = objects.keys().chain(summaries.keys()).cloned().collect();
    let n: usize = files
        .iter()
        .map(|f| joined(objects.get(f), summaries.get(f)).count())
        .sum();
    let mut rows: Vec<DatasetRow> = Vec::with_capacity(n);
    for f in files {
        let (recs, sums) = (objects.remove(&f), summaries.remove(&f));
        let name: Arc<str> = Arc::from(f);
        rows.extend(
            joined(recs.as_ref(), sums.as_ref())
                .map(|(p, rec, sum)| dataset_row(&name, p, rec, sum)),
        );
    }
    // Most time first, then by file and path: the join made them in (file, path) order, so
    // sort small (time, index) pairs, then move each row once, in place (no second vector
    // of rows: there can be hundreds of thousands).
    let mut order: Vec<(std::cmp::Reverse<u64>, u32)> = rows
        .iter()
        .enumerate()
        .map(|(i, r)| (std::cmp::Reverse(r.total_ns), i as u32))
        .collect();
    order.sort_unstable();
    let order: Vec<usize> = order.into_iter().map(|(_, i)| i as usize).collect();
    apply_order(&mut rows, &order);
    rows
}

/// The row of one dataset from what its records and its summary rows say.
fn dataset_row(
    f: &Arc<str>,
    p: &str,
    rec: Option<&crate::aggregate::ObjStats>,
    sum: Option<&crate::aggregate::SummaryStats>,
) -> DatasetRow {
    let mut row = DatasetRow {
        file: Arc::clone(f),
        path: p.into(),
        layout: CompactString::default(),
        dims: CompactString::default(),
        type_size: 0,
        procs: 0,
        opens: 0,
        reads: 0,
        writes: 0,
        bytes_read: 0,
        bytes_written: 0,
        read_ns: 0,
        write_ns: 0,
        total_ns: 0,
        bandwidth_bps: 0.0,
        ind_io: 0,
        coll_io: 0,
        broken_coll_io: 0,
        sizes: Default::default(),
        source: match (rec.is_some(), sum.is_some()) {
            (true, true) => "records+summary",
            (true, false) => "records",
            _ => "summary",
        },
    };
    if let Some(s) = sum {
        let o = &s.sum;
        row.layout = o.layout.clone();
        row.dims = o.dims.clone();
        row.type_size = o.type_size;
        row.procs = s.rows as usize;
        row.opens = o.opens;
        row.reads = o.reads;
        row.writes = o.writes;
        row.bytes_read = o.bytes_read;
        row.bytes_written = o.bytes_written;
        row.read_ns = o.read_ns;
        row.write_ns = o.write_ns;
        row.total_ns = o.read_ns + o.write_ns;
        row.ind_io = o.ind_io;
        row.coll_io = o.coll_io;
        row.broken_coll_io = o.broken_coll_io;
    }
    if let Some(o) = rec {
        row.procs = o.procs.len();
        row.opens = o.opens;
        row.reads = o.reads;
        row.writes = o.writes;
        row.bytes_read = o.bytes_read;
        row.bytes_written = o.bytes_written;
        row.read_ns = o.read_ns;
        row.write_ns = o.write_ns;
        row.total_ns = o.total_ns;
        row.sizes = o.sizes.clone();
        if sum.is_none() || o.ind_io + o.coll_io + o.broken_coll_io > 0 {
            row.ind_io = o.ind_io;
            row.coll_io = o.coll_io;
            row.broken_coll_io = o.broken_coll_io;
        }
    }
    row.bandwidth_bps = bandwidth(
        row.bytes_read + row.bytes_written,
        row.read_ns + row.write_ns,
    );
    row
}

/// Reorders `v` in place so that `v[i]` becomes the old `v[order[i]]` (`order` is a
/// permutation): each cycle of the permutation is walked once with swaps.
fn apply_order<T>(v: &mut [T], order: &[usize]) {
    let mut done = vec![false; v.len()];
    for start in 0..v.len() {
        let mut i = start;
        while !done[i] {
            done[i] = true;
            let j = order[i];
            if j == start {
                break;
            }
            v.swap(i, j);
            i = j;
        }
    }
}

pub(crate) fn file_rows(agg: &Aggregate) -> Vec<FileRow> {
    // The "file" summary rows of each container file, gathered once.
    let mut file_sums: BTreeMap<&str, Vec<&crate::aggregate::SummaryStats>> = BTreeMap::new();
    for (f, m) in &agg.summaries {
        let sums: Vec<_> = m.of_kind("file").map(|(_, v)| v).collect();
        if !f.is_empty() && !sums.is_empty() {
            file_sums.insert(f, sums);
        }
    }
    let mut names: BTreeSet<&str> = agg.files.keys().map(String::as_str).collect();
    names.extend(file_sums.keys().copied());
    let mut rows = Vec::new();
    for name in names {
        let rec = agg.files.get(name);
        let sums = file_sums.get(name).map_or(&[][..], Vec::as_slice);
        let s_sum =
            |g: fn(&crate::aggregate::SummaryStats) -> u64| sums.iter().map(|s| g(s)).sum::<u64>();
        let mut row = FileRow {
            file: name.to_string(),
            procs: sums.iter().map(|s| s.rows as usize).sum(),
            calls: s_sum(|s| s.sum.accesses),
            total_ns: s_sum(|s| s.sum.read_ns + s.sum.write_ns),
            meta_ns: 0,
            opens: s_sum(|s| s.sum.opens),
            reads: s_sum(|s| s.sum.reads),
            writes: s_sum(|s| s.sum.writes),
            bytes_read: s_sum(|s| s.sum.bytes_read),
            bytes_written: s_sum(|s| s.sum.bytes_written),
            bandwidth_bps: 0.0,
            datasets_created: s_sum(|s| s.sum.dsets_created),
            datasets_opened: s_sum(|s| s.sum.dsets_opened),
            dataset_close_ns: 0,
            open_ns: sums.iter().map(|s| s.max_open_ns).max().unwrap_or(0),
            read_only: false,
            sizes: Vec::new(),
        };
        let (mut read_ns, mut write_ns) = (s_sum(|s| s.sum.read_ns), s_sum(|s| s.sum.write_ns));
        if let Some(f) = rec {
            row.procs = f.procs.len();
            row.calls = f.calls;
            row.total_ns = f.total_ns;
            row.meta_ns = f.meta_ns;
            row.opens = f.file_opens;
            row.reads = f.reads;
            row.writes = f.writes;
            row.bytes_read = f.bytes_read;
            row.bytes_written = f.bytes_written;
            row.dataset_close_ns = f.dset_close_ns;
            row.datasets_created = row.datasets_created.max(f.dset_creates);
            row.sizes = f.sizes.counts();
            read_ns = f.read_ns;
            write_ns = f.write_ns;
        }
        row.read_only = row.writes == 0 && row.bytes_written == 0 && row.datasets_created == 0;
        row.bandwidth_bps = bandwidth(row.bytes_read + row.bytes_written, read_ns + write_ns);
        rows.push(row);
    }
    rows.sort_by(|a, b| {
        b.total_ns
            .cmp(&a.total_ns)
            .then_with(|| a.file.cmp(&b.file))
    });
    rows
}

pub(crate) fn transfers(agg: &Aggregate) -> Transfers {
    let mut t = Transfers::default();
    let sums: Vec<_> = crate::aggregate::objects_of_kind(&agg.summaries, "dataset").collect();
    let from_summary: (u64, u64, u64) = sums.iter().fold((0, 0, 0), |a, (_, s)| {
        (
            a.0 + s.sum.ind_io,
            a.1 + s.sum.coll_io,
            a.2 + s.sum.broken_coll_io,
        )
    });
    if from_summary != (0, 0, 0) {
        (t.independent, t.collective, t.broken_collective) = from_summary;
    } else {
        for ((req, act), n) in &agg.xfer {
            let actual = if act.is_empty() { req } else { act };
            if actual == "collective" {
                t.collective += n;
            } else if req == "collective" {
                t.broken_collective += n;
            } else if actual == "independent" {
                t.independent += n;
            }
        }
    }
    t.by_mode = agg
        .xfer
        .iter()
        .map(|((a, b), n)| TransferMode {
            requested: a.clone(),
            actual: b.clone(),
            count: *n,
        })
        .collect();
    t
}

/// Size of a power-of-two access-size bucket as a label (`<1K`, `1K-2K`, ...).
pub fn bucket_label(i: usize) -> String {
    if i == 0 {
        return "0".into();
    }
    let lo = 1u64 << (i - 1);
    crate::units::fmt_bytes_short(lo)
}

#[cfg(test)]
mod tests {

    #[test]
    fn apply_order_moves_each_element_where_the_order_says() {
        for order in [
            vec![],
            vec![0],
            vec![1, 0],
            vec![2, 0, 1],
            vec![3, 1, 4, 0, 2, 5],
            (0..50).rev().collect::<Vec<usize>>(),
            (0..50).map(|i| (i * 7) % 50).collect(),
        ] {
            let old: Vec<String> = (0..order.len()).map(|i| format!("r{i}")).collect();
            let mut v = old.clone();
            super::apply_order(&mut v, &order);
            let want: Vec<String> = order.iter().map(|&i| old[i].clone()).collect();
            assert_eq!(v, want, "{order:?}");
        }
    }

    use super::*;

    fn p(r: i64) -> ProcKey {
        ProcKey {
            rank: r,
            pid: 100 + r as u32,
        }
    }

    /// An aggregate with one meta per `(rank, pid, exe, job, start, end)`.
    fn metas(procs: &[(i64, u32, &str, &str, u64, u64)]) -> Aggregate {
        let mut agg = Aggregate::default();
        for &(rank, pid, exe, job, start, end) in procs {
            agg.metas.push(h5prov_format::ProcessMeta {
                rank,
                pid,
                exe: exe.into(),
                job_id: job.into(),
                start_ns: start,
                end_ns: Some(end),
                ..Default::default()
            });
        }
        agg
    }

    fn group(g: &BTreeMap<ProcKey, String>, rank: i64, pid: u32) -> &str {
        g[&ProcKey { rank, pid }].as_str()
    }

    #[test]
    fn runs_of_programs_are_told_apart() {
        let agg = metas(&[
            // `t` run three times, one after the other.
            (-1, 1, "/b/t", "", 100, 200),
            (-1, 2, "/b/t", "", 300, 400),
            (-1, 3, "/b/t", "", 500, 600),
            // `u`, with a worker it spawned while it ran: one run.
            (-1, 4, "/c/u", "", 150, 450),
            (-1, 5, "/c/u", "", 200, 300),
            // Four ranks of one mpirun, then two ranks of a second one in the same job.
            (0, 10, "/m/p", "j", 1000, 2000),
            (1, 11, "/m/p", "j", 1001, 1990),
            (2, 12, "/m/p", "j", 1002, 2010),
            (3, 13, "/m/p", "j", 1003, 2005),
            (0, 20, "/m/p", "j", 1500, 2500),
            (1, 21, "/m/p", "j", 1501, 2400),
        ]);
        let g = process_groups(&agg);
        assert_eq!(group(&g, -1, 1), "t run 1 of 3");
        assert_eq!(group(&g, -1, 2), "t run 2 of 3");
        assert_eq!(group(&g, -1, 3), "t run 3 of 3");
        assert_eq!(group(&g, -1, 4), "u");
        assert_eq!(group(&g, -1, 5), "u");
        for pid in 10..14 {
            assert_eq!(group(&g, (pid - 10) as i64, pid), "p run 1 of 2");
        }
        // Overlapping in time but repeating ranks 0 and 1: another mpirun.
        assert_eq!(group(&g, 0, 20), "p run 2 of 2");
        assert_eq!(group(&g, 1, 21), "p run 2 of 2");
        let rows = program_rows(&agg, &g);
        let summary: Vec<(&str, usize, usize)> = rows
            .iter()
            .map(|r| (r.program.as_str(), r.processes, r.runs))
            .collect();
        assert_eq!(summary, [("p", 6, 2), ("t", 3, 3), ("u", 2, 1)]);
    }

    #[test]
    fn a_launchers_ranks_are_one_run_even_one_after_the_other() {
        // Rank 3 started after the others ended (a loaded machine), then a second launch.
        let mut agg = metas(&[
            (0, 1, "/m/p", "", 100, 200),
            (1, 2, "/m/p", "", 110, 210),
            (2, 3, "/m/p", "", 120, 220),
            (3, 4, "/m/p", "", 300, 400),
            (0, 5, "/m/p", "", 500, 600),
            (1, 6, "/m/p", "", 510, 600),
        ]);
        for m in &mut agg.metas {
            m.world_size = 4;
        }
        let g = process_groups(&agg);
        for pid in 1..5 {
            assert_eq!(group(&g, (pid - 1) as i64, pid), "p run 1 of 2");
        }
        assert_eq!(group(&g, 0, 5), "p run 2 of 2");
        assert_eq!(group(&g, 1, 6), "p run 2 of 2");
    }

    #[test]
    fn the_same_program_under_two_job_ids_is_two_runs() {
        let agg = metas(&[
            (0, 1, "/m/p", "a", 100, 200),
            (1, 2, "/m/p", "a", 100, 200),
            (0, 3, "/m/p", "b", 100, 200),
            (1, 4, "/m/p", "b", 100, 200),
        ]);
        let g = process_groups(&agg);
        assert_eq!(group(&g, 0, 1), group(&g, 1, 2));
        assert_eq!(group(&g, 0, 3), group(&g, 1, 4));
        assert_ne!(group(&g, 0, 1), group(&g, 0, 3));
    }

    #[test]
    fn one_rank_no_stragglers() {
        let (_, imb, out) = rank_outliers(&[(p(0), 100)], 3.5, 1.2, 0.15);
        assert!(out.is_empty());
        assert_eq!(imb, 0.0);
    }

    #[test]
    fn two_ranks_only_drishti() {
        let (rob, imb, out) = rank_outliers(&[(p(0), 100), (p(1), 1000)], 3.5, 1.2, 0.15);
        assert_eq!(rob.spread, Spread::TooFew);
        assert!((imb - 900.0 / 1100.0).abs() < 1e-12);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].rank, 1);
        assert_eq!(out[0].rule, "drishti");
        // Balanced pair: nothing.
        let (_, _, out) = rank_outliers(&[(p(0), 100), (p(1), 110)], 3.5, 1.2, 0.15);
        assert!(out.is_empty());
    }

    #[test]
    fn all_equal_ranks() {
        let t: Vec<_> = (0..8).map(|i| (p(i), 500)).collect();
        let (rob, imb, out) = rank_outliers(&t, 3.5, 1.2, 0.15);
        assert_eq!(rob.spread, Spread::AllEqual);
        assert_eq!(imb, 0.0);
        assert!(out.is_empty());
    }

    #[test]
    fn mad_zero_ranks_use_mean_ad() {
        let mut t: Vec<_> = (0..7).map(|i| (p(i), 1000)).collect();
        t.push((p(7), 10_000));
        let (rob, _, out) = rank_outliers(&t, 3.5, 1.2, 0.15);
        assert_eq!(rob.spread, Spread::MeanAd);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].rank, 7);
        assert_eq!(out[0].rule, "z-score+drishti");
    }

    #[test]
    fn rank3_of_4_with_10x() {
        let t = vec![(p(0), 1000), (p(1), 1100), (p(2), 1050), (p(3), 10_500)];
        let (_, _, out) = rank_outliers(&t, 3.5, 1.2, 0.15);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].rank, 3);
        assert_eq!(out[0].rule, "z-score+drishti");
    }

    #[test]
    fn call_scorer_mad_zero_and_equal() {
        let mut s = LogSketch::new();
        for _ in 0..100 {
            s.add(1000);
        }
        assert_eq!(call_scorer(&s).spread, Spread::AllEqual);
        s.add(50_000);
        let rob = call_scorer(&s);
        assert_eq!(rob.spread, Spread::MeanAd);
        assert!(rob.score(50_000.0) > 3.5);
        assert!(rob.score(1000.0) < 3.5);
    }

    #[test]
    fn ten_times_the_bytes_in_equal_time_is_named_by_bytes() {
        // Collective write: every rank waits for the heavy one, so the times are equal.
        let times = vec![(p(0), 5000), (p(1), 5010), (p(2), 4990), (p(3), 5005)];
        let bytes = vec![(p(0), 100), (p(1), 100), (p(2), 100), (p(3), 1000)];
        let th = Thresholds::default();
        let (_, _, mut out) =
            rank_outliers(&times, th.z_threshold, th.rank_min_ratio, th.imbalance);
        assert!(out.is_empty());
        add_byte_outliers(&mut out, &times, &bytes, &th);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].rank, 3);
        assert_eq!(out[0].rule, "bytes");
        assert_eq!(out[0].bytes, 1000);
        assert!((out[0].bytes_x_median - 10.0).abs() < 1e-9);
        assert_eq!(out[0].total_ns, 5005);
    }

    #[test]
    fn slow_and_heavy_rank_gets_both_rules_and_no_data_adds_nothing() {
        let times = vec![(p(0), 1000), (p(1), 1100), (p(2), 1050), (p(3), 10_500)];
        let bytes = vec![(p(0), 10), (p(1), 10), (p(2), 10), (p(3), 100)];
        let th = Thresholds::default();
        let (_, _, mut out) =
            rank_outliers(&times, th.z_threshold, th.rank_min_ratio, th.imbalance);
        add_byte_outliers(&mut out, &times, &bytes, &th);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].rule, "z-score+drishti+bytes");
        let zero = vec![(p(0), 0), (p(1), 0), (p(2), 0), (p(3), 0)];
        let (_, _, mut out) =
            rank_outliers(&times, th.z_threshold, th.rank_min_ratio, th.imbalance);
        add_byte_outliers(&mut out, &times, &zero, &th);
        assert_eq!(out[0].rule, "z-score+drishti");
    }
}
