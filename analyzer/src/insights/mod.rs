//! HDF5-level insights: findings with a severity and a recommendation. Every threshold is
//! a named constant, carried in [`Thresholds`] so flags can override it.

pub mod costmodel;
pub mod dataset;
pub mod mpi;

pub(crate) use crate::aggregate::dataset_io::dims_elems;
use crate::aggregate::dataset_io::{DatasetIo, DatasetsIo};
use crate::aggregate::{Aggregate, SizeHist};
pub use crate::analysis::findings::{
    severity_for_share, Evidence, Insight, Level, Quantity, Thresholds, CALL_MIN_RATIO,
    CHURN_OPENS, CLOSE_FRACTION, CLOSE_MIN_SHARE, HOT_OP_SHARE, IMBALANCE, METADATA_FRACTION,
    MIN_DATA_ACCESSES, MIN_OP_SHARE, PARTIAL_WRITES, RANK_MIN_RATIO, SHARE_HIGH, SHARE_WARN,
    SMALL_IO_BYTES, SMALL_IO_FRACTION, TAIL_MIN_CALLS, TAIL_RATIO, TINY_DATASET_BYTES,
    TINY_DATASET_COUNT,
};
use crate::analysis::Report;
use crate::units::{fmt_ns, pct};

pub(crate) fn ins(level: Level, code: &str, title: String, detail: String, rec: &str) -> Insight {
    Insight {
        level,
        code: code.into(),
        title,
        detail,
        recommendation: rec.into(),
        evidence: Evidence::new(),
        items: Vec::new(),
    }
}

/// The report's dataset rows joined with their dataset facts, made once for every rule
/// that reads both (a two-level map lookup by file and path per row and per rule was most
/// of the detection's time on runs of hundreds of thousands of datasets).
pub(crate) struct RowFacts<'a> {
    /// `(row index, facts)` of the rows that have facts, sorted by file, then path.
    pub(crate) by_key: Vec<(u32, &'a DatasetIo)>,
    /// The facts of each row, by row index.
    pub(crate) by_row: Vec<Option<&'a DatasetIo>>,
}

impl<'a> RowFacts<'a> {
    /// Sorts the row numbers by (file, path) once and merge-joins them with the facts,
    /// which are stored in that order.
    pub(crate) fn new(rep: &'a Report, dio: &'a DatasetsIo) -> RowFacts<'a> {
        let key = |i: u32| {
            let d = &rep.datasets[i as usize];
            (&*d.file, d.path.as_str())
        };
        let mut rows: Vec<u32> = (0..rep.datasets.len() as u32).collect();
        rows.sort_unstable_by(|a, b| key(*a).cmp(&key(*b)));
        let by_key: Vec<(u32, &DatasetIo)> =
            crate::aggregate::join_sorted(rows.into_iter().map(|i| (key(i), i)), dio.iter())
                .filter_map(|(_, i, io)| Some((i?, io?)))
                .collect();
        let mut by_row = vec![None; rep.datasets.len()];
        for &(i, io) in &by_key {
            by_row[i as usize] = Some(io);
        }
        RowFacts { by_key, by_row }
    }
}

/// One object a finding names: the time of its calls that the finding is about, its line
/// of the finding's `detail`, and that line's evidence.
pub(crate) type Hit = (u64, String, Evidence);

/// Pushes one finding `code` for `hits` when there are any: severity from the share of
/// HDF5 time (`call_ns`) their calls take, `title` given that share, the five costliest as
/// `detail` and as the finding's items. Its evidence: that share (each item's evidence has
/// its object's time).
pub(crate) fn push_hits(
    out: &mut Vec<Insight>,
    code: &str,
    mut hits: Vec<Hit>,
    call_ns: f64,
    title: impl FnOnce(f64) -> String,
    rec: &str,
) {
    if hits.is_empty() {
        return;
    }
    let ns: u64 = hits.iter().map(|h| h.0).sum();
    let share = ns as f64 / call_ns;
    hits.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    hits.truncate(5);
    let detail = hits
        .iter()
        .map(|h| h.1.as_str())
        .collect::<Vec<_>>()
        .join("; ");
    let items = hits.into_iter().map(|h| h.2).collect();
    out.push(
        ins(severity_for_share(share), code, title(share), detail, rec)
            .with(Evidence::new().fraction("share", share))
            .with_items(items),
    );
}

