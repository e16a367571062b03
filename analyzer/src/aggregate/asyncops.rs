//! Asynchronous operations: issue → completion, joined from the trace's `req` column.
//!
//! An operation left in flight when its call returned (`async` 1, vol-async below h5prov)
//! carries a request id in `req`; the `request.wait`/`request.cancel` rows of the same
//! process with that id are the application waiting for it, and the first one with a
//! non-zero `req_done` saw it finished. Per operation this gives:
//! - the **issue** time: the call's own duration;
//! - the **time to completion**: from the call's start to the end of the row that saw it
//!   finished. An observed upper bound: the operation may have finished earlier, while
//!   nobody asked;
//! - the time **blocked** waiting: the durations of the process's `request.*` rows between
//!   the issue and the completion, for this request or another one (`H5ESwait` waits for
//!   the requests of an event set one after another: while the application waits for an
//!   earlier one, it does not compute either);
//! - the **overlap**: time to completion − issue − blocked, what of the operation's time the
//!   application spent on something else (computing) instead of waiting;
//! - the **execution** time, exact, where the connector below answered
//!   `H5VL_REQUEST_GET_EXEC_TIME` (`exec_ns` on the completion row).
//!
//! An operation whose overlap is below [`RIGHT_AFTER_FRACTION`] of its time to completion
//! was waited for right after it was issued: the asynchronous call gained nothing.

use rustc_hash::FxHashMap;
use serde::Serialize;
use std::collections::BTreeMap;

/// An operation whose overlap is below this share of its time to completion counts as
/// waited for right after it was issued.
pub const RIGHT_AFTER_FRACTION: f64 = 0.1;

/// Sums over the asynchronous calls of one operation.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct AsyncStats {
    /// Calls left in flight (`async` 1 with a request id).
    pub issued: u64,
    /// Of those, calls whose completion was observed (a `req_done` row).
    pub completed: u64,
    /// Issue time of the completed calls, ns.
    pub issue_ns: u64,
    /// Time to completion of the completed calls (upper bounds), ns.
    pub to_completion_ns: u64,
    /// Time the application was blocked in waits for them, ns.
    pub blocked_ns: u64,
    /// Overlap achieved: time to completion − issue − blocked, ns.
    pub overlap_ns: u64,
    /// Completed calls whose overlap was below [`RIGHT_AFTER_FRACTION`] of their time to
    /// completion: waited for right after they were issued.
    pub waited_right_after: u64,
    /// Completed calls whose execution time the connector below gave (`exec_ns` > 0).
    pub timed: u64,
    /// Their execution time, ns (exact).
    pub exec_ns: u64,
}

impl AsyncStats {
    /// Adds `o` (commutative).
    pub fn merge(&mut self, o: &AsyncStats) {
        self.issued += o.issued;
        self.completed += o.completed;
        self.issue_ns += o.issue_ns;
        self.to_completion_ns += o.to_completion_ns;
        self.blocked_ns += o.blocked_ns;
        self.overlap_ns += o.overlap_ns;
        self.waited_right_after += o.waited_right_after;
        self.timed += o.timed;
        self.exec_ns += o.exec_ns;
    }
}

/// One operation in flight, waiting for its completion row.
#[derive(Debug, Clone, Copy)]
struct InFlight {
    op: u32,
    start_ns: u64,
    issue_ns: u64,
    /// The process's time in `request.*` rows when the operation was issued.
    blocked_before: u64,
}

/// Joins one process's operations with their request rows, in record order. Keyed by
/// (process, request id): a request id is per process.
#[derive(Debug, Default)]
pub struct Joiner {
    in_flight: FxHashMap<(i64, u32, u64), InFlight>,
    /// Per process, the time so far in `request.*` rows.
    blocked: FxHashMap<(i64, u32), u64>,
    /// By op number (the builder's), the stats of completed and issued calls.
    pub stats: Vec<AsyncStats>,
}

