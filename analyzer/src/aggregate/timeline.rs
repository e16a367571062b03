//! A mergeable activity timeline and its segmentation into I/O phases.
//!
//! Time is cut into bins of `2^shift` ns (starting at [`BASE_SHIFT`], about 1 ms). A call's
//! duration and bytes are spread over the bins it overlaps, in proportion to the overlap.
//! When more than [`MAX_BINS`] bins are occupied the bin width doubles (pairs of bins are
//! summed). Bins hold only integer sums and sorted sets, so merging timelines is exact and
//! the result does not depend on the merge order: the final width is the smallest power of
//! two (at least every part's width) at which the union of occupied bins fits.

use crate::read::record::{OpClass, ProcKey};
use serde::Serialize;
use std::collections::BTreeMap;

/// Initial bin width: 2^20 ns ≈ 1.05 ms.
pub const BASE_SHIFT: u32 = 20;
/// Most occupied bins a timeline keeps before doubling the bin width.
pub const MAX_BINS: usize = 4096;
/// Most windows used to segment the run into phases (the bin width is doubled until the
/// run spans at most this many).
pub const PHASE_WINDOWS: u64 = 200;
/// Phases shorter than this many windows are merged into their longer neighbour, so brief
/// interruptions (a file close between two write bursts) do not split a phase.
pub const MIN_PHASE_WINDOWS: usize = 3;

/// Activity within one bin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bin<K> {
    /// Time in data-write, data-read and metadata calls (ns, spread by overlap).
    pub ns: [u64; 3],
    /// Bytes written and read (spread by overlap).
    pub bytes: [u64; 2],
    /// Calls that started in this bin.
    pub ops: u64,
    /// Processes active in this bin (sorted, unique).
    pub procs: Vec<ProcKey>,
    /// Time per operation (sorted by key when finalized).
    pub op_ns: Vec<(K, u64)>,
}

impl<K> Default for Bin<K> {
    fn default() -> Self {
        Bin {
            ns: [0; 3],
            bytes: [0; 2],
            ops: 0,
            procs: Vec::new(),
            op_ns: Vec::new(),
        }
    }
}

fn class_index(c: OpClass) -> usize {
    match c {
        OpClass::DataWrite => 0,
        OpClass::DataRead => 1,
        OpClass::Metadata => 2,
    }
}

impl<K: Ord + Clone> Bin<K> {
    fn add_proc(&mut self, p: ProcKey) {
        if let Err(i) = self.procs.binary_search(&p) {
            self.procs.insert(i, p);
        }
    }

    fn add_op_ns(&mut self, k: &K, ns: u64) {
        // Few distinct ops per bin: linear search is fastest here.
        if let Some(e) = self.op_ns.iter_mut().find(|e| e.0 == *k) {
            e.1 += ns;
        } else {
            self.op_ns.push((k.clone(), ns));
        }
    }

    /// Adds a call that starts and ends in this bin.
    fn add_call(&mut self, dur: u64, class: OpClass, bytes: u64, op: &K, proc: ProcKey) {
        self.ns[class_index(class)] += dur;
        match class {
            OpClass::DataWrite => self.bytes[0] += bytes,
            OpClass::DataRead => self.bytes[1] += bytes,
            OpClass::Metadata => {}
        }
        self.ops += 1;
        self.add_proc(proc);
        self.add_op_ns(op, dur);
    }

    fn absorb(&mut self, o: Bin<K>) {
        for i in 0..3 {
            self.ns[i] += o.ns[i];
        }
        self.bytes[0] += o.bytes[0];
        self.bytes[1] += o.bytes[1];
        self.ops += o.ops;
        for p in o.procs {
            self.add_proc(p);
        }
        for (k, v) in o.op_ns {
            self.add_op_ns(&k, v);
        }
        self.op_ns.sort();
    }
}

/// The bin [`Timeline::add_buffered`] is filling, outside the tree: its index and
/// contents. Flush it ([`Timeline::flush`]) before reading or merging the timeline.
#[derive(Debug)]
pub struct OpenBin<K>(Option<(u64, Bin<K>)>);

impl<K> Default for OpenBin<K> {
    fn default() -> Self {
        OpenBin(None)
    }
}

/// Sparse binned activity over the run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Timeline<K> {
    /// Bin width is `2^shift` ns.
    pub shift: u32,
    /// Occupied bins by index (`start_ns >> shift`).
    pub bins: BTreeMap<u64, Bin<K>>,
}

impl<K> Default for Timeline<K> {
    fn default() -> Self {
        Timeline {
            shift: BASE_SHIFT,
            bins: BTreeMap::new(),
        }
    }
}

