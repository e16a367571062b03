//! The homomorphic object tree: one shared, reference-counted state node per real HDF5
//! object, however many wrappers (open handles) and wrap contexts refer to it.
//!
//! - Nodes are keyed by file number and object token ([`Key`]), so two opens of one dataset,
//!   through different paths or hard links, share one node. Files are keyed by file number,
//!   so a file opened twice is one node.
//! - A node holds its file node (`Arc`), so a file's state lives as long as any object in it.
//! - The registry maps keys to `Weak` nodes: lookup is O(1) and the registry never keeps a
//!   node alive. Holders (wrappers, wrap contexts) let go of a node through [`release`], the
//!   explicit close path. When an object's last holder goes, its file *parks* the node (at
//!   most [`PARKED`] of them, the first parked let go first), so that a reopen of the
//!   object finds it and goes on counting in it. A node's life ends when the last `Arc`
//!   goes: that of its last holder, or of its file's parked list ([`drain`],
//!   [`end_parked`], an eviction). Its summary is written then, then its file node is
//!   released the same way. `Drop` only removes the registry entry.
//! - The tree owns the counters: [`Node::note_call`] counts a traced call, [`Node::note_open`]
//!   an open. It knows nothing of trace files (the dependency is one way: `trace` uses the
//!   tree).
//! - Counters sit behind a per-node `parking_lot` mutex: uncontended in the common case,
//!   correct when HDF5 is thread-safe or an async connector calls from another thread.

use parking_lot::Mutex;
use rustc_hash::FxHashMap as HashMap;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, OnceLock, Weak};

/// Kind of object a node stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// A file (container).
    File,
    /// A group.
    Group,
    /// A dataset.
    Dataset,
    /// An attribute.
    Attr,
    /// A committed datatype.
    Datatype,
    /// An object of a kind not known at open.
    Object,
    /// An async request.
    Request,
    /// Not tied to an object.
    None,
}

impl Kind {
    /// Name as written in traces.
    pub fn name(self) -> &'static str {
        match self {
            Kind::File => "file",
            Kind::Group => "group",
            Kind::Dataset => "dataset",
            Kind::Attr => "attr",
            Kind::Datatype => "datatype",
            Kind::Object => "object",
            Kind::Request => "request",
            Kind::None => "",
        }
    }

    /// The key of its name for the binary encoder (see [`text_key`]).
    pub fn name_key(self) -> u64 {
        KIND_TEXT_KEYS + self as u64
    }
}

/// Keys that stand for texts in binary trace records
/// ([`BinBlock::put_text`](h5prov_format::BinBlock::put_text)): a key must stand for one
/// text for the life of the process. Below [`KIND_TEXT_KEYS`]: operation names; then the
/// kinds' names; from [`NODE_TEXT_KEYS`]: a node's path and a file's name, each drawn once
/// from a counter (never reused, so never another text).
pub const KIND_TEXT_KEYS: u64 = 1 << 31;
/// The first key [`text_key`] draws.
pub const NODE_TEXT_KEYS: u64 = 1 << 32;
static TEXT_KEYS: AtomicU64 = AtomicU64::new(NODE_TEXT_KEYS);

/// A key no text has had: for a node's path or a file's name.
pub fn text_key() -> u64 {
    TEXT_KEYS.fetch_add(1, Ordering::Relaxed)
}

/// Identity of a real object.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Key {
    /// A file, by HDF5 file number.
    File(u64),
    /// An object with a token, in a file.
    Object(u64, [u8; 16]),
    /// An attribute: its holder's file number and token, and its name.
    Attr(u64, [u8; 16], Box<str>),
    /// An object whose identity could not be determined: never shared.
    Unique(u64),
}

/// Data-I/O details of one dataset or attribute access.
#[derive(Debug, Clone, Copy, Default)]
pub struct Io {
    /// Bytes moved (selected points × memory type size).
    pub bytes: u64,
    /// Memory type size.
    pub type_size: u64,
    /// File dataspace rank.
    pub ndims: u32,
    /// Selected points.
    pub npoints: u64,
    /// Selection kind.
    pub sel: &'static str,
    /// Requested transfer mode.
    pub xfer: &'static str,
    /// Actual transfer mode.
    pub xfer_actual: &'static str,
    /// True for writes.
    pub write: bool,
    /// Memory datatype (`level>=dataset` only).
    pub mem_type: Option<TypeSig>,
    /// 1 when the memory datatype differs from the known file datatype.
    pub conv: u8,
    /// Selected points × file datatype size; 0 when the file datatype is not known.
    pub file_bytes: u64,
    /// Blocks or points of the file selection (`level>=dataset` only).
    pub blocks: u64,
}

/// Per-object counters (the original H5Prov's `cnt_accessed` and friends, now written out).
#[derive(Debug, Clone, Default)]
pub struct Stats {
    /// Create/open calls that returned this object.
    pub opens: u64,
    /// Traced callbacks on this object.
    pub accesses: u64,
    /// Data read calls.
    pub reads: u64,
    /// Data write calls.
    pub writes: u64,
    /// Data bytes read.
    pub bytes_read: u64,
    /// Data bytes written.
    pub bytes_written: u64,
    /// Data bytes read, in the file datatype.
    pub file_bytes_read: u64,
    /// Data bytes written, in the file datatype.
    pub file_bytes_written: u64,
    /// Time in reads, ns.
    pub read_ns: u64,
    /// Time in writes, ns.
    pub write_ns: u64,
    /// First access, ns since the epoch.
    pub first_ns: u64,
    /// Last access, ns since the epoch.
    pub last_ns: u64,
    /// Independent transfers.
    pub ind_io: u64,
    /// Collective transfers.
    pub coll_io: u64,
    /// Requested collective, done otherwise.
    pub broken_coll_io: u64,
    /// Created by this process.
    pub created: bool,
    /// For files: datasets created in it.
    pub dsets_created: u64,
    /// For files: datasets opened in it.
    pub dsets_opened: u64,
    /// For files: groups created in it.
    pub groups_created: u64,
    /// For files: groups opened in it.
    pub groups_opened: u64,
    /// For files: time from first open to last close, ns.
    pub open_ns: u64,
    /// For files: opened with the MPI-IO driver (transfer modes are recorded).
    pub mpio: bool,
    /// For files: the FAPL's `H5Pset_alignment` (threshold, alignment), when known.
    pub align: Option<(u64, u64)>,
    /// For files: the FAPL's low bound of `H5Pset_libver_bounds` (`earliest`, `v18`, ...),
    /// when known: with `earliest` object headers are version 1, whose attributes stay in
    /// the header (no dense attribute storage).
    pub libver: Option<&'static str>,
    /// For files: the `statfs` magic of the file system holding the file, when known.
    pub fs_magic: Option<i64>,
    /// For files: the FAPL's chunk cache (`H5Pset_cache`), `nslots:nbytes:w0`: what every
    /// dataset opened without its own (`H5Pset_chunk_cache` on the DAPL) gets.
    pub chunk_cache: Option<Box<str>>,
    /// For files: identity after the process's first open returned; size and mtime as
    /// that open found the file (before it; 0 when it did not exist).
    pub at_open: Option<FileStat>,
    /// For files: the strongest intent of the process's opens.
    pub intent: Intent,
    /// For filtered datasets: the storage size (`H5Dget_storage_size`) at the last close,
    /// bytes; 0 when not asked.
    pub stored_bytes: u64,
    /// For filtered datasets: [`Stats::writes`] when `stored_bytes` was asked, so a close
    /// with no write since asks again for nothing.
    pub stored_at_writes: Option<u64>,
}

