//! Pure renderers: each takes a [`crate::analysis::Report`] (or a comparison) and
//! returns bytes. Nothing here reads files or the environment; the binary decides about
//! color and where output goes.

pub mod compare;
pub mod csv_out;
pub mod html;
pub mod svg;
pub mod terminal;

use crate::analysis::Report;
pub use crate::units::{fmt_bw, fmt_bytes, fmt_bytes_short, fmt_ns, pct};

/// The report as pretty JSON (stable field order, deterministic).
pub fn json(report: &Report) -> String {
    let mut v = Vec::new();
    json_to(report, &mut v).expect("writing to a vector does not fail");
    String::from_utf8(v).expect("serde_json writes UTF-8")
}

/// Writes what [`json`] returns to `out` as it is serialised, without holding the whole
/// text (hundreds of MB for a run with hundreds of thousands of datasets).
pub fn json_to(report: &Report, out: &mut (impl std::io::Write + ?Sized)) -> std::io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, report)?;
    out.write_all(b"\n")
}

/// Programs named in a report's header, the rest counted.
pub const HEADER_PROGRAMS: usize = 3;

/// The programs of the run for a report's header, bounded whatever the directory holds:
/// the executable when there is one, else the counts and the [`HEADER_PROGRAMS`] programs
/// with the most HDF5 time (`10 programs, 13 runs of 16 processes; most HDF5 time:
/// imbalance (4 processes, 3.70 s), ..., and 7 more`).
pub fn programs_summary(run: &crate::analysis::RunInfo) -> String {
    if run.programs.len() <= 1 && run.executables.len() <= 1 {
        let runs = run.programs.first().map_or(0, |p| p.runs);
        return format!(
            "{}{}",
            run.executables.join(" "),
            if runs > 1 {
                format!(" ({runs} runs)")
            } else {
                String::new()
            }
        );
    }
    let named: Vec<String> = run
        .programs
        .iter()
        .take(HEADER_PROGRAMS)
        .map(|p| {
            format!(
                "{} ({}{}, {})",
                if p.program.is_empty() {
                    "unknown program"
                } else {
                    &p.program
                },
                if p.runs > 1 {
                    format!("{} runs, ", p.runs)
                } else {
                    String::new()
                },
                if p.processes == 1 {
                    "1 process".to_string()
                } else {
                    format!("{} processes", p.processes)
                },
                fmt_ns(p.call_ns)
            )
        })
        .collect();
    let more = run.programs.len().saturating_sub(HEADER_PROGRAMS);
    format!(
        "{} programs, {} runs of {} processes; most HDF5 time: {}{}",
        run.programs.len(),
        run.runs,
        run.processes,
        named.join(", "),
        if more > 0 {
            format!(", and {more} more")
        } else {
            String::new()
        }
    )
}

/// A process label: `rank 3` or `pid 1234`.
pub fn who(rank: i64, pid: u32) -> String {
    if rank >= 0 {
        format!("rank {rank}")
    } else {
        format!("pid {pid}")
    }
}

/// Column names of the hot-functions table (terminal and HTML).
pub const HOT_HEADER: [&str; 10] = [
    "operation",
    "count",
    "total",
    "share",
    "mean",
    "p50",
    "p95",
    "p99",
    "max",
    "self",
];

/// The rows of the hot-functions table (by total time), at most `top`.
pub fn hot_rows(rep: &Report, top: usize) -> Vec<Vec<String>> {
    rep.ops
        .iter()
        .take(top)
        .map(|r| {
            vec![
                r.op.clone(),
                r.count.to_string(),
                fmt_ns(r.total_ns),
                pct(r.share),
                fmt_ns(r.mean_ns),
                fmt_ns(r.p50_ns),
                fmt_ns(r.p95_ns),
                fmt_ns(r.p99_ns),
                fmt_ns(r.max_ns),
                fmt_ns(r.self_ns),
            ]
        })
        .collect()
}

/// Column names of the asynchronous-operations table (terminal and HTML).
pub const ASYNC_HEADER: [&str; 8] = [
    "operation",
    "completed/issued",
    "issue (mean)",
    "to completion (mean)",
    "executed (mean)",
    "blocked in waits",
    "overlap",
    "waited right after",
];

