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
mod dataflow;
pub mod dataset_io;
mod diagnostics;
mod objects;
pub mod sketch;
mod stats;
pub mod timeline;

pub use crate::read::record::{is_anonymous_label, ANONYMOUS_LABEL};
use dataflow::FlowRows;
pub use dataflow::{Dataflow, DatasetBytes, FileAccess, DATAFLOW_PER_PROCESS};
pub use diagnostics::Diagnostics;
pub(crate) use objects::join_sorted;
use objects::{lock, merge_maps, Numbering, ObjectTable};
pub use objects::{objects_of_kind, ObjectMap};
use stats::min_nonzero;
pub use stats::{
    proc_number, FileStats, ObjStats, OpStats, ProcOpStats, ProcSet, ProcStats, SizeHist, SlowCall,
    SummaryStats, SummarySum, TopK, SLOW_CALLS_KEPT,
};

use crate::aggregate::check::{MetaFacts, RecordChecks, TraceFacts, WarningKind};
use crate::aggregate::collective::{Collectives, Recorder};
use crate::aggregate::timeline::{OpenBin, Timeline};
use crate::read::objects::{read_meta_checked, read_objects, MetaError};
use crate::read::record::{OpClass, ProcKey, RecordExt, RecordRef};
use crate::read::stream_capture::{read_capture, Capture, StreamProcess, STREAM_FORMAT};
use crate::read::{Error, FileDiag, Inputs, ReadOptions};
use h5prov_format::{Encoding, ObjectSummaryRef, ProcessMeta};
use rayon::prelude::*;
use rustc_hash::FxHashMap;
use std::cmp::Reverse;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// The kinds of objects whose summary rows are added up ([`Aggregate::summaries`]): the
/// report reads file and dataset rows only. Groups, attributes and datatypes made a third
/// of the summaries of an object-heavy run, and no part of the report looked at them.
pub const SUMMARY_KINDS: [&str; 2] = ["dataset", "file"];

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