/// What `stat(2)` says of a file: its identity (device, inode), size and modification time.
/// Read once per file create/open and once when the file's row is written, never per call.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FileStat {
    /// `st_dev`.
    pub dev: u64,
    /// `st_ino`.
    pub ino: u64,
    /// `st_size`, bytes.
    pub size: u64,
    /// `st_mtime`, ns since the epoch (0 before it).
    pub mtime_ns: u64,
}

impl FileStat {
    /// `stat(2)` of `path` (following links); `None` when it fails (not a path, gone).
    pub fn of(path: &std::path::Path) -> Option<FileStat> {
        Self::of_born(path).map(|(s, _)| s)
    }

    /// [`FileStat::of`], with the file's birth time in ns since the epoch when the file
    /// system keeps one (`statx`'s `stx_btime`: ext4, XFS, Btrfs, tmpfs; not NFS).
    pub fn of_born(path: &std::path::Path) -> Option<(FileStat, Option<u64>)> {
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::metadata(path).ok()?;
        let born = m
            .created()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .and_then(|d| u64::try_from(d.as_nanos()).ok());
        let mtime_ns = u64::try_from(m.mtime())
            .ok()
            .and_then(|s| s.checked_mul(1_000_000_000))
            .and_then(|ns| ns.checked_add(u64::try_from(m.mtime_nsec()).ok()?))
            .unwrap_or(0);
        Some((
            FileStat {
                dev: m.dev(),
                ino: m.ino(),
                size: m.size(),
                mtime_ns,
            },
            born,
        ))
    }
}

/// How a process opened a file, weakest first: the strongest of its opens is recorded.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum Intent {
    /// Not known (a node made by a query, not an open).
    #[default]
    Unknown,
    /// `H5Fopen` read-only.
    ReadOnly,
    /// `H5Fopen` with `H5F_ACC_RDWR`.
    ReadWrite,
    /// `H5Fcreate` of a file that did not exist.
    Create,
    /// `H5Fcreate` over an existing file (`H5F_ACC_TRUNC`): its earlier content is gone.
    Truncate,
}

impl Intent {
    /// The `intent` column's text.
    pub fn name(self) -> &'static str {
        match self {
            Intent::Unknown => "",
            Intent::ReadOnly => "ro",
            Intent::ReadWrite => "rw",
            Intent::Create => "create",
            Intent::Truncate => "truncate",
        }
    }
}

/// The name of a file system from its `statfs` magic (`linux/magic.h`, and the parallel
/// file systems' own: Lustre, GPFS, BeeGFS), into `buf` as hex when unknown.
pub fn fs_name(magic: i64, buf: &mut [u8; 20]) -> &str {
    let known = match magic as u64 & 0xffff_ffff {
        0x0BD0_0BD0 => "lustre",
        0x4750_4653 => "gpfs",
        0x1983_0326 => "beegfs",
        0x6969 => "nfs",
        0xFF53_4D42 => "cifs",
        0x6573_5546 => "fuse",
        0xEF53 => "ext4",
        0x5846_5342 => "xfs",
        0x9123_683E => "btrfs",
        0x0102_1994 => "tmpfs",
        0x794C_7630 => "overlayfs",
        0x2FC1_2FC1 => "zfs",
        0x00C3_6400 => "cephfs",
        _ => "",
    };
    if !known.is_empty() {
        return known;
    }
    let len = buf.len();
    let mut rest = &mut buf[..];
    let _ = std::io::Write::write_fmt(
        &mut rest,
        format_args!("0x{:x}", magic as u64 & 0xffff_ffff),
    );
    let n = len - rest.len();
    std::str::from_utf8(&buf[..n]).unwrap_or("")
}

/// Shape of a dataset, known at create or first open.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Shape {
    /// Current dimensions.
    pub dims: Vec<u64>,
    /// Element size in bytes.
    pub type_size: u64,
    /// Layout name.
    pub layout: &'static str,
    /// File datatype, when known (datasets; attributes created by this process).
    pub ftype: Option<TypeSig>,
    /// Chunk dimensions, empty unless chunked.
    pub chunk: Vec<u64>,
    /// Filter pipeline, e.g. `shuffle+deflate(6)`.
    pub filters: Box<str>,
    /// Fill time name, or empty.
    pub fill_time: &'static str,
    /// Allocation time name, or empty.
    pub alloc_time: &'static str,
    /// Fill value status (`default`, `user`, `undefined`), or empty.
    pub fill: &'static str,
    /// Chunk cache set on the DAPL of the open that made the state node, `nslots:nbytes:w0`
    /// (not per file: each open has its own DAPL), or empty.
    pub cache: Box<str>,
}

/// The compact signature of a datatype: what decides whether HDF5 converts between two
/// atomic types (class, size, byte order, sign; variable-length strings).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TypeSig {
    /// `H5T_class_t` (0 integer, 1 float, ..., 11 complex in HDF5 2.x).
    pub class: i8,
    /// `H5T_order_t` for the numeric classes and enums (0 le, 1 be, 2 vax, 3 mixed,
    /// 4 none), else -1.
    pub order: i8,
    /// `H5T_sign_t` for integers (0 unsigned, 1 two's complement), else -1.
    pub sign: i8,
    /// A variable-length string.
    pub vstr: bool,
    /// Size in bytes.
    pub size: u64,
    /// For compounds, a digest of the member layout (each member's name, offset and class,
    /// whatever the members' order, as HDF5 matches members by name): two compounds of one
    /// size with the same members at other offsets differ here, and HDF5 converts between
    /// them member by member. 0 for the other classes.
    pub members: u64,
}

