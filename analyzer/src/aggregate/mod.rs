//! Mergeable aggregation. Each worker thread reads files, one after another, into its own
//! [`Accumulator`] (streaming, bounded memory; objects in hash maps); the workers'
//! accumulators are merged and turned into one [`Aggregate`] of sorted maps. Every field
//! is an integer sum, min, max, sorted map or bounded top-K with a total order, so merges
//! ([`Accumulator::merge`], [`Aggregate::merge`]) are commutative and associative: the
//! result is the same for any number of threads and any order of files.
//!
//! Memory is bounded by operations × processes (plus objects and timeline bins), never by
//! records: latencies go into [`LogSketch`]es, slow calls into a top-[`SLOW_CALLS_KEPT`].

pub mod asyncops;
pub mod check;
pub mod collective;
pub mod dataset_io;
pub mod link_iter;
pub mod sketch;
pub mod timeline;

pub use crate::read::record::{is_anonymous_label, ANONYMOUS_LABEL};

use crate::aggregate::check::{Issue, MetaFacts, RecordChecks, TraceFacts, WarningKind};
use crate::aggregate::collective::{Collectives, Recorder};
use crate::aggregate::sketch::LogSketch;
use crate::aggregate::timeline::{OpenBin, Timeline};
use crate::read::objects::{read_meta_checked, read_objects, MetaError};
use crate::read::record::{OpClass, ProcKey, RecordExt, RecordRef};
use crate::read::stream_capture::{read_capture, Capture, StreamProcess, STREAM_FORMAT};
use crate::read::{Error, FileDiag, Inputs, ReadOptions};
use compact_str::CompactString;
use h5prov_format::{Encoding, ObjectSummaryRef, ProcessMeta};
use rayon::prelude::*;
use rustc_hash::FxHashMap;
use serde::Serialize;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// The kinds of objects whose summary rows are added up ([`Aggregate::summaries`]): the
/// report reads file and dataset rows only. Groups, attributes and datatypes made a third
/// of the summaries of an object-heavy run, and no part of the report looked at them.
pub const SUMMARY_KINDS: [&str; 2] = ["dataset", "file"];

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
    fn accepts(&self, total_ns: u64) -> bool {
        self.calls.len() < SLOW_CALLS_KEPT
            || self.calls.last().is_some_and(|l| total_ns >= l.total_ns)
    }

    fn insert(&mut self, c: SlowCall) {
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
    fn merge(&mut self, o: OpStats) {
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
    fn add(&mut self, r: &RecordRef<'_>) {
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
    fn merge(&mut self, o: ProcStats) {
        for (k, v) in o.ops {
            self.ops.entry(k).or_default().merge(&v);
        }
        self.first_ns = min_nonzero(self.first_ns, o.first_ns);
        self.last_ns = self.last_ns.max(o.last_ns);
        self.bytes_read += o.bytes_read;
        self.bytes_written += o.bytes_written;
    }
}

fn min_nonzero(a: u64, b: u64) -> u64 {
    match (a, b) {
        (0, x) | (x, 0) => x,
        (a, b) => a.min(b),
    }
}

/// The number of process `p` in this program: every process key seen is numbered once, in
/// the order first seen, so that the numbers mean the same in every [`Accumulator`] and
/// [`Aggregate`] (their merges compare them). A [`ProcSet`] holds these 4-byte numbers
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
    fn as_slice(&self) -> &[u32] {
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

    fn merge(&mut self, o: ProcSet) {
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
}

impl ObjStats {
    fn merge(&mut self, o: ObjStats) {
        self.calls += o.calls;
        self.attr_reads += o.attr_reads;
        self.attr_writes += o.attr_writes;
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
    fn add(&mut self, o: &ObjectSummaryRef<'_>) {
        self.rows += 1;
        add_summary_fields!(&mut self.sum, o);
        self.first_ns = min_nonzero(self.first_ns, o.first_ns);
        self.last_ns = self.last_ns.max(o.last_ns);
        self.max_open_ns = self.max_open_ns.max(o.open_ns);
    }

    fn merge(&mut self, o: SummaryStats) {
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
    fn merge(&mut self, o: FileStats) {
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

/// What reading found besides data: file counts, truncated lines, malformed rows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Diagnostics {
    /// Trace files read.
    pub trace_files: u64,
    /// Objects files read.
    pub objects_files: u64,
    /// Meta files read.
    pub meta_files: u64,
    /// Trace records read.
    pub records: u64,
    /// Objects rows read.
    pub object_rows: u64,
    /// Files with a truncated last line, and that line.
    pub truncated: BTreeSet<(String, u64)>,
    /// Malformed rows skipped (with `--lenient`).
    pub malformed_rows: u64,
    /// Files with malformed rows.
    pub malformed_files: u64,
    /// The first malformed row (smallest path): file, line, reason.
    pub first_malformed: Option<(String, u64, String)>,
    /// Meta files that could not be parsed: file and reason.
    pub bad_metas: BTreeSet<(String, String)>,
    /// Meta files with keys of the wrong type (ignored): file and which keys.
    pub wrong_type_metas: BTreeSet<(String, String)>,
    /// Problems found in records and metas while reading, by kind ([`check`]).
    pub issues: BTreeMap<WarningKind, Issue>,
    /// What each trace file held, by stem ([`check::stem`]).
    pub trace_facts: BTreeMap<String, TraceFacts>,
    /// What each meta file says, by stem (the smallest path, should two share a stem).
    pub meta_facts: BTreeMap<String, MetaFacts>,
    /// Stream capture files read (`h5prov collect --out`).
    pub stream_files: u64,
    /// Messages in them (`hello`, `event` and `interval`).
    pub stream_messages: u64,
    /// Processes read from them, each as if it had a trace file (not counted in
    /// `trace_files`).
    pub stream_processes: u64,
    /// Processes that ended without closing HDF5 (`_exit`, `os._exit`, `kill -9`) and whose
    /// every record was recovered: their metas were finished from the data
    /// ([`Aggregate::finish_unclosed`]).
    pub unclosed: u64,
    /// Processes that ended without closing HDF5 (their trace has a pending sidecar)
    /// whose objects rows were rebuilt from their records ([`crate::read::rebuild`]).
    pub objects_rebuilt: u64,
    /// The rows so rebuilt (counted in `object_rows` too).
    pub rebuilt_object_rows: u64,
    /// Objects files of such processes, not read (their rows were rebuilt instead).
    pub objects_files_replaced: u64,
}

impl Diagnostics {
    fn merge(&mut self, o: Diagnostics) {
        self.trace_files += o.trace_files;
        self.objects_files += o.objects_files;
        self.meta_files += o.meta_files;
        self.records += o.records;
        self.object_rows += o.object_rows;
        self.stream_files += o.stream_files;
        self.stream_messages += o.stream_messages;
        self.stream_processes += o.stream_processes;
        self.unclosed += o.unclosed;
        self.objects_rebuilt += o.objects_rebuilt;
        self.rebuilt_object_rows += o.rebuilt_object_rows;
        self.objects_files_replaced += o.objects_files_replaced;
        self.truncated.extend(o.truncated);
        self.malformed_rows += o.malformed_rows;
        self.malformed_files += o.malformed_files;
        self.first_malformed = match (self.first_malformed.take(), o.first_malformed) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.bad_metas.extend(o.bad_metas);
        self.wrong_type_metas.extend(o.wrong_type_metas);
        check::merge_issues(&mut self.issues, o.issues);
        for (k, v) in o.trace_facts {
            self.trace_facts.entry(k).or_default().merge(v);
        }
        for (k, v) in o.meta_facts {
            self.meta_fact(k, v);
        }
    }

    /// Keeps what the meta with stem `stem` says (of two with one stem, the smaller).
    fn meta_fact(&mut self, stem: String, v: MetaFacts) {
        match self.meta_facts.entry(stem) {
            std::collections::btree_map::Entry::Occupied(mut e) => {
                if v < *e.get() {
                    e.insert(v);
                }
            }
            std::collections::btree_map::Entry::Vacant(e) => {
                e.insert(v);
            }
        }
    }

    fn file(&mut self, path: &Path, d: &FileDiag) {
        let p = path.display().to_string();
        if let Some(l) = d.truncated_line {
            self.truncated.insert((p.clone(), l));
        }
        if d.malformed > 0 {
            self.malformed_rows += d.malformed;
            self.malformed_files += 1;
            if let Some((l, r)) = &d.first_malformed {
                let cand = (p, *l, r.clone());
                self.first_malformed = Some(match self.first_malformed.take() {
                    Some(a) => a.min(cand),
                    None => cand,
                });
            }
        }
    }
}

/// Full outer join of two sequences sorted by unique keys: yields each key once, with the
/// value of either side or of both (the left side's key is kept).
pub(crate) fn join_sorted<K: Ord, A, B>(
    a: impl IntoIterator<Item = (K, A)>,
    b: impl IntoIterator<Item = (K, B)>,
) -> impl Iterator<Item = (K, Option<A>, Option<B>)> {
    use std::cmp::Ordering;
    let mut a = a.into_iter().peekable();
    let mut b = b.into_iter().peekable();
    std::iter::from_fn(move || {
        let ord = match (a.peek(), b.peek()) {
            (Some(x), Some(y)) => x.0.cmp(&y.0),
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (None, None) => return None,
        };
        Some(match ord {
            Ordering::Less => {
                let (k, x) = a.next()?;
                (k, Some(x), None)
            }
            Ordering::Greater => {
                let (k, y) = b.next()?;
                (k, None, Some(y))
            }
            Ordering::Equal => {
                let (k, x) = a.next()?;
                (k, Some(x), b.next().map(|y| y.1))
            }
        })
    })
}

/// Merges map `b` into `a` (`f` combines values under equal keys; it is commutative).
/// Inserting a big map's entries one by one costs a tree search over long string keys per
/// entry; for two big maps a merge-join of the sorted sequences and a bulk build is linear.
fn merge_maps<K: Ord, V>(
    a: &mut BTreeMap<K, V>,
    mut b: BTreeMap<K, V>,
    mut f: impl FnMut(&mut V, V),
) {
    if a.len().min(b.len()) < 64 {
        // Insert the smaller map into the bigger one.
        if a.len() < b.len() {
            std::mem::swap(a, &mut b);
        }
        for (k, v) in b {
            match a.get_mut(&k) {
                Some(x) => f(x, v),
                None => {
                    a.insert(k, v);
                }
            }
        }
        return;
    }
    let mut out = Vec::with_capacity(a.len() + b.len());
    out.extend(join_merge(std::mem::take(a), b, f));
    // Sorted and unique: `collect` builds the tree in bulk.
    *a = out.into_iter().collect();
}

/// [`join_sorted`] with the values of a key found on both sides combined by `f`.
fn join_merge<K: Ord, V>(
    a: impl IntoIterator<Item = (K, V)>,
    b: impl IntoIterator<Item = (K, V)>,
    mut f: impl FnMut(&mut V, V),
) -> impl Iterator<Item = (K, V)> {
    join_sorted(a, b).map(move |(k, x, y)| {
        let v = match (x, y) {
            (Some(mut x), Some(y)) => {
                f(&mut x, y);
                x
            }
            (x, y) => x.or(y).expect("a joined key has a value on one side"),
        };
        (k, v)
    })
}

/// The objects of one container file, sorted by (`kind`, `path`). Grouping by file first
/// keeps the long file name out of every object's key (stored and compared once per file),
/// and makes merging the maps of processes that use different files a matter of moving
/// them.
///
/// Each key is stored once, as `kind\0path`, inline when it is short (24 bytes), as it
/// nearly always is (the hash tables keep short keys inline too, see [`ObjKey`]). Its byte order is the order of (`kind`, `path`), because `\0` is the
/// smallest byte and no kind contains it. A sorted vector rather than a tree: it is built
/// once, then only iterated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectMap<V> {
    entries: Vec<(CompactString, V)>,
}

impl<V> Default for ObjectMap<V> {
    fn default() -> Self {
        Self {
            entries: Vec::new(),
        }
    }
}

/// Where `kind` ends in a `kind\0path` key, and where `path` starts.
#[inline]
fn key_cut(k: &[u8]) -> (usize, usize) {
    let cut = k.iter().position(|&b| b == 0).unwrap_or(k.len());
    (cut, (cut + 1).min(k.len()))
}

/// `(kind, path)` of a `kind\0path` key.
#[inline]
fn split_key(k: &str) -> (&str, &str) {
    let (cut, p) = key_cut(k.as_bytes());
    (&k[..cut], &k[p..])
}

impl<V> ObjectMap<V> {
    /// Number of objects.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// No object.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// `((kind, path), value)` of every object, sorted by kind, then path.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = ((&str, &str), &V)> + '_ {
        self.entries.iter().map(|(k, v)| (split_key(k), v))
    }

    /// `(path, value)` of the objects of `kind`, sorted by path. Keys sort by kind first,
    /// so they are one range, found by binary search: the other kinds are not looked at.
    pub fn of_kind<'a>(
        &'a self,
        kind: &'a str,
    ) -> impl DoubleEndedIterator<Item = (&'a str, &'a V)> + 'a {
        // Whether key `k` sorts before `kind` followed by byte `b` (`\0`: the first key of
        // the kind; `\x01`: the first key after it).
        let before = |k: &str, b: u8| {
            let (k, n) = (k.as_bytes(), kind.len());
            match k[..n.min(k.len())].cmp(kind.as_bytes()) {
                std::cmp::Ordering::Less => true,
                std::cmp::Ordering::Greater => false,
                std::cmp::Ordering::Equal => k.get(n).is_none_or(|&c| c < b),
            }
        };
        let lo = self.entries.partition_point(|(k, _)| before(k, 0));
        let hi = self.entries.partition_point(|(k, _)| before(k, 1));
        self.entries[lo..hi]
            .iter()
            .map(move |(k, v)| (&k[kind.len() + 1..], v))
    }

    /// Adds another map; `f` combines the values of one object.
    fn merge(&mut self, o: ObjectMap<V>, f: impl FnMut(&mut V, V)) {
        if o.entries.is_empty() {
            return;
        }
        if self.entries.is_empty() {
            *self = o;
            return;
        }
        let a = std::mem::take(&mut self.entries);
        self.entries = join_merge(a, o.entries, f).collect();
    }
}

/// Path bytes a [`SortKey`] holds.
const SORT_PREFIX: usize = 24;

/// What the object sort compares: the rank of the kind among the file's kinds, the path's
/// first [`SORT_PREFIX`] bytes (zero-padded, as big-endian integers) and the path's length.
/// Paths share long prefixes, and a `memcmp` call per comparison dominated the sort; the
/// same object from two workers always tied on a shorter prefix.
#[derive(Debug, Clone, Copy)]
struct SortKey {
    kind: u32,
    len: u32,
    prefix: [u64; SORT_PREFIX / 8],
    /// The entry's index.
    at: u32,
}

impl SortKey {
    fn new(kind: u32, path: &[u8], at: u32) -> Self {
        let mut prefix = [0u64; SORT_PREFIX / 8];
        for (w, chunk) in prefix.iter_mut().zip(path.chunks(8)) {
            let mut b = [0u8; 8];
            b[..chunk.len()].copy_from_slice(chunk);
            *w = u64::from_be_bytes(b);
        }
        SortKey {
            kind,
            len: u32::try_from(path.len()).unwrap_or(u32::MAX),
            prefix,
            at,
        }
    }

    /// The order of (kind, path) as far as the integers decide it; `Equal` when both
    /// paths are longer than the prefix and it ties (then compare the keys). When either
    /// path fits, zero-padded bytes and then the length are exactly the byte order: where
    /// the padded bytes tie, the path that fits is a prefix of the other one.
    #[inline]
    fn cmp_prefix(&self, o: &SortKey) -> std::cmp::Ordering {
        (self.kind, self.prefix)
            .cmp(&(o.kind, o.prefix))
            .then_with(|| {
                if self.len as usize <= SORT_PREFIX || o.len as usize <= SORT_PREFIX {
                    self.len.cmp(&o.len)
                } else {
                    std::cmp::Ordering::Equal
                }
            })
    }
}

/// Builds a file's [`ObjectMap`] from the hash tables of every worker that saw the file:
/// all their entries are sorted together, and equal keys coalesced with `f` (commutative).
/// One sort replaces merging the tables by hash and then sorting. The sort compares
/// integers ([`SortKey`]) and whole keys only when a path is too long for them to decide.
fn sorted_objects<V: Default + Send>(
    parts: Vec<FileObjects<V>>,
    f: impl Fn(&mut V, V),
) -> ObjectMap<V> {
    let n: usize = parts.iter().map(|p| p.values.len()).sum();
    let mut keys: Vec<(ObjKey, u32, u32)> = Vec::with_capacity(n);
    let mut values: Vec<Chunked<V>> = Vec::with_capacity(parts.len());
    for (t, p) in parts.into_iter().enumerate() {
        keys.extend(p.index.into_iter().map(|(k, i)| (k, t as u32, i)));
        values.push(p.values);
    }
    // One sort key per entry. The kinds are few: numbered as first seen, ranked after.
    let mut kinds: Vec<&[u8]> = Vec::new();
    let mut order: Vec<SortKey> = keys
        .iter()
        .enumerate()
        .map(|(i, (k, _, _))| {
            let k = k.as_bytes();
            let (cut, p) = key_cut(k);
            let kind = &k[..cut];
            let id = match kinds.iter().rposition(|x| *x == kind) {
                Some(id) => id,
                None => {
                    kinds.push(kind);
                    kinds.len() - 1
                }
            };
            SortKey::new(id as u32, &k[p..], i as u32)
        })
        .collect();
    let mut rank = vec![0u32; kinds.len()];
    let mut by_name: Vec<usize> = (0..kinds.len()).collect();
    by_name.sort_by_key(|&id| kinds[id]);
    for (r, id) in by_name.into_iter().enumerate() {
        rank[id] = r as u32;
    }
    for o in &mut order {
        o.kind = rank[o.kind as usize];
    }
    let cmp = |a: &SortKey, b: &SortKey| {
        a.cmp_prefix(b).then_with(|| {
            keys[a.at as usize]
                .0
                .as_bytes()
                .cmp(keys[b.at as usize].0.as_bytes())
        })
    };
    if order.len() > 1 << 16 {
        order.par_sort_unstable_by(cmp);
    } else {
        order.sort_unstable_by(cmp);
    }
    // Equal keys are neighbours now: mark the repeats, then move each key once.
    let repeat: Vec<bool> = (0..order.len())
        .map(|j| j > 0 && cmp(&order[j - 1], &order[j]).is_eq())
        .collect();
    let mut entries: Vec<(CompactString, V)> =
        Vec::with_capacity(repeat.iter().filter(|&&r| !r).count());
    for (o, r) in order.iter().zip(repeat) {
        let (k, t, j) = &mut keys[o.at as usize];
        let v = std::mem::take(&mut values[*t as usize][*j as usize]);
        match entries.last_mut() {
            Some(last) if r => f(&mut last.1, v),
            // Built from `&str`s, so UTF-8: the lossy path never replaces anything.
            _ => entries.push((CompactString::from_utf8_lossy(k.as_bytes()), v)),
        }
    }
    ObjectMap { entries }
}

/// `(file, path, value)` of the objects of `kind` in a by-file map, sorted by file, path.
pub fn objects_of_kind<'a, V>(
    map: &'a BTreeMap<String, ObjectMap<V>>,
    kind: &'a str,
) -> impl Iterator<Item = ((&'a str, &'a str), &'a V)> + 'a {
    map.iter()
        .flat_map(move |(f, m)| m.of_kind(kind).map(move |(p, v)| ((f.as_str(), p), v)))
}

impl Aggregate {
    /// Finishes the meta of each process that ended without closing HDF5 (`_exit`,
    /// `os._exit`, `kill -9`: its `end_ns` is null) when its trace was read with its
    /// pending sidecar and nothing was cut: nothing was lost, so `records`,
    /// `bytes_written` and `end_ns` (its last call's end) come from the data, and it is
    /// counted in [`Diagnostics::unclosed`] instead of as unfinished. A cut trace, or one
    /// without a sidecar (the process died with records only in memory, or an older
    /// h5prov), stays unfinished: records may have been lost.
    pub fn finish_unclosed(&mut self) {
        let d = &mut self.diag;
        for (stem, m) in d.meta_facts.iter_mut() {
            if m.end_ns.is_some() {
                continue;
            }
            let Some(t) = d.trace_facts.get(stem) else {
                continue;
            };
            if !t.recovered || t.files != 1 || d.truncated.iter().any(|(p, _)| *p == t.path) {
                continue;
            }
            let key = ProcKey {
                rank: m.rank,
                pid: m.pid,
            };
            let Some(meta) = self
                .metas
                .iter_mut()
                .find(|x| x.rank == m.rank && x.pid == m.pid && x.end_ns.is_none())
            else {
                continue;
            };
            let last = self.procs.get(&key).map_or(0, |p| p.last_ns);
            let end = last.max(meta.start_ns);
            (m.records, m.bytes_written, m.end_ns) =
                (t.rows + t.malformed, t.data_bytes, Some(end));
            meta.records = m.records;
            meta.bytes_written = m.bytes_written;
            meta.end_ns = Some(end);
            d.unclosed += 1;
        }
    }
}

/// Everything the analysis needs, reduced over all input files.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Aggregate {
    /// Reading diagnostics.
    pub diag: Diagnostics,
    /// Per operation.
    pub ops: BTreeMap<String, OpStats>,
    /// Per process.
    pub procs: BTreeMap<ProcKey, ProcStats>,
    /// Per object from records: by container file, then (`kind`, `path`).
    pub objects: BTreeMap<String, ObjectMap<ObjStats>>,
    /// Per object from objects files, of the kinds the report reads ([`SUMMARY_KINDS`]): by
    /// container file, then (`kind`, `path`).
    pub summaries: BTreeMap<String, ObjectMap<SummaryStats>>,
    /// Per container file from records.
    pub files: BTreeMap<String, FileStats>,
    /// Data transfers by (requested, actual) mode, from records that carry one.
    pub xfer: BTreeMap<(String, String), u64>,
    /// Access sizes of data reads (index 0) and writes (index 1).
    pub io_sizes: [SizeHist; 2],
    /// Process metadata, sorted by rank, pid, start.
    pub metas: Vec<ProcessMeta>,
    /// Activity over time.
    pub timeline: Timeline<String>,
    /// First call start, ns since the epoch (0 when no records).
    pub first_ns: u64,
    /// Last call end, ns since the epoch.
    pub last_ns: u64,
    /// Collective calls of MPI ranks, for arrival skew.
    pub collectives: Collectives,
    /// What the dataset insights need: per dataset transfers and storage settings, and
    /// time by access size ([`crate::insights::dataset`]).
    pub datasets_io: crate::aggregate::dataset_io::DatasetsIo,
    /// How each container file was accessed (objects files' `file` rows): driver,
    /// alignment, file system.
    pub file_access: BTreeMap<String, FileAccess>,
    /// Asynchronous operations, issue to completion, by operation ([`crate::aggregate::asyncops`]).
    pub async_ops: BTreeMap<String, crate::aggregate::asyncops::AsyncStats>,
    /// What the report's dataflow graph needs of the objects files.
    pub dataflow: Dataflow,
}

/// Datasets of each process the dataflow graph keeps (its top ones by bytes moved): the
/// graph shows [`crate::analysis::DATAFLOW_DATASETS`].
pub const DATAFLOW_PER_PROCESS: usize = 16;

/// One process's data bytes per dataset `(file, path)`: `(read, written)`.
pub type DatasetBytes = BTreeMap<(String, String), (u64, u64)>;

/// The data each process moved per dataset, from the objects files: for the report's
/// dataflow graph ([`crate::analysis::dataflow`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Dataflow {
    /// The `dataset` rows that read or wrote bytes, by process `(rank, pid)`, then
    /// `(file, path)`: `(bytes read, bytes written)`; of each objects file, only its
    /// [`DATAFLOW_PER_PROCESS`] datasets that moved the most.
    pub bytes: BTreeMap<(i64, u32), DatasetBytes>,
    /// The identity `(dev, ino)` of each file name of a `file` row that has one: names of
    /// one file (`sim.h5`, `/run/sim.h5`) are one node of the graph.
    pub identity: BTreeMap<String, (u64, u64)>,
}

