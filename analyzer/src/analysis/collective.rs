//! Arrival skew at collective operations: the calls [`crate::aggregate::collective`]
//! recorded, matched across ranks, name the rank the others waited for (see that module
//! for the method).

use crate::aggregate::collective::*;
use crate::read::record::ProcKey;
use serde::Serialize;
use std::collections::BTreeMap;

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