impl TypeSig {
    /// The short name written in traces (`float64le`, `int32be`, `uint8`, `string16`,
    /// `vstring`, `compound24`, `enum4le`, ...) into `buf`, without allocating.
    pub fn name<'b>(&self, buf: &'b mut [u8; 40]) -> &'b str {
        self.common_name().unwrap_or_else(|| self.format_name(buf))
    }

    /// The name of the usual integer and floating-point types, without formatting (a
    /// traced transfer names its memory type; formatting it cost ~220 instructions).
    fn common_name(&self) -> Option<&'static str> {
        Some(match (self.class, self.sign, self.size, self.order) {
            (0, 0, 1, _) => "uint8",
            (0, 1, 1, _) => "int8",
            (0, 0, 2, 0) => "uint16le",
            (0, 0, 2, 1) => "uint16be",
            (0, 1, 2, 0) => "int16le",
            (0, 1, 2, 1) => "int16be",
            (0, 0, 4, 0) => "uint32le",
            (0, 0, 4, 1) => "uint32be",
            (0, 1, 4, 0) => "int32le",
            (0, 1, 4, 1) => "int32be",
            (0, 0, 8, 0) => "uint64le",
            (0, 0, 8, 1) => "uint64be",
            (0, 1, 8, 0) => "int64le",
            (0, 1, 8, 1) => "int64be",
            (1, _, 2, 0) => "float16le",
            (1, _, 2, 1) => "float16be",
            (1, _, 4, 0) => "float32le",
            (1, _, 4, 1) => "float32be",
            (1, _, 8, 0) => "float64le",
            (1, _, 8, 1) => "float64be",
            _ => return None,
        })
    }

    /// [`name`](TypeSig::name), formatted.
    fn format_name<'b>(&self, buf: &'b mut [u8; 40]) -> &'b str {
        // Numbers in bits for the numeric classes, in bytes for the others.
        let (stem, bits, ordered) = match self.class {
            0 if self.sign == 0 => ("uint", true, true),
            0 => ("int", true, true),
            1 => ("float", true, true),
            2 => ("time", true, true),
            3 if self.vstr => ("vstring", false, false),
            3 => ("string", false, false),
            4 => ("bitfield", true, true),
            5 => ("opaque", false, false),
            6 => ("compound", false, false),
            7 => ("reference", false, false),
            8 => ("enum", false, true),
            9 => ("vlen", false, false),
            10 => ("array", false, false),
            11 => ("complex", true, true),
            _ => ("unknown", false, false),
        };
        let mut n = 0;
        let mut put = |s: &[u8]| {
            let take = s.len().min(buf.len() - n);
            buf[n..n + take].copy_from_slice(&s[..take]);
            n += take;
        };
        put(stem.as_bytes());
        if !(self.class == 3 && self.vstr) {
            let size = if bits {
                self.size.saturating_mul(8)
            } else {
                self.size
            };
            put(itoa::Buffer::new().format(size).as_bytes());
        }
        if ordered && self.size > 1 {
            put(match self.order {
                0 => b"le",
                1 => b"be",
                2 => b"vax",
                3 => b"mixed",
                _ => b"",
            });
        }
        std::str::from_utf8(&buf[..n]).unwrap_or("")
    }
}

impl Shape {
    /// Number of elements in the extent.
    pub fn npoints(&self) -> u64 {
        self.dims.iter().product()
    }
}

/// One state node.
#[derive(Debug)]
pub struct Node {
    /// Kind of object.
    pub kind: Kind,
    /// Identity in the registry.
    pub key: Key,
    /// The file node (`None` for files and unattached objects).
    pub file: Option<Arc<Node>>,
    /// File name of the container.
    pub file_name: Arc<str>,
    /// Path within the file (first path it was reached through), or an anonymous
    /// object's label, `(anonymous #N of pid P)`: see [`Node::path`].
    path: Box<str>,
    /// The key of `path` for the binary encoder ([`text_key`]).
    path_key: u64,
    /// Whether the object was created without a name (`H5Dcreate_anon`, `H5Gcreate_anon`,
    /// `H5Tcommit_anon`): `path` is its label until a link names it.
    anonymous: bool,
    /// The name an anonymous object got from its first link ([`Node::name_anonymous`]),
    /// and its key.
    linked: OnceLock<(Box<str>, u64)>,
    /// The key of `file_name` for the binary encoder: its file node's, when it shares
    /// that node's name.
    pub file_key: u64,
    /// Counters.
    pub stats: Mutex<Stats>,
    /// Dataset shape, when known.
    pub shape: Mutex<Option<Shape>>,
    /// For files: shapes of the datasets seen in this file, by token, so reopening a
    /// dataset costs no shape query (bounded by the datasets of the file; freed with it,
    /// and emptied whenever its parked objects are let go for a delete: see
    /// `ffi::drain_parked`).
    pub shapes: Mutex<HashMap<[u8; 16], Shape>>,
    /// For files: objects of this file whose last handle closed, the first parked first,
    /// kept alive so that a reopen finds them ([`release`]); at most [`PARKED`].
    pub parked: Mutex<VecDeque<Arc<Node>>>,
    /// Whether its file's `parked` holds this node; read and written under that lock, so
    /// that a close of a parked object needs no search of the list.
    in_parked: AtomicBool,
    /// For files created or opened asynchronously: the description of the file (its
    /// FAPL's properties, `statfs`, identity) left for later, off the call's issue path
    /// ([`Node::defer_description`]).
    deferred: Mutex<DeferredSlot>,
    /// Set by [`release`] before the node is dropped: a node dropped without it was let go
    /// outside the close path and had no summary written ([`unreleased_nodes`]).
    released: bool,
}

/// Work on a node left for later by [`Node::defer_description`].
pub type Deferred = Box<dyn FnOnce(&Node) + Send>;

/// A node's [`Deferred`] work, if any.
#[derive(Default)]
struct DeferredSlot(Option<Deferred>);

