//! HDF5-level insights: findings with a severity and a recommendation. Every threshold is
//! a named constant, carried in [`Thresholds`] so flags can override it.

use crate::aggregate::{Aggregate, SizeHist};
use crate::analysis::Report;
use crate::render::{fmt_bytes, fmt_ns, pct};
use crate::stats::MODIFIED_Z_THRESHOLD;
use serde::Serialize;

/// Drishti's rank-imbalance rule: (slowest − fastest) / total above this flags the slowest.
pub const IMBALANCE: f64 = 0.15;
/// p99/p50 at or above this makes an operation tail-heavy.
pub const TAIL_RATIO: f64 = 10.0;
/// Calls an operation needs before its tail is judged.
pub const TAIL_MIN_CALLS: u64 = 100;
/// Data accesses below this size are "small" (1 MiB).
pub const SMALL_IO_BYTES: u64 = 1 << 20;
/// Fraction of small accesses that triggers the small-I/O insight (Drishti's
/// `small_requests`; it also needs [`crate::insights_dataset::SMALL_IO_MIN`] of them).
pub const SMALL_IO_FRACTION: f64 = 0.1;
/// Share of call time in metadata operations that triggers the metadata insight.
pub const METADATA_FRACTION: f64 = 0.5;
/// Opens of the same object per process that count as open/close churn.
pub const CHURN_OPENS: u64 = 10;
/// Share of a read-only file's time spent in `dataset.close` that counts as slow close.
pub const CLOSE_FRACTION: f64 = 0.2;
/// Datasets smaller than this are tiny (64 KiB, the compact-layout limit).
pub const TINY_DATASET_BYTES: u64 = 64 << 10;
/// Tiny datasets needed for the many-tiny-datasets insight.
pub const TINY_DATASET_COUNT: u64 = 100;
/// Writes to one contiguous dataset (each below [`SMALL_IO_BYTES`] on average) that count as
/// many small partial writes.
pub const PARTIAL_WRITES: u64 = 10;
/// Share of all call time an operation needs before its stragglers are an insight.
pub const MIN_OP_SHARE: f64 = 0.01;
/// A straggler call must also be at least this many times the median duration: with tight
/// distributions the MAD is tiny and a 30 % slower call would otherwise score above 3.5.
pub const CALL_MIN_RATIO: f64 = 2.0;
/// A rank flagged by the Z-score must also have at least this many times the median total
/// (same reason: with a handful of ranks of nearly equal totals the MAD is tiny).
pub const RANK_MIN_RATIO: f64 = 1.2;
/// Share of all call time above which one operation is reported as dominant.
pub const HOT_OP_SHARE: f64 = 0.5;

/// A finding that explains at least this share of the run's HDF5 time is HIGH.
pub const SHARE_HIGH: f64 = 0.30;
/// A finding that explains at least this share of the run's HDF5 time is WARN (below: INFO).
pub const SHARE_WARN: f64 = 0.10;

/// The severity of a finding from the share of the run's HDF5 time (all traced calls of
/// all processes) that it explains: HIGH from [`SHARE_HIGH`], WARN from [`SHARE_WARN`],
/// else INFO. A share, not a count or a ratio of durations, so that the same program
/// gets the same severity run after run; rules whose trigger is structural (a setting,
/// a layout) still weigh the time of the calls it affects.
pub fn severity_for_share(share: f64) -> Level {
    if share >= SHARE_HIGH {
        Level::High
    } else if share >= SHARE_WARN {
        Level::Warn
    } else {
        Level::Info
    }
}

