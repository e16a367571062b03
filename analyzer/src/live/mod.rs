//! The collector's live view for `h5prov top`: per job, rank and operation totals, the
//! bytes of each of the last [`WINDOW_S`] seconds, and the [`SLOWEST`] slowest calls of that
//! window. `h5prov collect` serves it as JSON at `GET /top.json` ([`Snapshot`], documented
//! in `docs/STREAMING.md`); `h5prov top` polls it and computes rates from the deltas.
//!
//! Per message: one lock, three hash lookups by borrowed keys (job, rank, operation) and a
//! scan of at most [`SLOWEST`] entries; strings are allocated only for a job, rank or
//! operation seen for the first time and for a call that enters the slowest list.

pub mod collect;
pub mod run;
pub mod top;

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};
use std::sync::Mutex;

/// Seconds of per-second byte counts kept (the sparkline), and how long a slow call stays
/// in the slowest list.
pub const WINDOW_S: usize = 60;
/// Slowest calls kept per job.
pub const SLOWEST: usize = 10;

/// Calls, bytes and time: a rank's, an operation's.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Totals {
    /// Calls.
    pub count: u64,
    /// Bytes transferred (reads and writes).
    pub bytes: u64,
    /// Time in the calls, ns (summed over threads).
    pub op_ns: u64,
}

impl Totals {
    /// Adds, saturating: sums of forged values stop at `u64::MAX` instead of wrapping.
    fn add(&mut self, count: u64, bytes: u64, op_ns: u64) {
        self.count = self.count.saturating_add(count);
        self.bytes = self.bytes.saturating_add(bytes);
        self.op_ns = self.op_ns.saturating_add(op_ns);
    }
}

/// One slow call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SlowCall {
    /// Operation.
    pub op: String,
    /// Rank (`p<pid>` without one).
    pub rank: String,
    /// The HDF5 file as opened; empty for an `interval` message's `max_ns`.
    pub file: String,
    /// Object path; empty for an `interval` message's `max_ns`.
    pub path: String,
    /// Duration, ns.
    pub dur_ns: u64,
    /// The longest call of an `interval` message (no file or path), not an `event`.
    pub interval: bool,
    /// When the collector received it, seconds since the Unix epoch.
    pub at_s: u64,
}

/// A call offered to the slowest list.
pub struct Call<'a> {
    /// Duration, ns.
    pub dur_ns: u64,
    /// The HDF5 file.
    pub file: &'a str,
    /// Object path.
    pub path: &'a str,
    /// An `interval` message's `max_ns`.
    pub interval: bool,
}

#[derive(Default)]
struct RankLive {
    host: String,
    totals: Totals,
}

struct JobLive {
    ranks: FxHashMap<String, RankLive>,
    ops: FxHashMap<String, Totals>,
    /// `(second, bytes)` at index `second % WINDOW_S`.
    seconds: [(u64, u64); WINDOW_S],
    slowest: Vec<SlowCall>,
}

impl Default for JobLive {
    fn default() -> Self {
        JobLive {
            ranks: FxHashMap::default(),
            ops: FxHashMap::default(),
            seconds: [(0, 0); WINDOW_S],
            slowest: Vec::with_capacity(SLOWEST),
        }
    }
}

/// A map lookup by `&str` that allocates the key only on first sight.
fn entry<'m, V: Default>(m: &'m mut FxHashMap<String, V>, k: &str) -> &'m mut V {
    if !m.contains_key(k) {
        m.insert(k.to_string(), V::default());
    }
    m.get_mut(k).expect("inserted above")
}

/// The live state (shared by the connection threads).
#[derive(Default)]
pub struct Live {
    jobs: Mutex<FxHashMap<String, JobLive>>,
}

/// What a process sent, as [`Live::add`] takes it.
pub struct Sent<'a> {
    /// Launcher job id.
    pub job_id: &'a str,
    /// Rank label (`3`, `p<pid>`).
    pub rank: &'a str,
    /// Host name.
    pub host: &'a str,
}

