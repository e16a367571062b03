//! What the dataset rules ([`crate::insights::dataset`]) and the cost model
//! ([`crate::insights::costmodel`]) need beyond the generic aggregate, collected as the records go
//! by: per dataset, from its transfers ([`Recorder`], one per trace file) and from its
//! objects rows ([`DatasetIo::of_summary`]), merged commutatively like the rest of the
//! aggregate ([`DatasetsIo::merge`]).

use crate::aggregate::objects::Numbering;
use crate::aggregate::SizeHist;
use crate::read::record::{OpClass, RecordRef};
use compact_str::CompactString;
use h5prov_format::ObjectSummaryRef;
use rustc_hash::FxHashMap;
use std::collections::{BTreeMap, BTreeSet};

/// Hyperslab transfers of at least this many blocks are fragmented selections (the cost
/// model's [`crate::insights::costmodel`] threshold, counted here as transfers go by).
pub const FRAG_BLOCKS: u64 = 16;

/// HDF5's default chunk cache size per dataset (`H5Pset_chunk_cache`/`H5Pset_cache`): 1 MiB.
pub const DEFAULT_CACHE_BYTES: u64 = 1 << 20;
/// HDF5's default number of chunk cache hash slots: 521.
pub const DEFAULT_CACHE_SLOTS: u64 = 521;
/// Chunks smaller than this are small (10 KiB, the lower end of The HDF Group's
/// "Chunking in HDF5" guidance of roughly 10 KiB–1 MiB per chunk).
pub const CHUNK_SMALL_BYTES: u64 = 10 << 10;
/// Chunks an access must touch on average before small chunks are a problem: every chunk
/// costs an index (B-tree) lookup and a separate I/O.
pub const CHUNKS_PER_ACCESS: f64 = 16.0;
/// An access that covers at most this fraction of the chunks it touches uses a small part
/// of each (chunk too large for the access).
pub const CHUNK_USED_FRACTION: f64 = 0.25;
/// Times each chunk is brought in, on average, before re-touching counts as thrashing.
pub const CHUNK_RETOUCH: f64 = 2.0;
/// Re-reads of one selection needed before they are a pattern.
pub const REPEAT_MIN: u64 = 4;
/// Distinct selections per dataset and process remembered to recognise a re-read.
pub const REPEAT_WINDOW: usize = 8;
/// Small accesses needed before small I/O is judged (Drishti's `small_requests_absolute`).
pub const SMALL_IO_MIN: u64 = 1000;
/// Access shapes kept per dataset (the smallest, so merges are exact for those kept).
pub const MAX_SHAPES: usize = 32;
/// Memory datatypes of converting transfers kept per dataset.
const MAX_MEM_TYPES: usize = 4;

/// Transfers of one access shape (the extent of the selection's bounding box).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShapeIo {
    /// Reads with this shape.
    pub reads: u64,
    /// Writes with this shape.
    pub writes: u64,
    /// Time in those reads, ns.
    pub read_ns: u64,
    /// Time in those writes, ns.
    pub write_ns: u64,
    /// Bytes of those transfers in the file's datatype.
    pub file_bytes: u64,
}

impl ShapeIo {
    fn merge(&mut self, o: &ShapeIo) {
        self.reads += o.reads;
        self.writes += o.writes;
        self.read_ns += o.read_ns;
        self.write_ns += o.write_ns;
        self.file_bytes += o.file_bytes;
    }
}

/// What the dataset rules know about one dataset.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DatasetIo {
    /// Transfers that converted between memory and file datatypes.
    pub conv_calls: u64,
    /// Their time, ns.
    pub conv_ns: u64,
    /// Their bytes in memory.
    pub conv_bytes: u64,
    /// Their bytes in the file's datatype.
    pub conv_file_bytes: u64,
    /// Memory datatypes of converting transfers (the smallest few).
    pub conv_mem_types: BTreeSet<String>,
    /// Reads of a selection the same process had read before (no write in between).
    pub repeat_reads: u64,
    /// Their time, ns.
    pub repeat_ns: u64,
    /// Their bytes.
    pub repeat_bytes: u64,
    /// Transfers by access shape (`256x512`), the [`MAX_SHAPES`] smallest shapes.
    pub shapes: Shapes,
    /// Chunk dimensions from the objects rows (smallest non-empty).
    pub chunk: CompactString,
    /// Filter pipeline (smallest non-empty).
    pub filters: CompactString,
    /// The filtered dataset's storage size (`stored_bytes` of its objects rows, the
    /// largest), bytes; 0 when not recorded.
    pub stored_bytes: u64,
    /// File datatype (smallest non-empty).
    pub ftype: CompactString,
    /// Chunk cache bytes in force: the largest over opens, HDF5's default for an open
    /// that left it to the file; 0 when no chunked open was seen.
    pub cache_bytes: u64,
    /// Chunk cache slots, likewise.
    pub cache_slots: u64,
    /// The cost model's facts ([`crate::insights::costmodel`]).
    pub cost: CostFacts,
    /// The selections MPI processes read it in, and how many processes read each.
    pub read_boxes: ReadBoxes,
}

/// Most read selections kept per dataset in [`ReadBoxes`] (the first ones seen).
pub const MAX_READ_BOXES: usize = 16;

/// What the reads of one selection of a dataset cost over the processes that made them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BoxReads {
    /// Processes (trace files) that read the selection.
    pub procs: u32,
    /// Bytes those reads delivered, all processes.
    pub bytes: u64,
    /// Their time, ns.
    pub ns: u64,
}

