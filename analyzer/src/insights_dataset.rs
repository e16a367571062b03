//! Dataset-level insights: chunk size against the access (`chunk_too_small`,
//! `chunk_too_large`), chunk-cache thrashing (`chunk_cache_thrash`), datatype conversion
//! (`datatype_conversion`), re-reading the same selection (`repeated_reads`) and small
//! accesses (`small_io`, `contiguous_small_writes`). `docs/INSIGHTS.md` gives each rule's
//! trigger, thresholds and references.
//!
//! What the rules need beyond the generic aggregate is collected here too: per dataset,
//! from its transfers ([`Recorder`], one per trace file) and from its objects rows
//! ([`DatasetIo::of_summary`]), merged commutatively like the rest of the aggregate
//! ([`DatasetsIo::merge`]).

use crate::aggregate::{FileAccess, SizeHist};
use crate::analysis::Report;
use crate::insights::{severity_for_share, Insight, Level, Thresholds};
use crate::record::{OpClass, RecordRef};
use crate::render::{fmt_bytes, fmt_ns, pct};
use compact_str::CompactString;
use h5prov_format::ObjectSummary;
use rustc_hash::FxHashMap;
use std::collections::{BTreeMap, BTreeSet};

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
    /// File datatype (smallest non-empty).
    pub ftype: CompactString,
    /// Chunk cache bytes in force: the largest over opens, HDF5's default for an open
    /// that left it to the file; 0 when no chunked open was seen.
    pub cache_bytes: u64,
    /// Chunk cache slots, likewise.
    pub cache_slots: u64,
    /// The cost model's facts ([`crate::costmodel`]).
    pub cost: CostFacts,
}

/// What the cost model ([`crate::costmodel`]) needs of one dataset beyond the rules
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
    /// Hyperslab transfers of at least [`crate::costmodel::FRAG_BLOCKS`] blocks.
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
    pub fn of_summary(o: &ObjectSummary) -> Option<DatasetIo> {
        if o.kind != "dataset" || (o.chunk.is_empty() && o.ftype.is_empty()) {
            return None;
        }
        let mut d = DatasetIo {
            chunk: o.chunk.as_str().into(),
            filters: o.filters.as_str().into(),
            ftype: o.ftype.as_str().into(),
            cost: CostFacts {
                fill_time: o.fill_time.as_str().into(),
                alloc_time: o.alloc_time.as_str().into(),
                fill: o.fill.as_str().into(),
                ..Default::default()
            },
            ..Default::default()
        };
        if !o.chunk.is_empty() {
            d.cache_slots = cache_part(&o.cache, 0);
            d.cache_bytes = cache_part(&o.cache, 1);
        }
        Some(d)
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
        keep_smallest(&mut self.ftype, &o.ftype);
        self.cache_bytes = self.cache_bytes.max(o.cache_bytes);
        self.cache_slots = self.cache_slots.max(o.cache_slots);
        self.cost.merge(o.cost);
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
}