/// A dataset of [`FlowRows::finish`]: (bytes moved, file, path, (read, written)).
type FlowEntry<'a> = (u64, &'a str, &'a str, (u64, u64));

/// [`FlowRows`]' bytes by `(rank, pid, file number)`, then path: `(read, written)`.
type FlowBytes = FxHashMap<(i64, u32, u32), FxHashMap<Box<str>, (u64, u64)>>;

/// One objects file's part of the [`Dataflow`] as its rows go by: dataset bytes by process
/// and file number, then path, looked up with the row's borrowed texts (a row of a dataset
/// seen before allocates nothing; a new one, its path once). Owned names are made only for
/// the datasets [`FlowRows::finish`] keeps: a tree keyed by two `String`s per row, and its
/// long-prefix comparisons, were ~5 % of a report's CPU on the 10M-record set.
#[derive(Default)]
struct FlowRows {
    files: Numbering,
    bytes: FlowBytes,
    identity: BTreeMap<String, (u64, u64)>,
}

impl FlowRows {
    fn add(&mut self, o: &ObjectSummaryRef<'_>) {
        if o.kind == "file" && o.ino != 0 && !self.identity.contains_key(o.file) {
            self.identity.insert(o.file.to_string(), (o.dev, o.ino));
        }
        if o.kind == "dataset" && (o.bytes_read > 0 || o.bytes_written > 0) {
            let file = self.files.number(o.file).0 as u32;
            let by_path = self.bytes.entry((o.rank, o.pid, file)).or_default();
            match by_path.get_mut(o.path) {
                Some(e) => {
                    e.0 += o.bytes_read;
                    e.1 += o.bytes_written;
                }
                None => {
                    by_path.insert(o.path.into(), (o.bytes_read, o.bytes_written));
                }
            }
        }
    }

