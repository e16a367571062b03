//! The statistics value types the aggregate is made of: per operation ([`OpStats`], with
//! its slowest calls in a [`TopK`]), per process ([`ProcStats`], [`ProcOpStats`]), per
//! object ([`ObjStats`], [`SummaryStats`], with [`ProcSet`] and [`SizeHist`]) and per
//! container file ([`FileStats`]). Each merges commutatively.

use super::objects::{join_sorted, lock};
use crate::aggregate::sketch::LogSketch;
use crate::read::record::{ProcKey, RecordRef};
use compact_str::CompactString;
use h5prov_format::ObjectSummaryRef;
use rustc_hash::FxHashMap;
use serde::Serialize;
use std::cmp::Reverse;
use std::collections::BTreeMap;
use std::sync::Mutex;

/// Slowest calls kept per operation (the straggler-call candidates).
pub const SLOW_CALLS_KEPT: usize = 10;

/// One slow call, kept with enough context to find it again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SlowCall {
    /// Duration, ns.
    pub total_ns: u64,
    /// Start, ns since the epoch.
    pub start_ns: u64,
    /// Process.
    pub proc: ProcKey,
    /// Thread.
    pub tid: u64,
    /// Sequence number in its process's trace.
    pub seq: u64,
    /// Container file.
    pub file: String,
    /// Object path.
    pub path: String,
    /// Data bytes the call moved (0 for metadata calls).
    pub bytes: u64,
}

impl SlowCall {
    fn key(&self) -> (Reverse<u64>, ProcKey, u64, u64) {
        (Reverse(self.total_ns), self.proc, self.seq, self.start_ns)
    }
}

/// The slowest [`SLOW_CALLS_KEPT`] calls, slowest first (ties: by process, then seq).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TopK {
    /// The calls, in order.
    pub calls: Vec<SlowCall>,
}

impl TopK {
    #[inline]
    pub(super) fn accepts(&self, total_ns: u64) -> bool {
        self.calls.len() < SLOW_CALLS_KEPT
            || self.calls.last().is_some_and(|l| total_ns >= l.total_ns)
    }

    pub(super) fn insert(&mut self, c: SlowCall) {
        let k = c.key();
        let pos = self.calls.partition_point(|x| x.key() < k);
        if pos < SLOW_CALLS_KEPT {
            self.calls.insert(pos, c);
            self.calls.truncate(SLOW_CALLS_KEPT);
        }
    }

    fn merge(&mut self, o: TopK) {
        for c in o.calls {
            if self.accepts(c.total_ns) {
                self.insert(c);
            }
        }
    }
}

/// Statistics of one operation over all processes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OpStats {
    /// Calls.
    pub count: u64,
    /// Sum of durations, ns.
    pub total_ns: u64,
    /// Sum of time in the under connector, ns.
    pub under_ns: u64,
    /// Longest call, ns.
    pub max_ns: u64,
    /// Data bytes.
    pub bytes: u64,
    /// Calls with a failure status.
    pub errors: u64,
    /// Calls whose operation was still in flight when they returned (the `async` column).
    pub async_calls: u64,
    /// Latency distribution.
    pub sketch: LogSketch,
    /// Slowest calls.
    pub slow: TopK,
}

impl OpStats {
    pub(super) fn merge(&mut self, o: OpStats) {
        self.count += o.count;
        self.total_ns += o.total_ns;
        self.under_ns += o.under_ns;
        self.max_ns = self.max_ns.max(o.max_ns);
        self.bytes += o.bytes;
        self.errors += o.errors;
        self.async_calls += o.async_calls;
        self.sketch.merge(&o.sketch);
        self.slow.merge(o.slow);
    }
}

/// Statistics of one operation in one process.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct ProcOpStats {
    /// Calls.
    pub count: u64,
    /// Sum of durations, ns.
    pub total_ns: u64,
    /// Sum of under-connector time, ns.
    pub under_ns: u64,
    /// Longest call, ns.
    pub max_ns: u64,
    /// Data bytes.
    pub bytes: u64,
}