impl Live {
    /// Adds `count` calls of `op` moving `bytes` in `op_ns`, received at second `now_s`;
    /// `slow` is offered to the job's slowest list. `op` empty (a `hello`) only makes the
    /// rank known.
    #[allow(clippy::too_many_arguments)]
    pub fn add(
        &self,
        who: &Sent<'_>,
        op: &str,
        count: u64,
        bytes: u64,
        op_ns: u64,
        slow: Option<Call<'_>>,
        now_s: u64,
    ) {
        let mut jobs = self.jobs.lock().unwrap_or_else(|e| e.into_inner());
        let job = entry(&mut jobs, who.job_id);
        let rank = entry(&mut job.ranks, who.rank);
        if rank.host != who.host {
            rank.host = who.host.to_string();
        }
        if op.is_empty() {
            return;
        }
        rank.totals.add(count, bytes, op_ns);
        entry(&mut job.ops, op).add(count, bytes, op_ns);
        let sec = &mut job.seconds[(now_s % WINDOW_S as u64) as usize];
        if sec.0 != now_s {
            *sec = (now_s, 0);
        }
        sec.1 = sec.1.saturating_add(bytes);
        if let Some(c) = slow {
            offer(&mut job.slowest, who.rank, op, &c, now_s);
        }
    }

    /// Forgets job `job_id` (the collector's job expiry).
    pub fn remove(&self, job_id: &str) {
        self.jobs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(job_id);
    }

    /// The state at `now_ns` (collector clock), for `GET /top.json`; the collector fills
    /// in its connection and message counters.
    pub fn snapshot(&self, now_ns: u64) -> Snapshot {
        let now_s = now_ns / 1_000_000_000;
        let jobs = self.jobs.lock().unwrap_or_else(|e| e.into_inner());
        let mut out: Vec<JobSnapshot> = jobs
            .iter()
            .map(|(id, j)| {
                let mut ranks: Vec<RankSnapshot> = j
                    .ranks
                    .iter()
                    .map(|(r, l)| RankSnapshot {
                        rank: r.clone(),
                        host: l.host.clone(),
                        totals: l.totals,
                    })
                    .collect();
                ranks.sort_by(|a, b| rank_order(&a.rank, &b.rank));
                let mut ops: Vec<OpSnapshot> = j
                    .ops
                    .iter()
                    .map(|(op, t)| OpSnapshot {
                        op: op.clone(),
                        totals: *t,
                    })
                    .collect();
                ops.sort_by(|a, b| a.op.cmp(&b.op));
                let bytes_per_s = ((now_s + 1).saturating_sub(WINDOW_S as u64)..=now_s)
                    .map(|s| {
                        let b = j.seconds[(s % WINDOW_S as u64) as usize];
                        if b.0 == s {
                            b.1
                        } else {
                            0
                        }
                    })
                    .collect();
                let mut slowest: Vec<SlowCall> = j
                    .slowest
                    .iter()
                    .filter(|c| recent(c, now_s))
                    .cloned()
                    .collect();
                slowest.sort_by_key(|c| std::cmp::Reverse(c.dur_ns));
                JobSnapshot {
                    job_id: id.clone(),
                    ranks,
                    ops,
                    bytes_per_s,
                    slowest,
                }
            })
            .collect();
        out.sort_by(|a, b| a.job_id.cmp(&b.job_id));
        Snapshot {
            v: 1,
            now_ns,
            connections_open: 0,
            messages: 0,
            malformed: 0,
            jobs: out,
        }
    }
}

fn recent(c: &SlowCall, now_s: u64) -> bool {
    now_s.saturating_sub(c.at_s) < WINDOW_S as u64
}

/// Puts the call into `list` if it is among the [`SLOWEST`] of the window.
fn offer(list: &mut Vec<SlowCall>, rank: &str, op: &str, c: &Call<'_>, now_s: u64) {
    list.retain(|s| recent(s, now_s));
    let slot = if list.len() < SLOWEST {
        None
    } else {
        match list.iter_mut().min_by_key(|s| s.dur_ns) {
            Some(min) if min.dur_ns < c.dur_ns => Some(min),
            _ => return,
        }
    };
    let call = SlowCall {
        op: op.to_string(),
        rank: rank.to_string(),
        file: clip(c.file).to_string(),
        path: clip(c.path).to_string(),
        dur_ns: c.dur_ns,
        interval: c.interval,
        at_s: now_s,
    };
    match slot {
        Some(s) => *s = call,
        None => list.push(call),
    }
}

/// Longest file or object path kept in the slowest list (bytes; longer ones are cut at a
/// character boundary), so the list's memory is bounded per job.
pub const MAX_PATH: usize = 4096;