    /// Keeps, of each process, its [`DATAFLOW_PER_PROCESS`] datasets that moved the most
    /// bytes (ties by file, then path): what a process's objects file adds is bounded,
    /// however many datasets it touched (the 10M-record benchmark set has 24 000 a
    /// process).
    fn finish(self) -> Dataflow {
        let mut procs: BTreeMap<(i64, u32), Vec<FlowEntry<'_>>> = BTreeMap::new();
        for ((rank, pid, file), by_path) in &self.bytes {
            let name = &*self.files.names[*file as usize];
            let v = procs.entry((*rank, *pid)).or_default();
            v.extend(
                by_path
                    .iter()
                    .map(|(p, &(r, w))| (r + w, name, &**p, (r, w))),
            );
        }
        let bytes = procs
            .into_iter()
            .map(|(p, mut all)| {
                all.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(b.1)).then(a.2.cmp(b.2)));
                all.truncate(DATAFLOW_PER_PROCESS);
                let sets = all
                    .into_iter()
                    .map(|(_, f, path, rw)| ((f.to_string(), path.to_string()), rw))
                    .collect();
                (p, sets)
            })
            .collect();
        Dataflow {
            bytes,
            identity: self.identity,
        }
    }
}

impl Dataflow {
    fn merge(&mut self, o: Dataflow) {
        merge_maps(&mut self.bytes, o.bytes, |a, b| {
            merge_maps(a, b, |x, y| {
                x.0 += y.0;
                x.1 += y.1;
            })
        });
        merge_maps(&mut self.identity, o.identity, |_, _| {});
    }
}

/// How one container file was opened, from its `file` rows in objects files.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileAccess {
    /// Processes that opened it with the MPI-IO driver.
    pub mpio_procs: BTreeSet<ProcKey>,
    /// The smallest `H5Pset_alignment` recorded (threshold, alignment); `None` when no row
    /// recorded one.
    pub align: Option<(u64, u64)>,
    /// The file system (`lustre`, `gpfs`, `ext4`, ...), the smallest name recorded.
    pub fs: String,
    /// The chunk cache its FAPL set (`H5Pset_cache`; the rows' `cache`), `(slots, bytes)`,
    /// the largest recorded (0 when none): what a dataset opened without its own gets.
    pub chunk_cache: (u64, u64),
    /// The low bound of its FAPL's `H5Pset_libver_bounds` (the rows' `libver`): `earliest`
    /// when any row recorded it (attributes then never go to dense storage), else the
    /// smallest name recorded; empty when none.
    pub libver: String,
}

impl FileAccess {
    fn add(&mut self, o: &ObjectSummaryRef<'_>) {
        if o.mpio != 0 {
            self.mpio_procs.insert(ProcKey {
                rank: o.rank,
                pid: o.pid,
            });
        }
        let align = o.align.split_once(':').and_then(|(t, a)| {
            Some((t.trim().parse::<u64>().ok()?, a.trim().parse::<u64>().ok()?))
        });
        self.merge(FileAccess {
            mpio_procs: BTreeSet::new(),
            align,
            fs: o.fs.to_string(),
            chunk_cache: (
                crate::aggregate::dataset_io::cache_part(o.cache, 0),
                crate::aggregate::dataset_io::cache_part(o.cache, 1),
            ),
            libver: o.libver.to_string(),
        });
    }

    fn merge(&mut self, o: FileAccess) {
        self.mpio_procs.extend(o.mpio_procs);
        self.align = match (self.align, o.align) {
            // The weakest alignment: smallest alignment, then largest threshold.
            (Some(a), Some(b)) => Some(
                if (b.1, std::cmp::Reverse(b.0)) < (a.1, std::cmp::Reverse(a.0)) {
                    b
                } else {
                    a
                },
            ),
            (a, b) => a.or(b),
        };
        if self.fs.is_empty() || (!o.fs.is_empty() && o.fs < self.fs) {
            self.fs = o.fs;
        }
        self.chunk_cache = (
            self.chunk_cache.0.max(o.chunk_cache.0),
            self.chunk_cache.1.max(o.chunk_cache.1),
        );
        let rank = |l: &str| (l != "earliest", l.to_string());
        if self.libver.is_empty() || (!o.libver.is_empty() && rank(&o.libver) < rank(&self.libver))
        {
            self.libver = o.libver;
        }
    }
}

/// The order of [`Aggregate::metas`]: rank, pid, start, host (compared in place, without
/// building a key per comparison).
fn meta_order(a: &ProcessMeta, b: &ProcessMeta) -> std::cmp::Ordering {
    (a.rank, a.pid, a.start_ns, &a.host).cmp(&(b.rank, b.pid, b.start_ns, &b.host))
}

impl Aggregate {
    /// Adds everything in `o` to `self` (commutative and associative).
    pub fn merge(&mut self, o: Aggregate) {
        self.diag.merge(o.diag);
        for (k, v) in o.ops {
            match self.ops.get_mut(&k) {
                Some(s) => s.merge(v),
                None => {
                    self.ops.insert(k, v);
                }
            }
        }
        for (k, v) in o.procs {
            self.procs.entry(k).or_default().merge(v);
        }
        merge_maps(&mut self.objects, o.objects, |a, b| {
            a.merge(b, ObjStats::merge)
        });
        merge_maps(&mut self.summaries, o.summaries, |a, b| {
            a.merge(b, SummaryStats::merge)
        });
        merge_maps(&mut self.files, o.files, |a, b| a.merge(b));
        for (k, v) in o.xfer {
            *self.xfer.entry(k).or_default() += v;
        }
        self.io_sizes[0].merge(&o.io_sizes[0]);
        self.io_sizes[1].merge(&o.io_sizes[1]);
        if !o.metas.is_empty() {
            self.metas.extend(o.metas);
            self.metas.sort_by(meta_order);
        }
        self.timeline.merge(o.timeline);
        self.first_ns = min_nonzero(self.first_ns, o.first_ns);
        self.last_ns = self.last_ns.max(o.last_ns);
        self.collectives.merge(o.collectives);
        self.datasets_io.merge(o.datasets_io);
        merge_maps(&mut self.file_access, o.file_access, |a, b| a.merge(b));
        self.dataflow.merge(o.dataflow);
        for (k, v) in o.async_ops {
            self.async_ops.entry(k).or_default().merge(&v);
        }
    }

    /// Total time in all calls, ns.
    pub fn total_ns(&self) -> u64 {
        self.ops.values().map(|o| o.total_ns).sum()
    }
}

/// Per-operation facts computed once per distinct op name in a file.
struct LocalOp {
    name: String,
    class: OpClass,
    is_open: bool,
    /// What a container file's statistics count this op as.
    file_op: FileOp,
    collective: collective::Kind,
    stats: OpStats,
}

/// The metadata operations [`FileStats`] counts.
#[derive(Clone, Copy, PartialEq, Eq)]
enum FileOp {
    Open,
    DatasetCreate,
    DatasetClose,
    Other,
}

impl FileOp {
    fn of(family: &str) -> FileOp {
        match family {
            "file.open" | "file.create" => FileOp::Open,
            "dataset.create" => FileOp::DatasetCreate,
            "dataset.close" => FileOp::DatasetClose,
            _ => FileOp::Other,
        }
    }
}

/// Adds the records of one trace file to an [`Accumulator`], record by record (the hot
/// path). Per-object statistics go straight into the accumulator's object table;
/// everything else is kept by operation number until [`Builder::finish`].
pub struct Builder<'a> {
    objects: &'a mut ObjectTable<ObjStats>,
    datasets: &'a Mutex<crate::aggregate::dataset_io::DatasetsIo>,
    agg: &'a mut Aggregate,
    op_ids: FxHashMap<Box<str>, u32>,
    ops: Vec<LocalOp>,
    /// Per process (a trace file is one process): its key, its [`proc_number`], its
    /// statistics and per-op statistics by op number.
    procs: Vec<(ProcKey, u32, ProcStats, Vec<ProcOpStats>)>,
    proc_ids: FxHashMap<ProcKey, usize>,
    last_proc: usize,
    /// Container files (`""` too, for objects without one), numbered...
    file_names: Numbering,
    /// ...and by that number, their statistics and their number in the object table.
    files: Vec<(FileStats, usize)>,
    xfer: Vec<((String, String), u64)>,
    io_sizes: [SizeHist; 2],
    timeline: Timeline<u32>,
    open_bin: OpenBin<u32>,
    collectives: Recorder,
    last_op: u32,
    first_ns: u64,
    last_ns: u64,
    /// The per-record consistency checks.
    checks: RecordChecks,
    /// The dataset insights' facts ([`crate::insights::dataset`]): the accumulator's
    /// recorder, whose tables one file after another reuses.
    dataset_io: &'a mut crate::aggregate::dataset_io::Recorder,
    /// Asynchronous operations joined with their request rows.
    async_ops: crate::aggregate::asyncops::Joiner,
    /// Records of anonymous objects, held until the link that names them.
    anonymous: Anonymous,
}