impl ProcOpStats {
    pub(super) fn add(&mut self, r: &RecordRef<'_>) {
        self.count += 1;
        self.total_ns += r.total_ns;
        self.under_ns += r.under_ns.min(r.total_ns);
        self.max_ns = self.max_ns.max(r.total_ns);
        self.bytes += r.bytes;
    }

    fn merge(&mut self, o: &ProcOpStats) {
        self.count += o.count;
        self.total_ns += o.total_ns;
        self.under_ns += o.under_ns;
        self.max_ns = self.max_ns.max(o.max_ns);
        self.bytes += o.bytes;
    }
}

/// Statistics of one process.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProcStats {
    /// Per operation.
    pub ops: BTreeMap<String, ProcOpStats>,
    /// First call start, ns.
    pub first_ns: u64,
    /// Last call end, ns.
    pub last_ns: u64,
    /// Bytes read.
    pub bytes_read: u64,
    /// Bytes written.
    pub bytes_written: u64,
}

impl ProcStats {
    pub(super) fn merge(&mut self, o: ProcStats) {
        for (k, v) in o.ops {
            self.ops.entry(k).or_default().merge(&v);
        }
        self.first_ns = min_nonzero(self.first_ns, o.first_ns);
        self.last_ns = self.last_ns.max(o.last_ns);
        self.bytes_read += o.bytes_read;
        self.bytes_written += o.bytes_written;
    }
}

pub(super) fn min_nonzero(a: u64, b: u64) -> u64 {
    match (a, b) {
        (0, x) | (x, 0) => x,
        (a, b) => a.min(b),
    }
}

/// The number of process `p` in this program: every process key seen is numbered once, in
/// the order first seen, so that the numbers mean the same in every [`Accumulator`](super::Accumulator) and
/// [`Aggregate`](super::Aggregate) (their merges compare them). A [`ProcSet`] holds these 4-byte numbers
/// rather than 16-byte keys: an object touched by many processes holds one number each,
/// and objects × processes was the largest part of the analyzer's memory after the
/// objects themselves. Looked up once per process of a trace file, not per record.
pub fn proc_number(p: ProcKey) -> u32 {
    static NUMBERS: std::sync::LazyLock<Mutex<FxHashMap<ProcKey, u32>>> =
        std::sync::LazyLock::new(Mutex::default);
    let mut m = lock(&NUMBERS);
    let n = m.len() as u32;
    *m.entry(p).or_insert(n)
}

/// The processes that touched an object or file, by [`proc_number`]. Nearly always one:
/// that one is kept inline, so adding a record's process (once per object record) reads
/// no other memory and a new object allocates nothing; more go to a sorted vector.
#[derive(Debug, Clone)]
pub enum ProcSet {
    /// Exactly this process.
    One(u32),
    /// These processes, sorted and unique (none when empty).
    Many(Vec<u32>),
}

impl Default for ProcSet {
    fn default() -> Self {
        ProcSet::Many(Vec::new())
    }
}

/// Sets are equal when they hold the same processes, however they are stored.
impl PartialEq for ProcSet {
    fn eq(&self, o: &Self) -> bool {
        self.as_slice() == o.as_slice()
    }
}

impl Eq for ProcSet {}

impl ProcSet {
    /// Adds process number `p` (cheap when it is the one there already).
    #[inline]
    pub fn insert(&mut self, p: u32) {
        match self {
            ProcSet::One(q) if *q == p => {}
            ProcSet::One(q) => *self = ProcSet::Many(vec![p.min(*q), p.max(*q)]),
            ProcSet::Many(v) if v.is_empty() => *self = ProcSet::One(p),
            ProcSet::Many(v) => {
                if v.last() == Some(&p) {
                    return;
                }
                if let Err(i) = v.binary_search(&p) {
                    v.insert(i, p);
                }
            }
        }
    }

    /// The process numbers, sorted.
    pub(super) fn as_slice(&self) -> &[u32] {
        match self {
            ProcSet::One(p) => std::slice::from_ref(p),
            ProcSet::Many(v) => v,
        }
    }

    /// Number of processes.
    pub fn len(&self) -> usize {
        self.as_slice().len()
    }

    /// No process.
    pub fn is_empty(&self) -> bool {
        self.as_slice().is_empty()
    }

