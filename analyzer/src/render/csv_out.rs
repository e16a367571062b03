//! CSV tables (`--csv <dir>`) for pandas/DuckDB users: one file per table, one header row.

use crate::analysis::Report;
use serde::Serialize;

fn table<T: Serialize>(rows: impl IntoIterator<Item = T>) -> Vec<u8> {
    let mut w = csv::Writer::from_writer(Vec::new());
    for r in rows {
        w.serialize(r).expect("flat rows serialise");
    }
    w.into_inner().expect("in-memory writer")
}

fn join(v: &[u64]) -> String {
    v.iter().map(u64::to_string).collect::<Vec<_>>().join(";")
}

#[derive(Serialize)]
struct StragglerCallRow<'a> {
    op: &'a str,
    median_ns: u64,
    cutoff_ns: u64,
    spread: crate::analysis::stats::Spread,
    rank: i64,
    pid: u32,
    tid: u64,
    seq: u64,
    start_ns: u64,
    offset_ns: u64,
    total_ns: u64,
    x_median: f64,
    z: f64,
    file: &'a str,
    path: &'a str,
}

#[derive(Serialize)]
struct StragglerRankRow<'a> {
    op: &'a str,
    op_share: f64,
    ranks: usize,
    median_total_ns: u64,
    imbalance: f64,
    rank: i64,
    pid: u32,
    total_ns: u64,
    z: f64,
    x_median: f64,
    rule: &'a str,
    bytes: u64,
    bytes_x_median: f64,
}

/// One row per (collective operation, rank that arrived last at least once).
#[derive(Serialize)]
struct CollectiveRow<'a> {
    op: &'a str,
    calls: u64,
    ranks: usize,
    total_ns: u64,
    wait_ns: u64,
    wait_share: f64,
    median_skew_ns: u64,
    max_skew_ns: u64,
    rank: i64,
    pid: u32,
    last: u64,
    lateness_ns: u64,
    imposed_wait_ns: u64,
    straggler: bool,
}

#[derive(Serialize)]
struct DatasetCsv<'a> {
    file: &'a str,
    path: &'a str,
    layout: &'a str,
    dims: &'a str,
    type_size: u64,
    procs: usize,
    opens: u64,
    reads: u64,
    writes: u64,
    bytes_read: u64,
    bytes_written: u64,
    read_ns: u64,
    write_ns: u64,
    total_ns: u64,
    bandwidth_bps: f64,
    ind_io: u64,
    coll_io: u64,
    broken_coll_io: u64,
    size_hist_pow2: String,
    source: &'a str,
}

#[derive(Serialize)]
struct FileCsv<'a> {
    file: &'a str,
    procs: usize,
    calls: u64,
    total_ns: u64,
    meta_ns: u64,
    opens: u64,
    reads: u64,
    writes: u64,
    bytes_read: u64,
    bytes_written: u64,
    bandwidth_bps: f64,
    datasets_created: u64,
    datasets_opened: u64,
    dataset_close_ns: u64,
    open_ns: u64,
    read_only: bool,
    size_hist_pow2: String,
}

/// One row of `async_ops.csv`: [`crate::aggregate::asyncops::AsyncOpRow`], flat.
#[derive(Serialize)]
struct AsyncRow<'a> {
    op: &'a str,
    issued: u64,
    completed: u64,
    mean_issue_ns: u64,
    mean_to_completion_ns: u64,
    timed: u64,
    mean_exec_ns: u64,
    blocked_ns: u64,
    overlap_ns: u64,
    overlap_share: f64,
    waited_right_after: u64,
}

/// A finding as a CSV row: its text. Its typed evidence is nested (a map, and a list per
/// object), which a flat table cannot hold: `--json` carries it.
#[derive(Serialize)]
struct InsightCsv<'a> {
    level: crate::insights::Level,
    code: &'a str,
    title: &'a str,
    detail: &'a str,
    recommendation: &'a str,
}

impl<'a> InsightCsv<'a> {
    fn of(i: &'a crate::insights::Insight) -> Self {
        InsightCsv {
            level: i.level,
            code: &i.code,
            title: &i.title,
            detail: &i.detail,
            recommendation: &i.recommendation,
        }
    }
}