/// The file selections (bounding boxes, the trace's `bbox`) a dataset was read in by the
/// processes of an MPI job (rank >= 0), at most [`MAX_READ_BOXES`]: a selection that
/// several processes read moved its bytes once per process.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReadBoxes(pub BTreeMap<CompactString, BoxReads>);

impl BoxReads {
    fn add(&mut self, o: BoxReads) {
        self.procs = self.procs.saturating_add(o.procs);
        self.bytes = self.bytes.saturating_add(o.bytes);
        self.ns = self.ns.saturating_add(o.ns);
    }
}

impl ReadBoxes {
    /// Adds `v` to `bbox`'s entry, made when there is room.
    fn put(&mut self, bbox: &str, v: BoxReads) {
        if let Some(b) = self.0.get_mut(bbox) {
            b.add(v);
        } else if self.0.len() < MAX_READ_BOXES {
            self.0.insert(bbox.into(), v);
        }
    }

    /// Counts a read of `bbox` by this recorder's process (one process per box).
    fn add(&mut self, bbox: &str, bytes: u64, ns: u64) {
        let procs = u32::from(!self.0.contains_key(bbox));
        self.put(bbox, BoxReads { procs, bytes, ns });
    }

    /// Adds another process's (or set of processes') reads.
    fn merge(&mut self, o: ReadBoxes) {
        for (k, v) in o.0 {
            self.put(&k, v);
        }
    }
}

/// What the cost model ([`crate::insights::costmodel`]) needs of one dataset beyond the rules
/// above: the work asked for (transfers, elements) and the calls and settings that make
/// HDF5 do more (point and fragmented selections, extents, flushes, fill values).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CostFacts {
    /// Successful data transfers (reads and writes).
    pub xfers: u64,
    /// Elements they selected.
    pub elems: u64,
    /// Their time, ns.
    pub xfer_ns: u64,
    /// Transfers with a point selection (`sel` `points`), their elements and time.
    pub point_calls: u64,
    /// Elements of those point selections.
    pub point_elems: u64,
    /// Time of those point transfers, ns.
    pub point_ns: u64,
    /// Hyperslab transfers of at least [`FRAG_BLOCKS`] blocks.
    pub frag_calls: u64,
    /// Blocks of those transfers.
    pub frag_blocks: u64,
    /// Bytes (file datatype) of those transfers.
    pub frag_bytes: u64,
    /// Time of those transfers, ns.
    pub frag_ns: u64,
    /// `dataset.create` calls and their time, ns.
    pub creates: u64,
    /// Time of the creates, ns.
    pub create_ns: u64,
    /// `dataset.specific:set_extent` calls (`H5Dset_extent`).
    pub extends: u64,
    /// Their time, ns.
    pub extend_ns: u64,
    /// `dataset.specific:flush` calls (`H5Dflush`).
    pub flushes: u64,
    /// Their time, ns.
    pub flush_ns: u64,
    /// Fill time (`alloc`, `never`, `ifset`) from the objects rows (smallest non-empty).
    pub fill_time: CompactString,
    /// Allocation time (`early`, `late`, `incr`), likewise.
    pub alloc_time: CompactString,
    /// Fill value status (`default`, `user`, `undefined`), likewise.
    pub fill: CompactString,
}

impl CostFacts {
    fn merge(&mut self, o: CostFacts) {
        self.xfers += o.xfers;
        self.elems += o.elems;
        self.xfer_ns += o.xfer_ns;
        self.point_calls += o.point_calls;
        self.point_elems += o.point_elems;
        self.point_ns += o.point_ns;
        self.frag_calls += o.frag_calls;
        self.frag_blocks += o.frag_blocks;
        self.frag_bytes += o.frag_bytes;
        self.frag_ns += o.frag_ns;
        self.creates += o.creates;
        self.create_ns += o.create_ns;
        self.extends += o.extends;
        self.extend_ns += o.extend_ns;
        self.flushes += o.flushes;
        self.flush_ns += o.flush_ns;
        keep_smallest(&mut self.fill_time, &o.fill_time);
        keep_smallest(&mut self.alloc_time, &o.alloc_time);
        keep_smallest(&mut self.fill, &o.fill);
    }
}

fn keep_smallest(s: &mut CompactString, o: &str) {
    if !o.is_empty() && (s.is_empty() || o < s.as_str()) {
        *s = o.into();
    }
}

/// Transfers by access shape, sorted by shape: a vector, because a dataset is nearly
/// always accessed with one or two shapes (a tree allocates a node of eleven entries for
/// the first, and there is one such map per dataset and process while a trace is read).
/// Shapes are short, so they are kept inline.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Shapes(Vec<(CompactString, ShapeIo)>);

impl Shapes {
    /// Number of shapes.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// No shape.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// `(shape, transfers)`, sorted by shape.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &ShapeIo)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// The transfers of `shape`.
    pub fn get(&self, shape: &str) -> Option<&ShapeIo> {
        self.find(shape).ok().map(|i| &self.0[i].1)
    }

    fn find(&self, shape: &str) -> Result<usize, usize> {
        self.0.binary_search_by(|(k, _)| k.as_str().cmp(shape))
    }

    /// The entry of `shape`, created empty if new, unless it would be dropped at once
    /// (all [`MAX_SHAPES`] kept shapes are smaller); keeps the [`MAX_SHAPES`] smallest.
    pub fn entry(&mut self, shape: &str) -> Option<&mut ShapeIo> {
        let i = match self.find(shape) {
            Ok(i) => i,
            Err(i) if i >= MAX_SHAPES => return None,
            Err(i) => {
                // One at a time: most datasets keep one shape (a first push reserves four).
                self.0.reserve_exact(1);
                self.0.insert(i, (shape.into(), ShapeIo::default()));
                self.0.truncate(MAX_SHAPES);
                i
            }
        };
        Some(&mut self.0[i].1)
    }