/// The thresholds in force (defaults are the constants above; flags override them).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Thresholds {
    /// Modified Z-score threshold for straggler calls and ranks.
    pub z_threshold: f64,
    /// Drishti imbalance threshold (also used for rank imbalance in bytes/time).
    pub imbalance: f64,
    /// Minimum duration / median of a straggler call.
    pub call_min_ratio: f64,
    /// Minimum total / median total of a Z-score straggler rank.
    pub rank_min_ratio: f64,
    /// Tail-heavy p99/p50 ratio.
    pub tail_ratio: f64,
    /// Minimum calls for tail judgement.
    pub tail_min_calls: u64,
    /// Small access size, bytes.
    pub small_io_bytes: u64,
    /// Fraction of small accesses.
    pub small_io_fraction: f64,
    /// Metadata time share.
    pub metadata_fraction: f64,
    /// Opens per process of one object.
    pub churn_opens: u64,
    /// `dataset.close` share on read-only files.
    pub close_fraction: f64,
    /// Tiny dataset size, bytes.
    pub tiny_dataset_bytes: u64,
    /// Tiny dataset count.
    pub tiny_dataset_count: u64,
    /// Small writes to one contiguous dataset.
    pub partial_writes: u64,
    /// Minimum op share for straggler insights.
    pub min_op_share: f64,
    /// Share of a collective operation's time that must be waiting before its late rank
    /// is named.
    pub late_wait_share: f64,
    /// Waiting (ns) a collective operation needs before its late rank is named.
    pub late_min_wait_ns: u64,
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds {
            z_threshold: MODIFIED_Z_THRESHOLD,
            imbalance: IMBALANCE,
            call_min_ratio: CALL_MIN_RATIO,
            rank_min_ratio: RANK_MIN_RATIO,
            tail_ratio: TAIL_RATIO,
            tail_min_calls: TAIL_MIN_CALLS,
            small_io_bytes: SMALL_IO_BYTES,
            small_io_fraction: SMALL_IO_FRACTION,
            metadata_fraction: METADATA_FRACTION,
            churn_opens: CHURN_OPENS,
            close_fraction: CLOSE_FRACTION,
            tiny_dataset_bytes: TINY_DATASET_BYTES,
            tiny_dataset_count: TINY_DATASET_COUNT,
            partial_writes: PARTIAL_WRITES,
            min_op_share: MIN_OP_SHARE,
            late_wait_share: crate::collective::MIN_WAIT_SHARE,
            late_min_wait_ns: crate::collective::MIN_WAIT_NS,
        }
    }
}

/// Severity of an insight.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Level {
    /// Costs a lot of time now.
    High,
    /// Likely a problem.
    Warn,
    /// Worth knowing.
    Info,
    /// Checked and fine.
    Ok,
}

impl Level {
    /// Upper-case name.
    pub fn name(self) -> &'static str {
        match self {
            Level::High => "HIGH",
            Level::Warn => "WARN",
            Level::Info => "INFO",
            Level::Ok => "OK",
        }
    }
}

/// One finding.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Insight {
    /// Severity.
    pub level: Level,
    /// Stable identifier (`small_io`, `metadata_time`, ...).
    pub code: String,
    /// One-line statement.
    pub title: String,
    /// Evidence.
    pub detail: String,
    /// What to do.
    pub recommendation: String,
}

fn ins(level: Level, code: &str, title: String, detail: String, rec: &str) -> Insight {
    Insight {
        level,
        code: code.into(),
        title,
        detail,
        recommendation: rec.into(),
    }
}

fn below(h: &SizeHist, limit: u64) -> u64 {
    // Exact for powers of two; other limits round up to the next power of two.
    h.below_pow2(limit.next_power_of_two())
}

fn dims_elems(dims: &str) -> Option<u64> {
    if dims.is_empty() {
        return None;
    }
    dims.split('x')
        .map(|d| d.trim().parse::<u64>().ok())
        .try_fold(1u64, |a, d| d.map(|d| a.saturating_mul(d)))
}