    pub(super) fn merge(&mut self, o: ProcSet) {
        if o.is_empty() || self.as_slice() == o.as_slice() {
            return;
        }
        if self.is_empty() {
            *self = o;
            return;
        }
        let v: Vec<u32> = join_sorted(
            self.as_slice().iter().map(|&p| (p, ())),
            o.as_slice().iter().map(|&p| (p, ())),
        )
        .map(|(p, _, _)| p)
        .collect();
        *self = ProcSet::Many(v);
    }
}

/// Power-of-two histogram of access sizes: bucket `i` counts sizes in `[2^(i-1), 2^i)`
/// (bucket 0 counts 0 bytes). Nearly every object is accessed with one size: one bucket is
/// kept inline (no allocation per object, nothing else to read per access); more are
/// counted in a dense vector.
#[derive(Debug, Clone)]
pub enum SizeHist {
    /// Only `bucket` is non-zero, and holds `count`.
    One {
        /// The bucket.
        bucket: u8,
        /// Its count (> 0).
        count: u64,
    },
    /// Bucket `i` holds `counts[i]` (none when empty).
    Dense(Vec<u64>),
}

impl Default for SizeHist {
    fn default() -> Self {
        SizeHist::Dense(Vec::new())
    }
}

/// Histograms are equal when every bucket holds the same count, however they are stored.
impl PartialEq for SizeHist {
    fn eq(&self, o: &Self) -> bool {
        fn trim(v: &[u64]) -> &[u64] {
            &v[..v.iter().rposition(|&c| c > 0).map_or(0, |i| i + 1)]
        }
        trim(&self.counts()) == trim(&o.counts())
    }
}

impl Eq for SizeHist {}

impl SizeHist {
    /// The bucket of a size.
    pub fn bucket(bytes: u64) -> usize {
        (64 - bytes.leading_zeros()) as usize
    }

    /// Counts one access.
    #[inline]
    pub fn add(&mut self, bytes: u64) {
        let b = Self::bucket(bytes);
        match self {
            SizeHist::One { bucket, count } if *bucket as usize == b => *count += 1,
            SizeHist::Dense(v) if v.is_empty() => {
                *self = SizeHist::One {
                    bucket: b as u8,
                    count: 1,
                }
            }
            _ => self.dense_mut(b)[b] += 1,
        }
    }

    /// The dense form, with room for bucket `b`.
    fn dense_mut(&mut self, b: usize) -> &mut Vec<u64> {
        if let SizeHist::One { .. } = self {
            *self = SizeHist::Dense(self.counts());
        }
        let SizeHist::Dense(v) = self else {
            unreachable!("made dense above")
        };
        if v.len() <= b {
            v.resize(b + 1, 0);
        }
        v
    }

    /// Adds another histogram's counts.
    pub fn merge(&mut self, o: &SizeHist) {
        match (&mut *self, o) {
            (_, SizeHist::Dense(w)) if w.is_empty() => {}
            (SizeHist::Dense(v), _) if v.is_empty() => *self = o.clone(),
            (
                SizeHist::One { bucket, count },
                SizeHist::One {
                    bucket: b,
                    count: c,
                },
            ) if bucket == b => *count += c,
            (_, SizeHist::One { bucket, count }) => {
                self.dense_mut(*bucket as usize)[*bucket as usize] += count
            }
            (_, SizeHist::Dense(w)) => {
                let v = self.dense_mut(w.len() - 1);
                for (a, b) in v.iter_mut().zip(w) {
                    *a += b;
                }
            }
        }
    }

    /// The count of every bucket from 0 to the highest non-empty one (empty: none).
    pub fn counts(&self) -> Vec<u64> {
        match self {
            SizeHist::One { bucket, count } => {
                let mut v = vec![0; *bucket as usize + 1];
                v[*bucket as usize] = *count;
                v
            }
            SizeHist::Dense(v) => v.clone(),
        }
    }

    /// Total accesses.
    pub fn total(&self) -> u64 {
        match self {
            SizeHist::One { count, .. } => *count,
            SizeHist::Dense(v) => v.iter().sum(),
        }
    }