    fn merge(&mut self, o: Shapes) {
        for (k, v) in o.0 {
            if let Some(s) = self.entry(&k) {
                s.merge(&v);
            }
        }
    }
}

impl DatasetIo {
    /// What an objects row says about its dataset's storage; `None` for other kinds and
    /// for rows without chunk or datatype.
    pub fn of_summary(o: &ObjectSummaryRef<'_>) -> Option<DatasetIo> {
        if !Self::has_storage(o) {
            return None;
        }
        let mut d = DatasetIo::default();
        d.add_summary(o);
        Some(d)
    }

    /// Whether `o` says something of its dataset's storage ([`DatasetIo::of_summary`]
    /// is `Some`): a dataset row with a chunk or a datatype.
    pub fn has_storage(o: &ObjectSummaryRef<'_>) -> bool {
        o.kind == "dataset" && !(o.chunk.is_empty() && o.ftype.is_empty())
    }

    /// Adds what a row with storage ([`DatasetIo::has_storage`]) says: the same as
    /// merging its [`DatasetIo::of_summary`], without building and dropping a whole
    /// `DatasetIo` per row.
    pub fn add_summary(&mut self, o: &ObjectSummaryRef<'_>) {
        keep_smallest(&mut self.chunk, o.chunk);
        keep_smallest(&mut self.filters, o.filters);
        self.stored_bytes = self.stored_bytes.max(o.stored_bytes);
        keep_smallest(&mut self.ftype, o.ftype);
        if !o.chunk.is_empty() {
            self.cache_slots = self.cache_slots.max(cache_part(o.cache, 0));
            self.cache_bytes = self.cache_bytes.max(cache_part(o.cache, 1));
        }
        let c = &mut self.cost;
        keep_smallest(&mut c.fill_time, o.fill_time);
        keep_smallest(&mut c.alloc_time, o.alloc_time);
        keep_smallest(&mut c.fill, o.fill);
    }

    fn merge(&mut self, o: DatasetIo) {
        self.conv_calls += o.conv_calls;
        self.conv_ns += o.conv_ns;
        self.conv_bytes += o.conv_bytes;
        self.conv_file_bytes += o.conv_file_bytes;
        self.conv_mem_types.extend(o.conv_mem_types);
        while self.conv_mem_types.len() > MAX_MEM_TYPES {
            self.conv_mem_types.pop_last();
        }
        self.repeat_reads += o.repeat_reads;
        self.repeat_ns += o.repeat_ns;
        self.repeat_bytes += o.repeat_bytes;
        self.shapes.merge(o.shapes);
        keep_smallest(&mut self.chunk, &o.chunk);
        keep_smallest(&mut self.filters, &o.filters);
        self.stored_bytes = self.stored_bytes.max(o.stored_bytes);
        keep_smallest(&mut self.ftype, &o.ftype);
        self.cache_bytes = self.cache_bytes.max(o.cache_bytes);
        self.cache_slots = self.cache_slots.max(o.cache_slots);
        self.cost.merge(o.cost);
        self.read_boxes.merge(o.read_boxes);
    }
}

/// The dataset rules' part of the aggregate.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DatasetsIo {
    /// Per dataset, by container file, then path (each file name is stored once, not
    /// once per dataset).
    pub datasets: BTreeMap<String, BTreeMap<CompactString, DatasetIo>>,
    /// Time in data reads (index 0) and writes (index 1) by access-size bucket (the
    /// buckets of [`SizeHist`]), ns.
    pub size_ns: [Vec<u64>; 2],
    /// By access-size bucket (reads and writes together), the least time a successful,
    /// synchronous data transfer spent inside the under connector (`under_ns`): what
    /// HDF5 itself needs per call of that size at best, without h5prov's recording and
    /// without the occasional slow call; 0 when no such call was seen. The fixed cost of
    /// `small_io`'s model ([`DatasetsIo::small_call_ns`]).
    pub size_min_under_ns: Vec<u64>,
    /// The link listings of groups listed more than once ([`crate::aggregate::link_iter`]).
    pub links: crate::aggregate::link_iter::LinkListings,
}

/// Adds the datasets of one file into another's.
fn merge_datasets(
    a: &mut BTreeMap<CompactString, DatasetIo>,
    b: impl IntoIterator<Item = (CompactString, DatasetIo)>,
) {
    for (k, v) in b {
        match a.get_mut(&k) {
            Some(d) => d.merge(v),
            None => {
                a.insert(k, v);
            }
        }
    }
}

fn add_dense(a: &mut Vec<u64>, b: &[u64]) {
    if a.len() < b.len() {
        a.resize(b.len(), 0);
    }
    for (x, y) in a.iter_mut().zip(b) {
        *x += y;
    }
}

/// The least of each bucket of `a` and `b`, 0 standing for none.
fn min_dense(a: &mut Vec<u64>, b: &[u64]) {
    if a.len() < b.len() {
        a.resize(b.len(), 0);
    }
    for (x, &y) in a.iter_mut().zip(b) {
        *x = min_seen(*x, y);
    }
}

/// The lesser of two times, 0 standing for none.
fn min_seen(a: u64, b: u64) -> u64 {
    match (a, b) {
        (0, v) | (v, 0) => v,
        (a, b) => a.min(b),
    }
}

impl DatasetsIo {
    /// Adds another part (commutative and associative).
    pub fn merge(&mut self, o: DatasetsIo) {
        for (f, theirs) in o.datasets {
            self.merge_file(f, theirs);
        }
        self.merge_sizes(&o.size_ns, &o.size_min_under_ns);
        self.links.merge(o.links);
    }

