//! Hand-written SVG plots for the HTML report. Hand-written rather than a plotting crate:
//! four simple chart types, no fonts or raster backends to ship, and byte-stable output
//! for snapshot tests.

use super::{fmt_bytes, fmt_ns, pct};
use crate::aggregate::timeline::{Phase, Window};
use crate::analysis::{OpRow, StragglerRanks};
use std::fmt::Write;

/// Escapes text for SVG/HTML.
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

const W: f64 = 860.0;
const LABEL_W: f64 = 250.0;
/// Colors of write, read, metadata, idle.
pub const CLASS_COLORS: [&str; 4] = ["#d95f02", "#1b9e77", "#7570b3", "#e8e8e8"];

fn class_color(class: &str) -> &'static str {
    match class {
        "data write" => CLASS_COLORS[0],
        "data read" => CLASS_COLORS[1],
        "metadata" => CLASS_COLORS[2],
        _ => CLASS_COLORS[3],
    }
}

fn open(out: &mut String, id: &str, h: f64, title: &str) {
    let _ = write!(
        out,
        r#"<svg id="{id}" class="plot" xmlns="http://www.w3.org/2000/svg" width="{W}" height="{h}" viewBox="0 0 {W} {h}" role="img" aria-label="{t}"><title>{t}</title>"#,
        t = esc(title)
    );
}

/// Horizontal bars of total time per operation (hot functions).
pub fn hot_bars(ops: &[OpRow], top: usize) -> String {
    let rows: Vec<&OpRow> = ops.iter().take(top).collect();
    let bar_h = 20.0;
    let h = 30.0 + rows.len() as f64 * (bar_h + 6.0) + 10.0;
    let mut o = String::new();
    open(&mut o, "hot-bars", h, "Hot functions by total time");
    let max = rows.iter().map(|r| r.total_ns).max().unwrap_or(1).max(1) as f64;
    let plot_w = W - LABEL_W - 150.0;
    for (i, r) in rows.iter().enumerate() {
        let y = 20.0 + i as f64 * (bar_h + 6.0);
        let w = (r.total_ns as f64 / max * plot_w).max(1.0);
        let color = class_color(&r.class);
        let _ = write!(
            o,
            r#"<text x="{lx}" y="{ty}" text-anchor="end" class="lbl">{name}</text><rect x="{LABEL_W}" y="{y}" width="{w:.1}" height="{bar_h}" fill="{color}"><title>{name}: {tot} in {cnt} calls ({share})</title></rect><text x="{vx:.1}" y="{ty}" class="val">{tot} · {share}</text>"#,
            lx = LABEL_W - 8.0,
            ty = y + 14.0,
            name = esc(&r.op),
            tot = fmt_ns(r.total_ns),
            cnt = r.count,
            share = pct(r.share),
            vx = LABEL_W + w + 6.0,
        );
    }
    o.push_str("</svg>");
    o
}

fn log_x(v: f64, lo: f64, hi: f64, x0: f64, w: f64) -> f64 {
    let v = v.max(lo);
    x0 + (v.ln() - lo.ln()) / (hi.ln() - lo.ln()).max(1e-9) * w
}