/// Adds the datasets of one file into another's.
fn merge_datasets(
    a: &mut BTreeMap<CompactString, DatasetIo>,
    b: BTreeMap<CompactString, DatasetIo>,
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

impl DatasetsIo {
    /// Adds another part (commutative and associative).
    pub fn merge(&mut self, o: DatasetsIo) {
        for (f, theirs) in o.datasets {
            let Some(ours) = self.datasets.get_mut(&f) else {
                self.datasets.insert(f, theirs);
                continue;
            };
            if ours.len() < theirs.len() {
                let small = std::mem::replace(ours, theirs);
                merge_datasets(ours, small);
            } else {
                merge_datasets(ours, theirs);
            }
        }
        add_dense(&mut self.size_ns[0], &o.size_ns[0]);
        add_dense(&mut self.size_ns[1], &o.size_ns[1]);
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
    /// Container files, in the order first seen (a process uses few)...
    files: Vec<Box<str>>,
    /// ...and by that number, their datasets by path.
    datasets: Vec<FxHashMap<CompactString, Local>>,
    /// Emptied tables of earlier trace files, for the next ones.
    spare: Vec<FxHashMap<CompactString, Local>>,
    /// The number of the file of the last transfer.
    last_file: usize,
    shape: String,
    size_ns: [Vec<u64>; 2],
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
        if self
            .files
            .get(self.last_file)
            .is_none_or(|f| **f != *r.file)
        {
            self.last_file = match self.files.iter().position(|f| **f == *r.file) {
                Some(i) => i,
                None => {
                    self.files.push(r.file.into());
                    self.datasets.push(self.spare.pop().unwrap_or_default());
                    self.files.len() - 1
                }
            };
        }
        let by_path = &mut self.datasets[self.last_file];
        if !by_path.contains_key(r.path) {
            by_path.insert(r.path.into(), Local::default());
        }
        by_path.get_mut(r.path).expect("inserted above")
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
        } else if r.blocks >= crate::costmodel::FRAG_BLOCKS
            && matches!(r.sel, "hyperslab" | "irregular")
            // MPI-IO's two-phase I/O aggregates the pieces of collective transfers.
            && (if r.xfer_actual.is_empty() { r.xfer } else { r.xfer_actual }) != "collective"
            && has_box
            // A hyperslab that fills its bounding box is one region however HDF5 counts
            // its blocks (a row selected with count 1000 and block 1 is 1000 "blocks");
            // one with holes is split into pieces at its blocks.
            && crate::insights::dims_elems(&shape).is_some_and(|e| r.npoints < e)
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
        // write to the dataset in between (point selections can differ inside one box).
        if write {
            l.recent.clear();
        } else if !r.bbox.is_empty() && r.sel != "points" {
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
        let mut datasets: BTreeMap<String, BTreeMap<CompactString, DatasetIo>> = BTreeMap::new();
        // Each file once (`files` is unique). Collected, not inserted one by one: a tree
        // built from all its entries at once has full nodes, where one filled in hash
        // order (random) keeps about a third of its room empty, and these trees hold
        // every dataset of a read.
        let files = std::mem::take(&mut self.files);
        for (f, mut by_path) in files.into_iter().zip(std::mem::take(&mut self.datasets)) {
            datasets.insert(f.into(), by_path.drain().map(|(p, l)| (p, l.io)).collect());
            self.spare.push(by_path);
        }
        self.last_file = 0;
        DatasetsIo {
            datasets,
            size_ns: std::mem::take(&mut self.size_ns),
        }
    }
}

// ---------------------------------------------------------------------------------------
// The rules.

fn dims_of(s: &str) -> Option<Vec<u64>> {
    if s.is_empty() {
        return None;
    }
    s.split('x')
        .map(|d| d.trim().parse::<u64>().ok().filter(|&v| v > 0))
        .collect()
}

fn ins(level: Level, code: &str, title: String, detail: String, rec: &str) -> Insight {
    Insight {
        level,
        code: code.into(),
        title,
        detail,
        recommendation: rec.into(),
    }
}

/// One dataset's chunk geometry against its accesses.
struct Geometry<'a> {
    file: &'a str,
    path: &'a str,
    chunk: Vec<u64>,
    chunk_bytes: u64,
    /// Chunks in the dataset.
    nchunks: u64,
    filtered: bool,
    cache_bytes: u64,
    cache_slots: u64,
    io: &'a DatasetIo,
}

/// Per access shape: chunks touched by one access (at least: an access aligned to the
/// chunk grid touches exactly this many), accesses, time and bytes.
struct ShapeCost {
    chunks: u64,
    reads: u64,
    writes: u64,
    ns: u64,
    read_ns: u64,
    write_ns: u64,
    file_bytes: u64,
}

