//! Arrival skew at collective operations.
//!
//! In parallel HDF5 every rank must call the collective operations (file create/open/close,
//! dataset/group/attribute create, `H5Dset_extent`, collective data transfers...) together,
//! and each waits inside the call for the last one to arrive. The rank that *arrives late*
//! is the straggler, yet its own call is the shortest: per-rank call time names the victims.
//! So the `k`-th call of an operation on one object is matched across ranks, and for each
//! match the ranks' start times are compared (start times are on one clock: each process's
//! `CLOCK_MONOTONIC` anchored to the wall clock, see docs/TRACE-FORMAT.md).
//!
//! Memory is bounded by collective operations × files × ranks, not by records: each
//! process keeps at most [`SAMPLES_KEPT`] calls per (operation, file); past that it keeps
//! every 2nd, 4th, ... call by index, the same indices on every rank, so matches stay exact
//! and sums are scaled by the stride (the report says when it sampled). Collective calls
//! of one file are matched by their index per operation, not by object: MPI requires all
//! ranks to make the same collective calls on a file in the same order.

use crate::read::record::{ProcKey, RecordExt, RecordRef};
use rustc_hash::FxHashMap;
use serde::Serialize;
use std::collections::BTreeMap;

/// Calls kept per (operation, file, process) before sampling by index.
pub const SAMPLES_KEPT: usize = 4096;

/// Operation families that parallel HDF5 requires all ranks to call collectively.
const COLLECTIVE_FAMILIES: &[&str] = &[
    "file.create",
    "file.open",
    "file.close",
    "dataset.create",
    "group.create",
    "attr.create",
    "attr.write",
    "datatype.commit",
    "link.create",
    "link.copy",
    "link.move",
    "object.copy",
];

/// Sub-operations that are collective where their family is not.
const COLLECTIVE_OPS: &[&str] = &[
    "file.specific:flush",
    "dataset.specific:set_extent",
    "attr.specific:delete",
    "attr.specific:rename",
    "link.specific:delete",
];

/// Whether calls of an operation are collective under parallel HDF5.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Never.
    No,
    /// Always (create/open/close of files, creates of objects, ...).
    Yes,
    /// Data transfers: when the requested transfer mode is collective.
    IfCollectiveTransfer,
}

impl Kind {
    /// The kind of an operation name.
    pub fn of(op: &str) -> Kind {
        let family = h5prov_format::op_family(op);
        if family == "dataset.write" || family == "dataset.read" {
            Kind::IfCollectiveTransfer
        } else if COLLECTIVE_FAMILIES.contains(&family) || COLLECTIVE_OPS.contains(&op) {
            Kind::Yes
        } else {
            Kind::No
        }
    }

    /// Whether a call of an operation of this kind, with requested transfer mode `xfer`,
    /// is collective.
    #[inline]
    pub fn applies(self, xfer: &str) -> bool {
        match self {
            Kind::No => false,
            Kind::Yes => true,
            Kind::IfCollectiveTransfer => xfer == "collective",
        }
    }
}

/// Whether a call is collective under parallel HDF5: by its operation, or a data transfer
/// whose requested mode is collective.
pub fn is_collective(op: &str, xfer: &str) -> bool {
    Kind::of(op).applies(xfer)
}

/// `(start_ns, total_ns)` of one call.
pub type Call = (u64, u64);

/// The `start_ns` of a call whose record had no valid times (see [`crate::aggregate::check`]; a valid
/// start is below 2^63): kept so that later calls keep their index, never matched.
pub const NO_TIME: u64 = u64::MAX;

/// The calls of one process to one operation on one file: call `i * stride` for each kept
/// `i` (stride 1 keeps them all).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sampled {
    /// Index distance between kept calls (a power of two).
    pub stride: u64,
    /// Calls seen.
    pub seen: u64,
    /// The kept calls, in call order.
    pub calls: Vec<Call>,
}

impl Default for Sampled {
    fn default() -> Self {
        Sampled {
            stride: 1,
            seen: 0,
            calls: Vec::new(),
        }
    }
}

impl Sampled {
    /// Adds the next call.
    #[inline]
    pub fn push(&mut self, c: Call) {
        let k = self.seen;
        self.seen += 1;
        if k % self.stride != 0 {
            return;
        }
        self.calls.push(c);
        if self.calls.len() > SAMPLES_KEPT {
            self.thin(self.stride * 2);
        }
    }

    /// Keeps only calls whose index is a multiple of `stride` (a multiple of the current one).
    pub fn thin(&mut self, stride: u64) {
        if stride <= self.stride {
            return;
        }
        let step = (stride / self.stride) as usize;
        let kept: Vec<Call> = self.calls.iter().copied().step_by(step).collect();
        self.calls = kept;
        self.stride = stride;
    }
}