fn clip(s: &str) -> &str {
    if s.len() <= MAX_PATH {
        return s;
    }
    let mut end = MAX_PATH;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// Numbered ranks in numeric order, then the `p<pid>` ones.
pub fn rank_order(a: &str, b: &str) -> std::cmp::Ordering {
    match (a.parse::<u64>(), b.parse::<u64>()) {
        (Ok(x), Ok(y)) => x.cmp(&y),
        (Ok(_), Err(_)) => std::cmp::Ordering::Less,
        (Err(_), Ok(_)) => std::cmp::Ordering::Greater,
        (Err(_), Err(_)) => a.cmp(b),
    }
}

/// `GET /top.json`: the collector's totals since it started.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    /// Schema version (1).
    pub v: u32,
    /// The collector's wall clock when the snapshot was taken, ns since the Unix epoch
    /// (rates are deltas over the difference of two snapshots' `now_ns`).
    pub now_ns: u64,
    /// Stream connections open now.
    pub connections_open: i64,
    /// Messages accepted since the collector started.
    pub messages: u64,
    /// Lines skipped as not a message, since the collector started.
    pub malformed: u64,
    /// Jobs by job id.
    pub jobs: Vec<JobSnapshot>,
}

/// One job in a [`Snapshot`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JobSnapshot {
    /// Launcher job id (empty outside a batch job).
    pub job_id: String,
    /// Its ranks (numeric order, then `p<pid>`), every one that said `hello`.
    pub ranks: Vec<RankSnapshot>,
    /// Its operations, by name.
    pub ops: Vec<OpSnapshot>,
    /// Bytes received in each of the last [`WINDOW_S`] seconds, oldest first; the last is
    /// the current (incomplete) second.
    pub bytes_per_s: Vec<u64>,
    /// The slowest calls received in the last [`WINDOW_S`] seconds, slowest first.
    pub slowest: Vec<SlowCall>,
}

/// One rank of a [`JobSnapshot`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RankSnapshot {
    /// Rank (`p<pid>` without one).
    pub rank: String,
    /// Host name.
    pub host: String,
    /// Its totals.
    #[serde(flatten)]
    pub totals: Totals,
}

/// One operation of a [`JobSnapshot`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OpSnapshot {
    /// Operation (`dataset.write`).
    pub op: String,
    /// Its totals.
    #[serde(flatten)]
    pub totals: Totals,
}

#[cfg(test)]
mod tests {
    use super::*;

    const W: Sent<'static> = Sent {
        job_id: "7",
        rank: "1",
        host: "h",
    };

    fn call(dur_ns: u64) -> Option<Call<'static>> {
        Some(Call {
            dur_ns,
            file: "f.h5",
            path: "/d",
            interval: false,
        })
    }

    #[test]
    fn keeps_the_slowest_recent_calls_and_the_window_of_bytes() {
        let live = Live::default();
        live.add(&W, "", 0, 0, 0, None, 1000);
        for d in 1..=15u64 {
            live.add(&W, "dataset.write", 1, 100, d, call(d), 1000);
        }
        live.add(&W, "file.open", 1, 0, 500, None, 1001);
        let s = live.snapshot(1001 * 1_000_000_000 + 5);
        let j = &s.jobs[0];
        let durs: Vec<u64> = j.slowest.iter().map(|c| c.dur_ns).collect();
        assert_eq!(durs, (6..=15).rev().collect::<Vec<_>>());
        assert_eq!(j.bytes_per_s.len(), WINDOW_S);
        assert_eq!(j.bytes_per_s[WINDOW_S - 2..], [1500, 0]);
        assert_eq!(j.ranks[0].totals.count, 16);
        assert_eq!(j.ops[0].op, "dataset.write");
        assert_eq!(j.ops[1].totals.op_ns, 500);
        // A minute later the old slow calls and seconds are gone; a fast call gets in.
        live.add(&W, "dataset.write", 1, 7, 2, call(2), 1100);
        let s = live.snapshot(1100 * 1_000_000_000);
        let j = &s.jobs[0];
        assert_eq!(j.slowest.len(), 1);
        assert_eq!(j.bytes_per_s.iter().sum::<u64>(), 7);
    }

    #[test]
    fn ranks_sort_numerically_then_by_pid() {
        let mut r = vec!["p9", "10", "2", "p10"];
        r.sort_by(|a, b| rank_order(a, b));
        assert_eq!(r, ["2", "10", "p10", "p9"]);
    }
}