/// What the asynchronous-operations table says about its times (terminal and HTML).
pub const ASYNC_NOTE: &str = "issue → completion; completion observed at the first wait \
    that saw it done: an upper bound; executed: exact, as the connector below answered";

/// The rows of the asynchronous-operations table, at most `top`.
pub fn async_rows(rep: &Report, top: usize) -> Vec<Vec<String>> {
    rep.async_ops
        .iter()
        .take(top)
        .map(|a| {
            let s = &a.stats;
            vec![
                a.op.clone(),
                format!("{}/{}", s.completed, s.issued),
                fmt_ns(a.mean_issue_ns),
                format!("≤ {}", fmt_ns(a.mean_to_completion_ns)),
                if s.timed > 0 {
                    fmt_ns(a.mean_exec_ns)
                } else {
                    "-".to_string()
                },
                fmt_ns(s.blocked_ns),
                format!(
                    "{} ({:.0} %)",
                    fmt_ns(s.overlap_ns),
                    a.overlap_share * 100.0
                ),
                s.waited_right_after.to_string(),
            ]
        })
        .collect()
}

/// Column names of the collective-arrival table (terminal and HTML).
pub const COLLECTIVE_HEADER: [&str; 9] = [
    "operation",
    "calls",
    "ranks",
    "waiting",
    "of time",
    "median skew",
    "max skew",
    "straggler",
    "arrived last",
];

/// The rows of the collective-arrival table, at most `top`.
pub fn collective_rows(rep: &Report, top: usize) -> Vec<Vec<String>> {
    rep.collective_skew
        .iter()
        .take(top)
        .map(|c| {
            vec![
                c.op.clone(),
                c.calls.to_string(),
                c.ranks.to_string(),
                fmt_ns(c.wait_ns),
                pct(c.wait_share),
                fmt_ns(c.median_skew_ns),
                fmt_ns(c.max_skew_ns),
                c.straggler
                    .as_ref()
                    .map_or_else(|| "-".to_string(), |l| who(l.rank, l.pid)),
                c.late
                    .iter()
                    .take(3)
                    .map(|l| format!("{} last {}/{}", who(l.rank, l.pid), l.last, c.calls))
                    .collect::<Vec<_>>()
                    .join(", "),
            ]
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(fmt_ns(850), "850 ns");
        assert_eq!(fmt_ns(12_345), "12.3 µs");
        assert_eq!(fmt_ns(4_560_000), "4.56 ms");
        assert_eq!(fmt_ns(1_234_000_000), "1.23 s");
        assert_eq!(fmt_bytes(512), "512 B");
        assert_eq!(fmt_bytes(1536), "1.5 KiB");
        assert_eq!(fmt_bytes(3 << 20), "3.00 MiB");
        assert_eq!(fmt_bytes_short(4096), "4K");
        assert_eq!(fmt_bytes_short(1 << 20), "1M");
        assert_eq!(fmt_bytes_short(3), "3");
        assert_eq!(pct(0.1234), "12.3%");
    }

    #[test]
    fn the_header_names_a_few_programs_and_counts_the_rest() {
        use crate::analysis::{ProgramRow, RunInfo};
        let mut run = RunInfo {
            executables: (0..139)
                .map(|i| format!("/suite/build/test_{i:03}"))
                .collect(),
            processes: 832,
            runs: 212,
            ..Default::default()
        };
        run.programs = (0..139)
            .map(|i| ProgramRow {
                program: format!("test_{i:03}"),
                processes: 6,
                runs: if i == 0 { 3 } else { 1 },
                call_ns: 1_000_000_000 - i * 1000,
            })
            .collect();
        let s = programs_summary(&run);
        assert_eq!(
            s,
            "139 programs, 212 runs of 832 processes; most HDF5 time: test_000 (3 runs, 6 \
             processes, 1.00 s), test_001 (6 processes, 1000.00 ms), test_002 (6 \
             processes, 1000.00 ms), and 136 more"
        );
        // One program: its executable, as before.
        run.executables.truncate(1);
        run.programs.truncate(1);
        assert_eq!(programs_summary(&run), "/suite/build/test_000 (3 runs)");
    }
}