/// At most this many records of anonymous objects are held, waiting for their names
/// (h5py's `f[name] = x` holds two or three per dataset, for an instant). Beyond it the
/// held records are added under their labels: memory stays bounded.
pub const ANONYMOUS_HELD: usize = 1 << 16;

/// The records of anonymous objects of one trace file, by label, until a link names the
/// object ([`Builder::add`]); and the names links gave.
#[derive(Default)]
struct Anonymous {
    /// Held records by label, in order, each with whether its times are times.
    held: FxHashMap<Box<str>, Vec<(bool, h5prov_format::TraceRecord)>>,
    /// Records in `held`.
    count: usize,
    /// The name each named label got.
    named: FxHashMap<Box<str>, Box<str>>,
}

impl<'a> Builder<'a> {
    /// A builder adding to `acc`.
    pub fn new(acc: &'a mut Accumulator) -> Self {
        Self {
            objects: &mut acc.objects,
            datasets: &acc.datasets,
            agg: &mut acc.agg,
            op_ids: FxHashMap::default(),
            ops: Vec::new(),
            procs: Vec::new(),
            proc_ids: FxHashMap::default(),
            last_proc: 0,
            files: Vec::new(),
            file_names: Numbering::default(),
            xfer: Vec::new(),
            io_sizes: Default::default(),
            timeline: Timeline::default(),
            open_bin: OpenBin::default(),
            collectives: Recorder::default(),
            last_op: 0,
            first_ns: 0,
            last_ns: 0,
            checks: RecordChecks::default(),
            dataset_io: &mut acc.dataset_io,
            async_ops: Default::default(),
            anonymous: Anonymous::default(),
        }
    }

    /// The number of `file` in `files`.
    #[inline]
    fn file_id(&mut self, file: &str) -> usize {
        let (id, new) = self.file_names.number(file);
        if new {
            let table = self.objects.file(file);
            self.files.push((FileStats::default(), table));
        }
        id
    }

    #[inline]
    fn op_id(&mut self, op: &str) -> u32 {
        // Consecutive records often repeat an op; a compare is cheaper than a hash.
        if let Some(lo) = self.ops.get(self.last_op as usize) {
            if lo.name == op {
                return self.last_op;
            }
        }
        if let Some(&id) = self.op_ids.get(op) {
            self.last_op = id;
            return id;
        }
        let id = self.ops.len() as u32;
        let family = h5prov_format::op_family(op);
        let callback = family.rsplit('.').next().unwrap_or("");
        self.ops.push(LocalOp {
            name: op.to_string(),
            class: OpClass::of(op),
            // A link's create makes a link, not an object: no open of the object it is
            // filed under (an anonymous object's, when the link names it).
            is_open: (matches!(callback, "open" | "create") && family != "link.create")
                || family == "datatype.commit",
            file_op: FileOp::of(family),
            collective: collective::Kind::of(op),
            stats: OpStats::default(),
        });
        self.op_ids.insert(op.into(), id);
        self.last_op = id;
        id
    }

    /// Adds one record, read at `line` of its file, after checking it ([`RecordChecks`]).
    /// A record of an anonymous object is held until the link that names it, and then
    /// added under that name ([`Builder::add_anonymous`]).
    #[inline]
    pub fn add(&mut self, line: u64, r: &RecordRef<'_>) {
        let timed = self.checks.check(line, r);
        if is_anonymous_label(r.path) || !r.anon.is_empty() {
            return self.add_anonymous(timed, r);
        }
        self.add_checked(timed, r);
    }

    /// Adds a checked record (`timed`: its times are times).
    #[inline(always)]
    fn add_checked(&mut self, timed: bool, r: &RecordRef<'_>) {
        if timed {
            self.add_record::<true>(r);
        } else {
            self.add_untimed(r);
        }
    }

    /// A record of an anonymous object, or the link that names one:
    /// - a record under a label is held (or, once the label is named, added under the
    ///   name);
    /// - the link's record (`anon` = the label) adds the label's held records under the
    ///   link's `path`, in their order, then itself.
    ///
    /// Labels never named are added as they are when the file ends ([`Builder::finish`]):
    /// they include the pid, so two anonymous objects never merge.
    #[cold]
    #[inline(never)]
    fn add_anonymous(&mut self, timed: bool, r: &RecordRef<'_>) {
        if !r.anon.is_empty() {
            let held = self.anonymous.held.remove(r.anon).unwrap_or_default();
            self.anonymous.count -= held.len();
            for (t, h) in &held {
                let named = RecordRef {
                    path: r.path,
                    ..h.borrowed()
                };
                self.add_checked(*t, &named);
            }
            self.anonymous.named.insert(r.anon.into(), r.path.into());
            return self.add_checked(timed, r);
        }
        if let Some(name) = self.anonymous.named.get(r.path).cloned() {
            let named = RecordRef { path: &name, ..*r };
            return self.add_checked(timed, &named);
        }
        if self.anonymous.count >= ANONYMOUS_HELD {
            self.release_anonymous();
        }
        self.anonymous.count += 1;
        self.anonymous
            .held
            .entry(r.path.into())
            .or_default()
            .push((timed, r.to_owned_record()));
    }

    /// Adds every held record under its label (the file ended, or too many are held).
    /// Labels in order, so that the result does not depend on the hash order.
    fn release_anonymous(&mut self) {
        let mut held: Vec<_> = std::mem::take(&mut self.anonymous.held)
            .into_iter()
            .collect();
        held.sort_by(|a, b| a.0.cmp(&b.0));
        self.anonymous.count = 0;
        for (_, records) in held {
            for (t, h) in &records {
                self.add_checked(*t, &h.borrowed());
            }
        }
    }

    /// A record whose start or duration is no time: counted like any other, but left out
    /// of wall time, the timeline, per-process spans and arrival skew (where the call keeps
    /// its index among the process's collective calls). Its duration counts as 0 when it is
    /// not a time, and its start as 0.
    #[cold]
    #[inline(never)]
    fn add_untimed(&mut self, r: &RecordRef<'_>) {
        let mut c = *r;
        c.start_ns = 0;
        if c.total_ns >= check::TIME_LIMIT {
            c.total_ns = 0;
            c.under_ns = 0;
        }
        self.add_record::<false>(&c);
    }

    /// Adds one record; `TIMED`: its start and duration are used for time spans.
    #[inline(always)]
    fn add_record<const TIMED: bool>(&mut self, r: &RecordRef<'_>) {
        let id = self.op_id(r.op);
        let proc = r.proc();
        let lo = &mut self.ops[id as usize];
        let class = lo.class;
        let is_open = lo.is_open;
        let file_op = lo.file_op;
        let coll_kind = lo.collective;
        let s = &mut lo.stats;
        s.count += 1;
        s.total_ns += r.total_ns;
        s.under_ns += r.under_ns.min(r.total_ns);
        s.max_ns = s.max_ns.max(r.total_ns);
        s.bytes += r.bytes;
        s.errors += u64::from(r.status < 0);
        s.async_calls += u64::from(r.is_async != 0);
        if r.req != 0 {
            self.async_ops.add(
                id,
                r.op.starts_with("request."),
                (r.rank, r.pid),
                r.req,
                r.req_done,
                r.is_async != 0,
                r.start_ns,
                r.total_ns,
                r.exec_ns,
            );
        }
        let s = &mut self.ops[id as usize].stats;
        s.sketch.add(r.total_ns);
        if s.slow.accepts(r.total_ns) {
            s.slow.insert(SlowCall {
                total_ns: r.total_ns,
                start_ns: r.start_ns,
                proc,
                tid: r.tid,
                seq: r.seq,
                file: r.file.to_string(),
                path: r.path.to_string(),
                bytes: r.bytes,
            });
        }

        let pi = match self.procs.get(self.last_proc) {
            Some(p) if p.0 == proc => self.last_proc,
            _ => {
                let n = self.procs.len();
                let i = *self.proc_ids.entry(proc).or_insert(n);
                if i == n {
                    self.procs
                        .push((proc, proc_number(proc), ProcStats::default(), Vec::new()));
                }
                self.last_proc = i;
                i
            }
        };
        let (_, pnum, ps, pops) = &mut self.procs[pi];
        let pnum = *pnum;
        if pops.len() <= id as usize {
            pops.resize(id as usize + 1, ProcOpStats::default());
        }
        pops[id as usize].add(r);
        if TIMED {
            ps.first_ns = min_nonzero(ps.first_ns, r.start_ns.max(1));
            ps.last_ns = ps.last_ns.max(r.end_ns());
        }
        let is_data = class != OpClass::Metadata;
        match class {
            OpClass::DataWrite => ps.bytes_written += r.bytes,
            OpClass::DataRead => ps.bytes_read += r.bytes,
            OpClass::Metadata => {}
        }
        if is_data {
            self.io_sizes[usize::from(class == OpClass::DataWrite)].add(r.bytes);
        }
        // Data transfers, and the dataset calls the cost model counts (create, extend,
        // flush).
        self.dataset_io.add(r, class);
        let (ind, coll, broken) = if is_data {
            let actual = if r.xfer_actual.is_empty() {
                r.xfer
            } else {
                r.xfer_actual
            };
            (
                u64::from(actual == "independent" && r.xfer != "collective"),
                u64::from(actual == "collective"),
                u64::from(r.xfer == "collective" && actual != "collective"),
            )
        } else {
            (0, 0, 0)
        };
        if is_data && (!r.xfer.is_empty() || !r.xfer_actual.is_empty()) {
            let k = (r.xfer, r.xfer_actual);
            match self.xfer.iter_mut().find(|(x, _)| x.0 == k.0 && x.1 == k.1) {
                Some(e) => e.1 += 1,
                None => self.xfer.push(((k.0.to_string(), k.1.to_string()), 1)),
            }
        }

        let is_object = matches!(r.kind, "file" | "group" | "dataset" | "attr" | "datatype")
            && !(r.file.is_empty() && r.path.is_empty());
        // Records without a file share the "" entry, which `finish` drops unless it holds
        // objects.
        let fid = self.file_id(r.file);
        if is_object {
            let table = self.files[fid].1;
            self.objects.update(table, r.kind, r.path, |o| {
                o.calls += 1;
                o.total_ns += r.total_ns;
                o.opens += u64::from(is_open);
                o.attr_reads += u64::from(r.op == "attr.read");
                o.attr_writes += u64::from(r.op == "attr.write");
                match class {
                    OpClass::DataWrite => {
                        o.writes += 1;
                        o.bytes_written += r.bytes;
                        o.write_ns += r.total_ns;
                    }
                    OpClass::DataRead => {
                        o.reads += 1;
                        o.bytes_read += r.bytes;
                        o.read_ns += r.total_ns;
                    }
                    OpClass::Metadata => {}
                }
                if is_data {
                    o.sizes.add(r.bytes);
                    o.ind_io += ind;
                    o.coll_io += coll;
                    o.broken_coll_io += broken;
                }
                o.procs.insert(pnum);
            });
        }

        if !r.file.is_empty() {
            let f = &mut self.files[fid].0;
            f.calls += 1;
            f.total_ns += r.total_ns;
            match class {
                OpClass::DataWrite => {
                    f.writes += 1;
                    f.bytes_written += r.bytes;
                    f.write_ns += r.total_ns;
                    f.sizes.add(r.bytes);
                }
                OpClass::DataRead => {
                    f.reads += 1;
                    f.bytes_read += r.bytes;
                    f.read_ns += r.total_ns;
                    f.sizes.add(r.bytes);
                }
                OpClass::Metadata => {
                    f.meta_ns += r.total_ns;
                    match file_op {
                        FileOp::Open => f.file_opens += 1,
                        FileOp::DatasetCreate => f.dset_creates += 1,
                        FileOp::DatasetClose => {
                            f.dset_closes += 1;
                            f.dset_close_ns += r.total_ns;
                        }
                        FileOp::Other => {}
                    }
                }
            }
            f.procs.insert(pnum);
        }

        if TIMED {
            self.timeline.add_buffered(
                &mut self.open_bin,
                r.start_ns,
                r.total_ns,
                class,
                r.bytes,
                &id,
                proc,
            );
        }
        if coll_kind != collective::Kind::No {
            if TIMED {
                self.collectives.add(id, coll_kind, r);
            } else {
                let untimed = RecordRef {
                    start_ns: collective::NO_TIME,
                    ..*r
                };
                self.collectives.add(id, coll_kind, &untimed);
            }
        }
        if TIMED {
            self.first_ns = min_nonzero(self.first_ns, r.start_ns.max(1));
            self.last_ns = self.last_ns.max(r.end_ns());
        }
    }