    /// Adds the datasets of container file `f`.
    fn merge_file(&mut self, f: String, theirs: BTreeMap<CompactString, DatasetIo>) {
        let Some(ours) = self.datasets.get_mut(&f) else {
            self.datasets.insert(f, theirs);
            return;
        };
        if ours.len() < theirs.len() {
            let small = std::mem::replace(ours, theirs);
            merge_datasets(ours, small);
        } else {
            merge_datasets(ours, theirs);
        }
    }

    /// Adds time by access size ([`DatasetsIo::size_ns`]) and the least under-connector
    /// times ([`DatasetsIo::size_min_under_ns`]).
    fn merge_sizes(&mut self, size_ns: &[Vec<u64>; 2], min_under_ns: &[u64]) {
        add_dense(&mut self.size_ns[0], &size_ns[0]);
        add_dense(&mut self.size_ns[1], &size_ns[1]);
        min_dense(&mut self.size_min_under_ns, min_under_ns);
    }

    /// `((file, path), dataset)` of every dataset, sorted by file, then path.
    pub fn iter(&self) -> impl Iterator<Item = ((&str, &str), &DatasetIo)> {
        self.datasets
            .iter()
            .flat_map(|(f, m)| m.iter().map(move |(p, d)| ((f.as_str(), p.as_str()), d)))
    }

    /// The dataset `path` of container file `file`.
    pub fn get(&self, file: &str, path: &str) -> Option<&DatasetIo> {
        self.datasets.get(file)?.get(path)
    }

    /// Adds `d` to the dataset `path` of container file `file`, unless that is not here:
    /// then `d` comes back.
    pub fn add_existing(&mut self, file: &str, path: &str, d: DatasetIo) -> Option<DatasetIo> {
        match self.datasets.get_mut(file).and_then(|m| m.get_mut(path)) {
            Some(x) => {
                x.merge(d);
                None
            }
            None => Some(d),
        }
    }

    /// Adds the storage facts of objects row `o` (one with [`DatasetIo::has_storage`]) to
    /// its dataset, unless that is not here: then `false`.
    pub fn add_summary_existing(&mut self, o: &ObjectSummaryRef<'_>) -> bool {
        match self
            .datasets
            .get_mut(o.file)
            .and_then(|m| m.get_mut(o.path))
        {
            Some(x) => {
                x.add_summary(o);
                true
            }
            None => false,
        }
    }

    /// Adds `d` to the dataset `path` of container file `file`.
    pub fn add(&mut self, file: &str, path: &str, d: DatasetIo) {
        let Some(d) = self.add_existing(file, path, d) else {
            return;
        };
        let file = match self.datasets.get_mut(file) {
            Some(f) => f,
            None => self.datasets.entry(file.to_string()).or_default(),
        };
        file.insert(path.into(), d);
    }

    /// The same facts in trees with full nodes. Filled by [`DatasetsIo::add`] in
    /// the order of an objects file's rows, a tree keeps about half of its room empty; an
    /// objects file's trees are moved whole into the read's, which holds every dataset.
    pub fn packed(mut self) -> Self {
        for m in self.datasets.values_mut() {
            // Taken in key order and collected: built in bulk, node by node.
            *m = std::mem::take(m).into_iter().collect();
        }
        self
    }

    /// Time in data accesses smaller than `limit` (a power of two), ns.
    pub fn small_ns(&self, limit: u64) -> u64 {
        let lb = SizeHist::bucket(limit.next_power_of_two());
        self.size_ns
            .iter()
            .map(|v| v.iter().take(lb).sum::<u64>())
            .sum()
    }

    /// The fixed cost of one data access smaller than `limit` (a power of two), ns: the
    /// least under-connector time of any such call ([`DatasetsIo::size_min_under_ns`]);
    /// `None` when no such call had an under-connector time.
    pub fn small_call_ns(&self, limit: u64) -> Option<u64> {
        let lb = SizeHist::bucket(limit.next_power_of_two());
        self.size_min_under_ns
            .iter()
            .take(lb)
            .copied()
            .filter(|&v| v > 0)
            .min()
    }
}

/// One dataset as a trace file's records go by: its part of the aggregate and the
/// selections its process read since it last wrote it.
#[derive(Debug, Default)]
struct Local {
    io: DatasetIo,
    recent: Vec<(Box<str>, u64, u64)>,
}

/// Collects the dataset rules' facts from the records of one trace file (one process, in
/// order).
#[derive(Debug, Default)]
pub struct Recorder {
    /// Container files, numbered in the order first seen (a process may use thousands:
    /// PyTables' test suite's one process used 10,907, and a search of a list of them was
    /// about a tenth of its report's time)...
    files: Numbering,
    /// ...and by that number, their datasets by path: the index of each one in `locals`.
    datasets: Vec<FxHashMap<CompactString, u32>>,
    /// Emptied tables of earlier trace files, for the next ones.
    spare: Vec<FxHashMap<CompactString, u32>>,
    /// The datasets of this trace file, in the order first seen, in chunks that never
    /// move; freed by [`Recorder::finish_into`]. Kept in the hash tables before, their
    /// ~470-byte entries moved at every doubling, and the emptied tables, kept for the
    /// next file, held ~30 MB per worker to the end of a read of the 10M-record set
    /// (where its peak of memory is).
    locals: crate::aggregate::objects::Chunked<Local>,
    shape: String,
    size_ns: [Vec<u64>; 2],
    size_min_under_ns: Vec<u64>,
    links: crate::aggregate::link_iter::ListingRecorder,
}

