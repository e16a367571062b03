//! One self-contained HTML file: inline CSS and SVG plots, no scripts, no external assets.

use super::svg::{self, esc};
use super::{fmt_bw, fmt_bytes, fmt_ns, pct, who};
use crate::analysis::Report;
use std::fmt::Write;

const CSS: &str =
    "body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:900px;color:#222}\
h1{font-size:22px;margin-bottom:4px}h2{font-size:17px;margin-top:28px;border-bottom:1px solid #ddd}\
.meta{color:#555}table{border-collapse:collapse;font-size:12.5px;margin:6px 0}\
td,th{padding:2px 8px;text-align:right;border-bottom:1px solid #eee}\
td:first-child,th:first-child{text-align:left}th{background:#f5f5f5}\
.plot{display:block;margin:8px 0}.plot .lbl{font-size:12px;fill:#222}\
.plot .val,.plot .axis{font-size:10.5px;fill:#555}.plot .mark{font-size:13px;fill:#000}\
.ins{border-left:5px solid #999;padding:4px 10px;margin:8px 0;background:#fafafa}\
.ins.HIGH{border-color:#d62728}.ins.WARN{border-color:#ff9f1c}.ins.INFO{border-color:#1f77b4}\
.ins.OK{border-color:#2ca02c}.lvl{font-weight:bold}.rec{color:#2a6}";

fn table(out: &mut String, header: &[&str], rows: &[Vec<String>]) {
    out.push_str("<table><tr>");
    for h in header {
        let _ = write!(out, "<th>{}</th>", esc(h));
    }
    out.push_str("</tr>");
    for r in rows {
        out.push_str("<tr>");
        for c in r {
            let _ = write!(out, "<td>{}</td>", esc(c));
        }
        out.push_str("</tr>");
    }
    out.push_str("</table>");
}