/// Runs every rule.
pub fn detect(rep: &Report, agg: &Aggregate, th: &Thresholds) -> Vec<Insight> {
    let mut out = Vec::new();
    let call_ns = rep.run.call_ns.max(1);
    let run = &rep.run;

    // Data quality.
    if !run.truncated.is_empty() || run.dropped > 0 || run.unfinished > 0 || run.malformed_rows > 0
    {
        out.push(ins(
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
        ));
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
                 ranks or its access sizes are the problem.",
            ));
        }
    }

    // Small dataset I/O.
    let sizes_all = {
        let mut h = agg.io_sizes[0].clone();
        h.merge(&agg.io_sizes[1]);
        h
    };
    let n = sizes_all.total();
    let small = below(&sizes_all, th.small_io_bytes);
    // (`small_io` itself is a dataset rule: crate::insights_dataset.)

    // Metadata-dominated time.
    let meta: Vec<_> = rep.ops.iter().filter(|o| o.class == "metadata").collect();
    let meta_ns: u64 = meta.iter().map(|o| o.total_ns).sum();
    let mshare = meta_ns as f64 / call_ns as f64;
    if rep.run.records > 0 && mshare >= th.metadata_fraction {
        let top: Vec<String> = meta
            .iter()
            .take(3)
            .map(|o| format!("{} {}", o.op, pct(o.share)))
            .collect();
        out.push(ins(
            if mshare >= 0.8 {
                Level::High
            } else {
                Level::Warn
            },
            "metadata_time",
            format!("Metadata operations take {} of HDF5 time", pct(mshare)),
            format!("top: {}", top.join(", ")),
            "Keep files, groups and datasets open instead of reopening them; create files with \
             H5Pset_libver_bounds(H5F_LIBVER_LATEST) and paged aggregation \
             (H5Pset_file_space_strategy PAGE, H5Pset_page_buffer_size); enlarge the metadata \
             cache; under MPI enable collective metadata (H5Pset_all_coll_metadata_ops, \
             H5Pset_coll_metadata_write).",
        ));
    }

    // Open/close churn.
    let mut churn: Vec<(u64, String)> = agg
        .objects
        .iter()
        .flat_map(|(f, m)| m.iter().map(move |((kind, p), o)| (kind, f, p, o)))
        .filter_map(|(kind, f, p, o)| {
            let per = o.opens / (o.procs.len() as u64).max(1);
            (per >= th.churn_opens)
                .then(|| (o.opens, format!("{kind} {f}:{p} opened {} times", o.opens)))
        })
        .collect();
    churn.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    if !churn.is_empty() {
        out.push(ins(
            Level::Warn,
            "open_close_churn",
            format!("{} object(s) are opened and closed repeatedly", churn.len()),
            churn
                .iter()
                .take(5)
                .map(|c| c.1.clone())
                .collect::<Vec<_>>()
                .join("; "),
            "Open each object once and keep its handle for the whole phase; every open walks \
             the B-tree/heap and every close may flush metadata.",
        ));
    }

    // Rank imbalance in bytes or time.
    if rep.ranks.len() >= 2 {
        for (what, vals) in [
            (
                "bytes",
                rep.ranks
                    .iter()
                    .map(|r| r.bytes_read + r.bytes_written)
                    .collect::<Vec<_>>(),
            ),
            ("time", rep.ranks.iter().map(|r| r.total_ns).collect()),
        ] {
            let sum: u64 = vals.iter().sum();
            let (imax, max) = vals
                .iter()
                .enumerate()
                .max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(&a.0)))
                .expect("n>=2");
            let min = *vals.iter().min().expect("n>=2");
            let imb = if sum > 0 {
                (max - min) as f64 / sum as f64
            } else {
                0.0
            };
            if imb > th.imbalance {
                let r = &rep.ranks[imax];
                let who = if r.rank >= 0 {
                    format!("rank {}", r.rank)
                } else {
                    format!("pid {}", r.pid)
                };
                let (vmax, vmin) = if what == "bytes" {
                    (fmt_bytes(*max), fmt_bytes(min))
                } else {
                    (fmt_ns(*max), fmt_ns(min))
                };
                out.push(ins(
                    Level::Warn,
                    &format!("rank_imbalance_{what}"),
                    format!("Ranks are imbalanced in {what}: {who} has the most"),
                    format!(
                        "max {vmax} ({who}), min {vmin}, (max − min)/total = {}",
                        pct(imb)
                    ),
                    "Balance the data decomposition across ranks, or give the heavy rank's share \
                     to aggregators (collective buffering).",
                ));
            }
        }
    }

    // Read-only files with slow dataset close.
    for f in rep.files.iter().filter(|f| f.read_only && f.total_ns > 0) {
        let share = f.dataset_close_ns as f64 / f.total_ns as f64;
        if f.dataset_close_ns > 0 && share >= th.close_fraction {
            out.push(ins(
                Level::Warn,
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
            ));
        }
    }

    // Many tiny datasets.
    let tiny = rep
        .datasets
        .iter()
        .filter(|d| {
            let size = dims_elems(&d.dims)
                .map(|e| e.saturating_mul(d.type_size.max(1)))
                .unwrap_or_else(|| d.bytes_written.max(d.bytes_read) / (d.procs.max(1) as u64));
            size < th.tiny_dataset_bytes
        })
        .count() as u64;
    if tiny >= th.tiny_dataset_count {
        out.push(ins(
            Level::Warn,
            "tiny_datasets",
            format!(
                "{tiny} datasets are smaller than {}",
                fmt_bytes(th.tiny_dataset_bytes)
            ),
            format!("{} datasets in total", rep.datasets.len()),
            "Store small arrays in fewer, larger datasets (an extra dimension or a compound \
             type), as attributes, or with the compact layout (H5Pset_layout H5D_COMPACT); each \
             dataset costs an object header and metadata I/O.",
        ));
    }

    // Collective metadata off under MPI.
    let mpi = run.world_size > 1 || run.ranks > 1;
    if mpi && !(run.coll_metadata_reads && run.coll_metadata_writes) {
        let md_ops = [
            "group.open",
            "file.open",
            "group.create",
            "dataset.open",
            "dataset.create",
            "link.get:info",
            "link.specific:exists",
        ];
        let mut hit: Vec<String> = rep
            .straggler_ranks
            .iter()
            .filter(|s| md_ops.contains(&s.op.as_str()))
            .map(|s| {
                format!(
                    "{} (straggler rank{})",
                    s.op,
                    if s.outliers.len() > 1 { "s" } else { "" }
                )
            })
            .collect();
        hit.extend(
            rep.straggler_calls
                .iter()
                .filter(|s| md_ops.contains(&s.op.as_str()))
                .map(|s| format!("{} ({} straggler call(s))", s.op, s.stragglers)),
        );
        let opener = hit
            .iter()
            .any(|h| h.starts_with("group.open") || h.starts_with("file.open"));
        let off = match (run.coll_metadata_reads, run.coll_metadata_writes) {
            (false, false) => "reads and writes",
            (false, true) => "reads",
            _ => "writes",
        };
        let (level, title) = if opener {
            (
                Level::High,
                format!("Collective metadata {off} are off and opens straggle"),
            )
        } else if hit.is_empty() {
            (
                Level::Info,
                format!("Collective metadata {off} are off under MPI"),
            )
        } else {
            (
                Level::Warn,
                format!("Collective metadata {off} are off and metadata operations straggle"),
            )
        };
        let detail = if hit.is_empty() {
            "no metadata straggler found".to_string()
        } else {
            hit.join("; ")
        };
        out.push(ins(
            level,
            "collective_metadata_off",
            title,
            detail,
            "Set H5Pset_all_coll_metadata_ops(fapl, 1) and H5Pset_coll_metadata_write(fapl, 1): \
             one rank reads metadata and broadcasts it, instead of every rank hitting the same \
             file system blocks (the H5Prov paper's group.open/file.open stragglers).",
        ));
    }

    // Transfers.
    let t = &rep.transfers;
    if t.broken_collective > 0 {
        out.push(ins(
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
        ));
    }
    if mpi && t.independent > 0 && t.collective == 0 && small * 2 >= n && n > 0 {
        out.push(ins(
            Level::Info,
            "independent_small_io",
            "All MPI data transfers are independent and mostly small".into(),
            format!("{} independent transfers", t.independent),
            "Try collective transfers (H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE)) so MPI-IO \
             can aggregate small requests.",
        ));
    }

    // Straggler ranks of significant operations.
    let sig: Vec<String> = rep
        .straggler_ranks
        .iter()
        .filter(|s| s.op_share >= th.min_op_share)
        .map(|s| {
            let who: Vec<String> = s
                .outliers
                .iter()
                .map(|o| {
                    let w = if o.rank >= 0 {
                        format!("rank {}", o.rank)
                    } else {
                        format!("pid {}", o.pid)
                    };
                    if o.rule == "bytes" {
                        format!("{w} moves ×{:.1} the median data", o.bytes_x_median)
                    } else if o.rule == "late-arrival" {
                        format!("{w} arrives last")
                    } else {
                        format!("{w} ×{:.1}", o.x_median)
                    }
                })
                .collect();
            format!("{}: {}", s.op, who.join(", "))
        })
        .collect();
    if !sig.is_empty() {
        out.push(ins(
            Level::Warn,
            "straggler_ranks",
            format!("Straggler ranks in {} operation(s)", sig.len()),
            sig.iter().take(5).cloned().collect::<Vec<_>>().join("; "),
            "Check whether the named ranks move more data or share a busy node/OST; balance \
             the decomposition, and for collective operations (dataset/group create, collective \
             write) remember that every rank waits for the slowest.",
        ));
    }

    // Late arrivals at collective operations.
    let late: Vec<String> = rep
        .collective_skew
        .iter()
        .filter(|c| c.straggler.is_some() && c.wait_ns as f64 >= th.min_op_share * call_ns as f64)
        .map(|c| {
            let l = c.straggler.as_ref().expect("filtered");
            format!(
                "{}: {} arrived last in {}/{} calls; the others waited {} ({} of the operation's time)",
                c.op,
                crate::record::ProcKey {
                    rank: l.rank,
                    pid: l.pid
                },
                l.last,
                c.calls,
                fmt_ns(c.wait_ns),
                pct(c.wait_share)
            )
        })
        .collect();
    if !late.is_empty() {
        out.push(ins(
            Level::Warn,
            "collective_late_arrival",
            format!(
                "Ranks wait for a late arrival at {} collective operation(s)",
                late.len()
            ),
            late.iter().take(5).cloned().collect::<Vec<_>>().join("; "),
            "The late rank is busy before the collective call (more data to write, a slower \
             node or OST, CPU contention): balance the work before the call. The other ranks' \
             time in the call is waiting, not I/O, so their long calls are the symptom, not \
             the cause.",
        ));
    }

    // Straggler calls.
    let calls: Vec<String> = rep
        .straggler_calls
        .iter()
        .filter(|s| {
            rep.ops
                .iter()
                .any(|o| o.op == s.op && o.share >= th.min_op_share)
        })
        .map(|s| {
            let c = &s.calls[0];
            format!(
                "{}: {} call(s) above {}, worst {} (×{:.1} median)",
                s.op,
                s.stragglers,
                fmt_ns(s.cutoff_ns),
                fmt_ns(c.total_ns),
                c.x_median
            )
        })
        .collect();
    if !calls.is_empty() {
        out.push(ins(
            Level::Info,
            "straggler_calls",
            format!("Straggler calls in {} operation(s)", calls.len()),
            calls.iter().take(5).cloned().collect::<Vec<_>>().join("; "),
            "Look up the listed calls (rank, seq, object) in the Perfetto export: isolated slow \
             calls usually mean file-system contention or a metadata-cache flush/eviction.",
        ));
    }

    // Tail-heavy.
    if !rep.tail_heavy.is_empty() {
        out.push(ins(
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
        ));
    }

    // Dataset rules: chunking, chunk cache, conversion, re-reads, small I/O.
    crate::insights_dataset::detect(rep, &agg.datasets_io, th, &mut out);

    if !out.iter().any(|i| i.level <= Level::Warn) {
        out.push(ins(
            Level::Ok,
            "no_problem",
            "No HDF5 I/O problem found by the rules".into(),
            format!("{} records from {} process(es)", run.records, run.processes),
            "Nothing to do.",
        ));
    }
    out.sort_by_key(|i| i.level);
    out
}