    /// Adds what the builder holds to its accumulator, keyed by names, and returns the
    /// record checks' findings.
    pub fn finish(mut self) -> RecordChecks {
        self.release_anonymous();
        self.timeline.flush(&mut self.open_bin);
        let names: Vec<String> = self.ops.iter().map(|o| o.name.clone()).collect();
        let mut agg = Aggregate {
            first_ns: self.first_ns,
            last_ns: self.last_ns,
            io_sizes: self.io_sizes,
            collectives: self.collectives.finish(&names),
            ..Default::default()
        };
        lock(self.datasets).merge(self.dataset_io.finish());
        for o in self.ops {
            agg.ops.insert(o.name, o.stats);
        }
        for (p, _, mut ps, pops) in self.procs {
            ps.ops = pops
                .into_iter()
                .enumerate()
                .filter(|(_, s)| s.count > 0)
                .map(|(id, s)| (names[id].clone(), s))
                .collect();
            agg.procs.entry(p).or_default().merge(ps);
        }
        for (name, (stats, _)) in self.file_names.names.into_iter().zip(self.files) {
            if !name.is_empty() {
                agg.files.insert(name.into(), stats);
            }
        }
        agg.xfer = self.xfer.into_iter().collect();
        agg.timeline = self.timeline.map_ops(|id| names[*id as usize].clone());
        agg.async_ops = self.async_ops.finish(&names);
        self.agg.merge(agg);
        self.checks
    }
}

/// Names numbered in the order they are first seen. The last name looked up is checked
/// first: the records and rows of a file mostly repeat one container file.
#[derive(Debug, Default)]
struct Numbering {
    names: Vec<Box<str>>,
    index: FxHashMap<Box<str>, u32>,
    last: u32,
}

impl Numbering {
    /// The number of `name`, and whether it was new.
    #[inline]
    fn number(&mut self, name: &str) -> (usize, bool) {
        if let Some(n) = self.names.get(self.last as usize) {
            if &**n == name {
                return (self.last as usize, false);
            }
        }
        let (id, new) = match self.index.get(name) {
            Some(&id) => (id, false),
            None => {
                let id = self.names.len() as u32;
                self.names.push(name.into());
                self.index.insert(name.into(), id);
                (id, true)
            }
        };
        self.last = id;
        (id as usize, new)
    }
}

/// Objects by container file, then by `kind\0path`: what an [`Accumulator`] collects.
/// Hash maps, because most of the work is looking up objects that are already there;
/// sorted once, by [`ObjectTable::into_maps`]. Files are numbered in the order they were
/// first seen, so a reader looks a file's name up once, not once per row; and the object
/// of the previous row is remembered, because consecutive records of a process mostly
/// touch the same object (create, write, close).
///
/// The tables themselves are shared by the workers of one read ([`ObjectTable::sharing`]):
/// the processes of a job touch the same objects, and a table per worker held every such
/// object once per worker (objects × workers dominated the analyzer's memory). Each
/// container file's objects are split by key hash into [`SHARDS`] tables under their own
/// locks, so workers on the same file rarely wait for each other. The values are merged
/// commutatively, so the order in which workers update an object does not matter.
#[derive(Debug)]
struct ObjectTable<V> {
    /// The tables, shared with the other handles of one read.
    shared: Arc<Mutex<SharedFiles<V>>>,
    /// Container files this handle used, numbered...
    names: Numbering,
    /// ...and their tables by that number.
    files: Vec<Arc<FileShards<V>>>,
    /// The object `key` names: file number, shard and value index.
    last_object: Option<(usize, usize, u32)>,
    key: String,
}

/// Tables of one container file's objects: [`SHARDS`] of them, by key hash.
const SHARDS: usize = 16;

/// The container files of shared [`ObjectTable`]s, numbered in the order first seen, and
/// their objects.
#[derive(Debug)]
struct SharedFiles<V> {
    names: Numbering,
    tables: Vec<Arc<FileShards<V>>>,
}

impl<V> Default for SharedFiles<V> {
    fn default() -> Self {
        Self {
            names: Numbering::default(),
            tables: Vec::new(),
        }
    }
}

/// One container file's objects, split by key hash ([`shard_of`]).
#[derive(Debug)]
struct FileShards<V> {
    shards: Vec<Mutex<FileObjects<V>>>,
}

impl<V> FileShards<V> {
    fn new() -> Self {
        Self {
            shards: (0..SHARDS)
                .map(|_| Mutex::new(FileObjects::default()))
                .collect(),
        }
    }
}

/// The shard of key `k` (bits of its hash that the hash tables' own hash of it, which
/// hashes the length first, does not share).
#[inline]
fn shard_of(k: &[u8]) -> usize {
    use std::hash::Hasher;
    let mut h = rustc_hash::FxHasher::default();
    h.write(k);
    (h.finish() >> 32) as usize % SHARDS
}

/// Locks `m`; a lock poisoned by a panicking worker still holds consistent sums (every
/// update is a few additions), and the panic is reported by rayon anyway.
#[inline]
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Longest `kind\0path` an [`ObjKey`] holds inline.
const INLINE_KEY: usize = 30;

/// An object's `kind\0path` in an accumulator's hash table: inline when it fits (nearly
/// always), so a probe compares bytes in the bucket it has just read instead of following
/// a pointer to a separate allocation, and a new object allocates no key. Hashed and
/// compared as bytes (`Borrow<[u8]>`), so a lookup needs no key of its own.
#[derive(Debug, Clone)]
enum ObjKey {
    Inline { len: u8, bytes: [u8; INLINE_KEY] },
    Heap(Box<[u8]>),
}

impl ObjKey {
    fn new(k: &[u8]) -> Self {
        if k.len() <= INLINE_KEY {
            let mut bytes = [0; INLINE_KEY];
            bytes[..k.len()].copy_from_slice(k);
            ObjKey::Inline {
                len: k.len() as u8,
                bytes,
            }
        } else {
            ObjKey::Heap(k.into())
        }
    }

    #[inline]
    fn as_bytes(&self) -> &[u8] {
        match self {
            ObjKey::Inline { len, bytes } => &bytes[..*len as usize],
            ObjKey::Heap(b) => b,
        }
    }
}

impl std::borrow::Borrow<[u8]> for ObjKey {
    fn borrow(&self) -> &[u8] {
        self.as_bytes()
    }
}

/// Hashes as its bytes, as `Borrow<[u8]>` requires.
impl std::hash::Hash for ObjKey {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.as_bytes().hash(h)
    }
}

impl PartialEq for ObjKey {
    fn eq(&self, o: &Self) -> bool {
        self.as_bytes() == o.as_bytes()
    }
}

impl Eq for ObjKey {}

/// Values a [`Chunked`] allocates at a time once it holds that many.
const CHUNK: usize = 256;

/// The values of a [`FileObjects`] table: a vector of up to [`CHUNK`] values that grows
/// like any vector, then more chunks of exactly [`CHUNK`]. A table that grows by doubling
/// held ~40% more room than values at the end of reading (the object and summary tables
/// of the 10M-record set: 125 MB of vectors at the heap's peak), and every doubling copied
/// the values and freed the old block, which the allocator kept. Chunks hold at most one
/// chunk of unused room per table and are never moved.
#[derive(Debug)]
struct Chunked<V> {
    chunks: Vec<Vec<V>>,
    len: usize,
}

impl<V> Default for Chunked<V> {
    fn default() -> Self {
        Self {
            chunks: Vec::new(),
            len: 0,
        }
    }
}

impl<V> Chunked<V> {
    fn len(&self) -> usize {
        self.len
    }

    fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn push(&mut self, v: V) {
        match self.chunks.last_mut() {
            Some(c) if c.len() < CHUNK => c.push(v),
            _ => {
                // The first chunk starts small (most tables are); later ones are whole.
                let mut c = if self.chunks.is_empty() {
                    Vec::new()
                } else {
                    Vec::with_capacity(CHUNK)
                };
                c.push(v);
                self.chunks.push(c);
            }
        }
        self.len += 1;
    }
}

impl<V> std::ops::Index<usize> for Chunked<V> {
    type Output = V;

    #[inline]
    fn index(&self, i: usize) -> &V {
        &self.chunks[i / CHUNK][i % CHUNK]
    }
}

impl<V> std::ops::IndexMut<usize> for Chunked<V> {
    #[inline]
    fn index_mut(&mut self, i: usize) -> &mut V {
        &mut self.chunks[i / CHUNK][i % CHUNK]
    }
}

/// One file's objects: values in [`Chunked`] vectors, found by `kind\0path`.
#[derive(Debug)]
struct FileObjects<V> {
    index: FxHashMap<ObjKey, u32>,
    values: Chunked<V>,
}

impl<V> Default for FileObjects<V> {
    fn default() -> Self {
        Self {
            index: FxHashMap::default(),
            values: Chunked::default(),
        }
    }
}

impl<V> Default for ObjectTable<V> {
    fn default() -> Self {
        Self {
            shared: Arc::default(),
            names: Numbering::default(),
            files: Vec::new(),
            last_object: None,
            key: String::new(),
        }
    }
}

/// Whether `key` is `kind\0path`.
#[inline]
fn key_is(key: &str, kind: &str, path: &str) -> bool {
    key.len() == kind.len() + 1 + path.len() && key.ends_with(path) && key.starts_with(kind)
}

impl<V: Default + Send> ObjectTable<V> {
    /// Another handle on the same tables.
    fn sharing(&self) -> Self {
        Self {
            shared: Arc::clone(&self.shared),
            ..Self::default()
        }
    }

    /// The number of `file`.
    #[inline]
    fn file(&mut self, file: &str) -> usize {
        let (id, new) = self.names.number(file);
        if new {
            let mut shared = lock(&self.shared);
            let (g, new_here) = shared.names.number(file);
            if new_here {
                shared.tables.push(Arc::new(FileShards::new()));
            }
            self.files.push(Arc::clone(&shared.tables[g]));
        }
        id
    }