impl std::fmt::Debug for DeferredSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() { "Some(..)" } else { "None" })
    }
}

/// How many closed objects a file keeps parked. A program that reopens an object after
/// closing it (h5py's `f["x"][i]` opens and closes `x` on every access; PyTables and
/// netCDF open an object's attributes by name, one after another, on every access) finds
/// its node again: no new node, no shape queries (a dataset's creation property list copy
/// is about 22,000 instructions), and one summary row for the whole run of opens instead
/// of one per open. With four, PyTables' attributes were evicted before their next open,
/// and most of its objects files' rows repeated an earlier one. A parked node is about a
/// kilobyte: this bounds a file's parked memory at about a megabyte.
pub const PARKED: usize = 1024;

static REGISTRY: LazyLock<Mutex<HashMap<Key, Weak<Node>>>> =
    LazyLock::new(|| Mutex::new(HashMap::default()));
static UNIQUE: AtomicU64 = AtomicU64::new(1);
/// The number of the next anonymous object's label.
static ANONYMOUS: AtomicU64 = AtomicU64::new(1);
static UNRELEASED: AtomicU64 = AtomicU64::new(0);
static LIVE: AtomicU64 = AtomicU64::new(0);

/// An object's file number and token.
type Identity = (u64, [u8; 16]);

/// What names resolve to: for each (location object, name) an open by name went through,
/// the file number and token it found. An open of a name found here, in the same
/// generation, takes its identity from it instead of asking the under connector (an
/// `H5VLobject_get` of the object's info, ~1,700-2,100 instructions with the object
/// header's cache lookup, on every reopen of `/data` in a loop).
///
/// It is right only while no name can have changed. Every callback that may change what a
/// name resolves to (links created, copied, moved or deleted, objects copied, reference
/// counts, mounts, file open/close, refreshes, and every `optional` callback of files,
/// groups, links and objects: see `ffi::may_rename` and `ffi::specific_may_rename`) calls
/// [`names_changed`] before and after it, which empties the whole table; an open reads
/// [`names_generation`] before its under call and uses or fills the table only if that
/// generation is still current after it. Only
/// results in the location's own file are kept: a name through an external link or a
/// mount point reaches a file that may be closed and reopened under a new file number
/// without any callback of ours. Names changed outside h5prov (another process writing
/// the file, which HDF5 itself does not see either while the file is open, or a second
/// handle on the same file opened without h5prov in this process) are not seen.
struct Names {
    /// The generation the entries belong to.
    generation: u64,
    /// By location object, then by name.
    map: HashMap<Key, HashMap<Box<str>, Identity>>,
    /// Names held, over all locations.
    len: usize,
}

/// At most this many names are remembered; the table is emptied when it is full (bounded
/// memory for a program that opens millions of names once each).
const NAMES_MAX: usize = 4096;

static NAMES_GENERATION: AtomicU64 = AtomicU64::new(0);
static NAMES: LazyLock<Mutex<Names>> = LazyLock::new(|| {
    Mutex::new(Names {
        generation: 0,
        map: HashMap::default(),
        len: 0,
    })
});

/// The current generation of `Names`: read before the under call of an open by name.
pub fn names_generation() -> u64 {
    NAMES_GENERATION.load(Ordering::Acquire)
}

/// Some name may change, or may have changed: every remembered name is forgotten.
pub fn names_changed() {
    NAMES_GENERATION.fetch_add(1, Ordering::AcqRel);
}

/// The names table of `generation`, emptied if it held an older one; `None` if a name may
/// have changed since `generation` was read, or the table is busy (another thread, or a
/// thread that held it at `fork()`: never wait for it).
fn names_at(generation: u64) -> Option<parking_lot::MutexGuard<'static, Names>> {
    let mut names = NAMES.try_lock()?;
    if names_generation() != generation {
        return None;
    }
    if names.generation != generation {
        names.generation = generation;
        names.map.clear();
        names.len = 0;
    }
    Some(names)
}

/// The file number and token that `name`, opened at the object `at`, resolved to in
/// `generation` (see `Names`).
pub fn resolved_name(generation: u64, at: &Key, name: &str) -> Option<Identity> {
    let names = names_at(generation)?;
    names.map.get(at)?.get(name).copied()
}

/// Remembers that `name`, opened at the object `at` (a file or an object with a token),
/// resolved to `identity` in `generation`. Results in another file are not kept.
pub fn remember_name(generation: u64, at: &Key, name: &str, identity: Identity) {
    let same_file = match at {
        Key::File(f) | Key::Object(f, _) => *f == identity.0,
        _ => false,
    };
    if !same_file {
        return;
    }
    if let Some(mut names) = names_at(generation) {
        if names.len >= NAMES_MAX {
            names.map.clear();
            names.len = 0;
        }
        let at_names = names.map.entry(at.clone()).or_default();
        let added = at_names.insert(Box::from(name), identity).is_none();
        names.len += usize::from(added);
    }
}

/// In a forked child: every object's counters start again at zero, so the child's summary
/// rows count only the child's accesses (the parent writes its own). Nodes whose lock another
/// thread held at `fork()` (a lock that thread can never release in the child) are skipped.
pub fn forget_counts_after_fork() {
    // The parent goes on with the same files and may change their names.
    names_changed();
    let Some(reg) = REGISTRY.try_lock() else {
        return;
    };
    for node in reg.values().filter_map(Weak::upgrade) {
        if let Some(mut st) = node.stats.try_lock() {
            *st = Stats {
                mpio: st.mpio,
                align: st.align,
                libver: st.libver,
                fs_magic: st.fs_magic,
                chunk_cache: st.chunk_cache.clone(),
                at_open: st.at_open,
                intent: st.intent,
                ..Stats::default()
            };
        }
    }
}

/// Number of state nodes alive (for leak tests and the `H5close` check).
pub fn live_nodes() -> u64 {
    LIVE.load(Ordering::Relaxed)
}

/// Nodes dropped without going through [`release`] (a holder let go outside the close
/// path: their summary row is missing). Always 0 unless h5prov has a bug; the leak check
/// at terminate reports it, and the tests require 0.
pub fn unreleased_nodes() -> u64 {
    UNRELEASED.load(Ordering::Relaxed)
}

