//! The per-record fold: a [`Builder`] adds the records of one trace file to an
//! [`Accumulator`] (what one worker thread has read so far), which also takes objects and
//! meta files and stream captures; the workers' accumulators merge into one
//! [`Aggregate`].

use super::dataflow::FlowRows;
use super::objects::{lock, Numbering, ObjectTable};
use super::stats::min_nonzero;
use super::{
    check, collective, is_anonymous_label, proc_number, Aggregate, FileAccess, FileStats, ObjStats,
    OpStats, ProcOpStats, ProcStats, SizeHist, SlowCall, SummaryStats, SUMMARY_KINDS,
};
use crate::aggregate::check::{MetaFacts, RecordChecks, TraceFacts, WarningKind};
use crate::aggregate::collective::Recorder;
use crate::aggregate::timeline::{OpenBin, Timeline};
use crate::read::objects::{read_meta_checked, read_objects, MetaError};
use crate::read::record::{OpClass, ProcKey, RecordExt, RecordRef};
use crate::read::stream_capture::{Capture, StreamProcess, STREAM_FORMAT};
use crate::read::{Error, FileDiag, ReadOptions};
use h5prov_format::{Encoding, ObjectSummaryRef, ProcessMeta};

use rustc_hash::FxHashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

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
    /// By op number, the op of the record that followed one of that op last time: what
    /// [`Builder::op_id`] tries first.
    next_op: Vec<u32>,
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
            next_op: Vec::new(),
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
        // A program repeats its pattern of calls (create, write, close; open, read,
        // close), so the op that followed the previous record's op last time is mostly
        // this record's: one compare, cheaper than a hash.
        let last = self.last_op as usize;
        if let Some(&guess) = self.next_op.get(last) {
            if self.ops[guess as usize].name == op {
                self.last_op = guess;
                return guess;
            }
        }
        let id = match self.op_ids.get(op) {
            Some(&id) => id,
            None => self.new_op(op),
        };
        if let Some(n) = self.next_op.get_mut(last) {
            *n = id;
        }
        self.last_op = id;
        id
    }

    /// Numbers an op seen for the first time in this file.
    #[cold]
    fn new_op(&mut self, op: &str) -> u32 {
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
        self.next_op.push(id);
        self.op_ids.insert(op.into(), id);
        id
    }

    /// Adds one record, read at `line` of its file, after checking it ([`RecordChecks`]).
    /// A record of an anonymous object is held until the link that names it, and then
    /// added under that name (`Builder::add_anonymous`).
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
                o.attr_creates += u64::from(r.op == "attr.create");
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
        self.dataset_io.finish_into(&mut lock(self.datasets));
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
            if crate::aggregate::dataset_io::DatasetIo::has_storage(o)
                && !lock(read_facts).add_summary_existing(o)
            {
                if let Some(d) = crate::aggregate::dataset_io::DatasetIo::of_summary(o) {
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