/// Collective calls by (`op`, `file`), then process.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Collectives {
    /// The calls.
    pub calls: BTreeMap<(String, String), BTreeMap<ProcKey, Sampled>>,
}

impl Collectives {
    /// Adds `o`. A process normally appears in one trace file; if it appears in two, its
    /// calls are combined in start order (sampled at the coarser stride).
    pub fn merge(&mut self, o: Collectives) {
        for (k, procs) in o.calls {
            let mine = self.calls.entry(k).or_default();
            for (p, mut v) in procs {
                match mine.get_mut(&p) {
                    Some(m) => {
                        let stride = m.stride.max(v.stride);
                        m.thin(stride);
                        v.thin(stride);
                        m.calls.append(&mut v.calls);
                        m.calls.sort_unstable();
                        m.seen += v.seen;
                    }
                    None => {
                        mine.insert(p, v);
                    }
                }
            }
        }
    }
}

/// Collects the collective calls of one trace file (part of the per-file builder), keyed
/// by the builder's operation ids.
#[derive(Debug, Default)]
pub struct Recorder {
    calls: FxHashMap<(u32, ProcKey), PerFile>,
}

/// One process's calls to one operation, per container file (usually one).
type PerFile = Vec<(Box<str>, Sampled)>;

impl Recorder {
    /// Adds one record of operation `op_id` whose [`Kind`] is `kind`.
    #[inline]
    pub fn add(&mut self, op_id: u32, kind: Kind, r: &RecordRef<'_>) {
        if !kind.applies(r.xfer) || r.rank < 0 {
            return;
        }
        let files = self.calls.entry((op_id, r.proc())).or_default();
        let i = match files.iter().position(|(f, _)| &**f == r.file) {
            Some(i) => i,
            None => {
                files.push((r.file.into(), Sampled::default()));
                files.len() - 1
            }
        };
        files[i].1.push((r.start_ns, r.total_ns));
    }

    /// The calls keyed by names (`names[op_id]`).
    pub fn finish(self, names: &[String]) -> Collectives {
        let mut out = Collectives::default();
        for ((id, proc), files) in self.calls {
            for (file, s) in files {
                out.calls
                    .entry((names[id as usize].clone(), file.into()))
                    .or_default()
                    .insert(proc, s);
            }
        }
        out
    }
}

/// How late one rank arrived at one collective operation, over its matched calls.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LateRank {
    /// MPI rank.
    pub rank: i64,
    /// Process id.
    pub pid: u32,
    /// Matched calls in which it arrived last.
    pub last: u64,
    /// Sum over matched calls of (its start − the earliest start), ns.
    pub lateness_ns: u64,
    /// Sum over the calls it arrived last of the time the others waited for it, ns.
    pub imposed_wait_ns: u64,
}

/// Arrival skew of one collective operation.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CollectiveSkew {
    /// Operation.
    pub op: String,
    /// 1 when every call was matched; else the index stride of the calls matched (counts
    /// and times below are then scaled by it: estimates).
    pub sampled_every: u64,
    /// Calls matched across at least two ranks.
    pub calls: u64,
    /// Most ranks in one matched call.
    pub ranks: usize,
    /// The operation's total time over all ranks (matched calls), ns.
    pub total_ns: u64,
    /// Time ranks spent inside the call before the last rank arrived:
    /// Σ min(latest start − own start, own duration), ns.
    pub wait_ns: u64,
    /// `wait_ns / total_ns`: how much of the operation is waiting.
    pub wait_share: f64,
    /// Largest arrival skew (latest − earliest start) of one call, ns.
    pub max_skew_ns: u64,
    /// Median arrival skew over calls, ns.
    pub median_skew_ns: u64,
    /// The ranks that arrived last most, by imposed wait (at most 4).
    pub late: Vec<LateRank>,
    /// The rank named the straggler: it imposed most of the waiting (see [`analyze`]).
    pub straggler: Option<LateRank>,
}

/// Share of an operation's time that must be waiting before a late rank is named.
pub const MIN_WAIT_SHARE: f64 = 0.10;
/// Waiting (over all matched calls) below which nobody is named: microseconds of skew are
/// noise, not a straggler.
pub const MIN_WAIT_NS: u64 = 1_000_000;
/// Share of the operation's waiting a rank must impose to be named its straggler.
pub const MIN_IMPOSED_SHARE: f64 = 0.5;