/// The explicit close path: a holder lets go of `node`.
///
/// - An object of a file (not a file, not a node with a unique key) whose last holder this
///   was is *parked*: its file keeps it, and a reopen of the same object finds it in the
///   registry and goes on counting in it. The first parked of more than [`PARKED`] is let
///   go, as is every parked object of a file when its handle closes ([`drain`]), when a
///   link or reference count changes there (a deleted object's token can be reused), and
///   at the end ([`drain_all`]).
/// - Otherwise, if this was the last holder, `summary` gets the node (its summary row is
///   written now) and then its file node is released the same way; if not, nothing
///   happens.
pub fn release(node: Arc<Node>, summary: &mut dyn FnMut(&Node)) {
    let Some(file) = parking_file(&node) else {
        return finish(node, summary);
    };
    let evicted = {
        let mut p = file.parked.lock();
        if node.in_parked.load(Ordering::Relaxed) {
            // Parked already (reopened, and now closed again). Our reference goes while
            // the lock is held, so an eviction that follows finds the parked one the last.
            drop(node);
            return;
        }
        if Arc::strong_count(&node) > 1 {
            // Other holders: the last of them parks it (into_inner, not a count, decides
            // who is last).
            drop(p);
            return finish(node, summary);
        }
        node.in_parked.store(true, Ordering::Relaxed);
        p.push_back(node);
        if p.len() > PARKED {
            p.pop_front()
                .inspect(|e| e.in_parked.store(false, Ordering::Relaxed))
        } else {
            None
        }
    };
    if let Some(e) = evicted {
        finish(e, summary);
    }
}

/// The file whose parked list `node` goes to when its last holder lets go, if it is parked
/// at all.
fn parking_file(node: &Node) -> Option<Arc<Node>> {
    match (&node.key, node.kind) {
        (Key::Unique(_), _) | (_, Kind::File | Kind::Request | Kind::None) => None,
        _ => node.file.clone(),
    }
}

/// Lets go of every object parked in `file` (its handle closes, or an object in it may
/// have been deleted), the first closed first: their summary rows are written now.
pub fn drain(file: &Node, summary: &mut dyn FnMut(&Node)) {
    let nodes = std::mem::take(&mut *file.parked.lock());
    for n in nodes {
        n.in_parked.store(false, Ordering::Relaxed);
        finish(n, summary);
    }
}

/// Ends the life of a parked `node` now (its row is written, unless another handle
/// holds it too), instead of letting a reopen go on counting in it. `Err(node)` when it
/// was not parked.
pub fn end_parked(node: Arc<Node>, summary: &mut dyn FnMut(&Node)) -> Result<(), Arc<Node>> {
    let Some(file) = node.file.clone() else {
        return Err(node);
    };
    {
        let mut p = file.parked.lock();
        let Some(i) = p.iter().position(|x| Arc::ptr_eq(x, &node)) else {
            drop(p);
            return Err(node);
        };
        node.in_parked.store(false, Ordering::Relaxed);
        // The parked reference goes while the lock is held (see `release`).
        drop(p.remove(i));
    }
    finish(node, summary);
    Ok(())
}

/// [`drain`] for every file, then the files themselves when nothing else holds them (at
/// the end of the session, before its files are closed).
pub fn drain_all(summary: &mut dyn FnMut(&Node)) {
    let files: Vec<Arc<Node>> = REGISTRY
        .lock()
        .iter()
        .filter(|(k, _)| matches!(k, Key::File(_)))
        .filter_map(|(_, w)| w.upgrade())
        .collect();
    for f in files {
        drain(&f, summary);
        finish(f, summary);
    }
}

/// The last holder's part of [`release`]: the summary, then the file node's release.
fn finish(node: Arc<Node>, summary: &mut dyn FnMut(&Node)) {
    let mut next = Some(node);
    while let Some(n) = next.take() {
        let Some(mut n) = Arc::into_inner(n) else {
            return;
        };
        summary(&n);
        n.released = true;
        next = n.file.take();
    }
}

/// A key that is never shared.
pub fn unique_key() -> Key {
    Key::Unique(UNIQUE.fetch_add(1, Ordering::Relaxed))
}

/// What to build when a key is not in the registry yet.
pub struct NewNode<'a> {
    /// Kind.
    pub kind: Kind,
    /// File node of the new object.
    pub file: Option<Arc<Node>>,
    /// Container file name.
    pub file_name: Arc<str>,
    /// Path.
    pub path: &'a str,
    /// Created without a name: the node gets a label of its own instead of `path` (the
    /// path of the location it was created at), until a link names it.
    pub anonymous: bool,
}

/// Finds the node for `key`, or creates it. Returns the node and whether it was created.
pub fn lookup_or_insert(key: Key, new: NewNode<'_>) -> (Arc<Node>, bool) {
    let mut reg = REGISTRY.lock();
    if !matches!(key, Key::Unique(_)) {
        if let Some(node) = reg.get(&key).and_then(Weak::upgrade) {
            return (node, false);
        }
    }
    let file_key = match &new.file {
        Some(f) if Arc::ptr_eq(&f.file_name, &new.file_name) => f.file_key,
        _ => text_key(),
    };
    let path = if new.anonymous {
        anonymous_label()
    } else {
        new.path.into()
    };
    let node = Arc::new(Node {
        kind: new.kind,
        key: key.clone(),
        file: new.file,
        file_name: new.file_name,
        path,
        path_key: text_key(),
        anonymous: new.anonymous,
        linked: OnceLock::new(),
        file_key,
        stats: Mutex::new(Stats::default()),
        shape: Mutex::new(None),
        shapes: Mutex::new(HashMap::default()),
        parked: Mutex::new(VecDeque::new()),
        in_parked: AtomicBool::new(false),
        deferred: Mutex::new(DeferredSlot::default()),
        released: false,
    });
    LIVE.fetch_add(1, Ordering::Relaxed);
    if !matches!(key, Key::Unique(_)) {
        reg.insert(key, Arc::downgrade(&node));
    }
    (node, true)
}

/// Finds or creates the node of a file (files are roots: no file node, path `/`).
pub fn file_node(key: Key, file_name: &str) -> Arc<Node> {
    lookup_or_insert(
        key,
        NewNode {
            kind: Kind::File,
            file: None,
            file_name: Arc::from(file_name),
            path: "/",
            anonymous: false,
        },
    )
    .0
}

/// A new anonymous object's label, `(anonymous #N of pid P)`: N counts the anonymous objects
/// of the process, and the pid keeps two processes' labels apart when the analyzer adds
/// up the objects of a file.
fn anonymous_label() -> Box<str> {
    let n = ANONYMOUS.fetch_add(1, Ordering::Relaxed);
    format!("(anonymous #{n} of pid {})", std::process::id()).into_boxed_str()
}