    /// Calls `f` on the entry of object (`kind`, `path`) of file number `file`, created
    /// empty if new.
    #[inline]
    fn update(&mut self, file: usize, kind: &str, path: &str, f: impl FnOnce(&mut V)) {
        if let Some((lf, ls, li)) = self.last_object {
            if lf == file && key_is(&self.key, kind, path) {
                return f(&mut lock(&self.files[file].shards[ls]).values[li as usize]);
            }
        }
        self.key.clear();
        self.key.push_str(kind);
        self.key.push('\0');
        self.key.push_str(path);
        let shard = shard_of(self.key.as_bytes());
        let mut fo = lock(&self.files[file].shards[shard]);
        let i = match fo.index.get(self.key.as_bytes()) {
            Some(&i) => i,
            None => {
                let i = fo.values.len() as u32;
                fo.values.push(V::default());
                fo.index.insert(ObjKey::new(self.key.as_bytes()), i);
                i
            }
        };
        self.last_object = Some((file, shard, i));
        f(&mut fo.values[i as usize]);
    }

    /// Adds another table (nothing when it shares this one's tables); `f` combines the
    /// values of one object. Every handle on `o`'s tables must be done updating.
    fn merge(&mut self, o: ObjectTable<V>, f: impl Fn(&mut V, V) + Copy) {
        self.last_object = None;
        if Arc::ptr_eq(&self.shared, &o.shared) {
            return;
        }
        let theirs = std::mem::take(&mut *lock(&o.shared));
        for (file, t) in theirs.names.names.iter().zip(theirs.tables) {
            let i = self.file(file);
            // Equal keys hash to equal shards in both.
            for (ours, theirs) in self.files[i].shards.iter().zip(&t.shards) {
                let theirs = std::mem::take(&mut *lock(theirs));
                lock(ours).absorb(theirs, f);
            }
        }
    }

    /// The sorted maps of the [`Aggregate`] from the tables of all workers: each file's
    /// objects are merged and sorted on their own, files in parallel. Files without
    /// objects are left out.
    fn into_maps(
        tables: Vec<ObjectTable<V>>,
        f: impl Fn(&mut V, V) + Copy + Sync,
    ) -> BTreeMap<String, ObjectMap<V>> {
        let mut by_file: FxHashMap<Box<str>, Vec<FileObjects<V>>> = FxHashMap::default();
        let mut seen: Vec<Arc<Mutex<SharedFiles<V>>>> = Vec::new();
        for t in tables {
            if seen.iter().any(|s| Arc::ptr_eq(s, &t.shared)) {
                continue;
            }
            let shared = std::mem::take(&mut *lock(&t.shared));
            seen.push(t.shared);
            for (file, t) in shared.names.names.into_iter().zip(shared.tables) {
                for m in &t.shards {
                    let objects = std::mem::take(&mut *lock(m));
                    if !objects.values.is_empty() {
                        by_file.entry(file.clone()).or_default().push(objects);
                    }
                }
            }
        }
        by_file
            .into_iter()
            .collect::<Vec<_>>()
            .into_par_iter()
            .map(|(file, parts)| (file.into(), sorted_objects(parts, f)))
            .collect()
    }
}

impl<V: Default> FileObjects<V> {
    /// Adds another file's objects; `f` combines the values of one object.
    /// The values keep their indexes (other handles may remember one).
    fn absorb(&mut self, mut theirs: FileObjects<V>, f: impl Fn(&mut V, V)) {
        for (k, j) in theirs.index {
            let v = std::mem::take(&mut theirs.values[j as usize]);
            match self.index.entry(k) {
                std::collections::hash_map::Entry::Occupied(e) => {
                    f(&mut self.values[*e.get() as usize], v)
                }
                std::collections::hash_map::Entry::Vacant(e) => {
                    e.insert(self.values.len() as u32);
                    self.values.push(v);
                }
            }
        }
    }
}

/// What one worker thread has read so far: an [`Aggregate`] whose object tables are still
/// hash maps. Each worker reads many files into one accumulator (no per-file sorted maps
/// to build and merge); the workers' accumulators are merged once at the end.
#[derive(Debug, Default)]
pub struct Accumulator {
    /// Everything but the objects, summaries and dataset facts.
    agg: Aggregate,
    objects: ObjectTable<ObjStats>,
    summaries: ObjectTable<SummaryStats>,
    /// The dataset rules' facts ([`Aggregate::datasets_io`]), shared like the object
    /// tables (each file's are merged in once it is read).
    datasets: Arc<Mutex<crate::aggregate::dataset_io::DatasetsIo>>,
    /// Collects each trace file's dataset facts; kept so that its hash tables (up to
    /// 16 MB a trace file on object-heavy runs) are reused, not mapped afresh per file.
    dataset_io: crate::aggregate::dataset_io::Recorder,
}

impl Accumulator {
    /// Reads one trace file.
    pub fn add_trace(
        &mut self,
        path: &Path,
        enc: Encoding,
        opts: &ReadOptions,
    ) -> Result<(), Error> {
        if !crate::read::input::recovered(path) {
            return self.add_trace_with(path, |b| {
                crate::read::read_trace_lines(path, enc, opts, |l, r| b.add(l, r))
            });
        }
        // Its process ended without closing HDF5: its objects rows are rebuilt from its
        // records, in the same pass ([`crate::read::rebuild`]).
        let mut rebuild = crate::read::rebuild::Rebuild::default();
        self.add_trace_with(path, |b| {
            crate::read::read_trace_lines(path, enc, opts, |l, r| {
                rebuild.add(r);
                b.add(l, r)
            })
        })?;
        let d = self.add_object_rows(|sink| {
            let mut d = FileDiag::default();
            for o in rebuild.into_rows() {
                sink(&o.borrowed());
                d.rows += 1;
            }
            Ok(d)
        })?;
        let diag = &mut self.agg.diag;
        diag.objects_rebuilt += 1;
        diag.object_rows += d.rows;
        diag.rebuilt_object_rows += d.rows;
        Ok(())
    }