impl<K: Ord + Clone> Timeline<K> {
    /// Doubles the bin width once.
    pub fn coarsen(&mut self) {
        self.shift += 1;
        let old = std::mem::take(&mut self.bins);
        for (i, b) in old {
            match self.bins.entry(i >> 1) {
                std::collections::btree_map::Entry::Vacant(v) => {
                    v.insert(b);
                }
                std::collections::btree_map::Entry::Occupied(mut o) => o.get_mut().absorb(b),
            }
        }
    }

    fn fit(&mut self) {
        while self.bins.len() > MAX_BINS {
            self.coarsen();
        }
    }

    /// Adds one call.
    #[allow(clippy::too_many_arguments)]
    pub fn add(&mut self, start: u64, dur: u64, class: OpClass, bytes: u64, op: &K, proc: ProcKey) {
        let end = start.saturating_add(dur);
        let mut b0 = start >> self.shift;
        let mut b1 = (end.saturating_sub(1).max(start)) >> self.shift;
        while b1 - b0 >= MAX_BINS as u64 {
            self.coarsen();
            b0 = start >> self.shift;
            b1 = (end.saturating_sub(1).max(start)) >> self.shift;
        }
        let ci = class_index(class);
        let byte_slot = match class {
            OpClass::DataWrite => Some(0),
            OpClass::DataRead => Some(1),
            OpClass::Metadata => None,
        };
        if b0 == b1 {
            self.bins
                .entry(b0)
                .or_default()
                .add_call(dur, class, bytes, op, proc);
        } else {
            let mut ns_left = dur;
            let mut bytes_left = bytes;
            for b in b0..=b1 {
                let lo = start.max(b << self.shift);
                let hi = end.min((b + 1) << self.shift);
                let (ns, by) = if b == b1 {
                    (ns_left, bytes_left)
                } else {
                    let ov = hi.saturating_sub(lo);
                    let by = (bytes as u128 * ov as u128 / dur.max(1) as u128) as u64;
                    (ov.min(ns_left), by.min(bytes_left))
                };
                ns_left -= ns;
                bytes_left -= by;
                let bin = self.bins.entry(b).or_default();
                bin.ns[ci] += ns;
                if let Some(s) = byte_slot {
                    bin.bytes[s] += by;
                }
                if b == b0 {
                    bin.ops += 1;
                }
                bin.add_proc(proc);
                bin.add_op_ns(op, ns);
            }
        }
        self.fit();
    }

    /// Adds one call through `open`, a bin kept outside the tree while consecutive calls
    /// start and end in it (a process's calls mostly do): those skip the tree search.
    /// The result, once [`Timeline::flush`]ed, is what [`Timeline::add`] gives (a bin's
    /// sums do not depend on order, and its op list is sorted when it joins the tree).
    #[allow(clippy::too_many_arguments)]
    pub fn add_buffered(
        &mut self,
        open: &mut OpenBin<K>,
        start: u64,
        dur: u64,
        class: OpClass,
        bytes: u64,
        op: &K,
        proc: ProcKey,
    ) {
        let end = start.saturating_add(dur);
        let last = end.saturating_sub(1).max(start);
        if let Some((i, bin)) = &mut open.0 {
            if start >> self.shift == *i && last >> self.shift == *i {
                bin.add_call(dur, class, bytes, op, proc);
                return;
            }
        }
        // Flushing may coarsen: bin indices are computed after it.
        self.flush(open);
        let b0 = start >> self.shift;
        if last >> self.shift == b0 {
            let mut bin = Bin::default();
            bin.add_call(dur, class, bytes, op, proc);
            open.0 = Some((b0, bin));
            return;
        }
        self.add(start, dur, class, bytes, op, proc);
    }

    /// Puts the open bin into the tree. The width cannot have changed while it was open:
    /// only `add`, `merge` and `coarsen` change it, and `add_buffered` flushes first.
    pub fn flush(&mut self, open: &mut OpenBin<K>) {
        if let Some((i, bin)) = open.0.take() {
            match self.bins.entry(i) {
                std::collections::btree_map::Entry::Vacant(v) => {
                    v.insert(bin);
                }
                std::collections::btree_map::Entry::Occupied(mut o) => o.get_mut().absorb(bin),
            }
            self.fit();
        }
    }

    /// Adds all of `other` into `self`.
    pub fn merge(&mut self, mut other: Timeline<K>) {
        while self.shift < other.shift {
            self.coarsen();
        }
        while other.shift < self.shift {
            other.coarsen();
        }
        for (i, b) in other.bins {
            match self.bins.entry(i) {
                std::collections::btree_map::Entry::Vacant(v) => {
                    v.insert(b);
                }
                std::collections::btree_map::Entry::Occupied(mut o) => o.get_mut().absorb(b),
            }
        }
        self.fit();
    }