    /// Accesses smaller than `limit` bytes when `limit` is a power of two (exact).
    pub fn below_pow2(&self, limit: u64) -> u64 {
        let lb = Self::bucket(limit); // buckets < lb hold sizes < limit
        match self {
            SizeHist::One { bucket, count } => {
                if (*bucket as usize) < lb {
                    *count
                } else {
                    0
                }
            }
            SizeHist::Dense(v) => v.iter().take(lb).sum(),
        }
    }
}

/// A histogram is written as the count of every bucket from 0 to the highest non-empty
/// one, as [`SizeHist::counts`] gives them (without building that vector).
impl Serialize for SizeHist {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        match self {
            SizeHist::One { bucket, count } => {
                let b = *bucket as usize;
                let mut seq = s.serialize_seq(Some(b + 1))?;
                for _ in 0..b {
                    seq.serialize_element(&0u64)?;
                }
                seq.serialize_element(count)?;
                seq.end()
            }
            SizeHist::Dense(v) => v.serialize(s),
        }
    }
}

/// What the records say about one object (`kind`, `file`, `path`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ObjStats {
    /// Calls on the object.
    pub calls: u64,
    /// Time in all calls on it, ns.
    pub total_ns: u64,
    /// Create/open calls.
    pub opens: u64,
    /// Data reads.
    pub reads: u64,
    /// Data writes.
    pub writes: u64,
    /// Bytes read.
    pub bytes_read: u64,
    /// Bytes written.
    pub bytes_written: u64,
    /// Time in reads, ns.
    pub read_ns: u64,
    /// Time in writes, ns.
    pub write_ns: u64,
    /// Independent transfers.
    pub ind_io: u64,
    /// Collective transfers.
    pub coll_io: u64,
    /// Requested collective, not done collectively.
    pub broken_coll_io: u64,
    /// Access sizes of reads and writes.
    pub sizes: SizeHist,
    /// Processes that touched it.
    pub procs: ProcSet,
    /// `H5Aread` calls on it (an attribute's value read; metadata, not a data read).
    pub attr_reads: u64,
    /// `H5Awrite` calls on it.
    pub attr_writes: u64,
    /// `H5Acreate` calls on it (counted in `opens` too: an attribute created is open).
    pub attr_creates: u64,
}

impl ObjStats {
    pub(super) fn merge(&mut self, o: ObjStats) {
        self.calls += o.calls;
        self.attr_reads += o.attr_reads;
        self.attr_writes += o.attr_writes;
        self.attr_creates += o.attr_creates;
        self.total_ns += o.total_ns;
        self.opens += o.opens;
        self.reads += o.reads;
        self.writes += o.writes;
        self.bytes_read += o.bytes_read;
        self.bytes_written += o.bytes_written;
        self.read_ns += o.read_ns;
        self.write_ns += o.write_ns;
        self.ind_io += o.ind_io;
        self.coll_io += o.coll_io;
        self.broken_coll_io += o.broken_coll_io;
        self.sizes.merge(&o.sizes);
        self.procs.merge(o.procs);
    }
}

/// The summed columns of an object's summary rows (see [`h5prov_format::ObjectSummary`] for their
/// meaning); dims and layout keep the smallest non-empty value, type size the largest.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SummarySum {
    /// Opens.
    pub opens: u64,
    /// Accesses.
    pub accesses: u64,
    /// Data reads.
    pub reads: u64,
    /// Data writes.
    pub writes: u64,
    /// Bytes read.
    pub bytes_read: u64,
    /// Bytes written.
    pub bytes_written: u64,
    /// Time in reads, ns.
    pub read_ns: u64,
    /// Time in writes, ns.
    pub write_ns: u64,
    /// Dataset dimensions (stored inline when short, as they nearly always are).
    pub dims: CompactString,
    /// Element size.
    pub type_size: u64,
    /// Dataset layout (stored inline).
    pub layout: CompactString,
    /// Independent transfers.
    pub ind_io: u64,
    /// Collective transfers.
    pub coll_io: u64,
    /// Requested collective, done independently.
    pub broken_coll_io: u64,
    /// State nodes that created the object.
    pub created: u64,
    /// Datasets created in a file.
    pub dsets_created: u64,
    /// Datasets opened in a file.
    pub dsets_opened: u64,
    /// Groups created in a file.
    pub groups_created: u64,
    /// Groups opened in a file.
    pub groups_opened: u64,
    /// First open to last close, ns.
    pub open_ns: u64,
}

