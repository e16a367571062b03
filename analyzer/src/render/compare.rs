//! `h5prov compare <runA> <runB>`: per-operation ratios B/A of total time, p50 and p99 (the
//! paper's storage-configuration comparison).

use crate::analysis::Report;
use crate::units::fmt_ns;
use serde::Serialize;
use std::collections::BTreeSet;
use std::fmt::Write;

/// One operation in both runs.
#[derive(Debug, Clone, Serialize)]
pub struct CompareRow {
    /// Operation.
    pub op: String,
    /// Calls in A.
    pub count_a: u64,
    /// Calls in B.
    pub count_b: u64,
    /// Total time in A, ns.
    pub total_a_ns: u64,
    /// Total time in B, ns.
    pub total_b_ns: u64,
    /// B/A of totals (null when A is 0).
    pub total_ratio: Option<f64>,
    /// Median in A, ns.
    pub p50_a_ns: u64,
    /// Median in B, ns.
    pub p50_b_ns: u64,
    /// B/A of medians.
    pub p50_ratio: Option<f64>,
    /// p99 in A, ns.
    pub p99_a_ns: u64,
    /// p99 in B, ns.
    pub p99_b_ns: u64,
    /// B/A of p99s.
    pub p99_ratio: Option<f64>,
}

/// Two runs side by side.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    /// Inputs of run A.
    pub a: String,
    /// Inputs of run B.
    pub b: String,
    /// Wall time of A and B, ns.
    pub wall_ns: (u64, u64),
    /// Time in HDF5 calls in A and B, ns.
    pub call_ns: (u64, u64),
    /// B/A of the time in HDF5 calls.
    pub call_ratio: Option<f64>,
    /// Per operation, by the larger total (descending).
    pub ops: Vec<CompareRow>,
}

fn ratio(b: u64, a: u64) -> Option<f64> {
    (a > 0).then(|| b as f64 / a as f64)
}

/// Compares two reports.
pub fn compare(a: &Report, b: &Report) -> Comparison {
    let names: BTreeSet<&str> = a.ops.iter().chain(&b.ops).map(|o| o.op.as_str()).collect();
    let mut ops: Vec<CompareRow> = names
        .into_iter()
        .map(|n| {
            let x = a.ops.iter().find(|o| o.op == n);
            let y = b.ops.iter().find(|o| o.op == n);
            let g = |r: Option<&crate::analysis::OpRow>, f: fn(&crate::analysis::OpRow) -> u64| {
                r.map_or(0, f)
            };
            CompareRow {
                op: n.to_string(),
                count_a: g(x, |o| o.count),
                count_b: g(y, |o| o.count),
                total_a_ns: g(x, |o| o.total_ns),
                total_b_ns: g(y, |o| o.total_ns),
                total_ratio: ratio(g(y, |o| o.total_ns), g(x, |o| o.total_ns)),
                p50_a_ns: g(x, |o| o.p50_ns),
                p50_b_ns: g(y, |o| o.p50_ns),
                p50_ratio: ratio(g(y, |o| o.p50_ns), g(x, |o| o.p50_ns)),
                p99_a_ns: g(x, |o| o.p99_ns),
                p99_b_ns: g(y, |o| o.p99_ns),
                p99_ratio: ratio(g(y, |o| o.p99_ns), g(x, |o| o.p99_ns)),
            }
        })
        .collect();
    ops.sort_by(|p, q| {
        q.total_a_ns
            .max(q.total_b_ns)
            .cmp(&p.total_a_ns.max(p.total_b_ns))
            .then_with(|| p.op.cmp(&q.op))
    });
    Comparison {
        a: a.run.inputs.join(", "),
        b: b.run.inputs.join(", "),
        wall_ns: (a.run.wall_ns, b.run.wall_ns),
        call_ns: (a.run.call_ns, b.run.call_ns),
        call_ratio: ratio(b.run.call_ns, a.run.call_ns),
        ops,
    }
}

fn fr(r: Option<f64>) -> String {
    r.map_or("-".into(), |x| format!("{x:.2}×"))
}

/// Renders a comparison for a terminal (no color needed).
pub fn render_terminal(c: &Comparison, top: usize) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "h5prov compare\n  A: {}\n  B: {}", c.a, c.b);
    let _ = writeln!(
        o,
        "  time in HDF5 calls: A {}, B {} (B/A {}); wall A {}, B {}\n",
        fmt_ns(c.call_ns.0),
        fmt_ns(c.call_ns.1),
        fr(c.call_ratio),
        fmt_ns(c.wall_ns.0),
        fmt_ns(c.wall_ns.1)
    );
    let header = [
        "operation",
        "count A",
        "count B",
        "total A",
        "total B",
        "B/A",
        "p50 A",
        "p50 B",
        "B/A",
        "p99 A",
        "p99 B",
        "B/A",
    ];
    let rows: Vec<Vec<String>> = c
        .ops
        .iter()
        .take(top)
        .map(|r| {
            vec![
                r.op.clone(),
                r.count_a.to_string(),
                r.count_b.to_string(),
                fmt_ns(r.total_a_ns),
                fmt_ns(r.total_b_ns),
                fr(r.total_ratio),
                fmt_ns(r.p50_a_ns),
                fmt_ns(r.p50_b_ns),
                fr(r.p50_ratio),
                fmt_ns(r.p99_a_ns),
                fmt_ns(r.p99_b_ns),
                fr(r.p99_ratio),
            ]
        })
        .collect();
    let mut w: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for r in &rows {
        for (i, c) in r.iter().enumerate() {
            w[i] = w[i].max(c.chars().count());
        }
    }
    let line = |cells: Vec<String>| -> String {
        let mut s = String::from(" ");
        for (i, c) in cells.iter().enumerate() {
            let pad = " ".repeat(w[i] - c.chars().count());
            if i == 0 {
                s.push_str(&format!(" {c}{pad}"));
            } else {
                s.push_str(&format!("  {pad}{c}"));
            }
        }
        s.trim_end().to_string()
    };
    let _ = writeln!(
        o,
        "{}",
        line(header.iter().map(|s| s.to_string()).collect())
    );
    for r in rows {
        let _ = writeln!(o, "{}", line(r));
    }
    o
}

/// The comparison as pretty JSON.
pub fn render_json(c: &Comparison) -> String {
    let mut s = serde_json::to_string_pretty(c).expect("comparison serialises");
    s.push('\n');
    s
}