/// Renders the report as HTML. `top` limits table rows and plotted operations.
pub fn render(rep: &Report, top: usize) -> String {
    let run = &rep.run;
    let mut o = String::new();
    let _ = write!(
        o,
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>h5prov report</title><style>{CSS}</style></head><body>"
    );
    let _ = write!(
        o,
        "<h1>h5prov report</h1><p class=\"meta\">{}<br>",
        esc(&run.inputs.join(", "))
    );
    let _ = write!(
        o,
        "{} records from {} process(es), {} trace file(s); wall {}; time in HDF5 calls {}; quantiles ±{}</p>",
        run.records,
        run.processes,
        run.trace_files,
        esc(&fmt_ns(run.wall_ns)),
        esc(&fmt_ns(run.call_ns)),
        esc(&pct(run.quantile_relative_error))
    );
    let programs = super::programs_summary(run);
    if !programs.is_empty() {
        let _ = write!(o, "<p class=\"meta\">{}</p>", esc(&programs));
    }

    if !rep.warnings.is_empty() {
        o.push_str("<h2>Warnings about the traces</h2>");
        for w in &rep.warnings {
            let _ = write!(
                o,
                "<div class=\"ins WARN\"><span class=\"lvl\">{}</span> {}</div>",
                w.kind.name(),
                esc(&w.message)
            );
        }
    }

    o.push_str("<h2>Insights</h2>");
    for i in &rep.insights {
        let _ = write!(
            o,
            "<div class=\"ins {l}\"><span class=\"lvl\">{l}</span> {t}<br><small>{d}</small><br><span class=\"rec\">→ {r}</span></div>",
            l = i.level.name(),
            t = esc(&i.title),
            d = esc(&i.detail),
            r = esc(&i.recommendation)
        );
    }

    if !rep.timing_notes.is_empty() {
        o.push_str(
            "<h2>Timing notes</h2><p class=\"meta\">Durations alone: not material, not \
             robust or nothing to change.</p>",
        );
        for i in &rep.timing_notes {
            let _ = write!(
                o,
                "<div class=\"ins NOTE\"><span class=\"lvl\">{c}</span> {t}<br><small>{d}</small><br><span class=\"rec\">→ {r}</span></div>",
                c = esc(&i.code),
                t = esc(&i.title),
                d = esc(&i.detail),
                r = esc(&i.recommendation)
            );
        }
    }

    o.push_str("<h2>Timeline and I/O phases</h2>");
    o.push_str(&svg::timeline(&rep.windows, &rep.phases, run.first_ns));
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
                p.dominant_op.clone(),
            ]
        })
        .collect();
    table(
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
            "dominant",
        ],
        &rows,
    );

    o.push_str("<h2>Hot functions</h2>");
    o.push_str(&svg::hot_bars(&rep.ops, top));
    table(&mut o, &super::HOT_HEADER, &super::hot_rows(rep, top));

    o.push_str("<h2>Latency distributions</h2>");
    o.push_str(&svg::latency_boxes(&rep.ops, top));

    o.push_str("<h2>Straggler ranks</h2>");
    if rep.straggler_ranks.is_empty() {
        o.push_str("<p>None.</p>");
    }
    for (i, s) in rep.straggler_ranks.iter().take(6).enumerate() {
        // The processes that were compared: those of the group's run.
        let peers: std::collections::BTreeSet<(i64, u32)> = rep
            .ranks
            .iter()
            .filter(|r| r.group == s.group)
            .map(|r| (r.rank, r.pid))
            .collect();
        let totals: Vec<(i64, u32, u64)> = rep
            .rank_ops
            .iter()
            .filter(|r| r.op == s.op && peers.contains(&(r.rank, r.pid)))
            .map(|r| (r.rank, r.pid, r.total_ns))
            .collect();
        if rep.run.runs > 1 {
            let _ = write!(o, "<p class=\"meta\">{}: {}</p>", esc(&s.op), esc(&s.group));
        }
        o.push_str(&svg::rank_bars(s, &totals, i));
    }

    if !rep.collective_skew.is_empty() {
        o.push_str(
            "<h2>Collective arrival</h2><p class=\"meta\">The k-th call of each collective \
             operation matched across ranks: the time ranks spent inside it before the last \
             rank arrived, and who arrived last.</p>",
        );
        table(
            &mut o,
            &super::COLLECTIVE_HEADER,
            &super::collective_rows(rep, top),
        );
    }

    if !rep.async_ops.is_empty() {
        o.push_str("<h2>Asynchronous operations</h2><p class=\"meta\">");
        o.push_str(&esc(super::ASYNC_NOTE));
        o.push_str("</p>");
        table(&mut o, &super::ASYNC_HEADER, &super::async_rows(rep, top));
    }

    o.push_str("<h2>Straggler calls</h2>");
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
                format!("{}:{}", c.file, c.path),
            ]);
        }
    }
    if rows.is_empty() {
        o.push_str("<p>None.</p>");
    } else {
        table(
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

    o.push_str("<h2>Access sizes</h2>");
    o.push_str(&svg::size_hist(
        &rep.access_sizes.reads,
        &rep.access_sizes.writes,
    ));

    o.push_str("<h2>Top datasets</h2>");
    let rows: Vec<Vec<String>> = rep
        .datasets
        .iter()
        .take(top)
        .map(|d| {
            vec![
                format!("{}:{}", d.file, d.path),
                d.layout.to_string(),
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

    if !rep.dataflow.is_empty() {
        let _ = write!(
            o,
            "<h2>Dataflow</h2><p class=\"meta\">Which programs wrote and read which \
             datasets, across every job read, with the data bytes on each edge (the {} \
             datasets that moved the most).</p>",
            crate::analysis::DATAFLOW_DATASETS
        );
        o.push_str(&svg::dataflow(&rep.dataflow));
    }

    o.push_str("<h2>Per rank</h2>");
    let rows: Vec<Vec<String>> = rep
        .ranks
        .iter()
        .map(|r| {
            vec![
                who(r.rank, r.pid),
                r.count.to_string(),
                fmt_ns(r.total_ns),
                fmt_bytes(r.bytes_written),
                fmt_bytes(r.bytes_read),
                r.top_op.clone(),
            ]
        })
        .collect();
    table(
        &mut o,
        &[
            "process",
            "calls",
            "time",
            "written",
            "read",
            "top operation",
        ],
        &rows,
    );
    o.push_str("</body></html>\n");
    o
}