impl Geometry<'_> {
    fn shapes(&self) -> Vec<ShapeCost> {
        self.io
            .shapes
            .iter()
            .filter_map(|(s, v)| {
                let e = dims_of(s)?;
                (e.len() == self.chunk.len()).then(|| ShapeCost {
                    chunks: e
                        .iter()
                        .zip(&self.chunk)
                        .map(|(e, c)| e.div_ceil(*c))
                        .product(),
                    reads: v.reads,
                    writes: v.writes,
                    ns: v.read_ns + v.write_ns,
                    read_ns: v.read_ns,
                    write_ns: v.write_ns,
                    file_bytes: v.file_bytes,
                })
            })
            .collect()
    }
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

fn geometries<'a>(
    rep: &'a Report,
    dio: &'a DatasetsIo,
    files: &BTreeMap<String, FileAccess>,
) -> Vec<Geometry<'a>> {
    // The rows by (file, path): their numbers, sorted (a map of references to every row
    // was a sixth of the analyzer's peak memory on object-heavy runs).
    let key = |i: &u32| {
        let d = &rep.datasets[*i as usize];
        (&*d.file, d.path.as_str())
    };
    let mut rows: Vec<u32> = (0..rep.datasets.len() as u32).collect();
    rows.sort_unstable_by(|a, b| key(a).cmp(&key(b)));
    dio.iter()
        .filter_map(|((f, p), io)| {
            let chunk = dims_of(&io.chunk)?;
            let at = rows.binary_search_by(|i| key(i).cmp(&(f, p))).ok()?;
            let row = &rep.datasets[rows[at] as usize];
            let dims = dims_of(&row.dims)?;
            if dims.len() != chunk.len() || row.type_size == 0 {
                return None;
            }
            let chunk_bytes = chunk.iter().product::<u64>().saturating_mul(row.type_size);
            let file_cache = files.get(f).map_or((0, 0), |a| a.chunk_cache);
            let nchunks = dims
                .iter()
                .zip(&chunk)
                .map(|(d, c)| d.div_ceil(*c))
                .product();
            Some(Geometry {
                file: f,
                path: p,
                chunk,
                chunk_bytes,
                nchunks,
                filtered: !io.filters.is_empty(),
                // The dataset's own (DAPL), else its file's (FAPL), else HDF5's default.
                cache_bytes: [io.cache_bytes, file_cache.1, DEFAULT_CACHE_BYTES]
                    .into_iter()
                    .find(|&v| v > 0)
                    .unwrap_or(DEFAULT_CACHE_BYTES),
                cache_slots: [io.cache_slots, file_cache.0, DEFAULT_CACHE_SLOTS]
                    .into_iter()
                    .find(|&v| v > 0)
                    .unwrap_or(DEFAULT_CACHE_SLOTS),
                io,
            })
        })
        .collect()
}

fn join_top(v: &mut [(u64, String)]) -> String {
    v.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    v.iter()
        .take(5)
        .map(|x| x.1.as_str())
        .collect::<Vec<_>>()
        .join("; ")
}

/// Pushes one finding `code` for `hits` (per object: its time, its evidence) when there
/// are any: severity from the share of HDF5 time their calls take, the five costliest as
/// evidence, `title` given that share.
fn push_weighed(
    out: &mut Vec<Insight>,
    code: &str,
    hits: &mut [(u64, String)],
    call_ns: f64,
    title: impl FnOnce(f64) -> String,
    rec: &str,
) {
    if hits.is_empty() {
        return;
    }
    let share = hits.iter().map(|h| h.0).sum::<u64>() as f64 / call_ns;
    out.push(ins(
        severity_for_share(share),
        code,
        title(share),
        join_top(hits),
        rec,
    ));
}