    /// Converts operation keys (local ids to names) and sorts each bin's op list.
    pub fn map_ops<L: Ord + Clone>(self, f: impl Fn(&K) -> L) -> Timeline<L> {
        Timeline {
            shift: self.shift,
            bins: self
                .bins
                .into_iter()
                .map(|(i, b)| {
                    let mut op_ns: Vec<(L, u64)> =
                        b.op_ns.iter().map(|(k, v)| (f(k), *v)).collect();
                    op_ns.sort();
                    (
                        i,
                        Bin {
                            ns: b.ns,
                            bytes: b.bytes,
                            ops: b.ops,
                            procs: b.procs,
                            op_ns,
                        },
                    )
                })
                .collect(),
        }
    }
}

/// One fixed-width window of the run, for plots.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Window {
    /// Window start, ns since the epoch.
    pub start_ns: u64,
    /// Window end, ns since the epoch.
    pub end_ns: u64,
    /// Time in data-write calls, ns.
    pub write_ns: u64,
    /// Time in data-read calls, ns.
    pub read_ns: u64,
    /// Time in metadata calls, ns.
    pub meta_ns: u64,
    /// Bytes written.
    pub bytes_written: u64,
    /// Bytes read.
    pub bytes_read: u64,
    /// Dominant activity: `data write`, `data read`, `metadata` or `idle`.
    pub class: String,
}

/// A run of adjacent windows with the same dominant activity.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Phase {
    /// 1-based phase number.
    pub index: usize,
    /// `data write`, `data read`, `metadata` or `idle`.
    pub class: String,
    /// Start, ns since the epoch (clipped to the first call).
    pub start_ns: u64,
    /// End, ns since the epoch (clipped to the last call's end).
    pub end_ns: u64,
    /// Processes active in the phase.
    pub ranks: usize,
    /// Calls started in the phase.
    pub ops: u64,
    /// Bytes written.
    pub bytes_written: u64,
    /// Bytes read.
    pub bytes_read: u64,
    /// Operation with the most time in the phase.
    pub dominant_op: String,
    /// Its share of the phase's call time (0–1).
    pub dominant_share: f64,
    /// (bytes written + read) / phase duration, bytes per second.
    pub bandwidth_bps: f64,
}

fn window_class(b: &Bin<String>) -> &'static str {
    let [w, r, m] = b.ns;
    if w == 0 && r == 0 && m == 0 {
        return if b.ops > 0 { "metadata" } else { "idle" };
    }
    if w >= r && w >= m {
        "data write"
    } else if r >= m {
        "data read"
    } else {
        "metadata"
    }
}