/// Joins a parent path and a link name into an object path.
pub fn join_path(parent: &str, name: &str) -> String {
    if name.starts_with('/') {
        return name.to_string();
    }
    if name == "." || name.is_empty() {
        return parent.to_string();
    }
    let mut p = String::with_capacity(parent.len() + name.len() + 1);
    p.push_str(parent.trim_end_matches('/'));
    p.push('/');
    p.push_str(name);
    p
}

impl Node {
    /// Whether one holder alone holds this node (the parked list's reference apart): for a
    /// dataset, that one handle is open on it. Another thread's holder that comes or goes
    /// meanwhile is not seen.
    pub fn held_only_by_one(self: &Arc<Self>) -> bool {
        let parked = usize::from(self.in_parked.load(Ordering::Relaxed));
        Arc::strong_count(self) <= 1 + parked
    }

    /// Leaves `f` to describe this node later: when the asynchronous operation that made
    /// it completes, or at the latest before its summary row is written
    /// ([`Node::describe_deferred`]). A second deferral replaces nothing: it runs at once.
    pub fn defer_description(&self, f: Deferred) {
        let mut d = self.deferred.lock();
        if d.0.is_none() {
            d.0 = Some(f);
        } else {
            drop(d);
            f(self);
        }
    }

    /// Runs the work left by [`Node::defer_description`], once; nothing when none is left.
    pub fn describe_deferred(&self) {
        let f = self.deferred.lock().0.take();
        if let Some(f) = f {
            f(self);
        }
    }

    /// The object's path: the first one it was reached through; for an object created
    /// without a name, its label until its first link and then that link's path.
    #[inline]
    pub fn path(&self) -> &str {
        match self.linked.get() {
            Some((p, _)) => p,
            None => &self.path,
        }
    }

    /// The key of [`path`](Node::path) for the binary encoder ([`text_key`]).
    #[inline]
    pub fn path_key(&self) -> u64 {
        match self.linked.get() {
            Some((_, k)) => *k,
            None => self.path_key,
        }
    }

    /// Gives an anonymous object the name `path` of a link just made to it, unless it has
    /// one (a second link adds a name; the first stays). Returns the label its earlier
    /// records carry, when this named it.
    pub fn name_anonymous(&self, path: &str) -> Option<&str> {
        if !self.anonymous {
            return None;
        }
        self.linked
            .set((path.into(), text_key()))
            .ok()
            .map(|()| &*self.path)
    }

    /// Counts one traced call on this object: starting at `start_ns` (epoch ns), lasting
    /// `total_ns`, with HDF5 status `status` and, for data I/O, what it moved (`batch`
    /// datasets shared the call's time).
    pub fn note_call(
        &self,
        start_ns: u64,
        total_ns: u64,
        status: i32,
        io: Option<&Io>,
        batch: u32,
    ) {
        let mut st = self.stats.lock();
        st.accesses += 1;
        if st.first_ns == 0 {
            st.first_ns = start_ns;
        }
        st.last_ns = start_ns + total_ns;
        let Some(io) = io.filter(|_| status >= 0) else {
            return;
        };
        let share = match batch {
            0 | 1 => total_ns,
            b => total_ns / u64::from(b), // a division costs tens of cycles: only when shared
        };
        if io.write {
            st.writes += 1;
            st.bytes_written += io.bytes;
            st.file_bytes_written += io.file_bytes;
            st.write_ns += share;
        } else {
            st.reads += 1;
            st.bytes_read += io.bytes;
            st.file_bytes_read += io.file_bytes;
            st.read_ns += share;
        }
        // The mode HDF5 actually used, when known (collective requests under a parallel
        // HDF5); otherwise the requested one.
        match (io.xfer, io.xfer_actual) {
            ("collective", "collective" | "") => st.coll_io += 1,
            ("collective", _) => st.broken_coll_io += 1,
            ("independent", _) => st.ind_io += 1,
            // No MPI-IO transfer mode (serial HDF5, or a file not opened with MPI-IO):
            // neither independent nor collective.
            _ => {}
        }
    }

    /// Counts an open (or create, when `created`) that returned this object, and the
    /// dataset or group it is in its file's counters.
    pub fn note_open(&self, created: bool) {
        {
            let mut st = self.stats.lock();
            st.opens += 1;
            st.created |= created;
        }
        if let Some(f) = &self.file {
            let mut fs = f.stats.lock();
            match (self.kind, created) {
                (Kind::Dataset, true) => fs.dsets_created += 1,
                (Kind::Dataset, false) => fs.dsets_opened += 1,
                (Kind::Group, true) => fs.groups_created += 1,
                (Kind::Group, false) => fs.groups_opened += 1,
                _ => {}
            }
        }
    }