/// Box plots of per-operation latency (log scale): whiskers min–p99, box p25–p75, median
/// line, dot at p95, cross at max.
pub fn latency_boxes(ops: &[OpRow], top: usize) -> String {
    let rows: Vec<&OpRow> = ops.iter().take(top).collect();
    let row_h = 26.0;
    let h = 50.0 + rows.len() as f64 * row_h + 20.0;
    let mut o = String::new();
    open(
        &mut o,
        "latency-boxes",
        h,
        "Latency distribution per operation (log scale)",
    );
    let lo = rows.iter().map(|r| r.min_ns.max(1)).min().unwrap_or(1) as f64 / 1.5;
    let hi = rows.iter().map(|r| r.max_ns.max(1)).max().unwrap_or(10) as f64 * 1.5;
    let (hi, lo) = (hi.max(lo * 10.0), lo.max(0.5));
    let x0 = LABEL_W;
    let pw = W - LABEL_W - 30.0;
    // Decade grid.
    let mut d = 10f64.powf(lo.log10().floor());
    while d <= hi {
        if d >= lo {
            let x = log_x(d, lo, hi, x0, pw);
            let _ = write!(
                o,
                r##"<line x1="{x:.1}" y1="20" x2="{x:.1}" y2="{y2}" stroke="#ddd"/><text x="{x:.1}" y="{ty}" text-anchor="middle" class="axis">{lbl}</text>"##,
                y2 = h - 28.0,
                ty = h - 12.0,
                lbl = fmt_ns(d.round() as u64)
            );
        }
        d *= 10.0;
    }
    for (i, r) in rows.iter().enumerate() {
        let yc = 32.0 + i as f64 * row_h;
        let x = |v: u64| log_x(v.max(1) as f64, lo, hi, x0, pw);
        let color = class_color(&r.class);
        let _ = write!(
            o,
            r##"<g class="box"><title>{name}: min {mn}, p25 {p25}, p50 {p50}, p75 {p75}, p95 {p95}, p99 {p99}, max {mx} ({cnt} calls)</title><text x="{lx}" y="{ty}" text-anchor="end" class="lbl">{name}</text><line x1="{a:.1}" y1="{yc}" x2="{b:.1}" y2="{yc}" stroke="#555"/><line x1="{a:.1}" y1="{y0}" x2="{a:.1}" y2="{y1}" stroke="#555"/><line x1="{b:.1}" y1="{y0}" x2="{b:.1}" y2="{y1}" stroke="#555"/><rect x="{q1:.1}" y="{by}" width="{bw:.1}" height="14" fill="{color}" fill-opacity="0.55" stroke="{color}"/><line x1="{m:.1}" y1="{by}" x2="{m:.1}" y2="{by2}" stroke="#000" stroke-width="2"/><circle cx="{p95x:.1}" cy="{yc}" r="2.5" fill="#000"/><text x="{mxx:.1}" y="{mty}" text-anchor="middle" class="mark">×</text></g>"##,
            name = esc(&r.op),
            mn = fmt_ns(r.min_ns),
            p25 = fmt_ns(r.p25_ns),
            p50 = fmt_ns(r.p50_ns),
            p75 = fmt_ns(r.p75_ns),
            p95 = fmt_ns(r.p95_ns),
            p99 = fmt_ns(r.p99_ns),
            mx = fmt_ns(r.max_ns),
            cnt = r.count,
            lx = LABEL_W - 8.0,
            ty = yc + 4.0,
            a = x(r.min_ns),
            b = x(r.p99_ns),
            y0 = yc - 5.0,
            y1 = yc + 5.0,
            q1 = x(r.p25_ns),
            bw = (x(r.p75_ns) - x(r.p25_ns)).max(1.5),
            by = yc - 7.0,
            by2 = yc + 7.0,
            m = x(r.p50_ns),
            p95x = x(r.p95_ns),
            mxx = x(r.max_ns),
            mty = yc + 4.0,
        );
    }
    o.push_str("</svg>");
    o
}

/// Per-rank total time of one straggler operation; flagged ranks in red, median dashed.
pub fn rank_bars(s: &StragglerRanks, totals: &[(i64, u32, u64)], idx: usize) -> String {
    let h = 200.0;
    let mut o = String::new();
    open(
        &mut o,
        &format!("rank-bars-{idx}"),
        h,
        &format!("Per-rank time in {}", s.op),
    );
    let n = totals.len().max(1);
    let x0 = 70.0;
    let pw = W - x0 - 20.0;
    let ph = h - 60.0;
    let max = totals.iter().map(|t| t.2).max().unwrap_or(1).max(1) as f64;
    let bw = (pw / n as f64).min(40.0);
    let _ = write!(
        o,
        r#"<text x="{x0}" y="14" class="lbl">{} — per-rank total time (red: straggler)</text>"#,
        esc(&s.op)
    );
    let _ = write!(
        o,
        r##"<text x="{tx}" y="{ty}" text-anchor="end" class="axis">{m}</text><line x1="{x0}" y1="25" x2="{x0}" y2="{yb}" stroke="#999"/>"##,
        tx = x0 - 4.0,
        ty = 30.0,
        m = fmt_ns(max as u64),
        yb = 25.0 + ph
    );
    for (i, (rank, pid, t)) in totals.iter().enumerate() {
        let bh = (*t as f64 / max * ph).max(1.0);
        let x = x0 + 2.0 + i as f64 * bw;
        let flagged = s.outliers.iter().any(|o| o.rank == *rank && o.pid == *pid);
        let color = if flagged { "#d62728" } else { "#6baed6" };
        let label = if *rank >= 0 {
            rank.to_string()
        } else {
            format!("p{pid}")
        };
        let _ = write!(
            o,
            r#"<rect x="{x:.1}" y="{y:.1}" width="{w:.1}" height="{bh:.1}" fill="{color}"><title>{who}: {t}</title></rect>"#,
            y = 25.0 + ph - bh,
            w = (bw - 2.0).max(1.0),
            who = esc(&super::who(*rank, *pid)),
            t = fmt_ns(*t)
        );
        if n <= 64 || i % (n / 32).max(1) == 0 {
            let _ = write!(
                o,
                r#"<text x="{cx:.1}" y="{ly}" text-anchor="middle" class="axis">{label}</text>"#,
                cx = x + bw / 2.0 - 1.0,
                ly = 25.0 + ph + 14.0,
                label = esc(&label)
            );
        }
    }
    let my = 25.0 + ph - s.median_total_ns as f64 / max * ph;
    let _ = write!(
        o,
        r##"<line x1="{x0}" y1="{my:.1}" x2="{x1}" y2="{my:.1}" stroke="#333" stroke-dasharray="4 3"><title>median {m}</title></line><text x="{x1}" y="{ty:.1}" text-anchor="end" class="axis">median {m}</text>"##,
        x1 = x0 + pw,
        ty = my - 4.0,
        m = fmt_ns(s.median_total_ns)
    );
    let _ = write!(
        o,
        r#"<text x="{x0}" y="{ly}" class="axis">rank</text>"#,
        ly = h - 8.0
    );
    o.push_str("</svg>");
    o
}