/// All tables as `(file name, CSV bytes)`, in a fixed order.
pub fn tables(rep: &Report) -> Vec<(&'static str, Vec<u8>)> {
    let mut v = vec![
        ("ops.csv", table(&rep.ops)),
        ("families.csv", table(&rep.families)),
        ("ranks.csv", table(&rep.ranks)),
        ("rank_ops.csv", table(&rep.rank_ops)),
    ];
    v.push((
        "async_ops.csv",
        table(rep.async_ops.iter().map(|a| AsyncRow {
            op: &a.op,
            issued: a.stats.issued,
            completed: a.stats.completed,
            mean_issue_ns: a.mean_issue_ns,
            mean_to_completion_ns: a.mean_to_completion_ns,
            timed: a.stats.timed,
            mean_exec_ns: a.mean_exec_ns,
            blocked_ns: a.stats.blocked_ns,
            overlap_ns: a.stats.overlap_ns,
            overlap_share: a.overlap_share,
            waited_right_after: a.stats.waited_right_after,
        })),
    ));
    v.push((
        "straggler_calls.csv",
        table(rep.straggler_calls.iter().flat_map(|s| {
            s.calls.iter().map(move |c| StragglerCallRow {
                op: &s.op,
                median_ns: s.median_ns,
                cutoff_ns: s.cutoff_ns,
                spread: s.spread,
                rank: c.rank,
                pid: c.pid,
                tid: c.tid,
                seq: c.seq,
                start_ns: c.start_ns,
                offset_ns: c.offset_ns,
                total_ns: c.total_ns,
                x_median: c.x_median,
                z: c.z,
                file: &c.file,
                path: &c.path,
            })
        })),
    ));
    v.push((
        "straggler_ranks.csv",
        table(rep.straggler_ranks.iter().flat_map(|s| {
            s.outliers.iter().map(move |o| StragglerRankRow {
                op: &s.op,
                op_share: s.op_share,
                ranks: s.ranks,
                median_total_ns: s.median_total_ns,
                imbalance: s.imbalance,
                rank: o.rank,
                pid: o.pid,
                total_ns: o.total_ns,
                z: o.z,
                x_median: o.x_median,
                rule: &o.rule,
                bytes: o.bytes,
                bytes_x_median: o.bytes_x_median,
            })
        })),
    ));
    v.push((
        "collective_skew.csv",
        table(rep.collective_skew.iter().flat_map(|c| {
            c.late.iter().map(move |l| CollectiveRow {
                op: &c.op,
                calls: c.calls,
                ranks: c.ranks,
                total_ns: c.total_ns,
                wait_ns: c.wait_ns,
                wait_share: c.wait_share,
                median_skew_ns: c.median_skew_ns,
                max_skew_ns: c.max_skew_ns,
                rank: l.rank,
                pid: l.pid,
                last: l.last,
                lateness_ns: l.lateness_ns,
                imposed_wait_ns: l.imposed_wait_ns,
                straggler: c.straggler.as_ref() == Some(l),
            })
        })),
    ));
    v.push(("tail_heavy.csv", table(&rep.tail_heavy)));
    v.push((
        "files.csv",
        table(rep.files.iter().map(|f| FileCsv {
            file: &f.file,
            procs: f.procs,
            calls: f.calls,
            total_ns: f.total_ns,
            meta_ns: f.meta_ns,
            opens: f.opens,
            reads: f.reads,
            writes: f.writes,
            bytes_read: f.bytes_read,
            bytes_written: f.bytes_written,
            bandwidth_bps: f.bandwidth_bps,
            datasets_created: f.datasets_created,
            datasets_opened: f.datasets_opened,
            dataset_close_ns: f.dataset_close_ns,
            open_ns: f.open_ns,
            read_only: f.read_only,
            size_hist_pow2: join(&f.sizes),
        })),
    ));
    v.push((
        "datasets.csv",
        table(rep.datasets.iter().map(|d| DatasetCsv {
            file: &d.file,
            path: &d.path,
            layout: &d.layout,
            dims: &d.dims,
            type_size: d.type_size,
            procs: d.procs,
            opens: d.opens,
            reads: d.reads,
            writes: d.writes,
            bytes_read: d.bytes_read,
            bytes_written: d.bytes_written,
            read_ns: d.read_ns,
            write_ns: d.write_ns,
            total_ns: d.total_ns,
            bandwidth_bps: d.bandwidth_bps,
            ind_io: d.ind_io,
            coll_io: d.coll_io,
            broken_coll_io: d.broken_coll_io,
            size_hist_pow2: join(&d.sizes.counts()),
            source: d.source,
        })),
    ));
    v.push(("transfers.csv", table(&rep.transfers.by_mode)));
    v.push(("phases.csv", table(&rep.phases)));
    v.push(("windows.csv", table(&rep.windows)));
    v.push((
        "insights.csv",
        table(rep.insights.iter().map(InsightCsv::of)),
    ));
    v.push((
        "timing_notes.csv",
        table(rep.timing_notes.iter().map(InsightCsv::of)),
    ));
    // Only when there is something to say: consistent traces give the same tables as ever.
    if !rep.warnings.is_empty() {
        v.push(("warnings.csv", table(&rep.warnings)));
    }
    v
}