pub(crate) fn below(h: &SizeHist, limit: u64) -> u64 {
    // Exact for powers of two; other limits round up to the next power of two.
    h.below_pow2(limit.next_power_of_two())
}

/// Codes of the timing observations: findings about durations alone (a dominant
/// operation, heavy tails, isolated slow calls, slower or late ranks, a share of metadata
/// that no metadata mechanism explains). At INFO they are
/// timing notes ([`split_timing_notes`]), not insights.
pub const TIMING_CODES: &[&str] = &[
    "hot_function",
    "tail_heavy",
    "straggler_calls",
    "straggler_ranks",
    "rank_imbalance_time",
    "collective_late_arrival",
    "metadata_time",
];

/// Whether a finding is a timing note rather than an insight: a timing observation
/// ([`TIMING_CODES`]) at INFO. Such a finding is either not material (below
/// [`SHARE_WARN`] of the run's HDF5 time), or not robust, or has nothing to change: its
/// rule reports at WARN or HIGH only what more data to move explains (a rank with
/// materially more bytes, a late arrival that moves more data), which is the same run
/// after run and is fixed by balancing the data. What is left — a dominant operation, a
/// heavy tail, a few slow calls, a rank slower or later with the same data — is what a
/// preempted process or a busy node makes on one run and not the next, and has no HDF5
/// setting to change: worth a look in the timeline, not a problem to fix.
pub fn is_timing_note(i: &Insight) -> bool {
    i.level == Level::Info && TIMING_CODES.contains(&i.code.as_str())
}

/// Splits the findings of [`detect`] into (insights, timing notes), each in its order.
pub fn split_timing_notes(all: Vec<Insight>) -> (Vec<Insight>, Vec<Insight>) {
    all.into_iter().partition(|i| !is_timing_note(i))
}