impl Joiner {
    fn stats(&mut self, op: u32) -> &mut AsyncStats {
        let i = op as usize;
        if self.stats.len() <= i {
            self.stats.resize(i + 1, AsyncStats::default());
        }
        &mut self.stats[i]
    }

    /// Adds one record of op number `op` (`request` when its op is a `request.*`
    /// callback): `(rank, pid)`, `req`, `req_done`, `is_async`, start, duration and
    /// `exec_ns`.
    #[allow(clippy::too_many_arguments)]
    pub fn add(
        &mut self,
        op: u32,
        request: bool,
        proc: (i64, u32),
        req: u64,
        req_done: u8,
        is_async: bool,
        start_ns: u64,
        total_ns: u64,
        exec_ns: u64,
    ) {
        if req == 0 {
            return;
        }
        let key = (proc.0, proc.1, req);
        let blocked = self.blocked.entry(proc).or_default();
        if !request {
            if is_async {
                let blocked_before = *blocked;
                self.stats(op).issued += 1;
                self.in_flight.insert(
                    key,
                    InFlight {
                        op,
                        start_ns,
                        issue_ns: total_ns,
                        blocked_before,
                    },
                );
            }
            return;
        }
        *blocked += total_ns;
        let blocked = *blocked;
        if req_done == 0 {
            return;
        }
        let Some(f) = self.in_flight.remove(&key) else {
            return;
        };
        let end = start_ns.saturating_add(total_ns);
        let to_completion = end.saturating_sub(f.start_ns).max(f.issue_ns);
        let blocked = (blocked - f.blocked_before).min(to_completion - f.issue_ns);
        let overlap = to_completion - f.issue_ns - blocked;
        let s = self.stats(f.op);
        s.completed += 1;
        s.issue_ns += f.issue_ns;
        s.to_completion_ns += to_completion;
        s.blocked_ns += blocked;
        s.overlap_ns += overlap;
        s.waited_right_after +=
            u64::from((overlap as f64) < RIGHT_AFTER_FRACTION * to_completion as f64);
        if exec_ns > 0 {
            s.timed += 1;
            s.exec_ns += exec_ns;
        }
    }

    /// The stats by op name (`names` by op number), leaving out ops with none.
    pub fn finish(self, names: &[String]) -> BTreeMap<String, AsyncStats> {
        self.stats
            .into_iter()
            .enumerate()
            .filter(|(_, s)| s.issued > 0)
            .map(|(i, s)| (names[i].clone(), s))
            .collect()
    }
}

/// One row of the report's asynchronous-operations table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AsyncOpRow {
    /// The operation.
    pub op: String,
    /// The sums.
    #[serde(flatten)]
    pub stats: AsyncStats,
    /// Mean issue time of the completed calls, ns.
    pub mean_issue_ns: u64,
    /// Mean time to completion (upper bound), ns.
    pub mean_to_completion_ns: u64,
    /// Share of the time to completion that overlapped with other work (0..1).
    pub overlap_share: f64,
    /// Mean execution time of the calls the connector below timed, ns (0: none was).
    pub mean_exec_ns: u64,
}