/// The extent of a bounding box: `0:99x10:19` → `100x10`; `None` when it does not parse.
fn bbox_shape(bbox: &str, out: &mut String) -> Option<()> {
    use std::fmt::Write;
    out.clear();
    for (i, d) in bbox.split('x').enumerate() {
        let (s, e) = d.split_once(':')?;
        let (s, e) = (s.parse::<u64>().ok()?, e.parse::<u64>().ok()?);
        if i > 0 {
            out.push('x');
        }
        write!(out, "{}", e.checked_sub(s)? + 1).ok()?;
    }
    Some(())
}

impl Recorder {
    /// Adds one record of class `class`.
    #[inline]
    pub fn add(&mut self, r: &RecordRef<'_>, class: OpClass) {
        self.links.add(r);
        if class == OpClass::Metadata {
            if r.kind == "dataset" && r.status >= 0 {
                self.add_dataset_call(r);
            }
            return;
        }
        let w = usize::from(class == OpClass::DataWrite);
        let b = SizeHist::bucket(r.bytes);
        let v = &mut self.size_ns[w];
        if v.len() <= b {
            v.resize(b + 1, 0);
        }
        v[b] += r.total_ns;
        if r.kind != "dataset" || r.status < 0 {
            return;
        }
        // An asynchronous call's under time is its hand-off, not its work; a call of no
        // bytes or with no under time says nothing of a transfer's cost.
        if r.is_async == 0 && r.bytes > 0 && r.under_ns > 0 {
            let m = &mut self.size_min_under_ns;
            if m.len() <= b {
                m.resize(b + 1, 0);
            }
            m[b] = min_seen(m[b], r.under_ns.min(r.total_ns));
        }
        self.add_transfer(r, w == 1);
    }

    /// The cost model's dataset calls that move no data: create, extend, flush.
    fn add_dataset_call(&mut self, r: &RecordRef<'_>) {
        let c = &mut self.local(r).io.cost;
        match r.op {
            "dataset.create" => {
                c.creates += 1;
                c.create_ns += r.total_ns;
            }
            "dataset.specific:set_extent" => {
                c.extends += 1;
                c.extend_ns += r.total_ns;
            }
            "dataset.specific:flush" => {
                c.flushes += 1;
                c.flush_ns += r.total_ns;
            }
            _ => {}
        }
    }

    /// The dataset of `r`, created empty when new.
    fn local(&mut self, r: &RecordRef<'_>) -> &mut Local {
        let (file, new) = self.files.number(r.file);
        if new {
            self.datasets.push(self.spare.pop().unwrap_or_default());
        }
        let by_path = &mut self.datasets[file];
        let i = match by_path.get(r.path) {
            Some(&i) => i,
            None => {
                let i = self.locals.len() as u32;
                self.locals.push(Local::default());
                by_path.insert(r.path.into(), i);
                i
            }
        };
        &mut self.locals[i as usize]
    }

    fn add_transfer(&mut self, r: &RecordRef<'_>, write: bool) {
        // The shape buffer is taken out while the dataset's entry is borrowed.
        let mut shape = std::mem::take(&mut self.shape);
        let l = self.local(r);
        let d = &mut l.io;
        let c = &mut d.cost;
        c.xfers += 1;
        c.elems += r.npoints;
        c.xfer_ns += r.total_ns;
        let has_box = bbox_shape(r.bbox, &mut shape).is_some();
        if r.sel == "points" {
            c.point_calls += 1;
            c.point_elems += r.npoints;
            c.point_ns += r.total_ns;
        } else if r.blocks >= FRAG_BLOCKS
            && matches!(r.sel, "hyperslab" | "irregular")
            // MPI-IO's two-phase I/O aggregates the pieces of collective transfers.
            && (if r.xfer_actual.is_empty() { r.xfer } else { r.xfer_actual }) != "collective"
            && has_box
            // A hyperslab that fills its bounding box is one region however HDF5 counts
            // its blocks (a row selected with count 1000 and block 1 is 1000 "blocks");
            // one with holes is split into pieces at its blocks.
            && dims_elems(&shape).is_some_and(|e| r.npoints < e)
        {
            c.frag_calls += 1;
            c.frag_blocks += r.blocks;
            c.frag_bytes += if r.file_bytes > 0 {
                r.file_bytes
            } else {
                r.bytes
            };
            c.frag_ns += r.total_ns;
        }
        if r.conv != 0 {
            d.conv_calls += 1;
            d.conv_ns += r.total_ns;
            d.conv_bytes += r.bytes;
            d.conv_file_bytes += r.file_bytes;
            if !r.mem_type.is_empty() && !d.conv_mem_types.contains(r.mem_type) {
                d.conv_mem_types.insert(r.mem_type.to_string());
                while d.conv_mem_types.len() > MAX_MEM_TYPES {
                    d.conv_mem_types.pop_last();
                }
            }
        }
        if has_box {
            let file_bytes = if r.file_bytes > 0 {
                r.file_bytes
            } else {
                r.bytes
            };
            if let Some(s) = d.shapes.entry(&shape) {
                if write {
                    s.writes += 1;
                    s.write_ns += r.total_ns;
                } else {
                    s.reads += 1;
                    s.read_ns += r.total_ns;
                }
                s.file_bytes += file_bytes;
            }
        }
        // Re-reads: the same bounding box, blocks and points as a recent read, with no
        // write to the dataset in between (point selections can differ inside one box);
        // and, for an MPI process, the box among the job's read selections.
        if write {
            l.recent.clear();
        } else if !r.bbox.is_empty() && r.sel != "points" {
            if r.rank >= 0 {
                d.read_boxes.add(r.bbox, r.bytes, r.total_ns);
            }
            let hit = l
                .recent
                .iter()
                .position(|(b, n, p)| &**b == r.bbox && *n == r.blocks && *p == r.npoints);
            match hit {
                Some(i) => {
                    d.repeat_reads += 1;
                    d.repeat_ns += r.total_ns;
                    d.repeat_bytes += r.bytes;
                    let e = l.recent.remove(i);
                    l.recent.push(e);
                }
                None => {
                    if l.recent.len() >= REPEAT_WINDOW {
                        l.recent.remove(0);
                    }
                    l.recent.push((r.bbox.into(), r.blocks, r.npoints));
                }
            }
        }
        self.shape = shape;
    }