/// Adds the numeric fields of `$o` into `$s`; dims and layout keep the smallest non-empty.
macro_rules! add_summary_fields {
    ($s:expr, $o:expr) => {{
        let (s, o) = ($s, $o);
        s.opens += o.opens;
        s.accesses += o.accesses;
        s.reads += o.reads;
        s.writes += o.writes;
        s.bytes_read += o.bytes_read;
        s.bytes_written += o.bytes_written;
        s.read_ns += o.read_ns;
        s.write_ns += o.write_ns;
        if s.dims.is_empty() || (!o.dims.is_empty() && &*o.dims < &*s.dims) {
            s.dims = CompactString::from(&*o.dims);
        }
        s.type_size = s.type_size.max(o.type_size);
        if s.layout.is_empty() || (!o.layout.is_empty() && &*o.layout < &*s.layout) {
            s.layout = CompactString::from(&*o.layout);
        }
        s.ind_io += o.ind_io;
        s.coll_io += o.coll_io;
        s.broken_coll_io += o.broken_coll_io;
        s.created = s.created.saturating_add(u64::from(o.created));
        s.dsets_created += o.dsets_created;
        s.dsets_opened += o.dsets_opened;
        s.groups_created += o.groups_created;
        s.groups_opened += o.groups_opened;
        s.open_ns += o.open_ns;
    }};
}

/// Summary rows of one object (`kind`, `file`, `path`) added up over processes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SummaryStats {
    /// Summary rows (state nodes) added.
    pub rows: u64,
    /// Sums of the rows' columns.
    pub sum: SummarySum,
    /// Earliest `first_ns`.
    pub first_ns: u64,
    /// Latest `last_ns`.
    pub last_ns: u64,
    /// Longest `open_ns`.
    pub max_open_ns: u64,
}

impl SummaryStats {
    pub(super) fn add(&mut self, o: &ObjectSummaryRef<'_>) {
        self.rows += 1;
        add_summary_fields!(&mut self.sum, o);
        self.first_ns = min_nonzero(self.first_ns, o.first_ns);
        self.last_ns = self.last_ns.max(o.last_ns);
        self.max_open_ns = self.max_open_ns.max(o.open_ns);
    }

    pub(super) fn merge(&mut self, o: SummaryStats) {
        self.rows += o.rows;
        add_summary_fields!(&mut self.sum, &o.sum);
        self.first_ns = min_nonzero(self.first_ns, o.first_ns);
        self.last_ns = self.last_ns.max(o.last_ns);
        self.max_open_ns = self.max_open_ns.max(o.max_open_ns);
    }
}

/// What the records say about one container file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileStats {
    /// Calls with this `file`.
    pub calls: u64,
    /// Time in them, ns.
    pub total_ns: u64,
    /// Time in metadata calls, ns.
    pub meta_ns: u64,
    /// `file.open` / `file.create` calls.
    pub file_opens: u64,
    /// `dataset.create` calls.
    pub dset_creates: u64,
    /// `dataset.close` calls and their time.
    pub dset_closes: u64,
    /// Time in `dataset.close`, ns.
    pub dset_close_ns: u64,
    /// Data reads / writes.
    pub reads: u64,
    /// Data writes.
    pub writes: u64,
    /// Bytes read.
    pub bytes_read: u64,
    /// Bytes written.
    pub bytes_written: u64,
    /// Time in reads, ns.
    pub read_ns: u64,
    /// Time in writes, ns.
    pub write_ns: u64,
    /// Access sizes.
    pub sizes: SizeHist,
    /// Processes that touched it.
    pub procs: ProcSet,
}