/// Cuts the run into at most [`PHASE_WINDOWS`] windows and merges adjacent windows of the
/// same dominant activity into phases. Idle windows between two windows of the same class
/// join that phase; other idle runs become `idle` phases. Runs shorter than
/// [`MIN_PHASE_WINDOWS`] join a longer neighbour, except that activity never joins an idle
/// run: an `idle` phase has no calls.
pub fn segment(tl: &Timeline<String>, first_ns: u64, last_ns: u64) -> (Vec<Window>, Vec<Phase>) {
    if tl.bins.is_empty() {
        return (Vec::new(), Vec::new());
    }
    let mut t = tl.clone();
    loop {
        let lo = *t.bins.keys().next().expect("non-empty");
        let hi = *t.bins.keys().next_back().expect("non-empty");
        if hi - lo < PHASE_WINDOWS {
            break;
        }
        t.coarsen();
    }
    let lo = *t.bins.keys().next().expect("non-empty");
    let hi = *t.bins.keys().next_back().expect("non-empty");
    let empty = Bin::default();
    let mut windows = Vec::new();
    let mut classes = Vec::new();
    for i in lo..=hi {
        let b = t.bins.get(&i).unwrap_or(&empty);
        let class = window_class(b);
        classes.push(class);
        windows.push(Window {
            start_ns: (i << t.shift).max(first_ns),
            end_ns: ((i + 1) << t.shift).min(last_ns.max(first_ns)),
            write_ns: b.ns[0],
            read_ns: b.ns[1],
            meta_ns: b.ns[2],
            bytes_written: b.bytes[0],
            bytes_read: b.bytes[1],
            class: class.to_string(),
        });
    }
    // Idle windows between two windows of the same class take that class.
    let n = classes.len();
    let mut i = 0;
    while i < n {
        if classes[i] == "idle" {
            let j = (i..n).find(|&j| classes[j] != "idle").unwrap_or(n);
            if i > 0 && j < n && classes[i - 1] == classes[j] {
                let c = classes[j];
                classes[i..j].iter_mut().for_each(|x| *x = c);
            }
            i = j;
        } else {
            i += 1;
        }
    }
    // Runs of equal class; then runs shorter than MIN_PHASE_WINDOWS join their longer
    // neighbour (shortest first, ties to the earlier run), until none is left.
    let mut runs: Vec<(&str, usize, usize)> = Vec::new();
    for (k, &c) in classes.iter().enumerate() {
        match runs.last_mut() {
            Some(r) if r.0 == c => r.2 = k + 1,
            _ => runs.push((c, k, k + 1)),
        }
    }
    let len = |r: &(&str, usize, usize)| r.2 - r.1;
    while runs.len() > 1 {
        // The neighbour run `i` joins: the longer one (ties to the earlier). Activity never
        // joins an idle run, which would label calls `idle`: a short active run between
        // idle runs (a burst after a pause) stays a phase of its own.
        let target = |i: usize| -> Option<usize> {
            let can = |j: usize| runs[i].0 == "idle" || runs[j].0 != "idle";
            let prev = (i > 0 && can(i - 1)).then(|| i - 1);
            let next = (i + 1 < runs.len() && can(i + 1)).then_some(i + 1);
            match (prev, next) {
                (Some(p), Some(n)) => Some(if len(&runs[p]) >= len(&runs[n]) { p } else { n }),
                (p, n) => p.or(n),
            }
        };
        let Some((ri, into)) = runs
            .iter()
            .enumerate()
            .filter(|(_, r)| len(r) < MIN_PHASE_WINDOWS)
            .filter_map(|(i, r)| target(i).map(|t| (len(r), i, t)))
            .min()
            .map(|(_, i, t)| (i, t))
        else {
            break;
        };
        let r = runs.remove(ri);
        if into < ri {
            runs[ri - 1].2 = r.2;
        } else {
            runs[ri].1 = r.1;
        }
        let mut merged: Vec<(&str, usize, usize)> = Vec::new();
        for r in runs {
            match merged.last_mut() {
                Some(m) if m.0 == r.0 => m.2 = r.2,
                _ => merged.push(r),
            }
        }
        runs = merged;
    }
    let mut phases = Vec::new();
    for (c, i, j) in runs {
        let mut acc: Bin<String> = Bin::default();
        for k in i..j {
            if let Some(b) = t.bins.get(&(lo + k as u64)) {
                acc.absorb(b.clone());
            }
        }
        let start = windows[i].start_ns;
        let end = windows[j - 1].end_ns.max(start);
        let total: u64 = acc.ns.iter().sum();
        let (dom, dom_ns) = acc
            .op_ns
            .iter()
            .max_by(|a, b| a.1.cmp(&b.1).then_with(|| b.0.cmp(&a.0)))
            .map(|(k, v)| (k.clone(), *v))
            .unwrap_or_default();
        let dur_s = (end - start) as f64 / 1e9;
        let bytes = acc.bytes[0] + acc.bytes[1];
        phases.push(Phase {
            index: phases.len() + 1,
            class: c.to_string(),
            start_ns: start,
            end_ns: end,
            ranks: acc.procs.len(),
            ops: acc.ops,
            bytes_written: acc.bytes[0],
            bytes_read: acc.bytes[1],
            dominant_op: dom,
            dominant_share: if total > 0 {
                dom_ns as f64 / total as f64
            } else {
                0.0
            },
            bandwidth_bps: if dur_s > 0.0 {
                bytes as f64 / dur_s
            } else {
                0.0
            },
        });
    }
    (windows, phases)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(r: i64) -> ProcKey {
        ProcKey { rank: r, pid: 1 }
    }

    #[test]
    fn spreads_long_calls_exactly() {
        let mut t: Timeline<u32> = Timeline::default();
        let w = 1u64 << BASE_SHIFT;
        t.add(w / 2, 2 * w, OpClass::DataWrite, 1000, &0, p(0));
        assert_eq!(t.bins.len(), 3);
        let ns: u64 = t.bins.values().map(|b| b.ns[0]).sum();
        let by: u64 = t.bins.values().map(|b| b.bytes[0]).sum();
        assert_eq!((ns, by), (2 * w, 1000));
        assert_eq!(t.bins[&0].ops, 1);
        assert_eq!(t.bins[&1].ns[0], w);
    }

    #[test]
    fn buffered_adds_give_the_same_timeline() {
        // Mostly short calls in time order (several per bin), some spanning bins, some
        // going back in time, over a range that makes the timeline coarsen.
        let w = 1u64 << BASE_SHIFT;
        let mut plain: Timeline<u32> = Timeline::default();
        let mut buffered: Timeline<u32> = Timeline::default();
        let mut open = OpenBin::default();
        let mut t = 0u64;
        for i in 0..40_000u64 {
            t += (i * 2654435761) % (w / 3);
            let (start, dur) = match i % 97 {
                0 => (t, 3 * w + i),
                1 => (t.saturating_sub(5 * w), w / 4),
                _ => (t, (i * 40503) % (w / 8)),
            };
            if i % 13_000 == 0 {
                t += 6000 * w; // a gap: more occupied bins than MAX_BINS
            }
            let class = match i % 3 {
                0 => OpClass::DataWrite,
                1 => OpClass::DataRead,
                _ => OpClass::Metadata,
            };
            let op = (i % 5) as u32;
            let proc = p((i % 4) as i64);
            plain.add(start, dur, class, i % 4096, &op, proc);
            buffered.add_buffered(&mut open, start, dur, class, i % 4096, &op, proc);
        }
        buffered.flush(&mut open);
        assert!(plain.shift > BASE_SHIFT, "the test coarsens");
        let sorted = |t: Timeline<u32>| t.map_ops(|k| *k);
        let (a, b) = (sorted(plain), sorted(buffered));
        assert_eq!((a.shift, a.bins.len()), (b.shift, b.bins.len()));
        assert!(a == b, "buffered adds differ from plain adds");
    }

    #[test]
    fn merge_is_order_independent() {
        let mk = |seed: u64| {
            let mut t: Timeline<u32> = Timeline::default();
            for i in 0..3000u64 {
                let s = (i * 7919 + seed * 104729) % 50_000_000_000;
                t.add(
                    s,
                    1000 + i,
                    OpClass::Metadata,
                    0,
                    &((i % 3) as u32),
                    p(seed as i64),
                );
            }
            t
        };
        let (a, b, c) = (mk(1), mk(2), mk(3));
        let mut x = a.clone();
        x.merge(b.clone());
        x.merge(c.clone());
        let mut y = c;
        y.merge(a);
        let mut bb = b;
        bb.merge(y);
        assert_eq!(x, bb);
        assert!(x.bins.len() <= MAX_BINS);
    }

    #[test]
    fn a_short_burst_after_a_pause_is_not_idle() {
        // Writes, a long pause, then a burst of reads shorter than MIN_PHASE_WINDOWS: the
        // burst used to join the longer idle run and read as an `idle` phase with calls.
        let mut t: Timeline<u32> = Timeline::default();
        let w = 1u64 << BASE_SHIFT;
        for i in 0..10 {
            t.add(i * w, w, OpClass::DataWrite, 1 << 20, &0, p(0));
        }
        for i in 16..18 {
            t.add(i * w, w / 2, OpClass::DataRead, 1 << 10, &1, p(1));
        }
        let names = ["dataset.write".to_string(), "dataset.read".to_string()];
        let t = t.map_ops(|k| names[*k as usize].clone());
        let (_, phases) = segment(&t, 0, 18 * w);
        let classes: Vec<&str> = phases.iter().map(|p| p.class.as_str()).collect();
        assert_eq!(classes, ["data write", "idle", "data read"]);
        assert_eq!(phases[1].ops, 0);
        assert_eq!((phases[2].ops, phases[2].bytes_read), (2, 2 << 10));
        assert_eq!(phases[2].dominant_op, "dataset.read");
    }

    #[test]
    fn segments_into_phases() {
        let mut t: Timeline<u32> = Timeline::default();
        let w = 1u64 << BASE_SHIFT;
        for i in 0..10 {
            t.add(i * w, w / 2, OpClass::Metadata, 0, &0, p(0));
        }
        for i in 10..20 {
            t.add(i * w, w, OpClass::DataWrite, 1 << 20, &1, p(i as i64 % 2));
        }
        let names = ["group.create".to_string(), "dataset.write".to_string()];
        let t = t.map_ops(|k| names[*k as usize].clone());
        let (windows, phases) = segment(&t, 0, 20 * w);
        assert_eq!(windows.len(), 20);
        assert_eq!(phases.len(), 2);
        assert_eq!(phases[0].class, "metadata");
        assert_eq!(phases[0].dominant_op, "group.create");
        assert_eq!(phases[1].class, "data write");
        assert_eq!(phases[1].ranks, 2);
        assert_eq!(phases[1].bytes_written, 10 << 20);
        assert_eq!(phases[1].dominant_op, "dataset.write");
    }
}