    /// The facts collected, keyed by (file, path); the recorder is then empty, ready for
    /// the next trace file, and keeps its emptied tables for it.
    pub fn finish(&mut self) -> DatasetsIo {
        let mut out = DatasetsIo::default();
        self.finish_into(&mut out);
        out
    }

    /// Adds the facts collected to `out` (the read's, a worker's) as
    /// [`DatasetsIo::merge`] of [`Recorder::finish`] would; the recorder is then empty,
    /// ready for the next trace file, and keeps its emptied tables for it.
    ///
    /// A container file `out` holds at least as many datasets of is merged in place:
    /// each dataset looked up in `out` and added there (a new one inserted), the same
    /// merges in the same direction as [`DatasetsIo::merge`], without building this
    /// file's sorted tree first. Building it (~450-byte entries moved twice, into fresh
    /// mappings) and merging it was ~15 % of a report's CPU on the 10M-record set, where
    /// most of a trace file's datasets are already in `out`.
    pub fn finish_into(&mut self, out: &mut DatasetsIo) {
        let files = std::mem::take(&mut self.files).names;
        let mut locals = std::mem::take(&mut self.locals);
        let mut io = |i: u32| std::mem::take(&mut locals[i as usize].io);
        for (f, mut by_path) in files.into_iter().zip(std::mem::take(&mut self.datasets)) {
            match out.datasets.get_mut(&*f) {
                Some(ours) if ours.len() >= by_path.len() => {
                    merge_sorted(ours, by_path_sorted(&mut by_path, &mut io));
                }
                _ => out.merge_file(f.into(), by_path_sorted(&mut by_path, &mut io).collect()),
            }
            self.spare.push(by_path);
        }
        out.merge_sizes(&self.size_ns, &self.size_min_under_ns);
        self.size_ns = Default::default();
        self.size_min_under_ns = Vec::new();
        out.links.merge(self.links.finish());
    }
}

/// The datasets of `by_path` (emptied; `io` takes the facts of an index), sorted by
/// path: what a read's tree is built from ([`BTreeMap`]'s `collect` of sorted input builds
/// full nodes, where one filled in hash order keeps about a third of its room empty, and
/// these trees hold every dataset of a read) or merged with ([`merge_sorted`]). The sort
/// moves 32-byte (path, index) pairs, not (path, `DatasetIo`) pairs of a few hundred
/// bytes each (that sort was ~7 % of a report's CPU on the 10M-record set); paths are
/// unique (hash keys), so an unstable sort gives one order.
fn by_path_sorted<'a>(
    by_path: &mut FxHashMap<CompactString, u32>,
    io: &'a mut impl FnMut(u32) -> DatasetIo,
) -> impl Iterator<Item = (CompactString, DatasetIo)> + 'a {
    let mut order: Vec<(CompactString, u32)> = by_path.drain().collect();
    order.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    order.into_iter().map(move |(p, i)| (p, io(i)))
}

/// Adds datasets sorted by path ([`by_path_sorted`]) to `ours`, as [`merge_datasets`]
/// would: in one walk of both in path order, not a tree search per dataset. A search
/// compares a path with ~30 others that share long prefixes: ~1,800 instructions per
/// dataset, ~85M per trace file of the 10M-record set, where most of a trace file's
/// datasets are already in the read's tree. Datasets `ours` lacks are inserted after
/// the walk.
fn merge_sorted(
    ours: &mut BTreeMap<CompactString, DatasetIo>,
    sorted: impl IntoIterator<Item = (CompactString, DatasetIo)>,
) {
    let mut new = Vec::new();
    let mut at = ours.iter_mut().peekable();
    for (k, v) in sorted {
        while at.next_if(|(o, _)| o.as_str() < k.as_str()).is_some() {}
        match at.peek_mut() {
            Some((o, d)) if o.as_str() == k.as_str() => d.merge(v),
            _ => new.push((k, v)),
        }
    }
    ours.extend(new);
}

/// The number of elements of a `dims` text (`100x10` → 1000); `None` when empty or not
/// numeric.
pub(crate) fn dims_elems(dims: &str) -> Option<u64> {
    if dims.is_empty() {
        return None;
    }
    dims.split('x')
        .map(|d| d.trim().parse::<u64>().ok())
        .try_fold(1u64, |a, d| d.map(|d| a.saturating_mul(d)))
}