/// The report's rows, by total time to completion (descending).
pub fn rows(stats: &BTreeMap<String, AsyncStats>) -> Vec<AsyncOpRow> {
    let mut v: Vec<AsyncOpRow> = stats
        .iter()
        .map(|(op, s)| {
            let n = s.completed.max(1);
            AsyncOpRow {
                op: op.clone(),
                stats: s.clone(),
                mean_issue_ns: s.issue_ns / n,
                mean_to_completion_ns: s.to_completion_ns / n,
                overlap_share: if s.to_completion_ns == 0 {
                    0.0
                } else {
                    s.overlap_ns as f64 / s.to_completion_ns as f64
                },
                mean_exec_ns: s.exec_ns / s.timed.max(1),
            }
        })
        .collect();
    v.sort_by(|a, b| {
        b.stats
            .to_completion_ns
            .cmp(&a.stats.to_completion_ns)
            .then_with(|| a.op.cmp(&b.op))
    });
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: (i64, u32) = (-1, 7);

    #[test]
    fn an_overlapped_write_and_one_waited_for_right_away() {
        let mut j = Joiner::default();
        // op 0 issued at 1000 for 20 ns; the app computes; its wait starts at 900_000 and
        // blocks 100_000 ns, seeing it done.
        j.add(0, false, P, 1, 0, true, 1_000, 20, 0);
        j.add(1, true, P, 1, 1, false, 900_000, 100_000, 0);
        // op 0 again, waited for at once: issue 20 ns, wait 500_000 ns.
        j.add(0, false, P, 2, 0, true, 2_000_000, 20, 0);
        j.add(1, true, P, 2, 0, false, 2_000_030, 10, 0); // a test: still in progress
        j.add(1, true, P, 2, 1, false, 2_000_050, 500_000, 0);
        let s = &j.stats[0];
        assert_eq!((s.issued, s.completed), (2, 2));
        assert_eq!((s.timed, s.exec_ns), (0, 0));
        assert_eq!(s.issue_ns, 40);
        assert_eq!(s.to_completion_ns, 999_000 + 500_050);
        assert_eq!(s.blocked_ns, 100_000 + 500_010);
        assert_eq!(s.overlap_ns, (999_000 - 100_020) + (500_050 - 500_030));
        assert_eq!(s.waited_right_after, 1);
    }

    #[test]
    fn waiting_for_an_earlier_request_is_no_overlap() {
        let mut j = Joiner::default();
        // A create (op 2, request 1) and a write (op 0, request 2) issued at once; the
        // wait for the create blocks 800 µs, the write's then finds it done at once.
        j.add(2, false, P, 1, 0, true, 1_000, 100, 0);
        j.add(0, false, P, 2, 0, true, 1_100, 100, 0);
        j.add(1, true, P, 1, 1, false, 1_200, 800_000, 0);
        j.add(1, true, P, 2, 1, false, 801_200, 50, 0);
        let s = &j.stats[0];
        assert_eq!(s.to_completion_ns, 801_250 - 1_100);
        assert_eq!(s.blocked_ns, 800_050);
        assert_eq!(s.overlap_ns, 0);
        assert_eq!(s.waited_right_after, 1);
    }

    #[test]
    fn execution_times_the_connector_gave() {
        let mut j = Joiner::default();
        j.add(0, false, P, 1, 0, true, 1_000, 20, 0);
        j.add(1, true, P, 1, 1, false, 900_000, 100_000, 600_000);
        j.add(0, false, P, 2, 0, true, 2_000_000, 20, 0);
        j.add(1, true, P, 2, 1, false, 2_000_050, 500_000, 0); // no answer
        let s = &j.stats[0];
        assert_eq!((s.completed, s.timed, s.exec_ns), (2, 1, 600_000));
        let names = vec!["dataset.write".to_string(), "request.wait".to_string()];
        assert_eq!(rows(&j.finish(&names))[0].mean_exec_ns, 600_000);
    }

    #[test]
    fn rows_without_a_request_or_a_completion() {
        let mut j = Joiner::default();
        j.add(0, false, P, 0, 0, false, 1, 1, 0); // synchronous
        j.add(0, false, P, 3, 0, true, 1, 1, 0); // never waited for
        j.add(1, true, P, 9, 1, false, 5, 5, 0); // a request of an unknown operation
        j.add(1, true, (0, 7), 3, 1, false, 5, 5, 0); // another process's request 3
        let s = &j.stats[0];
        assert_eq!((s.issued, s.completed), (1, 0));
        let names = vec!["dataset.write".to_string(), "request.wait".to_string()];
        let m = j.finish(&names);
        assert_eq!(m.keys().collect::<Vec<_>>(), ["dataset.write"]);
        let r = rows(&m);
        assert_eq!((r[0].mean_issue_ns, r[0].overlap_share), (0, 0.0));
    }
}
