//! Objects, by container file then by `kind\0path`: the sorted [`ObjectMap`]s of an
//! [`Aggregate`](super::Aggregate) (with the merge-joins of sorted maps), and the hash
//! [`ObjectTable`] an [`Accumulator`](super::Accumulator) collects them in, sharded by key
//! hash and shared by the workers of one read; the [`Numbering`] of names it and the
//! readers use.

use compact_str::CompactString;
use hashbrown::HashTable;
use rayon::prelude::*;
use rustc_hash::FxHashMap;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

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
pub(super) fn merge_maps<K: Ord, V>(
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
/// nearly always is (the hash tables keep short keys inline too, see `ObjKey`). Its byte order is the order of (`kind`, `path`), because `\0` is the
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
    pub(super) fn merge(&mut self, o: ObjectMap<V>, f: impl FnMut(&mut V, V)) {
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

/// Names numbered in the order they are first seen. The last name looked up is checked
/// first: the records and rows of a file mostly repeat one container file.
#[derive(Debug, Default)]
pub(super) struct Numbering {
    pub(super) names: Vec<Box<str>>,
    index: FxHashMap<Box<str>, u32>,
    last: u32,
}

impl Numbering {
    /// The number of `name`, and whether it was new.
    #[inline]
    pub(super) fn number(&mut self, name: &str) -> (usize, bool) {
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
pub(super) struct ObjectTable<V> {
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

/// The hash of object `kind\0path`, computed once per lookup from its two parts (no key
/// is built to look an object up): it picks the shard ([`shard_of`]) and the bucket in
/// the shard's table. Each record hashed its key twice before (once per shard, once in
/// the table), 3 % of the 10M-record set's CPU.
#[inline]
fn key_hash(kind: &[u8], path: &[u8]) -> u64 {
    use std::hash::Hasher;
    let mut h = rustc_hash::FxHasher::default();
    h.write(kind);
    h.write_u8(0);
    h.write(path);
    h.finish()
}

/// [`key_hash`] of a stored key.
#[inline]
fn stored_hash(k: &ObjKey) -> u64 {
    let b = k.as_bytes();
    let (cut, p) = key_cut(b);
    key_hash(&b[..cut], &b[p..])
}

/// Whether stored key `k` is `kind\0path`.
#[inline]
fn key_matches(k: &ObjKey, kind: &[u8], path: &[u8]) -> bool {
    let k = k.as_bytes();
    k.len() == kind.len() + 1 + path.len()
        && k[kind.len()] == 0
        && &k[..kind.len()] == kind
        && &k[kind.len() + 1..] == path
}

/// The shard of a key of hash `h`: bits that the table's bucket index (low bits) and
/// control byte (top 7 bits) do not use.
#[inline]
fn shard_of(h: u64) -> usize {
    (h >> 32) as usize % SHARDS
}

/// Locks `m`; a lock poisoned by a panicking worker still holds consistent sums (every
/// update is a few additions), and the panic is reported by rayon anyway.
#[inline]
pub(super) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Longest `kind\0path` an [`ObjKey`] holds inline.
const INLINE_KEY: usize = 30;

/// An object's `kind\0path` in an accumulator's hash table: inline when it fits (nearly
/// always), so a probe compares bytes in the bucket it has just read instead of following
/// a pointer to a separate allocation, and a new object allocates no key. Found by
/// [`key_hash`] of its parts and compared with them ([`key_matches`]), so a lookup needs
/// no key of its own.
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
/// Also the dataset recorder's per-file values ([`super::dataset_io::Recorder`]).
#[derive(Debug)]
pub(super) struct Chunked<V> {
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
    pub(super) fn len(&self) -> usize {
        self.len
    }

    fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub(super) fn push(&mut self, v: V) {
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

/// One file's objects: values in [`Chunked`] vectors, found by `kind\0path` (hashed by
/// [`key_hash`]).
#[derive(Debug)]
struct FileObjects<V> {
    index: HashTable<(ObjKey, u32)>,
    values: Chunked<V>,
}

impl<V> Default for FileObjects<V> {
    fn default() -> Self {
        Self {
            index: HashTable::new(),
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
    pub(super) fn sharing(&self) -> Self {
        Self {
            shared: Arc::clone(&self.shared),
            ..Self::default()
        }
    }

    /// The number of `file`.
    #[inline]
    pub(super) fn file(&mut self, file: &str) -> usize {
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
    pub(super) fn update(&mut self, file: usize, kind: &str, path: &str, f: impl FnOnce(&mut V)) {
        if let Some((lf, ls, li)) = self.last_object {
            if lf == file && key_is(&self.key, kind, path) {
                return f(&mut lock(&self.files[file].shards[ls]).values[li as usize]);
            }
        }
        self.key.clear();
        self.key.push_str(kind);
        self.key.push('\0');
        self.key.push_str(path);
        let (kb, pb) = (kind.as_bytes(), path.as_bytes());
        let h = key_hash(kb, pb);
        let shard = shard_of(h);
        let mut guard = lock(&self.files[file].shards[shard]);
        let fo = &mut *guard;
        let i = match fo.index.find(h, |(k, _)| key_matches(k, kb, pb)) {
            Some(&(_, i)) => i,
            None => {
                let i = fo.values.len() as u32;
                fo.values.push(V::default());
                fo.index
                    .insert_unique(h, (ObjKey::new(self.key.as_bytes()), i), |e| {
                        stored_hash(&e.0)
                    });
                i
            }
        };
        self.last_object = Some((file, shard, i));
        f(&mut fo.values[i as usize]);
    }

    /// Adds another table (nothing when it shares this one's tables); `f` combines the
    /// values of one object. Every handle on `o`'s tables must be done updating.
    pub(super) fn merge(&mut self, o: ObjectTable<V>, f: impl Fn(&mut V, V) + Copy) {
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
    pub(super) fn into_maps(
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
            let h = stored_hash(&k);
            match self.index.find(h, |e| e.0 == k) {
                Some(&(_, i)) => f(&mut self.values[i as usize], v),
                None => {
                    self.index
                        .insert_unique(h, (k, self.values.len() as u32), |e| stored_hash(&e.0));
                    self.values.push(v);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

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
                    let key = ObjKey::new(format!("{k}\0{p}").as_bytes());
                    let h = stored_hash(&key);
                    part.index
                        .insert_unique(h, (key, part.values.len() as u32), |e| stored_hash(&e.0));
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