/// Runs the dataset rules, appending their findings to `out`.
pub fn detect(
    rep: &Report,
    dio: &DatasetsIo,
    files: &BTreeMap<String, FileAccess>,
    th: &Thresholds,
    out: &mut Vec<Insight>,
) {
    let call_ns = rep.run.call_ns.max(1) as f64;
    let geo = geometries(rep, dio, files);

    // Chunks too small for the access.
    let mut hits: Vec<(u64, String)> = Vec::new();
    for g in geo.iter().filter(|g| g.chunk_bytes < CHUNK_SMALL_BYTES) {
        let shapes = g.shapes();
        let (mut n, mut touched, mut ns, mut bytes) = (0u64, 0u64, 0u64, 0u64);
        for s in shapes
            .iter()
            .filter(|s| s.chunks as f64 >= CHUNKS_PER_ACCESS)
        {
            n += s.reads + s.writes;
            touched += s.chunks * (s.reads + s.writes);
            ns += s.ns;
            bytes += s.file_bytes;
        }
        if n > 0 {
            hits.push((
                ns,
                format!(
                    "{}:{} chunk {} ({}): {} access(es) of {} on average touch {} chunks each, {}",
                    g.file,
                    g.path,
                    g.io.chunk,
                    fmt_bytes(g.chunk_bytes),
                    n,
                    fmt_bytes(bytes / n),
                    touched / n,
                    fmt_ns(ns)
                ),
            ));
        }
    }
    push_weighed(
        out,
        "chunk_too_small",
        &mut hits,
        call_ns,
        |share| {
            format!(
                "Chunks below {} make each access touch many chunks ({} of HDF5 time)",
                fmt_bytes(CHUNK_SMALL_BYTES),
                pct(share)
            )
        },
        "Choose chunks of roughly 10 KiB–1 MiB shaped like the accesses (H5Pset_chunk): \
             every chunk costs an index lookup and a separate I/O (and a filter call when \
             compressed). Keep chunks within the chunk cache (H5Pset_chunk_cache).",
    );

    // Chunks too large for the access: filtered chunks that do not fit the cache are read
    // (and decompressed) whole for every access that uses part of them.
    let mut hits: Vec<(u64, String)> = Vec::new();
    for g in geo
        .iter()
        .filter(|g| g.filtered && g.chunk_bytes > g.cache_bytes)
    {
        let (mut n, mut touched, mut ns, mut bytes) = (0u64, 0u64, 0u64, 0u64);
        for s in g.shapes() {
            let used = s.file_bytes as f64
                / ((s.reads + s.writes).max(1) * s.chunks * g.chunk_bytes) as f64;
            if used <= CHUNK_USED_FRACTION {
                n += s.reads + s.writes;
                touched += s.chunks * (s.reads + s.writes);
                ns += s.ns;
                bytes += s.file_bytes;
            }
        }
        if n > 0 {
            hits.push((
                ns,
                format!(
                    "{}:{} chunk {} ({}, {}) over a {} cache: {} access(es) of {} on average \
                     each process whole chunks, {} in all (×{:.0} the data), {}",
                    g.file,
                    g.path,
                    g.io.chunk,
                    fmt_bytes(g.chunk_bytes),
                    g.io.filters,
                    fmt_bytes(g.cache_bytes),
                    n,
                    fmt_bytes(bytes / n),
                    fmt_bytes(touched * g.chunk_bytes),
                    (touched * g.chunk_bytes) as f64 / bytes.max(1) as f64,
                    fmt_ns(ns)
                ),
            ));
        }
    }
    push_weighed(
        out,
        "chunk_too_large",
        &mut hits,
        call_ns,
        |share| {
            format!(
                "Accesses use a small part of large filtered chunks ({} of HDF5 time)",
                pct(share)
            )
        },
        "A filtered chunk is read and decompressed (and on write recompressed) whole; one \
             larger than the chunk cache is never kept, so every access pays for all of it. \
             Make chunks match the access (H5Pset_chunk), or give the dataset a chunk cache \
             that holds them (H5Pset_chunk_cache on the DAPL).",
    );

    // Chunk cache thrashing: each chunk fits the cache, but the chunks one access spans do
    // not, so chunks are evicted before the next access uses them again.
    let mut hits: Vec<(u64, String)> = Vec::new();
    for g in geo.iter().filter(|g| g.chunk_bytes <= g.cache_bytes) {
        for (dir, is_read) in [("read", true), ("write", false)] {
            let (mut n, mut touched, mut ns, mut span) = (0u64, 0u64, 0u64, 0u64);
            let mut all_touched = 0u64;
            for s in g.shapes() {
                let (calls, t) = if is_read {
                    (s.reads, s.read_ns)
                } else {
                    (s.writes, s.write_ns)
                };
                all_touched += s.chunks * calls;
                let over = s.chunks * g.chunk_bytes > g.cache_bytes || s.chunks > g.cache_slots;
                if over && calls > 0 {
                    n += calls;
                    touched += s.chunks * calls;
                    ns += t;
                    span = span.max(s.chunks);
                }
            }
            if n > 0 && all_touched as f64 >= CHUNK_RETOUCH * g.nchunks as f64 {
                hits.push((
                    ns,
                    format!(
                        "{}:{} {dir}s: {} call(s) each span {} chunks of {} ({}) against a \
                         cache of {} in {} slots; {} chunk loads for {} chunks (×{:.1}), {}",
                        g.file,
                        g.path,
                        n,
                        span,
                        g.io.chunk,
                        fmt_bytes(g.chunk_bytes),
                        fmt_bytes(g.cache_bytes),
                        g.cache_slots,
                        touched,
                        g.nchunks,
                        all_touched as f64 / g.nchunks.max(1) as f64,
                        fmt_ns(ns)
                    ),
                ));
            }
        }
    }
    push_weighed(
        out,
        "chunk_cache_thrash",
        &mut hits,
        call_ns,
        |share| {
            format!(
                "The chunk cache cannot hold the chunks an access spans ({} of HDF5 time)",
                pct(share)
            )
        },
        "Chunks are evicted before the next access uses them again, so each is read (and \
             decompressed) many times. Give the dataset a chunk cache that holds a whole row \
             of chunks across the access (H5Pset_chunk_cache(dapl, nslots, nbytes, w0), with \
             nslots a prime about 100 × the chunks it holds), or access along the chunks.",
    );

    // Datatype conversion.
    let mut hits: Vec<(u64, String)> = dio
        .iter()
        .filter(|(_, d)| d.conv_calls > 0)
        .map(|((f, p), d)| {
            let mem: Vec<&str> = d.conv_mem_types.iter().map(String::as_str).collect();
            (
                d.conv_ns,
                format!(
                    "{f}:{p} ({} in the file, {} in memory): {} transfer(s), {} in memory for \
                     {} in the file, {}",
                    if d.ftype.is_empty() { "?" } else { &d.ftype },
                    if mem.is_empty() {
                        "?".to_string()
                    } else {
                        mem.join("/")
                    },
                    d.conv_calls,
                    fmt_bytes(d.conv_bytes),
                    fmt_bytes(d.conv_file_bytes),
                    fmt_ns(d.conv_ns)
                ),
            )
        })
        .collect();
    push_weighed(
        out,
        "datatype_conversion",
        &mut hits,
        call_ns,
        |share| {
            format!(
                "Transfers that convert datatypes take {} of HDF5 time",
                pct(share)
            )
        },
        "Pass the file's datatype as the memory type of H5Dread/H5Dwrite (convert in your \
             own code once, if at all): a conversion runs through HDF5's type-conversion \
             buffer in pieces of H5Pset_buffer's size (1 MiB by default) and prevents \
             collective MPI-IO.",
    );

    // Repeated reads of one selection.
    let mut hits: Vec<(u64, String)> = dio
        .iter()
        .filter(|(_, d)| d.repeat_reads >= REPEAT_MIN)
        .map(|((f, p), d)| {
            (
                d.repeat_ns,
                format!(
                    "{f}:{p}: {} re-read(s) of selections already read, {} in all, {}",
                    d.repeat_reads,
                    fmt_bytes(d.repeat_bytes),
                    fmt_ns(d.repeat_ns)
                ),
            )
        })
        .collect();
    push_weighed(
        out,
        "repeated_reads",
        &mut hits,
        call_ns,
        |share| {
            format!(
                "The same selections are read again and again ({} of HDF5 time)",
                pct(share)
            )
        },
        "Read each selection once and keep it in memory; if re-reading is unavoidable, \
             size the chunk cache (H5Pset_chunk_cache) or the page buffer \
             (H5Pset_page_buffer_size) so repeats are served from memory.",
    );

    small_io(rep, dio, th, call_ns, out);
}