/// The run's timeline: phase bands behind stacked bars of time per window by activity.
pub fn timeline(windows: &[Window], phases: &[Phase], first_ns: u64) -> String {
    let h = 230.0;
    let mut o = String::new();
    open(
        &mut o,
        "timeline",
        h,
        "Timeline of I/O activity with phases",
    );
    let x0 = 60.0;
    let pw = W - x0 - 20.0;
    let (top, ph) = (40.0, 140.0);
    let start = windows
        .first()
        .map_or(first_ns, |w| w.start_ns.min(first_ns));
    let end = windows
        .last()
        .map_or(first_ns + 1, |w| w.end_ns)
        .max(start + 1);
    let span = (end - start) as f64;
    let x = |t: u64| x0 + (t.saturating_sub(start)) as f64 / span * pw;
    for p in phases {
        let (a, b) = (x(p.start_ns), x(p.end_ns));
        let _ = write!(
            o,
            r#"<rect class="phase" x="{a:.1}" y="22" width="{w:.1}" height="{hh}" fill="{c}" fill-opacity="0.18"><title>phase {i}: {cls}, {d}, {r} ranks, {ops} calls, dominant {dom}</title></rect><text x="{a:.1}" y="34" class="axis">{i}</text>"#,
            w = (b - a).max(1.0),
            hh = ph + 18.0,
            c = class_color(&p.class),
            i = p.index,
            cls = esc(&p.class),
            d = fmt_ns(p.end_ns - p.start_ns),
            r = p.ranks,
            ops = p.ops,
            dom = esc(&p.dominant_op),
        );
    }
    let max = windows
        .iter()
        .map(|w| w.write_ns + w.read_ns + w.meta_ns)
        .max()
        .unwrap_or(1)
        .max(1) as f64;
    for w in windows {
        let (a, b) = (x(w.start_ns), x(w.end_ns));
        let bw = (b - a).max(0.8);
        let mut y = top + ph;
        for (v, c) in [
            (w.write_ns, CLASS_COLORS[0]),
            (w.read_ns, CLASS_COLORS[1]),
            (w.meta_ns, CLASS_COLORS[2]),
        ] {
            if v == 0 {
                continue;
            }
            let hh = v as f64 / max * ph;
            y -= hh;
            let _ = write!(
                o,
                r#"<rect x="{a:.1}" y="{y:.1}" width="{bw:.1}" height="{hh:.1}" fill="{c}"/>"#
            );
        }
    }
    let _ = write!(
        o,
        r##"<line x1="{x0}" y1="{yb}" x2="{x1}" y2="{yb}" stroke="#999"/><text x="{x0}" y="{ty}" class="axis">0</text><text x="{x1}" y="{ty}" text-anchor="end" class="axis">{span}</text><text x="{cx}" y="{ty}" text-anchor="middle" class="axis">time since first call</text>"##,
        yb = top + ph,
        x1 = x0 + pw,
        ty = top + ph + 16.0,
        span = fmt_ns(end - start),
        cx = x0 + pw / 2.0
    );
    let mut lx = x0;
    for (name, c) in [
        ("data write", CLASS_COLORS[0]),
        ("data read", CLASS_COLORS[1]),
        ("metadata", CLASS_COLORS[2]),
    ] {
        let _ = write!(
            o,
            r#"<rect x="{lx}" y="{ly}" width="12" height="12" fill="{c}"/><text x="{tx}" y="{ty}" class="axis">{name}</text>"#,
            ly = h - 20.0,
            tx = lx + 16.0,
            ty = h - 10.0
        );
        lx += 110.0;
    }
    let _ = write!(
        o,
        r#"<text x="{tx}" y="{ty}" class="axis">bars: time in calls per window; bands: phases; peak {p}</text>"#,
        tx = lx + 10.0,
        ty = h - 10.0,
        p = fmt_ns(max as u64)
    );
    o.push_str("</svg>");
    o
}

