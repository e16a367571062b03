//! The terminal report: plain aligned tables, optionally colored with ANSI escapes.

use super::{fmt_bw, fmt_bytes, fmt_ns, pct, who};
use crate::analysis::Report;
use crate::insights::Level;
use std::fmt::Write;

/// Options of the terminal renderer.
#[derive(Debug, Clone, Copy)]
pub struct TermOptions {
    /// Use ANSI colors (the binary turns this off for `NO_COLOR` and non-terminals).
    pub color: bool,
    /// Rows shown per table.
    pub top: usize,
}

impl Default for TermOptions {
    fn default() -> Self {
        TermOptions {
            color: false,
            top: 15,
        }
    }
}

struct Style {
    color: bool,
}

impl Style {
    fn paint(&self, code: &str, s: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    }
    fn bold(&self, s: &str) -> String {
        self.paint("1", s)
    }
    fn dim(&self, s: &str) -> String {
        self.paint("2", s)
    }
    fn level(&self, l: Level) -> String {
        let tag = format!("[{}]", l.name());
        let code = match l {
            Level::High => "1;31",
            Level::Warn => "1;33",
            Level::Info => "1;36",
            Level::Ok => "1;32",
        };
        self.paint(code, &format!("{tag:<6}"))
    }
}

/// A table with a header; numeric-looking columns are right-aligned.
fn table(st: &Style, out: &mut String, header: &[&str], rows: &[Vec<String>]) {
    let n = header.len();
    let mut w: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for r in rows {
        for (i, c) in r.iter().enumerate().take(n) {
            w[i] = w[i].max(c.chars().count());
        }
    }
    let right: Vec<bool> = (0..n)
        .map(|i| {
            i > 0
                && rows.iter().all(|r| {
                    r[i].chars()
                        .next()
                        .is_none_or(|c| c.is_ascii_digit() || c == '-' || c == '×')
                })
        })
        .collect();
    let fmt_row = |cells: Vec<String>| -> String {
        let mut line = String::from("  ");
        for (i, c) in cells.iter().enumerate() {
            let pad = w[i].saturating_sub(c.chars().count());
            if right[i] {
                line.push_str(&" ".repeat(pad));
                line.push_str(c);
            } else {
                line.push_str(c);
                if i + 1 < n {
                    line.push_str(&" ".repeat(pad));
                }
            }
            if i + 1 < n {
                line.push_str("  ");
            }
        }
        line.trim_end().to_string()
    };
    let _ = writeln!(
        out,
        "{}",
        st.dim(&fmt_row(header.iter().map(|s| s.to_string()).collect()))
    );
    for r in rows {
        let _ = writeln!(out, "{}", fmt_row(r.clone()));
    }
}

fn section(st: &Style, out: &mut String, title: &str) {
    let _ = writeln!(out, "\n{}", st.bold(title));
}