/// Matches the `k`-th calls of each (op, file, path) across ranks and measures the arrival
/// skew, per operation. A rank is named the straggler of an operation when the ranks
/// waited for at least `min_wait_share` of its time (default [`MIN_WAIT_SHARE`]) and
/// `min_wait_ns` (default [`MIN_WAIT_NS`]), and that rank imposed at least
/// [`MIN_IMPOSED_SHARE`] of the waiting. Operations whose waiting is zero are left out.
/// Sorted by waiting time, descending.
pub fn analyze(c: &Collectives, min_wait_share: f64, min_wait_ns: u64) -> Vec<CollectiveSkew> {
    #[derive(Default)]
    struct Acc {
        stride: u64,
        calls: u64,
        ranks: usize,
        total: u64,
        wait: u64,
        skews: Vec<u64>,
        per: BTreeMap<ProcKey, (u64, u64, u64)>,
    }
    let mut per_op: BTreeMap<&str, Acc> = BTreeMap::new();
    for ((op, _), procs) in &c.calls {
        if procs.len() < 2 {
            continue;
        }
        let acc = per_op.entry(op).or_default();
        // Match on the indices every process kept: multiples of the coarsest stride.
        let stride = procs.values().map(|s| s.stride).max().unwrap_or(1);
        acc.stride = acc.stride.max(stride);
        let kept: Vec<(ProcKey, Vec<Call>)> = procs
            .iter()
            .map(|(p, s)| {
                let step = (stride / s.stride) as usize;
                (*p, s.calls.iter().copied().step_by(step).collect())
            })
            .collect();
        let depth = kept.iter().map(|(_, v)| v.len()).max().unwrap_or(0);
        let mut parts: Vec<(ProcKey, Call)> = Vec::with_capacity(kept.len());
        for k in 0..depth {
            parts.clear();
            // A call without a time keeps its place in the order of calls, but takes no part
            // in the match.
            parts.extend(
                kept.iter()
                    .filter_map(|(p, v)| v.get(k).filter(|c| c.0 != NO_TIME).map(|c| (*p, *c))),
            );
            if parts.len() < 2 {
                continue;
            }
            // Latest start; ties go to the smallest process (deterministic).
            parts.sort_by(|a, b| a.1 .0.cmp(&b.1 .0).then_with(|| b.0.cmp(&a.0)));
            let earliest = parts[0].1 .0;
            let (late_p, (latest, _)) = *parts.last().expect("n>=2");
            // A rank waits inside the call at most until the last one arrives, and at most
            // as long as its own call lasted (parallel HDF5 need not synchronise on entry).
            let wait: u64 = parts.iter().map(|(_, (s, t))| (latest - s).min(*t)).sum();
            acc.calls += stride;
            acc.ranks = acc.ranks.max(parts.len());
            acc.total += stride * parts.iter().map(|(_, (_, t))| t).sum::<u64>();
            acc.wait += stride * wait;
            acc.skews.push(latest - earliest);
            for (p, (s, _)) in &parts {
                acc.per.entry(*p).or_default().1 += stride * (s - earliest);
            }
            let e = acc.per.entry(late_p).or_default();
            e.0 += stride;
            e.2 += stride * wait;
        }
    }
    let mut out: Vec<CollectiveSkew> = per_op
        .into_iter()
        .filter(|(_, a)| a.calls > 0 && a.wait > 0)
        .map(|(op, mut a)| {
            a.skews.sort_unstable();
            let mut late: Vec<LateRank> = a
                .per
                .iter()
                .filter(|(_, v)| v.0 > 0)
                .map(|(p, v)| LateRank {
                    rank: p.rank,
                    pid: p.pid,
                    last: v.0,
                    lateness_ns: v.1,
                    imposed_wait_ns: v.2,
                })
                .collect();
            late.sort_by(|x, y| {
                y.imposed_wait_ns
                    .cmp(&x.imposed_wait_ns)
                    .then_with(|| (x.rank, x.pid).cmp(&(y.rank, y.pid)))
            });
            late.truncate(4);
            let wait_share = if a.total > 0 {
                a.wait as f64 / a.total as f64
            } else {
                0.0
            };
            let straggler = late
                .first()
                .filter(|l| {
                    wait_share >= min_wait_share
                        && a.wait >= min_wait_ns
                        && l.imposed_wait_ns as f64 >= MIN_IMPOSED_SHARE * a.wait as f64
                })
                .cloned();
            CollectiveSkew {
                op: op.to_string(),
                sampled_every: a.stride.max(1),
                calls: a.calls,
                ranks: a.ranks,
                total_ns: a.total,
                wait_ns: a.wait,
                wait_share,
                max_skew_ns: a.skews.last().copied().unwrap_or(0),
                median_skew_ns: a.skews[a.skews.len() / 2],
                late,
                straggler,
            }
        })
        .collect();
    out.sort_by(|a, b| b.wait_ns.cmp(&a.wait_ns).then_with(|| a.op.cmp(&b.op)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(r: i64) -> ProcKey {
        ProcKey {
            rank: r,
            pid: 100 + r as u32,
        }
    }

    fn analyze_d(c: &Collectives) -> Vec<CollectiveSkew> {
        analyze(c, MIN_WAIT_SHARE, MIN_WAIT_NS)
    }

    fn coll(entries: &[(&str, &str, i64, Vec<Call>)]) -> Collectives {
        let mut c = Collectives::default();
        for (op, file, rank, calls) in entries {
            let mut s = Sampled::default();
            for x in calls {
                s.push(*x);
            }
            c.calls
                .entry((op.to_string(), file.to_string()))
                .or_default()
                .insert(p(*rank), s);
        }
        c
    }

    #[test]
    fn classification() {
        assert!(is_collective("dataset.create", ""));
        assert!(is_collective("group.create", ""));
        assert!(is_collective("file.specific:flush", ""));
        assert!(is_collective("dataset.specific:set_extent", ""));
        assert!(!is_collective("dataset.specific:get_storage_size", ""));
        assert!(is_collective("dataset.write", "collective"));
        assert!(!is_collective("dataset.write", "independent"));
        assert!(!is_collective("dataset.write", ""));
        assert!(!is_collective("group.open", ""));
    }

    #[test]
    fn late_rank_is_named_though_its_calls_are_shortest() {
        // Rank 3 arrives 9 ms late at each of 3 dataset creates; the others wait for it.
        let mut e = Vec::new();
        for r in 0..4 {
            let calls: Vec<Call> = (0..3u64)
                .map(|k| {
                    let t0 = k * 100_000_000;
                    if r == 3 {
                        (t0 + 9_000_000, 1_000_000)
                    } else {
                        (t0 + r as u64 * 10_000, 10_000_000)
                    }
                })
                .collect();
            e.push(("dataset.create", "/d", r, calls));
        }
        let out = analyze_d(&coll(&e));
        assert_eq!(out.len(), 1);
        let s = &out[0];
        assert_eq!((s.calls, s.ranks), (3, 4));
        let st = s.straggler.as_ref().expect("named");
        assert_eq!(st.rank, 3);
        assert_eq!(st.last, 3);
        assert!(s.wait_share > 0.5, "{s:?}");
        assert_eq!(s.max_skew_ns, 9_000_000);
    }

    #[test]
    fn one_rank_equal_starts_and_unmatched_calls() {
        // One rank only: nothing to match.
        assert!(analyze_d(&coll(&[("group.create", "/g", 0, vec![(5, 1)])])).is_empty());
        // Equal starts: no waiting, nothing reported.
        let e = vec![
            ("group.create", "/g", 0, vec![(5, 10)]),
            ("group.create", "/g", 1, vec![(5, 10)]),
        ];
        assert!(analyze_d(&coll(&e)).is_empty());
        // Two ranks, small skew against long calls: reported, nobody named.
        let e = vec![
            ("group.create", "/g", 0, vec![(0, 1000)]),
            ("group.create", "/g", 1, vec![(10, 990)]),
        ];
        let out = analyze_d(&coll(&e));
        assert_eq!(out[0].wait_ns, 10);
        assert!(out[0].straggler.is_none());
        // A second call only rank 0 made is not matched.
        let e = vec![
            ("group.create", "/g", 0, vec![(0, 10), (50, 10)]),
            ("group.create", "/g", 1, vec![(8, 2)]),
        ];
        assert_eq!(analyze_d(&coll(&e))[0].calls, 1);
    }

    #[test]
    fn merge_is_order_independent() {
        let a = coll(&[("file.close", "/", 0, vec![(3, 1), (1, 1)])]);
        let b = coll(&[("file.close", "/", 1, vec![(2, 1)])]);
        let mut x = a.clone();
        x.merge(b.clone());
        let mut y = b;
        y.merge(a);
        assert_eq!(x, y);
    }

    #[test]
    fn many_calls_are_sampled_by_index_and_scaled() {
        let n = 10_000u64;
        let mut e = Vec::new();
        for r in 0..4i64 {
            let calls: Vec<Call> = (0..n)
                .map(|k| {
                    let t0 = k * 1_000_000;
                    if r == 3 {
                        (t0 + 500_000, 10_000)
                    } else {
                        (t0, 510_000)
                    }
                })
                .collect();
            e.push(("dataset.create", "f.h5", r, calls));
        }
        let c = coll(&e);
        let s = &c.calls[&("dataset.create".to_string(), "f.h5".to_string())][&p(0)];
        assert!(s.calls.len() <= SAMPLES_KEPT && s.stride > 1 && s.seen == n);
        let out = analyze_d(&c);
        assert_eq!(out[0].calls, n);
        assert_eq!(out[0].sampled_every, s.stride);
        assert_eq!(out[0].straggler.as_ref().unwrap().rank, 3);
        // Each of ranks 0-2 waits 500 us per call.
        assert_eq!(out[0].wait_ns, n * 3 * 500_000);
    }
}