/// Bars of the access-size histogram (power-of-two buckets).
pub fn size_hist(reads: &[u64], writes: &[u64]) -> String {
    let n = reads.len().max(writes.len());
    let h = 190.0;
    let mut o = String::new();
    open(
        &mut o,
        "size-hist",
        h,
        "Access sizes (power-of-two buckets)",
    );
    if n == 0 {
        o.push_str(r#"<text x="20" y="40" class="lbl">no data accesses</text></svg>"#);
        return o;
    }
    let x0 = 60.0;
    let pw = W - x0 - 20.0;
    let ph = 120.0;
    let max = reads
        .iter()
        .chain(writes)
        .copied()
        .max()
        .unwrap_or(1)
        .max(1) as f64;
    let bw = (pw / n as f64).min(60.0);
    for i in 0..n {
        let r = reads.get(i).copied().unwrap_or(0);
        let w = writes.get(i).copied().unwrap_or(0);
        let x = x0 + i as f64 * bw;
        for (k, (v, c)) in [(w, CLASS_COLORS[0]), (r, CLASS_COLORS[1])]
            .into_iter()
            .enumerate()
        {
            if v == 0 {
                continue;
            }
            let bh = (v as f64 / max * ph).max(1.0);
            let _ = write!(
                o,
                r#"<rect x="{xx:.1}" y="{y:.1}" width="{ww:.1}" height="{bh:.1}" fill="{c}"><title>{what} {lbl}: {v}</title></rect>"#,
                xx = x + 1.0 + k as f64 * (bw - 2.0) / 2.0,
                y = 20.0 + ph - bh,
                ww = ((bw - 2.0) / 2.0).max(0.5),
                what = if k == 0 { "writes" } else { "reads" },
                lbl = esc(&bucket_range(i)),
            );
        }
        if n <= 24 || i % 2 == 0 {
            let _ = write!(
                o,
                r#"<text x="{cx:.1}" y="{ly}" text-anchor="middle" class="axis">{lbl}</text>"#,
                cx = x + bw / 2.0,
                ly = 20.0 + ph + 14.0,
                lbl = esc(&crate::analysis::bucket_label(i))
            );
        }
    }
    let _ = write!(
        o,
        r#"<text x="{x0}" y="{ty}" class="axis">access size ≥ (bytes); orange: writes, green: reads</text>"#,
        ty = h - 10.0
    );
    o.push_str("</svg>");
    o
}

fn bucket_range(i: usize) -> String {
    if i == 0 {
        "0 B".into()
    } else {
        format!(
            "{}–{}",
            fmt_bytes(1u64 << (i - 1)),
            fmt_bytes(((1u128 << i) - 1).min(u64::MAX as u128) as u64)
        )
    }
}

/// `s` cut to `n` characters, with `…` when cut.
fn clip(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        return s.to_string();
    }
    let tail: String = s
        .chars()
        .rev()
        .take(n - 1)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    format!("…{tail}")
}