    /// Renders the token part of the key in hex (`fileno:token`, the token's bytes from
    /// the most significant non-zero one; empty for files) into `buf`, without allocating.
    pub fn token_hex<'b>(&self, buf: &'b mut [u8; 52]) -> &'b str {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let (fileno, tok) = match &self.key {
            Key::Object(f, t) | Key::Attr(f, t, _) => (*f, t),
            _ => return "",
        };
        let mut n = 0;
        let digits = (64 - fileno.leading_zeros()).div_ceil(4).max(1);
        for i in (0..digits).rev() {
            buf[n] = HEX[((fileno >> (4 * i)) & 0xf) as usize];
            n += 1;
        }
        buf[n] = b':';
        n += 1;
        let start = n;
        for b in tok.iter().rev().skip_while(|b| **b == 0) {
            buf[n] = HEX[usize::from(b >> 4)];
            buf[n + 1] = HEX[usize::from(b & 0xf)];
            n += 2;
        }
        if n == start {
            buf[n] = b'0';
            n += 1;
        }
        std::str::from_utf8(&buf[..n]).unwrap_or("")
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        LIVE.fetch_sub(1, Ordering::Relaxed);
        if !matches!(self.key, Key::Unique(_)) {
            let mut reg = REGISTRY.lock();
            // Remove the entry only if it is ours: a new node for the same key may already
            // have replaced it between our last Arc going and this lock.
            if let Some(w) = reg.get(&self.key) {
                if std::ptr::eq(w.as_ptr(), self) || w.strong_count() == 0 {
                    reg.remove(&self.key);
                }
            }
        }
        if !self.released {
            UNRELEASED.fetch_add(1, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_systems_by_magic() {
        let mut buf = [0u8; 20];
        assert_eq!(fs_name(0x0BD0_0BD0, &mut buf), "lustre");
        assert_eq!(fs_name(0x4750_4653, &mut buf), "gpfs");
        assert_eq!(fs_name(0x1983_0326, &mut buf), "beegfs");
        assert_eq!(fs_name(0xEF53, &mut buf), "ext4");
        // statfs's f_type is signed: a magic with the top bit set comes back negative.
        assert_eq!(fs_name(0xFF53_4D42_u32 as i32 as i64, &mut buf), "cifs");
        assert_eq!(fs_name(0x1234_5678, &mut buf), "0x12345678");
    }

    fn new(kind: Kind, path: &str) -> NewNode<'_> {
        NewNode {
            kind,
            file: None,
            file_name: Arc::from("f.h5"),
            path,
            anonymous: false,
        }
    }

    #[test]
    fn same_key_shares_one_node_and_frees_on_last_drop() {
        let key = Key::Object(7, [1; 16]);
        let before = live_nodes();
        let (a, created_a) = lookup_or_insert(key.clone(), new(Kind::Dataset, "/a"));
        let (b, created_b) = lookup_or_insert(key.clone(), new(Kind::Dataset, "/hardlink"));
        assert!(created_a && !created_b);
        assert!(Arc::ptr_eq(&a, &b));
        assert_eq!(&*b.path, "/a", "the first path is kept");
        assert_eq!(live_nodes(), before + 1);
        drop(a);
        assert_eq!(live_nodes(), before + 1, "still held by b");
        drop(b);
        assert_eq!(live_nodes(), before);
        assert!(REGISTRY.lock().get(&key).is_none(), "entry removed");
        let (_c, created_c) = lookup_or_insert(key, new(Kind::Dataset, "/a"));
        assert!(created_c, "a new node after the old one is gone");
    }

    #[test]
    fn objects_keep_their_file_alive() {
        let (file, _) = lookup_or_insert(Key::File(99), new(Kind::File, "/"));
        let weak = Arc::downgrade(&file);
        let (obj, _) = lookup_or_insert(
            Key::Object(99, [2; 16]),
            NewNode {
                kind: Kind::Group,
                file: Some(file.clone()),
                file_name: file.file_name.clone(),
                path: "/g",
                anonymous: false,
            },
        );
        drop(file);
        assert!(
            weak.upgrade().is_some(),
            "file node alive while an object refers to it"
        );
        drop(obj);
        assert!(weak.upgrade().is_none());
    }

    /// An object of `file` with key `key`.
    fn child(file: &Arc<Node>, key: Key, kind: Kind, path: &str) -> (Arc<Node>, bool) {
        lookup_or_insert(
            key,
            NewNode {
                kind,
                file: Some(file.clone()),
                file_name: file.file_name.clone(),
                path,
                anonymous: false,
            },
        )
    }

    type Seen = Vec<(Kind, String, u64)>;

    /// The tests that park objects, one at a time: `drain_all` lets go of every file's.
    static PARKING: Mutex<()> = Mutex::new(());

    fn sink(seen: &mut Seen) -> impl FnMut(&Node) + '_ {
        |n: &Node| seen.push((n.kind, n.path.to_string(), n.stats.lock().opens))
    }

    #[test]
    fn release_hands_the_last_holders_node_and_then_its_file_to_the_summary_writer() {
        let (file, _) = lookup_or_insert(Key::File(4242), new(Kind::File, "/"));
        // A unique key is never found again, so never parked.
        let (obj, _) = child(&file, unique_key(), Kind::Dataset, "/d");
        obj.note_open(true);
        let second = obj.clone();
        let mut seen = Seen::new();
        release(second, &mut sink(&mut seen));
        release(file, &mut sink(&mut seen));
        release(obj, &mut sink(&mut seen));
        assert_eq!(
            seen,
            vec![(Kind::Dataset, "/d".into(), 1), (Kind::File, "/".into(), 0)],
            "nothing for the first two (not the last holders), then the dataset and its file \
             (whose last holder was the dataset)"
        );
        assert!(REGISTRY.lock().get(&Key::File(4242)).is_none());
    }

    #[test]
    fn a_closed_object_is_parked_and_a_reopen_goes_on_counting_in_it() {
        let _one = PARKING.lock();
        let (file, _) = lookup_or_insert(Key::File(4343), new(Kind::File, "/"));
        let key = Key::Object(4343, [5; 16]);
        let (d, created) = child(&file, key.clone(), Kind::Dataset, "/d");
        assert!(created);
        d.note_open(true);
        let mut seen = Seen::new();
        release(d, &mut sink(&mut seen));
        assert!(seen.is_empty(), "parked, no row yet: {seen:?}");
        // The reopen finds it, twice at once (two handles), and both close.
        let (d, created) = child(&file, key.clone(), Kind::Dataset, "/other-path");
        assert!(!created);
        d.note_open(false);
        let (d2, _) = child(&file, key.clone(), Kind::Dataset, "/d");
        release(d2, &mut sink(&mut seen));
        release(d, &mut sink(&mut seen));
        assert!(seen.is_empty(), "{seen:?}");
        assert_eq!(
            file.parked.lock().len(),
            1,
            "parked once, not once per handle"
        );
        // PARKED other objects closed after it: the oldest, the dataset, goes.
        for i in 0..PARKED {
            let mut token = [0; 16];
            token[..8].copy_from_slice(&(i as u64).to_le_bytes());
            let (g, _) = child(
                &file,
                Key::Object(4343, token),
                Kind::Group,
                &format!("/g{i}"),
            );
            g.note_open(true);
            release(g, &mut sink(&mut seen));
        }
        assert_eq!(
            seen,
            vec![(Kind::Dataset, "/d".into(), 2)],
            "one row for both opens"
        );
        // The file's handle closes: its parked objects first, then the file itself.
        drain(&file, &mut sink(&mut seen));
        release(file, &mut sink(&mut seen));
        assert_eq!(seen.len(), 1 + PARKED + 1, "{seen:?}");
        assert_eq!(seen.last().map(|s| s.0), Some(Kind::File));
        assert!(REGISTRY.lock().get(&key).is_none());
        assert!(REGISTRY.lock().get(&Key::File(4343)).is_none());
    }

    #[test]
    fn the_end_lets_go_of_every_parked_object_and_then_its_file() {
        let _one = PARKING.lock();
        let (file, _) = lookup_or_insert(Key::File(4444), new(Kind::File, "/"));
        let (a, _) = child(
            &file,
            Key::Attr(4444, [1; 16], "a".into()),
            Kind::Attr,
            "/a",
        );
        let mut seen = Seen::new();
        release(a, &mut sink(&mut seen));
        // The file's handle went without a file close (the object kept the file).
        release(file, &mut sink(&mut seen));
        assert!(seen.is_empty(), "{seen:?}");
        drain_all(&mut sink(&mut seen));
        let mine: Vec<_> = seen
            .iter()
            .filter(|s| s.1 == "/a" || s.0 == Kind::File)
            .collect();
        assert_eq!(mine.len(), 2, "{seen:?}");
        assert!(REGISTRY.lock().get(&Key::File(4444)).is_none());
    }

    #[test]
    fn an_anonymous_object_has_a_label_until_its_first_link_names_it() {
        let anon = |n| NewNode {
            anonymous: true,
            ..new(Kind::Dataset, n)
        };
        let (a, _) = lookup_or_insert(Key::Object(77, [3; 16]), anon("/"));
        let (b, _) = lookup_or_insert(Key::Object(77, [4; 16]), anon("/"));
        let label = a.path().to_string();
        assert!(label.starts_with("(anonymous #"), "{label}");
        assert!(label.ends_with(&format!(" of pid {})", std::process::id())));
        assert_ne!(a.path(), b.path(), "two anonymous objects, two labels");
        let key = a.path_key();
        assert_eq!(a.name_anonymous("/a"), Some(label.as_str()));
        assert_eq!(a.path(), "/a");
        assert_ne!(a.path_key(), key, "a new text, a new key");
        assert_eq!(
            a.name_anonymous("/second-link"),
            None,
            "the first name stays"
        );
        assert_eq!(a.path(), "/a");
        // A named object keeps its name.
        let (c, _) = lookup_or_insert(Key::Object(77, [5; 16]), new(Kind::Dataset, "/c"));
        assert_eq!(c.name_anonymous("/other"), None);
        assert_eq!(c.path(), "/c");
    }

    #[test]
    fn unique_keys_are_never_shared() {
        let (a, _) = lookup_or_insert(unique_key(), new(Kind::Object, ""));
        let (b, _) = lookup_or_insert(unique_key(), new(Kind::Object, ""));
        assert!(!Arc::ptr_eq(&a, &b));
    }

    #[test]
    fn concurrent_opens_share_state() {
        let key = Key::Object(5, [9; 16]);
        let nodes: Vec<_> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..8)
                .map(|_| {
                    let key = key.clone();
                    s.spawn(move || {
                        let (n, _) = lookup_or_insert(key, new(Kind::Dataset, "/d"));
                        n.stats.lock().opens += 1;
                        n
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert!(nodes.windows(2).all(|w| Arc::ptr_eq(&w[0], &w[1])));
        assert_eq!(nodes[0].stats.lock().opens, 8);
    }

    #[test]
    fn token_hex_matches_the_formatted_rendering() {
        for (fileno, tok) in [
            (0u64, [0u8; 16]),
            (0x1f, [0; 16]),
            (u64::MAX, [0xff; 16]),
            (7, {
                let mut t = [0; 16];
                t[0] = 0x30;
                t[1] = 0x0b;
                t
            }),
        ] {
            let mut want = format!("{fileno:x}:");
            for b in tok.iter().rev().skip_while(|b| **b == 0) {
                want.push_str(&format!("{b:02x}"));
            }
            if want.ends_with(':') {
                want.push('0');
            }
            let (n, _) = lookup_or_insert(unique_key(), new(Kind::Dataset, "/d"));
            let node = Node {
                kind: Kind::Dataset,
                key: Key::Object(fileno, tok),
                file: None,
                file_name: n.file_name.clone(),
                path: "/d".into(),
                path_key: text_key(),
                anonymous: false,
                linked: OnceLock::new(),
                file_key: n.file_key,
                stats: Mutex::new(Stats::default()),
                shape: Mutex::new(None),
                shapes: Mutex::new(HashMap::default()),
                parked: Mutex::new(VecDeque::new()),
                in_parked: AtomicBool::new(false),
                deferred: Mutex::new(DeferredSlot::default()),
                released: true,
            };
            LIVE.fetch_add(1, Ordering::Relaxed); // dropping `node` counts it out
            let mut buf = [0; 52];
            assert_eq!(node.token_hex(&mut buf), want);
        }
    }

    #[test]
    fn type_names() {
        let sig = |class, order, sign, vstr, size| TypeSig {
            class,
            order,
            sign,
            vstr,
            size,
            members: 0,
        };
        let mut buf = [0; 40];
        for (t, want) in [
            (sig(1, 0, -1, false, 8), "float64le"),
            (sig(1, 1, -1, false, 4), "float32be"),
            (sig(0, 1, 1, false, 4), "int32be"),
            (sig(0, 0, 0, false, 1), "uint8"),
            (sig(0, 0, 1, false, 2), "int16le"),
            (sig(3, -1, -1, false, 16), "string16"),
            (sig(3, -1, -1, true, 8), "vstring"),
            (sig(6, -1, -1, false, 24), "compound24"),
            (sig(8, 0, -1, false, 4), "enum4le"),
            (sig(10, -1, -1, false, 12), "array12"),
            (sig(11, 0, -1, false, 16), "complex128le"),
            (sig(99, -1, -1, false, 3), "unknown3"),
        ] {
            assert_eq!(t.name(&mut buf), want);
        }
        // The table of usual names is what formatting gives.
        for class in 0..2 {
            for sign in -1..2 {
                for order in 0..2 {
                    for size in [1, 2, 4, 8] {
                        let t = sig(class, order, sign, false, size);
                        if let Some(n) = t.common_name() {
                            assert_eq!(n, t.format_name(&mut buf), "{t:?}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn paths() {
        assert_eq!(join_path("/", "a"), "/a");
        assert_eq!(join_path("/g", "d"), "/g/d");
        assert_eq!(join_path("/g", "/abs"), "/abs");
        assert_eq!(join_path("/g", "."), "/g");
    }
}