/// Renders the report for a terminal.
pub fn render(rep: &Report, opt: &TermOptions) -> String {
    let st = Style { color: opt.color };
    let top = opt.top;
    let mut o = String::new();
    let run = &rep.run;
    let _ = writeln!(
        o,
        "{}",
        st.bold(&format!("h5prov report: {}", run.inputs.join(", ")))
    );
    let _ = writeln!(
        o,
        "  {} records from {} process(es){} in {} trace / {} objects / {} meta file(s)",
        run.records,
        run.processes,
        if run.mpi_io_processes > 0 {
            format!(
                " ({} MPI ranks using MPI-IO, world size {})",
                run.mpi_io_processes, run.world_size
            )
        } else if run.ranks > 0 {
            format!(" ({} with a launcher rank, no MPI-IO)", run.ranks)
        } else {
            String::new()
        },
        run.trace_files,
        run.objects_files,
        run.meta_files
    );
    if let Some(sc) = &run.stream_capture {
        let _ = writeln!(
            o,
            "  {} a stream capture (h5prov collect --out): {} message(s) from {} process(es) \
             in {} capture file(s){}",
            st.paint("33", "input:"),
            sc.messages,
            sc.processes,
            sc.files,
            if sc.without_hello > 0 {
                format!(", {} without their hello", sc.without_hello)
            } else {
                String::new()
            }
        );
        let _ = writeln!(
            o,
            "  not in a stream: columns {} (empty: VOL self time is the whole call); {}",
            sc.missing_columns.join(", "),
            sc.missing.join("; ")
        );
    }
    // A capture alone has no `under_ns`: its self time would be the whole call.
    let self_time = if run.stream_capture.is_some() && run.trace_files == 0 {
        "not in a stream".to_string()
    } else {
        fmt_ns(run.self_ns)
    };
    let _ = writeln!(
        o,
        "  wall {}, time in HDF5 calls {} (VOL self time {self_time}), quantiles ±{}",
        fmt_ns(run.wall_ns),
        fmt_ns(run.call_ns),
        pct(run.quantile_relative_error)
    );
    if !run.hdf5_versions.is_empty() || !run.levels.is_empty() {
        let _ = writeln!(
            o,
            "  HDF5 {}; level {}; {}",
            if run.hdf5_versions.is_empty() {
                "version not known"
            } else {
                ""
            }
            .to_string()
                + &run.hdf5_versions.join("/"),
            run.levels.join("/"),
            super::programs_summary(run)
        );
    }
    for t in &run.truncated {
        let _ = writeln!(
            o,
            "  {} truncated last line at {t}",
            st.paint("33", "note:")
        );
    }
    if let Some(m) = &run.first_malformed {
        let _ = writeln!(
            o,
            "  {} {} malformed row(s) skipped, first at {m}",
            st.paint("33", "note:"),
            run.malformed_rows
        );
    }
    // Unreadable meta files are among the warnings (`meta_unreadable`, `meta_wrong_type`).
    for w in &rep.warnings {
        let _ = writeln!(o, "  {} {}", st.paint("1;33", "warning:"), w.message);
    }

    section(&st, &mut o, "INSIGHTS");
    for i in &rep.insights {
        let _ = writeln!(o, "  {} {}", st.level(i.level), st.bold(&i.title));
        let _ = writeln!(o, "         {}", i.detail);
        let _ = writeln!(o, "         {} {}", st.paint("32", "→"), i.recommendation);
    }
    if !rep.timing_notes.is_empty() {
        section(
            &st,
            &mut o,
            "TIMING NOTES (durations alone: not material, not robust or nothing to change)",
        );
        for i in &rep.timing_notes {
            let _ = writeln!(o, "  {} {}", st.dim(&format!("[{}]", i.code)), i.title);
            let _ = writeln!(o, "         {}", i.detail);
            let _ = writeln!(o, "         {} {}", st.paint("32", "→"), i.recommendation);
        }
    }

    section(&st, &mut o, "HOT FUNCTIONS by total time");
    table(&st, &mut o, &super::HOT_HEADER, &super::hot_rows(rep, top));
    if rep.ops.len() > top {
        let _ = writeln!(
            o,
            "  {}",
            st.dim(&format!(
                "… {} more (see --json/--csv)",
                rep.ops.len() - top
            ))
        );
    }

    section(&st, &mut o, "HOT FUNCTIONS by count");
    let mut by_count: Vec<_> = rep.ops.iter().collect();
    by_count.sort_by_key(|r| r.rank_by_count);
    let rows: Vec<Vec<String>> = by_count
        .iter()
        .take(top.min(10))
        .map(|r| {
            vec![
                r.op.clone(),
                r.count.to_string(),
                fmt_ns(r.total_ns),
                fmt_ns(r.mean_ns),
            ]
        })
        .collect();
    table(&st, &mut o, &["operation", "count", "total", "mean"], &rows);

    section(&st, &mut o, "OPERATION FAMILIES");
    let rows: Vec<Vec<String>> = rep
        .families
        .iter()
        .take(top)
        .map(|f| {
            vec![
                f.family.clone(),
                f.ops.to_string(),
                f.count.to_string(),
                fmt_ns(f.total_ns),
                pct(f.share),
                fmt_ns(f.p50_ns),
                fmt_ns(f.p99_ns),
                fmt_ns(f.self_ns),
            ]
        })
        .collect();
    table(
        &st,
        &mut o,
        &[
            "family", "ops", "count", "total", "share", "p50", "p99", "self",
        ],
        &rows,
    );

    section(&st, &mut o, "PER RANK");
    let rows: Vec<Vec<String>> = rep
        .ranks
        .iter()
        .take(top.max(16))
        .map(|r| {
            vec![
                who(r.rank, r.pid),
                r.pid.to_string(),
                r.count.to_string(),
                fmt_ns(r.total_ns),
                fmt_bytes(r.bytes_written),
                fmt_bytes(r.bytes_read),
                r.top_op.clone(),
            ]
        })
        .collect();
    table(
        &st,
        &mut o,
        &[
            "process",
            "pid",
            "calls",
            "time",
            "written",
            "read",
            "top operation",
        ],
        &rows,
    );
    if rep.ranks.len() > top.max(16) {
        let _ = writeln!(
            o,
            "  {}",
            st.dim(&format!("… {} more", rep.ranks.len() - top.max(16)))
        );
    }

    section(
        &st,
        &mut o,
        "STRAGGLER RANKS (modified Z-score > threshold, or Drishti imbalance; of time, or of bytes)",
    );
    if rep.straggler_ranks.is_empty() {
        let _ = writeln!(o, "  none");
    }
    let rows: Vec<Vec<String>> = rep
        .straggler_ranks
        .iter()
        .take(top)
        .map(|s| {
            let names: Vec<String> = s
                .outliers
                .iter()
                .take(4)
                .map(|x| {
                    let data = if x.rule.contains("bytes") {
                        format!(", data ×{:.1}", x.bytes_x_median)
                    } else {
                        String::new()
                    };
                    format!(
                        "{} ×{:.1} ({}{data})",
                        who(x.rank, x.pid),
                        x.x_median,
                        x.rule
                    )
                })
                .collect();
            vec![
                // Which run's processes were compared, when the directory holds several.
                if run.runs > 1 {
                    format!("{} ({})", s.op, s.group)
                } else {
                    s.op.clone()
                },
                pct(s.op_share),
                s.ranks.to_string(),
                fmt_ns(s.median_total_ns),
                fmt_ns(s.slowest_ns),
                pct(s.imbalance),
                names.join(", "),
            ]
        })
        .collect();
    if !rows.is_empty() {
        table(
            &st,
            &mut o,
            &[
                "operation",
                "share",
                "ranks",
                "median",
                "slowest",
                "imbalance",
                "stragglers",
            ],
            &rows,
        );
    }

    if !rep.collective_skew.is_empty() {
        section(
            &st,
            &mut o,
            "COLLECTIVE ARRIVAL (k-th call of each collective op matched across ranks; who the others wait for)",
        );
        table(
            &st,
            &mut o,
            &super::COLLECTIVE_HEADER,
            &super::collective_rows(rep, top),
        );
    }

    section(
        &st,
        &mut o,
        "STRAGGLER CALLS (modified Z-score of duration)",
    );
    if rep.straggler_calls.is_empty() {
        let _ = writeln!(o, "  none");
    }
    let mut rows = Vec::new();
    for s in rep.straggler_calls.iter().take(top) {
        for c in s.calls.iter().take(3) {
            rows.push(vec![
                s.op.clone(),
                fmt_ns(c.total_ns),
                format!("×{:.1}", c.x_median),
                who(c.rank, c.pid),
                c.seq.to_string(),
                format!("+{}", fmt_ns(c.offset_ns)),
                if c.path.is_empty() {
                    c.file.clone()
                } else {
                    format!("{}:{}", c.file, c.path)
                },
            ]);
        }
    }
    if !rows.is_empty() {
        table(
            &st,
            &mut o,
            &[
                "operation",
                "duration",
                "vs median",
                "process",
                "seq",
                "at",
                "object",
            ],
            &rows,
        );
    }

    if !rep.async_ops.is_empty() {
        section(
            &st,
            &mut o,
            &format!("ASYNCHRONOUS OPERATIONS ({})", super::ASYNC_NOTE),
        );
        table(
            &st,
            &mut o,
            &super::ASYNC_HEADER,
            &super::async_rows(rep, top),
        );
    }

    if !rep.tail_heavy.is_empty() {
        section(&st, &mut o, "TAIL-HEAVY OPERATIONS (p99/p50)");
        let rows: Vec<Vec<String>> = rep
            .tail_heavy
            .iter()
            .take(top)
            .map(|t| {
                vec![
                    t.op.clone(),
                    t.count.to_string(),
                    fmt_ns(t.p50_ns),
                    fmt_ns(t.p99_ns),
                    format!("{:.1}", t.ratio),
                ]
            })
            .collect();
        table(
            &st,
            &mut o,
            &["operation", "count", "p50", "p99", "ratio"],
            &rows,
        );
    }

    section(&st, &mut o, "FILES");
    let rows: Vec<Vec<String>> = rep
        .files
        .iter()
        .take(top)
        .map(|f| {
            vec![
                f.file.clone(),
                f.procs.to_string(),
                f.opens.to_string(),
                f.calls.to_string(),
                fmt_ns(f.total_ns),
                fmt_ns(f.meta_ns),
                f.writes.to_string(),
                fmt_bytes(f.bytes_written),
                f.reads.to_string(),
                fmt_bytes(f.bytes_read),
                fmt_bw(f.bandwidth_bps),
            ]
        })
        .collect();
    table(
        &st,
        &mut o,
        &[
            "file",
            "procs",
            "opens",
            "calls",
            "time",
            "metadata",
            "writes",
            "written",
            "reads",
            "read",
            "bandwidth",
        ],
        &rows,
    );

    section(&st, &mut o, "TOP DATASETS by time");
    let rows: Vec<Vec<String>> = rep
        .datasets
        .iter()
        .take(top)
        .map(|d| {
            vec![
                format!("{}:{}", d.file, d.path),
                if d.layout.is_empty() {
                    "-".into()
                } else {
                    d.layout.to_string()
                },
                d.opens.to_string(),
                d.writes.to_string(),
                fmt_bytes(d.bytes_written),
                d.reads.to_string(),
                fmt_bytes(d.bytes_read),
                fmt_ns(d.total_ns),
                fmt_bw(d.bandwidth_bps),
                format!("{}/{}/{}", d.ind_io, d.coll_io, d.broken_coll_io),
            ]
        })
        .collect();
    table(
        &st,
        &mut o,
        &[
            "dataset",
            "layout",
            "opens",
            "writes",
            "written",
            "reads",
            "read",
            "time",
            "bandwidth",
            "ind/coll/broken",
        ],
        &rows,
    );
    if rep.datasets.len() > top {
        let _ = writeln!(
            o,
            "  {}",
            st.dim(&format!("… {} more", rep.datasets.len() - top))
        );
    }

    let t = &rep.transfers;
    if t.independent + t.collective + t.broken_collective > 0 || !t.by_mode.is_empty() {
        section(&st, &mut o, "TRANSFER MODES");
        let _ = writeln!(
            o,
            "  independent {}, collective {}, requested collective but not done collectively {}",
            t.independent, t.collective, t.broken_collective
        );
        for m in &t.by_mode {
            let req = if m.requested.is_empty() {
                "-"
            } else {
                &m.requested
            };
            let act = if m.actual.is_empty() { "-" } else { &m.actual };
            let _ = writeln!(o, "  requested {req:<12} actual {act:<12} {}", m.count);
        }
    }

    section(&st, &mut o, "I/O PHASES");
    let rows: Vec<Vec<String>> = rep
        .phases
        .iter()
        .map(|p| {
            vec![
                p.index.to_string(),
                p.class.clone(),
                format!("+{}", fmt_ns(p.start_ns.saturating_sub(run.first_ns))),
                fmt_ns(p.end_ns - p.start_ns),
                p.ranks.to_string(),
                p.ops.to_string(),
                fmt_bytes(p.bytes_written),
                fmt_bytes(p.bytes_read),
                fmt_bw(p.bandwidth_bps),
                if p.dominant_op.is_empty() {
                    "-".into()
                } else {
                    format!("{} {}", p.dominant_op, pct(p.dominant_share))
                },
            ]
        })
        .collect();
    table(
        &st,
        &mut o,
        &[
            "#",
            "activity",
            "start",
            "duration",
            "ranks",
            "calls",
            "written",
            "read",
            "bandwidth",
            "dominant operation",
        ],
        &rows,
    );
    o
}