/// Runs every rule. `churn` holds the `open_close_churn` and `path_traversal` findings
/// ([`crate::insights::mpi::open_close_churn`], [`crate::insights::mpi::path_traversal`]),
/// made before the report took the object tables of `agg` apart.
pub fn detect(rep: &Report, agg: &Aggregate, th: &Thresholds, churn: Vec<Insight>) -> Vec<Insight> {
    let mut out = Vec::new();
    let run = &rep.run;

    // Data quality.
    if !run.truncated.is_empty() || run.dropped > 0 || run.unfinished > 0 || run.malformed_rows > 0
    {
        out.push(
            ins(
                Level::Warn,
                "incomplete_trace",
                "The trace is incomplete".into(),
                format!(
                "{} truncated last line(s), {} malformed row(s) skipped, {} record(s) dropped by \
                 the connector, {} process(es) without end time",
                run.truncated.len(),
                run.malformed_rows,
                run.dropped,
                run.unfinished
            ),
                "Results cover only what was recorded. Let processes finish (call H5close or exit \
             normally), and check the trace file system for space and errors.",
            )
            .with(
                Evidence::new()
                    .count("truncated_files", run.truncated.len() as u64)
                    .count("malformed_rows", run.malformed_rows)
                    .count("dropped_records", run.dropped)
                    .count("unfinished_processes", run.unfinished as u64),
            ),
        );
    }

    // Processes that ended without closing HDF5, with nothing lost: a note, not a warning.
    if run.unclosed > 0 {
        out.push(
            ins(
                Level::Info,
                "ended_without_closing",
                format!(
                    "{} ended without closing HDF5",
                    if run.unclosed == 1 {
                        "1 process".to_string()
                    } else {
                        format!("{} processes", run.unclosed)
                    }
                ),
                "they ended with _exit, os._exit (multiprocessing workers do) or a signal; every \
             record they made was recovered from their pending sidecar files, and their \
             record counts and end times were taken from the data"
                    .into(),
                "Nothing to do for the trace. Files such a process left open were not closed by \
             HDF5: data it had not flushed may be missing from them.",
            )
            .with(Evidence::new().count("processes", run.unclosed)),
        );
    }
    // Their per-object summaries were rebuilt from their records: say so, and what they lack.
    if run.objects_rebuilt > 0 {
        out.push(
            ins(
                Level::Info,
                "objects_rebuilt",
                format!(
                    "Per-object summaries of {} rebuilt from trace records",
                    if run.objects_rebuilt == 1 {
                        "1 process that ended without closing HDF5 were".to_string()
                    } else {
                        format!(
                            "{} processes that ended without closing HDF5 were",
                            run.objects_rebuilt
                        )
                    }
                ),
                format!(
                    "such a process writes its objects rows when it closes its objects, and it \
                 closed none; its {} rows come from its records instead (opens, accesses, \
                 reads, writes, bytes, times), without the columns only the connector knows \
                 (dimensions, layout, chunks, datatype, filters, chunk cache)",
                    run.rebuilt_object_rows
                ),
                "Nothing to do. Let the process close its files (or exit normally) for full \
             per-object summaries.",
            )
            .with(
                Evidence::new()
                    .count("processes", run.objects_rebuilt)
                    .count("rows", run.rebuilt_object_rows),
            ),
        );
    }

    // The live stream (`stream=`) lost messages: the trace files are unaffected.
    if let Some(dropped) = run.stream_dropped.filter(|d| *d > 0) {
        let sent = run.stream_sent.unwrap_or(0);
        out.push(
            ins(
                Level::Info,
                "stream_dropped",
                "The live stream lost messages".into(),
                format!(
                    "{dropped} of {} stream message(s) not sent to the collector (slow, gone or \
                 absent); the trace files are complete",
                    dropped + sent
                ),
                "Live dashboards under-count this run; the report does not. Start the collector \
             before the job, or use stream_level=interval for many ranks.",
            )
            .with(
                Evidence::new()
                    .count("dropped", dropped)
                    .count("messages", dropped + sent),
            ),
        );
    }

    // Hot function.
    if let Some(top) = rep.ops.first() {
        if top.share >= HOT_OP_SHARE {
            out.push(ins(
                Level::Info,
                "hot_function",
                format!("`{}` takes {} of HDF5 time", top.op, pct(top.share)),
                format!(
                    "{} calls, {} total, median {}",
                    top.count,
                    fmt_ns(top.total_ns),
                    fmt_ns(top.p50_ns)
                ),
                "Optimise this operation first; the sections below tell whether its calls, its \
                 processes or its access sizes are the problem.",
            )
            .with(
                Evidence::new()
                    .name("op", top.op.as_str())
                    .fraction("share", top.share)
                    .count("calls", top.count)
                    .ns("time", top.total_ns)
                    .ns("median", top.p50_ns),
            ));
        }
    }

    // (`small_io` is a dataset rule: crate::insights::dataset.)

    // Read-only files with slow dataset close.
    for f in rep.files.iter().filter(|f| f.read_only && f.total_ns > 0) {
        let share = f.dataset_close_ns as f64 / f.total_ns as f64;
        // Material only: a file whose closes take a few µs of a long run (one of 300
        // small files opened through external links) is no finding, however large the
        // closes' part of that file's own time.
        let material = f.dataset_close_ns as f64 >= CLOSE_MIN_SHARE * run.call_ns as f64;
        if f.dataset_close_ns > 0 && share >= th.close_fraction && material {
            out.push(
                ins(
                    severity_for_share(f.dataset_close_ns as f64 / run.call_ns.max(1) as f64),
                    "readonly_slow_close",
                    format!(
                        "Closing datasets of read-only file {} takes {}",
                        f.file,
                        pct(share)
                    ),
                    format!(
                        "dataset.close {} of {} on this file",
                        fmt_ns(f.dataset_close_ns),
                        fmt_ns(f.total_ns)
                    ),
                    "A read-only close should be cheap: open the file with H5F_ACC_RDONLY, avoid \
                 H5Pset_evict_on_close for datasets you reopen, and keep datasets open across \
                 reads.",
                )
                .with(
                    Evidence::new()
                        .name("file", f.file.as_str())
                        .fraction("close_fraction", share)
                        .ns("close_time", f.dataset_close_ns)
                        .ns("file_time", f.total_ns)
                        .fraction(
                            "share",
                            f.dataset_close_ns as f64 / run.call_ns.max(1) as f64,
                        ),
                ),
            );
        }
    }

    // Transfers.
    let t = &rep.transfers;
    if t.broken_collective > 0 {
        out.push(
            ins(
                Level::Warn,
                "broken_collective",
                format!(
                    "{} transfer(s) requested collective ran independently",
                    t.broken_collective
                ),
                format!(
                    "independent {}, collective {}, broken {}",
                    t.independent, t.collective, t.broken_collective
                ),
                "Ask HDF5 why with H5Pget_mpio_no_collective_cause after the call (datatype \
             conversion, filters, point selections and chunk cache settings commonly break \
             collective I/O).",
            )
            .with(
                Evidence::new()
                    .count("broken", t.broken_collective)
                    .count("independent", t.independent)
                    .count("collective", t.collective),
            ),
        );
    }

    // Tail-heavy.
    if !rep.tail_heavy.is_empty() {
        out.push(
            ins(
                Level::Info,
                "tail_heavy",
                format!(
                    "{} operation(s) have heavy tails (p99 ≥ {}× p50)",
                    rep.tail_heavy.len(),
                    th.tail_ratio
                ),
                rep.tail_heavy
                    .iter()
                    .take(5)
                    .map(|t| format!("{} p50 {} p99 {}", t.op, fmt_ns(t.p50_ns), fmt_ns(t.p99_ns)))
                    .collect::<Vec<_>>()
                    .join("; "),
                "Tails come from occasional flushes, cache evictions or contention; compare the \
             slow calls' times with other ranks' activity in the timeline.",
            )
            .with(
                Evidence::new()
                    .count("ops", rep.tail_heavy.len() as u64)
                    .ratio("tail_ratio", th.tail_ratio),
            )
            .with_items(
                rep.tail_heavy
                    .iter()
                    .take(5)
                    .map(|t| {
                        Evidence::new()
                            .name("op", t.op.as_str())
                            .ns("p50", t.p50_ns)
                            .ns("p99", t.p99_ns)
                    })
                    .collect(),
            ),
        );
    }

    // Asynchronous calls waited for right after they were issued: no overlap gained.
    let right_after: Vec<_> = rep
        .async_ops
        .iter()
        .filter(|a| a.stats.waited_right_after > 0)
        .collect();
    if !right_after.is_empty() {
        let blocked: u64 = right_after.iter().map(|a| a.stats.blocked_ns).sum();
        let total = agg.total_ns().max(1);
        out.push(ins(
            severity_for_share(blocked as f64 / total as f64),
            "async_waited_right_after",
            format!(
                "{} asynchronous call(s) were waited for right after they were issued: no \
                 overlap gained",
                right_after
                    .iter()
                    .map(|a| a.stats.waited_right_after)
                    .sum::<u64>()
            ),
            right_after
                .iter()
                .take(5)
                .map(|a| {
                    format!(
                        "{}: {} of {} completed, overlap {:.0} % of their time to completion, \
                         {} blocked in waits",
                        a.op,
                        a.stats.waited_right_after,
                        a.stats.completed,
                        a.overlap_share * 100.0,
                        fmt_ns(a.stats.blocked_ns)
                    )
                })
                .collect::<Vec<_>>()
                .join("; "),
            "Issue the asynchronous operations, then compute (the next step of the simulation), \
             and wait (H5ESwait) only when the data or the buffer is needed again: an \
             immediate wait makes the call synchronous, plus the background thread's overhead.",
        )
        .with(
            Evidence::new()
                .count(
                    "calls",
                    right_after
                        .iter()
                        .map(|a| a.stats.waited_right_after)
                        .sum::<u64>(),
                )
                .ns("blocked", blocked)
                .fraction("share", blocked as f64 / total as f64),
        )
        .with_items(
            right_after
                .iter()
                .take(5)
                .map(|a| {
                    Evidence::new()
                        .name("op", a.op.as_str())
                        .count("waited_right_after", a.stats.waited_right_after)
                        .count("completed", a.stats.completed)
                        .fraction("overlap", a.overlap_share)
                        .ns("blocked", a.stats.blocked_ns)
                })
                .collect(),
        ));
    }

    // Dataset rules: chunking, chunk cache, conversion, re-reads, small I/O.
    let facts = RowFacts::new(rep, &agg.datasets_io);
    crate::insights::dataset::detect(
        rep,
        &agg.datasets_io,
        &facts,
        &agg.file_access,
        th,
        &mut out,
    );
    // The cost model's layers the dataset rules do not cover: fill values, selections,
    // extents, flushes, variable-length data.
    crate::insights::costmodel::detect(rep, &agg.datasets_io, &facts, &mut out);
    drop(facts);
    // Metadata and MPI rules: metadata time, tiny datasets, churn, alignment, MPI-IO.
    crate::insights::mpi::detect(rep, agg, th, churn, &mut out);

    if !out.iter().any(|i| i.level <= Level::Warn) {
        out.push(
            ins(
                Level::Ok,
                "no_problem",
                "No HDF5 I/O problem found by the rules".into(),
                format!("{} records from {} process(es)", run.records, run.processes),
                "Nothing to do.",
            )
            .with(
                Evidence::new()
                    .count("records", run.records)
                    .count("processes", run.processes as u64),
            ),
        );
    }
    out.sort_by_key(|i| i.level);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timing_observations_at_info_are_notes_and_the_rest_insights() {
        let f = |level, code: &str| ins(level, code, code.into(), String::new(), "");
        let all = vec![
            f(Level::High, "straggler_ranks"),
            f(Level::Info, "straggler_ranks"),
            f(Level::Info, "tail_heavy"),
            f(Level::Info, "hot_function"),
            f(Level::Info, "straggler_calls"),
            f(Level::Info, "collective_late_arrival"),
            f(Level::Warn, "collective_late_arrival"),
            f(Level::Info, "rank_imbalance_time"),
            f(Level::Info, "rank_imbalance_bytes"),
            f(Level::Info, "contiguous_small_writes"),
            f(Level::Ok, "no_problem"),
        ];
        let (ins, notes) = split_timing_notes(all);
        let codes = |v: &[Insight]| -> Vec<(String, Level)> {
            v.iter().map(|i| (i.code.clone(), i.level)).collect()
        };
        let c = |s: &str, l| (s.to_string(), l);
        assert_eq!(
            codes(&ins),
            [
                c("straggler_ranks", Level::High),
                c("collective_late_arrival", Level::Warn),
                c("rank_imbalance_bytes", Level::Info),
                c("contiguous_small_writes", Level::Info),
                c("no_problem", Level::Ok),
            ]
        );
        assert_eq!(notes.len(), 6);
        assert!(notes.iter().all(|n| n.level == Level::Info));
    }
}