impl FileStats {
    pub(super) fn merge(&mut self, o: FileStats) {
        self.calls += o.calls;
        self.total_ns += o.total_ns;
        self.meta_ns += o.meta_ns;
        self.file_opens += o.file_opens;
        self.dset_creates += o.dset_creates;
        self.dset_closes += o.dset_closes;
        self.dset_close_ns += o.dset_close_ns;
        self.reads += o.reads;
        self.writes += o.writes;
        self.bytes_read += o.bytes_read;
        self.bytes_written += o.bytes_written;
        self.read_ns += o.read_ns;
        self.write_ns += o.write_ns;
        self.sizes.merge(&o.sizes);
        self.procs.merge(o.procs);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn size_hist_counts_like_a_dense_vector_whatever_its_form() {
        // Random adds (often one size, as objects are) and merges, against a plain vector.
        fn reference_add(v: &mut Vec<u64>, bytes: u64) {
            let b = SizeHist::bucket(bytes);
            if v.len() <= b {
                v.resize(b + 1, 0);
            }
            v[b] += 1;
        }
        let mut rng = crate::read::test_rng(11);
        let sizes = [0u64, 1, 2, 3, 1024, 1025, 4096, 1 << 20, u64::MAX];
        for round in 0..300 {
            let mut hs: Vec<(SizeHist, Vec<u64>)> = Vec::new();
            for _ in 0..3 {
                let mut h = SizeHist::default();
                let mut v = Vec::new();
                let one = sizes[rng(sizes.len())];
                for _ in 0..rng(5) {
                    let bytes = if rng(3) == 0 {
                        sizes[rng(sizes.len())]
                    } else {
                        one
                    };
                    h.add(bytes);
                    reference_add(&mut v, bytes);
                }
                hs.push((h, v));
            }
            let (mut h, mut v) = hs.pop().unwrap();
            for (o, w) in &hs {
                h.merge(o);
                if v.len() < w.len() {
                    v.resize(w.len(), 0);
                }
                for (a, b) in v.iter_mut().zip(w) {
                    *a += b;
                }
            }
            assert_eq!(h.counts(), v, "round {round}");
            // Written as its counts, whatever its form.
            assert_eq!(
                serde_json::to_string(&h).unwrap(),
                serde_json::to_string(&v).unwrap()
            );
            assert_eq!(h.total(), v.iter().sum::<u64>());
            for limit in [1u64, 2, 1024, 2048, 1 << 30] {
                let lb = SizeHist::bucket(limit);
                assert_eq!(h.below_pow2(limit), v.iter().take(lb).sum::<u64>());
            }
            assert_eq!(h, SizeHist::Dense(v.clone()));
        }
        let mut one = SizeHist::default();
        one.add(1000);
        assert!(matches!(one, SizeHist::One { .. }));
        assert_eq!(one, SizeHist::Dense(one.counts()));
        assert_ne!(one, SizeHist::default());
    }

    #[test]
    fn proc_set_is_a_sorted_set_whatever_its_form() {
        let p = |rank| proc_number(ProcKey { rank, pid: 7 });
        let mut a = ProcSet::default();
        assert!(a.is_empty());
        a.insert(p(3));
        a.insert(p(3));
        assert_eq!(a.len(), 1);
        assert!(matches!(a, ProcSet::One(_)));
        assert_eq!(a, ProcSet::Many(vec![p(3)]));
        for r in [1, 5, 3, 2, 5, 1] {
            a.insert(p(r));
        }
        let mut want = vec![p(1), p(2), p(3), p(5)];
        want.sort();
        assert_eq!(a.as_slice(), want);
        let mut b = ProcSet::One(p(4));
        b.merge(a.clone());
        want.push(p(4));
        want.sort();
        assert_eq!(b.as_slice(), want);
        let mut c = a.clone();
        c.merge(ProcSet::One(p(4)));
        assert_eq!(b, c);
        let mut d = ProcSet::One(p(2));
        d.merge(ProcSet::One(p(2)));
        d.merge(ProcSet::default());
        assert_eq!(d.as_slice(), &[p(2)]);
        assert_ne!(d, ProcSet::One(p(1)));
        // One number per process, the same however often it is asked for.
        assert_eq!(p(2), proc_number(ProcKey { rank: 2, pid: 7 }));
        assert_ne!(p(2), proc_number(ProcKey { rank: 2, pid: 8 }));
    }
}