/// `small_io` and `contiguous_small_writes`.
fn small_io(rep: &Report, dio: &DatasetsIo, th: &Thresholds, call_ns: f64, out: &mut Vec<Insight>) {
    let count = |v: &[u64]| v.iter().sum::<u64>();
    let lb = SizeHist::bucket(th.small_io_bytes.next_power_of_two());
    let small_of = |v: &[u64]| v.iter().take(lb).sum::<u64>();
    let a = &rep.access_sizes;
    let n = count(&a.reads) + count(&a.writes);
    let small = small_of(&a.reads) + small_of(&a.writes);
    if n > 0 && small >= SMALL_IO_MIN && small as f64 / n as f64 >= th.small_io_fraction {
        let ns = dio.small_ns(th.small_io_bytes);
        let share = ns as f64 / call_ns;
        out.push(ins(
            severity_for_share(share),
            "small_io",
            format!(
                "{} of dataset accesses are smaller than {} ({} of HDF5 time)",
                pct(small as f64 / n as f64),
                fmt_bytes(th.small_io_bytes),
                pct(share)
            ),
            format!(
                "{small} of {n} dataset reads/writes ({} small reads, {} small writes) take {}",
                small_of(&a.reads),
                small_of(&a.writes),
                fmt_ns(ns)
            ),
            "Read/write larger selections per call (aggregate in memory, or use \
             H5Dwrite_multi/H5Dread_multi); chunk datasets to match the access pattern and size \
             the chunk cache (H5Pset_chunk_cache); under MPI use collective transfers \
             (H5Pset_dxpl_mpio) so MPI-IO can aggregate.",
        ));
    }

    let mut partial: Vec<(u64, String)> = rep
        .datasets
        .iter()
        .filter(|d| {
            d.layout == "contiguous"
                && d.writes >= th.partial_writes
                && d.bytes_written / d.writes.max(1) < th.small_io_bytes
                // Writes of the whole dataset each time are rewrites, not partial writes:
                // no layout merges them (deep_path's fix updates its small datasets whole).
                && !(1..=d.bytes_written / d.writes.max(1))
                    .contains(&crate::costmodel::dataset_bytes(d))
        })
        .map(|d| {
            (
                d.write_ns,
                format!(
                    "{}:{} ({} writes, avg {}, {})",
                    d.file,
                    d.path,
                    d.writes,
                    fmt_bytes(d.bytes_written / d.writes.max(1)),
                    fmt_ns(d.write_ns)
                ),
            )
        })
        .collect();
    if !partial.is_empty() {
        let ns: u64 = partial.iter().map(|p| p.0).sum();
        let share = ns as f64 / call_ns;
        out.push(ins(
            severity_for_share(share),
            "contiguous_small_writes",
            format!(
                "{} contiguous dataset(s) get many small partial writes ({} of HDF5 time)",
                partial.len(),
                pct(share)
            ),
            join_top(&mut partial),
            "Use a chunked layout whose chunks match the write selections (H5Pset_chunk), or \
             buffer the writes and write larger hyperslabs.",
        ));
    }
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