/// The dataflow graph: programs that wrote (left) → datasets (middle) → programs that
/// read (right), one edge per program and dataset with its bytes on it; write edges in
/// the write color, read edges in the read color, widths by bytes (log scale).
pub fn dataflow(edges: &[crate::analysis::FlowEdge]) -> String {
    use std::collections::BTreeMap;
    let dataset = |e: &crate::analysis::FlowEdge| format!("{}:{}", e.file, e.dataset);
    let mut datasets: Vec<String> = Vec::new();
    for e in edges {
        let d = dataset(e);
        if !datasets.contains(&d) {
            datasets.push(d);
        }
    }
    let column = |f: &dyn Fn(&crate::analysis::FlowEdge) -> bool| -> BTreeMap<&str, usize> {
        let mut names: Vec<&str> = edges
            .iter()
            .filter(|e| f(e))
            .map(|e| e.program.as_str())
            .collect();
        names.sort_unstable();
        names.dedup();
        names.into_iter().enumerate().map(|(i, n)| (n, i)).collect()
    };
    let writers = column(&|e| e.bytes_written > 0);
    let readers = column(&|e| e.bytes_read > 0);
    let (row, top, box_w, box_h) = (30.0, 34.0, 200.0, 22.0);
    let rows = writers.len().max(readers.len()).max(datasets.len()) as f64;
    let h = top + rows * row + 10.0;
    let (xw, xd, xr) = (10.0, 330.0, 650.0);
    let y = |i: usize| top + i as f64 * row;
    let max = edges
        .iter()
        .map(|e| e.bytes_read.max(e.bytes_written))
        .max()
        .unwrap_or(1)
        .max(2) as f64;
    let width = |b: u64| 1.0 + 5.0 * (b.max(1) as f64).ln() / max.ln();
    let mut o = String::new();
    open(
        &mut o,
        "dataflow",
        h,
        "Dataflow: programs that wrote, datasets, programs that read",
    );
    for (x, t) in [(xw, "wrote"), (xd, "dataset"), (xr, "read")] {
        let _ = write!(o, r#"<text x="{x}" y="18" class="axis">{t}</text>"#);
    }
    let node = |o: &mut String, x: f64, i: usize, name: &str, fill: &str| {
        let _ = write!(
            o,
            r##"<rect x="{x}" y="{y:.1}" width="{box_w}" height="{box_h}" fill="{fill}" stroke="#999"><title>{t}</title></rect><text x="{tx}" y="{ty:.1}" class="lbl">{c}</text>"##,
            y = y(i),
            t = esc(name),
            tx = x + 5.0,
            ty = y(i) + 15.0,
            c = esc(&clip(name, 30)),
        );
    };
    for (i, d) in datasets.iter().enumerate() {
        node(&mut o, xd, i, d, "#f5f5f5");
    }
    for (n, i) in &writers {
        node(&mut o, xw, *i, n, "#fff");
    }
    for (n, i) in &readers {
        node(&mut o, xr, *i, n, "#fff");
    }
    for e in edges {
        let d = datasets.iter().position(|x| *x == dataset(e)).unwrap_or(0);
        let yd = y(d) + box_h / 2.0;
        let mut edge = |x0: f64, y0: f64, x1: f64, y1: f64, bytes: u64, color: &str, verb: &str| {
            let mx = (x0 + x1) / 2.0;
            let _ = write!(
                o,
                r#"<path d="M{x0},{y0:.1} C{mx},{y0:.1} {mx},{y1:.1} {x1},{y1:.1}" fill="none" stroke="{color}" stroke-opacity="0.7" stroke-width="{w:.1}"><title>{p} {verb} {b} of {ds}</title></path><text x="{mx}" y="{ty:.1}" text-anchor="middle" class="val">{b}</text>"#,
                w = width(bytes),
                p = esc(&e.program),
                b = fmt_bytes(bytes),
                ds = esc(&dataset(e)),
                ty = (y0 + y1) / 2.0 - 3.0,
            );
        };
        if let Some(i) = writers
            .get(e.program.as_str())
            .filter(|_| e.bytes_written > 0)
        {
            let yw = y(*i) + box_h / 2.0;
            edge(
                xw + box_w,
                yw,
                xd,
                yd,
                e.bytes_written,
                CLASS_COLORS[0],
                "wrote",
            );
        }
        if let Some(i) = readers.get(e.program.as_str()).filter(|_| e.bytes_read > 0) {
            let yr = y(*i) + box_h / 2.0;
            edge(
                xd + box_w,
                yd,
                xr,
                yr,
                e.bytes_read,
                CLASS_COLORS[1],
                "read",
            );
        }
    }
    o.push_str("</svg>");
    o
}

#[cfg(test)]
mod dataflow_tests {
    use super::*;
    use crate::analysis::FlowEdge;

    #[test]
    fn dataflow_escapes_names_and_puts_bytes_on_edges() {
        let e = |program: &str, r, w| FlowEdge {
            program: program.into(),
            file: "a&b.h5".into(),
            dataset: "/<x>\"".into(),
            bytes_read: r,
            bytes_written: w,
        };
        let svg = dataflow(&[e("sim<1>", 0, 2048), e("ana", 512, 0)]);
        assert!(!svg.contains("<x>") && !svg.contains("sim<1>"), "{svg}");
        assert!(svg.contains("a&amp;b.h5:/&lt;x&gt;&quot;"), "{svg}");
        assert!(svg.contains("sim&lt;1&gt; wrote 2.0 KiB of"), "{svg}");
        assert!(svg.contains("ana read 512 B of"), "{svg}");
        assert_eq!(svg.matches("<path").count(), 2, "{svg}");
    }
}