/// Part `i` of a `cache` field (`nslots:nbytes:w0`, [`crate::aggregate::FileAccess`] and
/// dataset rows); a part left to the file (`-`) or missing reads as 0.
pub fn cache_part(cache: &str, i: usize) -> u64 {
    cache
        .split(':')
        .nth(i)
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_of_boxes() {
        let mut s = String::new();
        assert!(bbox_shape("0:99x10:19", &mut s).is_some());
        assert_eq!(s, "100x10");
        assert!(bbox_shape("5:5", &mut s).is_some());
        assert_eq!(s, "1");
        assert!(bbox_shape("", &mut s).is_none());
        assert!(bbox_shape("9:1", &mut s).is_none());
    }

    fn rec<'a>(op: &'a str, bbox: &'a str, conv: u8) -> RecordRef<'a> {
        RecordRef {
            op,
            kind: "dataset",
            file: "f.h5",
            path: "/d",
            bytes: 4096,
            file_bytes: 2048,
            total_ns: 10,
            sel: "hyperslab",
            blocks: 1,
            npoints: 1024,
            bbox,
            conv,
            ..Default::default()
        }
    }

    #[test]
    fn re_reads_count_until_a_write_and_conversions_are_summed() {
        let mut r = Recorder::default();
        let read = OpClass::DataRead;
        for bbox in ["0:9x0:9", "10:19x0:9", "0:9x0:9", "0:9x0:9"] {
            r.add(&rec("dataset.read", bbox, 0), read);
        }
        // A write makes the next read of the same box a fresh one.
        r.add(&rec("dataset.write", "0:9x0:9", 1), OpClass::DataWrite);
        r.add(&rec("dataset.read", "0:9x0:9", 0), read);
        r.add(&rec("dataset.read", "0:9x0:9", 0), read);
        let dio = r.finish();
        let d = dio.get("f.h5", "/d").unwrap();
        assert_eq!((d.repeat_reads, d.repeat_ns), (3, 30));
        assert_eq!(
            (d.conv_calls, d.conv_bytes, d.conv_file_bytes),
            (1, 4096, 2048)
        );
        let s = d.shapes.get("10x10").unwrap();
        assert_eq!((s.reads, s.writes, s.file_bytes), (6, 1, 7 * 2048));
        // Every access here is 4 KiB: all of the time is in small accesses.
        assert_eq!(dio.small_ns(1 << 20), 70);
        assert_eq!(dio.small_ns(4096), 0);
    }

    #[test]
    fn the_fixed_cost_is_the_least_under_connector_time_of_a_small_call() {
        let small = |under_ns, is_async, bytes| RecordRef {
            under_ns,
            is_async,
            bytes,
            ..rec("dataset.read", "0:9x0:9", 0)
        };
        let part = |recs: &[RecordRef<'_>]| {
            let mut r = Recorder::default();
            for x in recs {
                r.add(x, OpClass::DataRead);
            }
            r.finish()
        };
        // An asynchronous call's hand-off, a call of no bytes and one without an under
        // time do not count; of the rest, the least.
        let mut a = part(&[small(9, 0, 4096), small(2, 1, 4096), small(1, 0, 0)]);
        let b = part(&[small(0, 0, 4096), small(7, 0, 4096), small(3, 0, 2 << 20)]);
        assert_eq!(b.small_call_ns(1 << 20), Some(7));
        // Merged by the least of each size, whichever part comes first.
        let mut c = b.clone();
        c.merge(a.clone());
        a.merge(b);
        assert_eq!(a.size_min_under_ns, c.size_min_under_ns);
        assert_eq!(a.small_call_ns(1 << 20), Some(7));
        // The 2 MiB call is not small, and nothing below 4 KiB had an under time.
        assert_eq!(a.small_call_ns(4 << 20), Some(3));
        assert_eq!(a.small_call_ns(4096), None);
    }

    #[test]
    fn read_boxes_count_each_mpi_process_once_per_selection() {
        let run = |rank: i64, boxes: &[&str]| {
            let mut r = Recorder::default();
            for &b in boxes {
                let rec = RecordRef {
                    rank,
                    ..rec("dataset.read", b, 0)
                };
                r.add(&rec, OpClass::DataRead);
            }
            r.finish()
        };
        let boxes = |dio: &DatasetsIo| dio.get("f.h5", "/d").unwrap().read_boxes.0.clone();
        // Two reads of one box by one process: one process, both reads' bytes and time.
        let mut job = run(0, &["0:9x0:9", "0:9x0:9"]);
        let one = BoxReads {
            procs: 1,
            bytes: 8192,
            ns: 20,
        };
        assert_eq!(boxes(&job)["0:9x0:9"], one);
        // Another rank reads it too, and a box of its own.
        job.merge(run(1, &["0:9x0:9", "10:19x0:9"]));
        let b = boxes(&job);
        let two = BoxReads {
            procs: 2,
            bytes: 12288,
            ns: 30,
        };
        assert_eq!((b["0:9x0:9"], b["10:19x0:9"].procs), (two, 1));
        // A process outside MPI (rank -1) is not part of a job's reads.
        assert!(boxes(&run(-1, &["0:9x0:9"])).is_empty());
        // At most MAX_READ_BOXES boxes per dataset, the first ones.
        let many: Vec<String> = (0..MAX_READ_BOXES + 4)
            .map(|i| format!("{i}:{i}"))
            .collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        let b = boxes(&run(0, &many));
        assert_eq!(b.len(), MAX_READ_BOXES);
        assert!(b.contains_key("0:0") && !b.contains_key(many[MAX_READ_BOXES]));
    }

    /// Records that move among many container files (PyTables' suite: thousands in one
    /// process) are each filed under their own file, in one trace file and in the next
    /// one after `finish_into` (which empties the recorder's table of file numbers).
    #[test]
    fn each_record_is_filed_under_its_own_container_file() {
        let files: Vec<String> = (0..300).map(|i| format!("f{i}.h5")).collect();
        let mut r = Recorder::default();
        let mut out = DatasetsIo::default();
        for _trace_file in 0..2 {
            // Back and forth: every file comes again after all the others.
            for round in 0..3 {
                for (i, f) in files.iter().enumerate() {
                    let x = RecordRef {
                        file: f,
                        total_ns: (i + 1) as u64,
                        ..rec("dataset.create", "", 0)
                    };
                    if round < i % 3 + 1 {
                        r.add(&x, OpClass::Metadata);
                    }
                }
            }
            r.finish_into(&mut out);
        }
        assert_eq!(out.datasets.len(), files.len());
        for (i, f) in files.iter().enumerate() {
            let d = out.get(f, "/d").unwrap();
            let n = 2 * (i % 3 + 1) as u64;
            assert_eq!(
                (d.cost.creates, d.cost.create_ns),
                (n, n * (i + 1) as u64),
                "{f}"
            );
        }
    }

    /// A trace file's facts finished into a read that already holds its datasets (merged
    /// in place) are those facts finished on their own and merged.
    #[test]
    fn finishing_into_a_read_is_merging_the_finished_facts() {
        let feed = |r: &mut Recorder, paths: &[&str]| {
            for &path in paths {
                let x = RecordRef {
                    path,
                    ..rec("dataset.read", "0:9x0:9", 0)
                };
                r.add(&x, OpClass::DataRead);
            }
        };
        let mut r = Recorder::default();
        feed(&mut r, &["/a", "/b", "/c"]);
        let first = r.finish();
        feed(&mut r, &["/b", "/d", "/b"]);
        let second = r.finish();
        let mut merged = first.clone();
        merged.merge(second);
        let mut into = first;
        feed(&mut r, &["/b", "/d", "/b"]);
        r.finish_into(&mut into);
        assert_eq!(into, merged);
        let b = into.get("f.h5", "/b").unwrap();
        assert_eq!((b.cost.xfers, b.repeat_reads), (3, 1));
        assert_eq!(into.get("f.h5", "/d").unwrap().cost.xfers, 1);
        // Bigger files, merged in place (the read holds more datasets than the trace
        // file) or built into a tree (fewer): datasets the read lacks before, between and
        // after the ones it has, prefixes of each other, repeats; every way, the same as
        // merging the finished facts.
        let mut rng = crate::read::test_rng(11);
        for round in 0..40 {
            let names: Vec<String> = (0..1 + rng(300))
                .map(|_| format!("/g{}/d{}", rng(7), "x".repeat(rng(4))))
                .collect();
            let (na, nb) = (rng(400), rng(if round % 2 == 0 { 40 } else { 900 }));
            let a: Vec<&str> = (0..na).map(|_| names[rng(names.len())].as_str()).collect();
            let b: Vec<&str> = (0..nb).map(|_| names[rng(names.len())].as_str()).collect();
            feed(&mut r, &a);
            let first = r.finish();
            feed(&mut r, &b);
            let second = r.finish();
            let mut merged = first.clone();
            merged.merge(second);
            let mut into = first;
            feed(&mut r, &b);
            r.finish_into(&mut into);
            assert_eq!(into, merged, "round {round}");
        }
    }

    /// Adding a row in place is merging its `of_summary`, row after row, whatever the
    /// rows hold.
    #[test]
    fn a_row_added_in_place_is_its_of_summary_merged() {
        let row = |chunk: &str, ftype: &str, cache: &str, stored: u64, fill: &str| {
            h5prov_format::ObjectSummary {
                kind: "dataset".into(),
                file: "f.h5".into(),
                path: "/d".into(),
                chunk: chunk.into(),
                ftype: ftype.into(),
                filters: if stored > 0 {
                    "deflate".into()
                } else {
                    "".into()
                },
                cache: cache.into(),
                stored_bytes: stored,
                fill_time: fill.into(),
                alloc_time: "incr".into(),
                fill: "default".into(),
                ..Default::default()
            }
        };
        let rows = [
            row("32x64", "", "-:2097152:0.75", 50, "alloc"),
            row("", "f64", "9:9:0", 0, ""),
            row("64x64", "f32", "521:1048576:0.75", 100, "ifset"),
            row("", "", "1:1:1", 7, "never"),
        ];
        let mut merged = DatasetIo::default();
        let mut added = DatasetIo::default();
        let mut io = DatasetsIo::default();
        for r in &rows {
            let r = r.borrowed();
            if let Some(d) = DatasetIo::of_summary(&r) {
                merged.merge(d.clone());
                if !io.add_summary_existing(&r) {
                    io.add(r.file, r.path, d);
                }
            }
            if DatasetIo::has_storage(&r) {
                added.add_summary(&r);
            }
        }
        assert_eq!(merged, added);
        assert_eq!(io.get("f.h5", "/d"), Some(&merged));
        assert_eq!(
            (
                merged.chunk.as_str(),
                merged.cache_bytes,
                merged.stored_bytes
            ),
            ("32x64", 2097152, 100)
        );
    }

    #[test]
    fn shapes_keep_the_smallest_whatever_the_merge_order() {
        let one = |k: &str| {
            let mut d = DatasetIo::default();
            d.shapes.entry(k).unwrap().reads = 1;
            d
        };
        let keys: Vec<String> = (0..MAX_SHAPES + 5).map(|i| format!("{:03}", i)).collect();
        let mut a = DatasetIo::default();
        for k in &keys {
            a.merge(one(k));
        }
        let mut b = DatasetIo::default();
        for k in keys.iter().rev() {
            b.merge(one(k));
        }
        assert_eq!(a, b);
        assert_eq!(a.shapes.len(), MAX_SHAPES);
        assert_eq!(a.shapes.iter().next().map(|s| s.0), Some("000"));
    }
}