    /// Adds one trace file's records from another source than the file itself (a Parquet
    /// export): `read` hands each record and its line to the [`Builder`] and returns what
    /// reading the file found ([`FileDiag`]). `path` names the file in diagnostics.
    pub fn add_trace_with(
        &mut self,
        path: &Path,
        read: impl FnOnce(&mut Builder<'_>) -> Result<FileDiag, Error>,
    ) -> Result<(), Error> {
        self.add_records_with(path, false, read)
    }

    /// Adds one process of a stream capture ([`crate::read::stream_capture`]): its events
    /// as the records of a trace named `p.source`, its `hello` as its meta.
    pub fn add_stream_process(
        &mut self,
        p: &StreamProcess,
        capture: &Capture,
        opts: &ReadOptions,
    ) -> Result<(), Error> {
        self.add_stream_records_with(&p.source, |b| {
            for i in 0..p.events.len() {
                let (line, r) = p.record(i, capture)?;
                b.add(line, &r);
            }
            Ok(FileDiag {
                rows: p.events.len() as u64,
                ..FileDiag::default()
            })
        })?;
        if let Some(m) = &p.meta {
            self.add_meta_read(&p.source, Ok(m.clone()), opts)?;
        }
        Ok(())
    }

    /// [`Accumulator::add_trace_with`] for the records of one process of a stream capture
    /// (`source` names it): counted as a streamed process, not as a trace file.
    pub fn add_stream_records_with(
        &mut self,
        source: &Path,
        read: impl FnOnce(&mut Builder<'_>) -> Result<FileDiag, Error>,
    ) -> Result<(), Error> {
        self.add_records_with(source, true, read)
    }

    /// Counts one stream capture file and what reading it found (`d.rows`: messages).
    pub fn add_stream_file(&mut self, path: &Path, d: &FileDiag) {
        let diag = &mut self.agg.diag;
        diag.stream_files += 1;
        diag.stream_messages += d.rows;
        diag.file(path, d);
    }

    fn add_records_with(
        &mut self,
        path: &Path,
        streamed: bool,
        read: impl FnOnce(&mut Builder<'_>) -> Result<FileDiag, Error>,
    ) -> Result<(), Error> {
        let mut b = Builder::new(self);
        let d = read(&mut b)?;
        let checks = b.finish();
        let diag = &mut self.agg.diag;
        diag.records += d.rows;
        diag.file(path, &d);
        check::merge_issues(&mut diag.issues, checks.issues(path));
        if streamed {
            // No meta file to compare with: no trace facts.
            diag.stream_processes += 1;
            return Ok(());
        }
        diag.trace_files += 1;
        diag.trace_facts
            .entry(check::stem(path))
            .or_default()
            .merge(TraceFacts {
                path: path.display().to_string(),
                files: 1,
                rows: d.rows,
                malformed: d.malformed,
                data_bytes: d.data_bytes,
                recovered: d.recovered,
            });
        Ok(())
    }

    /// Reads one objects file. The objects file of a process that ended without closing
    /// HDF5 (its trace has a pending sidecar) is not read: it holds only some of the
    /// process's rows, and all of them are rebuilt from its trace ([`Accumulator::add_trace`]).
    pub fn add_objects(
        &mut self,
        path: &Path,
        enc: Encoding,
        opts: &ReadOptions,
    ) -> Result<(), Error> {
        if crate::read::input::objects_of_recovered(path) {
            self.agg.diag.objects_files_replaced += 1;
            return Ok(());
        }
        self.add_objects_with(path, |sink| read_objects(path, enc, opts, sink))
    }

    /// Adds one objects file's rows from another source than the file itself (see
    /// [`Accumulator::add_trace_with`]).
    pub fn add_objects_with(
        &mut self,
        path: &Path,
        read: impl FnOnce(&mut dyn FnMut(&ObjectSummaryRef<'_>)) -> Result<FileDiag, Error>,
    ) -> Result<(), Error> {
        let d = self.add_object_rows(read)?;
        self.agg.diag.objects_files += 1;
        self.agg.diag.object_rows += d.rows;
        self.agg.diag.file(path, &d);
        Ok(())
    }

    /// Adds objects rows into the summaries, file access facts and dataset facts.
    fn add_object_rows(
        &mut self,
        read: impl FnOnce(&mut dyn FnMut(&ObjectSummaryRef<'_>)) -> Result<FileDiag, Error>,
    ) -> Result<FileDiag, Error> {
        let summaries = &mut self.summaries;
        let mut datasets = crate::aggregate::dataset_io::DatasetsIo::default();
        let dio = &mut datasets;
        let access = &mut self.agg.file_access;
        let mut flow = FlowRows::default();
        let read_facts = &self.datasets;
        let d = read(&mut |o: &ObjectSummaryRef<'_>| {
            flow.add(o);
            if o.kind == "file" {
                match access.get_mut(o.file) {
                    Some(a) => a.add(o),
                    None => {
                        let mut a = FileAccess::default();
                        a.add(o);
                        access.insert(o.file.to_string(), a);
                    }
                }
            }
            if SUMMARY_KINDS.contains(&o.kind) {
                let f = summaries.file(o.file);
                summaries.update(f, o.kind, o.path, |s| s.add(o));
            }
            // Facts of datasets the read holds already go there at once: only those new
            // to it make up this file's tree (a tree of every dataset the file shares
            // with the rest of the read held ~30 MB at the 10M-record set's peak).
            if let Some(d) = crate::aggregate::dataset_io::DatasetIo::of_summary(o) {
                if let Some(d) = lock(read_facts).add_existing(o.file, o.path, d) {
                    dio.add(o.file, o.path, d);
                }
            }
        })?;
        lock(&self.datasets).merge(datasets.packed());
        self.agg.dataflow.merge(flow.finish());
        Ok(d)
    }

    /// Reads one meta file; an unreadable one, or one with keys of the wrong type, is
    /// recorded and ignored. One from a newer format is read anyway and recorded (as with
    /// `--lenient`; [`Accumulator::add_meta_checked`] refuses it).
    pub fn add_meta(&mut self, path: &Path) {
        let lenient = ReadOptions { lenient: true };
        self.add_meta_checked(path, &lenient)
            .expect("a lenient meta read does not fail");
    }

    /// [`Accumulator::add_meta`], but a meta whose `format_version` is newer than this
    /// analyzer's is an [`Error::NewerFormat`] unless `opts.lenient`.
    pub fn add_meta_checked(&mut self, path: &Path, opts: &ReadOptions) -> Result<(), Error> {
        self.add_meta_read(path, read_meta_checked(path), opts)
    }

    /// [`Accumulator::add_meta_checked`] of a meta already read (from a Parquet export):
    /// `meta` is what reading the file at `path` gave.
    pub fn add_meta_read(
        &mut self,
        path: &Path,
        meta: Result<ProcessMeta, MetaError>,
        opts: &ReadOptions,
    ) -> Result<(), Error> {
        let diag = &mut self.agg.diag;
        if let Ok(m) = &meta {
            if m.format == STREAM_FORMAT {
                // A stream's `hello`, not a meta file: nothing to check it against.
                self.agg.metas.push(m.clone());
                return Ok(());
            }
        }
        diag.meta_files += 1;
        let p = path.display().to_string();
        match meta {
            Ok(m) => {
                let supported = h5prov_format::FORMAT_VERSION;
                if m.format_version > supported {
                    if !opts.lenient {
                        return Err(Error::NewerFormat {
                            path: path.to_path_buf(),
                            found: m.format_version,
                            supported,
                        });
                    }
                    diag.issues
                        .entry(WarningKind::NewerFormat)
                        .or_default()
                        .note(
                            1,
                            (p.clone(), 0, format!("format_version {}", m.format_version)),
                        );
                }
                let facts = MetaFacts {
                    path: p,
                    format_version: m.format_version,
                    records: m.records,
                    dropped: m.dropped,
                    bytes_written: m.bytes_written,
                    write_errors: m.write_errors,
                    end_ns: m.end_ns,
                    rank: m.rank,
                    pid: m.pid,
                };
                diag.meta_fact(check::stem(path), facts);
                // Sorted when the accumulator is finished (Aggregate::merge sorts).
                self.agg.metas.push(m);
            }
            Err(MetaError::Unreadable(e)) => {
                diag.bad_metas.insert((p, e));
            }
            Err(MetaError::WrongType(e)) => {
                diag.wrong_type_metas.insert((p, e));
            }
        }
        Ok(())
    }

    /// An empty accumulator that shares this one's object tables: the workers of one read
    /// each add to their own, and every object is stored once, not once per worker. All
    /// of them must be done reading before any is merged or finished.
    pub fn sharing(&self) -> Accumulator {
        Accumulator {
            agg: Aggregate::default(),
            objects: self.objects.sharing(),
            summaries: self.summaries.sharing(),
            datasets: Arc::clone(&self.datasets),
            dataset_io: Default::default(),
        }
    }

    /// Adds everything in `o` (commutative and associative, like [`Aggregate::merge`]).
    pub fn merge(&mut self, o: Accumulator) {
        self.agg.merge(o.agg);
        self.objects.merge(o.objects, ObjStats::merge);
        self.summaries.merge(o.summaries, SummaryStats::merge);
        if !Arc::ptr_eq(&self.datasets, &o.datasets) {
            let theirs = std::mem::take(&mut *lock(&o.datasets));
            lock(&self.datasets).merge(theirs);
        }
    }

    /// The [`Aggregate`]: object tables sorted.
    pub fn finish(self) -> Aggregate {
        Self::finish_all(vec![self])
    }

    /// The [`Aggregate`] of several accumulators (the workers'): the same as merging them
    /// and calling [`Accumulator::finish`], but each file's objects are merged and sorted
    /// in parallel.
    pub fn finish_all(accs: Vec<Accumulator>) -> Aggregate {
        let mut agg = Aggregate::default();
        let mut objects = Vec::with_capacity(accs.len());
        let mut summaries = Vec::with_capacity(accs.len());
        let mut datasets: Vec<Arc<Mutex<crate::aggregate::dataset_io::DatasetsIo>>> = Vec::new();
        for a in accs {
            agg.merge(a.agg);
            objects.push(a.objects);
            summaries.push(a.summaries);
            if !datasets.iter().any(|d| Arc::ptr_eq(d, &a.datasets)) {
                agg.datasets_io
                    .merge(std::mem::take(&mut *lock(&a.datasets)));
                datasets.push(a.datasets);
            }
        }
        let (objects, summaries) = rayon::join(
            || ObjectTable::into_maps(objects, ObjStats::merge),
            || ObjectTable::into_maps(summaries, SummaryStats::merge),
        );
        agg.objects = objects;
        agg.summaries = summaries;
        agg.finish_unclosed();
        agg
    }
}

/// Reads one trace file into an [`Aggregate`].
pub fn aggregate_trace(path: &Path, enc: Encoding, opts: &ReadOptions) -> Result<Aggregate, Error> {
    let mut acc = Accumulator::default();
    acc.add_trace(path, enc, opts)?;
    Ok(acc.finish())
}

/// Reads one objects file into an [`Aggregate`].
pub fn aggregate_objects(
    path: &Path,
    enc: Encoding,
    opts: &ReadOptions,
) -> Result<Aggregate, Error> {
    let mut acc = Accumulator::default();
    acc.add_objects(path, enc, opts)?;
    Ok(acc.finish())
}

/// Reads one meta file into an [`Aggregate`]; an unreadable one is recorded, not fatal.
pub fn aggregate_meta(path: &Path) -> Aggregate {
    let mut acc = Accumulator::default();
    acc.add_meta(path);
    acc.finish()
}

/// Keeps in `err` the error of the smallest path (and line) of those seen, so the error
/// reported does not depend on the order of the threads.
fn keep_first_error(err: &mut Option<Error>, e: Error) {
    *err = Some(match err.take() {
        Some(a) if a.sort_key() <= e.sort_key() => a,
        _ => e,
    });
}

/// Reads all inputs in parallel on the current rayon pool and reduces them. When several
/// files fail, the error of the smallest path (and line) is returned, whatever the order
/// of the threads. `progress` is called with the size of each finished file.
pub fn aggregate_all(
    inputs: &Inputs,
    opts: &ReadOptions,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Aggregate, Error> {
    enum Job<'a> {
        Trace(&'a Path, Encoding, u64),
        Objects(&'a Path, Encoding, u64),
        Meta(&'a Path, u64),
        Stream(&'a StreamProcess, u64),
    }
    // Stream captures are read first: a process's messages may be in any of the files.
    let capture = if inputs.streams.is_empty() {
        Capture::default()
    } else {
        let c = read_capture(&inputs.streams, opts)?;
        progress(inputs.streams.iter().map(|f| f.size).sum());
        c
    };
    let mut jobs: Vec<Job<'_>> = Vec::new();
    jobs.extend(
        capture
            .processes
            .iter()
            .map(|p| Job::Stream(p, p.events.len() as u64 * 256)),
    );
    jobs.extend(
        inputs
            .traces
            .iter()
            .map(|(f, e)| Job::Trace(&f.path, *e, f.size)),
    );
    jobs.extend(
        inputs
            .objects
            .iter()
            .map(|(f, e)| Job::Objects(&f.path, *e, f.size)),
    );
    jobs.extend(inputs.metas.iter().map(|f| Job::Meta(&f.path, f.size)));
    // Big files first: better load balance across threads.
    jobs.sort_by_key(|j| {
        Reverse(match j {
            Job::Trace(_, _, s) | Job::Objects(_, _, s) | Job::Meta(_, s) | Job::Stream(_, s) => *s,
        })
    });
    // One worker per thread, each taking the next file from a shared counter into its own
    // accumulator; then one merge per worker.
    let next = AtomicUsize::new(0);
    let base = Accumulator::default();
    let worker = |_| {
        let mut acc = base.sharing();
        let mut err: Option<Error> = None;
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(job) = jobs.get(i) else { break };
            let (r, size) = match *job {
                Job::Trace(p, e, s) => (acc.add_trace(p, e, opts), s),
                Job::Objects(p, e, s) => (acc.add_objects(p, e, opts), s),
                Job::Meta(p, s) => (acc.add_meta_checked(p, opts), s),
                // Its capture files were counted as they were read.
                Job::Stream(p, _) => (acc.add_stream_process(p, &capture, opts), 0),
            };
            progress(size);
            if let Err(e) = r {
                keep_first_error(&mut err, e);
            }
        }
        (acc, err)
    };
    let workers = rayon::current_num_threads().clamp(1, jobs.len().max(1));
    let results: Vec<(Accumulator, Option<Error>)> = (0..workers)
        .into_par_iter()
        .with_max_len(1)
        .map(worker)
        .collect();
    let mut accs = Vec::with_capacity(results.len());
    let mut err: Option<Error> = None;
    for (acc, e) in results {
        if let Some(e) = e {
            keep_first_error(&mut err, e);
        }
        accs.push(acc);
    }
    if !capture.files.is_empty() {
        let mut acc = base.sharing();
        for (p, d) in &capture.files {
            acc.add_stream_file(p, d);
        }
        accs.push(acc);
    }
    if let Some(e) = err {
        return Err(e);
    }
    let agg = Accumulator::finish_all(accs);
    if !capture.processes.is_empty() {
        refuse_twice_read(&agg)?;
    }
    Ok(agg)
}

/// An error when a process is in both a meta file and a stream capture (the collector's
/// `--out` inside the trace directory): each of its calls would count twice.
fn refuse_twice_read(agg: &Aggregate) -> Result<(), Error> {
    let key = |m: &ProcessMeta| (m.job_id.clone(), m.host.clone(), m.pid);
    let streamed: std::collections::BTreeSet<_> = agg
        .metas
        .iter()
        .filter(|m| m.format == STREAM_FORMAT)
        .map(key)
        .collect();
    match agg
        .metas
        .iter()
        .find(|m| m.format != STREAM_FORMAT && streamed.contains(&key(m)))
    {
        Some(m) => Err(Error::Other(format!(
            "process {} on host {} (job {:?}) is in both a trace (its meta.json) and a stream \
             capture (collect-*.jsonl) of the input: each of its calls would count twice; \
             report the trace files or the capture, not both",
            m.pid, m.host, m.job_id
        ))),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The objects of `a.h5` and their (calls, opens, writes, bytes written) when `recs`
    /// are one trace file: (op, kind, path, anon, bytes).
    fn objects_of(
        recs: &[(&str, &str, &str, &str, u64)],
    ) -> BTreeMap<(String, String), (u64, u64, u64, u64)> {
        let mut acc = Accumulator::default();
        acc.add_trace_with(Path::new("t.trace.csv"), |b| {
            for (i, (op, kind, path, anon, bytes)) in recs.iter().enumerate() {
                let r = RecordRef {
                    seq: i as u64,
                    start_ns: 1_000 + i as u64,
                    total_ns: 1,
                    pid: 9,
                    op,
                    kind,
                    file: "a.h5",
                    path,
                    anon,
                    bytes: *bytes,
                    batch: 1,
                    ..RecordRef::default()
                };
                b.add(i as u64 + 2, &r);
            }
            Ok(FileDiag {
                rows: recs.len() as u64,
                ..FileDiag::default()
            })
        })
        .unwrap();
        let agg = acc.finish();
        agg.objects["a.h5"]
            .iter()
            .map(|((k, p), o)| {
                (
                    (k.to_string(), p.to_string()),
                    (o.calls, o.opens, o.writes, o.bytes_written),
                )
            })
            .collect()
    }

    /// An objects file's dataflow keeps, per process, the DATAFLOW_PER_PROCESS datasets
    /// that moved the most bytes, rows of one dataset added up first, ties by file then
    /// path; other processes' rows and kinds are kept apart.
    #[test]
    fn dataflow_keeps_each_process_top_datasets_with_rows_summed() {
        let mut rows: Vec<h5prov_format::ObjectSummary> = Vec::new();
        let row = |rank: i64, kind: &str, file: &str, path: &str, r: u64, w: u64| {
            h5prov_format::ObjectSummary {
                rank,
                pid: 7,
                kind: kind.into(),
                file: file.into(),
                path: path.into(),
                bytes_read: r,
                bytes_written: w,
                ..Default::default()
            }
        };
        // Rank 0: /d00../d19 of a.h5 move 100 + i bytes; /d00 has a second row of 1000
        // (it becomes the largest); /t1 and /t0 of b.h5 tie at 110 with a.h5's /d10.
        for i in 0..20u64 {
            rows.push(row(0, "dataset", "a.h5", &format!("/d{i:02}"), 100 + i, 0));
        }
        rows.push(row(0, "dataset", "a.h5", "/d00", 0, 1000));
        rows.push(row(0, "dataset", "b.h5", "/t1", 10, 100));
        rows.push(row(0, "dataset", "b.h5", "/t0", 110, 0));
        rows.push(row(0, "group", "a.h5", "/g", 5000, 0));
        rows.push(row(0, "dataset", "a.h5", "/none", 0, 0));
        rows.push(row(1, "dataset", "a.h5", "/d05", 3, 4));
        let mut acc = Accumulator::default();
        acc.add_objects_with(Path::new("o.objects.csv"), |sink| {
            for r in &rows {
                sink(&r.borrowed());
            }
            Ok(FileDiag::default())
        })
        .unwrap();
        let flow = acc.finish().dataflow;
        let of = |rank: i64| -> Vec<(String, String, u64, u64)> {
            flow.bytes[&(rank, 7)]
                .iter()
                .map(|((f, p), &(r, w))| (f.clone(), p.clone(), r, w))
                .collect()
        };
        let zero = of(0);
        assert_eq!(zero.len(), DATAFLOW_PER_PROCESS);
        let mut want: Vec<(String, String, u64, u64)> =
            vec![("a.h5".into(), "/d00".into(), 100, 1000)];
        // /d19../d11 (119..111), then the three at 110 by file, path: a.h5 /d10, b.h5
        // /t0, b.h5 /t1, then /d09../d07: 16 in all.
        want.extend((11..20).map(|i| ("a.h5".into(), format!("/d{i:02}"), 100 + i, 0)));
        want.push(("a.h5".into(), "/d10".into(), 110, 0));
        want.push(("b.h5".into(), "/t0".into(), 110, 0));
        want.push(("b.h5".into(), "/t1".into(), 10, 100));
        want.extend((7..10).map(|i| ("a.h5".into(), format!("/d{i:02}"), 100 + i, 0)));
        want.sort();
        assert_eq!(zero, want);
        assert_eq!(of(1), vec![("a.h5".into(), "/d05".into(), 3, 4)]);
    }

    #[test]
    fn records_of_an_anonymous_object_are_filed_under_the_name_its_link_gave() {
        let a = "(anonymous #1 of pid 9)";
        let never = "(anonymous #2 of pid 9)";
        let got = objects_of(&[
            ("dataset.create", "dataset", a, "", 0),
            ("dataset.write", "dataset", a, "", 8),
            ("dataset.create", "dataset", never, "", 0),
            ("dataset.write", "dataset", "/b", "", 4),
            ("dataset.write", "dataset", never, "", 2),
            ("link.create:hard", "dataset", "/g/a", a, 0),
            ("dataset.write", "dataset", "/g/a", "", 16),
            // A record under a label already named (another thread's, late).
            ("dataset.get:space", "dataset", a, "", 0),
        ]);
        let d = |p: &str| ("dataset".to_string(), p.to_string());
        assert_eq!(
            got,
            BTreeMap::from([
                // create, write, link (not an open), write, get.
                (d("/g/a"), (5, 1, 2, 24)),
                (d("/b"), (1, 0, 1, 4)),
                // Never linked: its label, on its own.
                (d(never), (2, 1, 1, 2)),
            ])
        );
    }

    #[test]
    fn held_anonymous_records_stay_bounded() {
        // More records under labels never named than are held: all are counted, under
        // their labels.
        let labels: Vec<String> = (0..3)
            .map(|i| format!("(anonymous #{i} of pid 9)"))
            .collect();
        let recs: Vec<(&str, &str, &str, &str, u64)> = (0..ANONYMOUS_HELD + 10)
            .map(|i| ("dataset.write", "dataset", labels[i % 3].as_str(), "", 1))
            .collect();
        let got = objects_of(&recs);
        let calls: u64 = got.values().map(|v| v.0).sum();
        assert_eq!(calls, recs.len() as u64);
        assert_eq!(got.len(), 3);
    }

    #[test]
    fn object_table_updates_the_named_object_across_merges() {
        // Runs of repeats (the remembered last object), returns to objects a few updates
        // back, and random ones, in two files; checked against a plain map.
        let objects: Vec<(&str, &str, String)> = (0..12)
            .map(|i| {
                let kind = ["group", "dataset", "attr"][i % 3];
                (["a.h5", "b.h5"][i % 2], kind, format!("/g{}", i / 3))
            })
            .collect();
        let mut rng = crate::read::test_rng(7);
        let mut table = ObjectTable::<u64>::default();
        let mut want: BTreeMap<(&str, &str, &str), u64> = BTreeMap::new();
        let mut i = 0;
        for step in 0..3000u64 {
            i = match rng(4) {
                0 => i,
                1 => (i + 1) % objects.len(),
                2 => (i + objects.len() - rng(6)) % objects.len(),
                _ => rng(objects.len()),
            };
            let (file, kind, path) = &objects[i];
            let f = table.file(file);
            table.update(f, kind, path, |v| *v += step);
            *want.entry((file, kind, path.as_str())).or_default() += step;
            if step == 1500 {
                // A merge may renumber values: the remembered object must not survive it.
                // A smaller table absorbing a bigger one takes over the bigger one's values.
                let mut other = ObjectTable::<u64>::default();
                for (file, kind, path) in objects.iter().rev().take(3) {
                    let f = other.file(file);
                    other.update(f, kind, path, |v| *v += 1);
                    *want.entry((file, kind, path.as_str())).or_default() += 1;
                }
                let mut t = other;
                t.merge(table, |a, b| *a += b);
                table = t;
                // The object the absorbing table used last, once more: it must be found
                // by name, not by an index from before the merge.
                let (file, kind, path) = &objects[objects.len() - 3];
                let f = table.file(file);
                table.update(f, kind, path, |v| *v += 1);
                *want.entry((file, kind, path.as_str())).or_default() += 1;
            }
        }
        let got: BTreeMap<(String, String, String), u64> =
            ObjectTable::into_maps(vec![table], |a, b| *a += b)
                .into_iter()
                .flat_map(|(f, m)| {
                    m.iter()
                        .map(|((k, p), v)| ((f.clone(), k.to_string(), p.to_string()), *v))
                        .collect::<Vec<_>>()
                })
                .collect();
        let want: BTreeMap<(String, String, String), u64> = want
            .into_iter()
            .map(|((f, k, p), v)| ((f.into(), k.into(), p.into()), v))
            .collect();
        assert_eq!(got, want);
    }

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

    #[test]
    fn sorted_objects_sorts_by_kind_then_path_and_coalesces_repeats() {
        let pairs: Vec<(&str, String)> = [
            ("dataset", "/Timestep_10/px"),
            ("dataset", "/Timestep_10/p"),
            ("dataset", "/Timestep_1/px"),
            ("dataset", "/a/very/long/common/prefix/z"),
            ("dataset", "/a/very/long/common/prefix/b"),
            ("dataset", "/a/very/long/common/prefix"),
            ("dataset", "/é/ü"),
            ("dataset", ""),
            ("attr", "/z"),
            ("attribute_of_a_future_kind", "/a"),
            ("attribute_of_a_future_kinc", "/b"),
            ("group", "/"),
            ("datatype", "/t"),
            // Around the sort key's 24-byte prefix, and NULs that look like its padding.
            ("group", "/a"),
            ("group", "/a\0"),
            ("group", "/a\0\0b"),
            ("group", "/a\0b"),
            ("group", "/ab"),
            ("group", "/abcdefghijklmnopqrstuv"),
            ("group", "/abcdefghijklmnopqrstuvw"),
            ("group", "/abcdefghijklmnopqrstuvw\0"),
            ("group", "/abcdefghijklmnopqrstuvw\0\0"),
            ("group", "/abcdefghijklmnopqrstuvwx"),
            ("group", "/abcdefghijklmnopqrstuvwxy"),
            ("group", "/abcdefghijklmnopqrstuvw\0x"),
            ("group", "/abcdefghijklmnopqrstuv\0\0"),
        ]
        .iter()
        .map(|(k, p)| (*k, p.to_string()))
        .chain((0..300).map(|i| ("group", format!("/g{}/{}", i * 7919 % 1000, i))))
        .collect();
        // Two workers' tables: every object in the first, every third one in the second
        // too (its values must be added up), in another insertion order.
        let mut parts: Vec<FileObjects<u64>> = vec![FileObjects::default(), FileObjects::default()];
        for (t, part) in parts.iter_mut().enumerate() {
            for (i, (k, p)) in pairs.iter().enumerate().rev().skip(t) {
                if t == 0 || i % 3 == 0 {
                    part.index.insert(
                        ObjKey::new(format!("{k}\0{p}").as_bytes()),
                        part.values.len() as u32,
                    );
                    part.values.push(i as u64 + 1);
                }
            }
        }
        let got = sorted_objects(parts, |a, b| *a += b);
        let want: BTreeMap<(String, String), u64> = pairs
            .iter()
            .enumerate()
            .map(|(i, (k, p))| {
                let twice = i % 3 == 0 && i + 1 < pairs.len();
                (
                    (k.to_string(), p.clone()),
                    (i as u64 + 1) * if twice { 2 } else { 1 },
                )
            })
            .collect();
        assert_eq!(got.len(), want.len());
        assert!(got
            .iter()
            .eq(want.iter().map(|((k, p), v)| ((k.as_str(), p.as_str()), v))));
        // Each kind's range is exactly that kind's objects: also for a kind that is a
        // prefix of others ("attr"), a prefix that is no kind, and no kind at all.
        let kinds: BTreeSet<&str> = pairs.iter().map(|(k, _)| *k).collect();
        for kind in kinds
            .into_iter()
            .chain(["attribute_of_a_future_kin", "", "zzz", "a"])
        {
            let filtered: Vec<(&str, &u64)> = got
                .iter()
                .filter(|((k, _), _)| *k == kind)
                .map(|((_, p), v)| (p, v))
                .collect();
            assert_eq!(got.of_kind(kind).collect::<Vec<_>>(), filtered, "{kind:?}");
        }
    }
}
