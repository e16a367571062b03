//! The binary encoding (`format=bin`, `*.trace.bin`, `*.objects.bin`): the coder the
//! record tables' generated `write_bin`/`from_bin` use, and the file header.
//!
//! Layout (`docs/TRACE-FORMAT.md` has it byte by byte):
//!
//! ```text
//! file    = "H5PROVB1" u32le(H) header[H] block*
//! header  = varint(version) varint(len) what[len] varint(ncols) column*ncols
//! column  = type:u8 ('u' unsigned, 'i' signed, 's' text) varint(len) name[len]
//! block   = u32le(0) record*            a zero length starts a block
//! record  = u32le(L) body[L]            L > 0
//! body    = changed[(ncols + 7) / 8] value*
//!           changed: a bitmap, little-endian, bit i = header column i has a value in
//!           this record; a column without one is as in the block's previous record
//!           (at the block's start: 0, or the empty text). Then the values, in header
//!           order:
//!           number: zigzag varint of (value - the column's value in the block's
//!                   previous record), wrapping; the block's first record: of the value
//!           text:   varint 0 = empty, 1 = new: varint(len) UTF-8[len] (it takes the
//!                   block's next id), n >= 2 = the text with id n - 2
//! ```
//!
//! A block is what one write of a thread's buffer holds: blocks of different threads
//! interleave in a file, records within one never do, and each block decodes on its own.
//! Most columns of a record are as in the previous one (rank, pid, file, the data-I/O
//! columns of a call without data): the bitmap leaves them out. Numbers as deltas make the
//! clock, sequence and id columns one to three bytes; text by id writes a file name or a
//! path once per block. A trace record of a metadata-heavy run takes about 22 bytes,
//! against about 200 with plain varints and text.
//!
//! Layout version 2 (h5prov before the bitmap) had no bitmap: every column has a value.
//! Readers read both.
//!
//! Every record is length-prefixed, so a reader tells a record cut short by the end of the
//! file (a process killed while writing) from a corrupt length: the fields of a truncated
//! record run out of bytes, those after a corrupt length do not.

use crate::table::FieldSource;

/// The first eight bytes of a binary trace or objects file.
pub const BIN_MAGIC: &[u8; 8] = b"H5PROVB1";

/// The version of the binary layout, in every binary file's header.
pub const BIN_VERSION: u64 = 3;

/// The oldest binary layout version readers still read (every column has a value: no
/// bitmap).
pub const BIN_VERSION_NO_BITMAP: u64 = 2;

/// The largest record body a reader accepts (a larger length is corrupt).
pub const BIN_MAX_RECORD: u32 = 1 << 24;

/// The largest header a reader accepts.
pub const BIN_MAX_HEADER: u32 = 1 << 20;

/// Type code of an unsigned column (LEB128 varint).
pub const BIN_UNSIGNED: u8 = b'u';
/// Type code of a signed column (zigzag LEB128 varint).
pub const BIN_SIGNED: u8 = b'i';
/// Type code of a text column (varint length, then UTF-8 bytes).
pub const BIN_TEXT: u8 = b's';

/// Appends `v` as an LEB128 varint (7 bits a byte, low bits first, high bit = more).
#[inline(always)]
pub fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    if v < 0x80 {
        out.push(v as u8);
        return;
    }
    let mut b = [0u8; 10];
    let mut n = 0;
    while v >= 0x80 {
        b[n] = v as u8 | 0x80;
        v >>= 7;
        n += 1;
    }
    b[n] = v as u8;
    out.extend_from_slice(&b[..=n]);
}

/// Zigzag: small magnitudes of either sign become small unsigned numbers.
#[inline(always)]
pub fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

/// The inverse of [`zigzag`].
#[inline(always)]
pub fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

/// The most columns a table may have in the binary encoding (the coder keeps one number
/// per column, the bitmap is at most a `u64`).
pub const BIN_MAX_COLUMNS: usize = 64;

/// The bytes of a record's bitmap for a table of `ncols` columns.
pub const fn bin_bitmap_len(ncols: usize) -> usize {
    ncols.div_ceil(8)
}

/// The most bytes a number takes in a record body (a 64-bit varint).
pub const BIN_NUM_ROOM: usize = 10;

/// The size of an encoder's record window: a record whose room fits is built there, with
/// positions masked to the window (the stores need no bounds checks).
pub const BIN_WINDOW: usize = 1024;

/// Where the generated `write_bin` builds a record: the encoder's window, or, for a
/// record whose room does not fit it, a buffer of that room.
pub trait BinBuf: AsMut<[u8]> {
    /// Stores byte `b` at `p`.
    fn put(&mut self, p: usize, b: u8);
    /// Stores `s` at `p..`.
    #[inline(always)]
    fn put_bytes(&mut self, p: usize, s: &[u8]) {
        self.as_mut()[p..p + s.len()].copy_from_slice(s);
    }
    /// The first `n` bytes.
    #[inline(always)]
    fn head(&mut self, n: usize) -> &mut [u8] {
        &mut self.as_mut()[..n]
    }
}

impl BinBuf for [u8; BIN_WINDOW] {
    /// The position masked to the window: no bounds check.
    #[inline(always)]
    fn put(&mut self, p: usize, b: u8) {
        self[p & (BIN_WINDOW - 1)] = b;
    }
}

impl BinBuf for [u8] {
    #[inline(always)]
    fn put(&mut self, p: usize, b: u8) {
        self[p] = b;
    }
}

/// Writes `v` as a varint at `p`; returns where it ends.
#[inline(always)]
fn put_varint_at<B: BinBuf + ?Sized>(buf: &mut B, mut p: usize, mut v: u64) -> usize {
    while v >= 0x80 {
        buf.put(p, v as u8 | 0x80);
        v >>= 7;
        p += 1;
    }
    buf.put(p, v as u8);
    p + 1
}

/// A text the encoder has given an id in its block: its length, its sampled words (the
/// whole text, up to 16 bytes), where its bytes are in the arena.
#[derive(Clone, Copy, Default)]
struct Slot {
    len: usize,
    words: (u64, u64, u64),
    off: usize,
    id: u64,
}

/// Texts remembered at once (a direct-mapped table: a text that loses its slot is written
/// again, with a new id, the next time).
const SLOTS: usize = 256;

/// Keyed texts remembered at once: a two-way set-associative table (a record's few keyed
/// texts that land in one set do not evict each other), its sets found by a hash of the
/// key (keys are structured: counters, small numbers).
const KEYED: usize = 512;

/// The state of one binary writer: the block it is in (each column's last number, the
/// texts given ids) and the record being built. One per output buffer:
/// [`BinEncoder::new_block`] when the buffer was written out, so that every buffer is one
/// block the reader decodes on its own.
pub struct BinEncoder {
    /// The next record starts a block.
    started: bool,
    block: BinBlock,
    /// The window records are built in.
    window: Box<[u8; BIN_WINDOW]>,
    /// A record longer than the window is built here (grown to its room, never shrunk).
    big: Vec<u8>,
}

impl Default for BinEncoder {
    fn default() -> Self {
        BinEncoder {
            started: false,
            block: BinBlock::default(),
            window: Box::new([0; BIN_WINDOW]),
            big: Vec::new(),
        }
    }
}

/// The block a [`BinEncoder`] is in: what the generated `write_bin` writes fields with.
pub struct BinBlock {
    /// Per column, its value in the block's previous record: a number, or for a text 0
    /// when empty, else its id + 1.
    prev: [u64; BIN_MAX_COLUMNS],
    /// Per text column, the key its previous text was given (0: none): the same key again
    /// is the same text, found without a lookup.
    prev_key: [u64; BIN_MAX_COLUMNS],
    /// [`SLOTS`] slots once the first block started (an encoder that never writes
    /// allocates nothing).
    slots: Vec<Slot>,
    /// Keyed texts: `(key, id)`, [`KEYED`] of them once the first block started (key 0:
    /// none), in sets of two, the more recently used first.
    keyed: Vec<(u64, u64)>,
    /// The bytes of the texts in `slots`.
    arena: Vec<u8>,
    next_id: u64,
}

impl Default for BinBlock {
    fn default() -> Self {
        BinBlock {
            prev: [0; BIN_MAX_COLUMNS],
            prev_key: [0; BIN_MAX_COLUMNS],
            slots: Vec::new(),
            keyed: Vec::new(),
            arena: Vec::new(),
            next_id: 0,
        }
    }
}

#[inline(always)]
fn load8(s: &[u8], i: usize) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&s[i..i + 8]);
    u64::from_le_bytes(b)
}

#[inline(always)]
fn load4(s: &[u8], i: usize) -> u64 {
    let mut b = [0u8; 4];
    b.copy_from_slice(&s[i..i + 4]);
    u64::from(u32::from_le_bytes(b))
}

/// Three words that cover a text of up to 16 bytes whole (overlapping when shorter), and
/// sample a longer one at its start, middle and end; `s` is not empty.
#[inline(always)]
fn sample(s: &[u8]) -> (u64, u64, u64) {
    let n = s.len();
    if n >= 8 {
        (load8(s, 0), load8(s, n / 2 - 4), load8(s, n - 8))
    } else if n >= 4 {
        (load4(s, 0), 0, load4(s, n - 4))
    } else {
        (u64::from(s[0]), u64::from(s[n / 2]), u64::from(s[n - 1]))
    }
}

/// The slot of a non-empty text: from its length and sampled words, so a constant number of
/// instructions whatever its length (texts that sample alike share a slot; longer texts'
/// bytes are compared before an id is reused).
#[inline(always)]
fn slot_of(len: usize, (a, b, c): (u64, u64, u64)) -> usize {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;
    let h = (len as u64 ^ a).wrapping_mul(K);
    let h = (h.rotate_left(23) ^ b ^ c.rotate_left(41)).wrapping_mul(K);
    (h >> 56) as usize % SLOTS
}

impl BinEncoder {
    /// The next record starts a new block (its buffer was written out, or dropped). The
    /// block's tables (~18 KiB) are cleared here, when the buffer is written out, rather
    /// than in the next record's [`begin`](Self::begin): that record may be the first of an
    /// application's call (in h5prov, an asynchronous file create right after the previous
    /// file's close wrote its buffer), whose issue time the clearing (~9k instructions)
    /// would add to.
    pub fn new_block(&mut self) {
        if self.started {
            self.block.clear();
        }
        self.started = false;
    }

    /// Makes the block's tables now if no record has yet (~18 KiB, ~9k instructions, and
    /// the first touch of their pages), rather than in the first record's
    /// [`begin`](Self::begin). For a buffer that is sure to be written (in h5prov, the
    /// thread that starts a trace session): its first record may be an application's
    /// timed call (an asynchronous file create's issue).
    pub fn prepare(&mut self) {
        if self.block.slots.is_empty() {
            self.block.clear();
        }
    }

    /// Starts a record whose fields take at most `room` bytes (its length included):
    /// appends a block's zero length to `out` when the block is new. Returns the block
    /// state, the window and the buffer for a record longer than it (`room` bytes when
    /// `room` is more than `BIN_WINDOW`).
    #[inline(always)]
    pub fn begin(
        &mut self,
        out: &mut Vec<u8>,
        room: usize,
    ) -> (&mut BinBlock, &mut [u8; BIN_WINDOW], &mut [u8]) {
        if !self.started {
            self.started = true;
            // The first block: its tables are made now (unless `prepare` made them).
            // Later ones were cleared by `new_block`.
            if self.block.slots.is_empty() {
                self.block.clear();
            }
            out.extend_from_slice(&[0; 4]);
        }
        if room > BIN_WINDOW && self.big.len() < room {
            self.big.resize(room, 0);
        }
        (&mut self.block, &mut self.window, &mut self.big)
    }
}

impl BinBlock {
    /// Empties the block: no previous values, no texts given ids (the tables allocated, all
    /// free).
    fn clear(&mut self) {
        self.prev = [0; BIN_MAX_COLUMNS];
        self.prev_key = [0; BIN_MAX_COLUMNS];
        self.arena.clear();
        self.slots.clear();
        self.slots.resize(SLOTS, Slot::default());
        self.keyed.clear();
        self.keyed.resize(KEYED, (0, 0));
        self.next_id = 0;
    }

    /// Writes number column `col`'s value `v` (a signed value as its `u64` bits) at
    /// `buf[p..]`, the zigzag varint of its difference to the block's previous one, and
    /// sets bit `col` of `bits`; or nothing when it is the same (the column is left out of
    /// the record). Returns where it ends.
    #[inline(always)]
    pub fn put_num<B: BinBuf + ?Sized>(
        &mut self,
        buf: &mut B,
        p: usize,
        col: usize,
        v: u64,
        bits: &mut u64,
    ) -> usize {
        let prev = self.prev[col];
        if v == prev {
            return p; // most columns: as in the previous record
        }
        self.prev[col] = v;
        *bits |= 1 << col;
        put_varint_at(buf, p, zigzag(v.wrapping_sub(prev) as i64))
    }

    /// Writes text column `col`'s value `s` at `buf[p..]`: nothing when it is the
    /// column's previous text, else (and sets bit `col` of `bits`) 0 when empty, its id
    /// when the block has one for it, else 1, its length and bytes (it takes the next id).
    /// Returns where it ends. Needs `1 + BIN_NUM_ROOM + s.len()` bytes there.
    ///
    /// `key`, when not 0, stands for `s`: the caller promises that a key always stands for
    /// the same text (a static name's number, an object's for its immutable path). The
    /// block then finds the text's id by the key, without reading the text.
    #[inline(always)]
    pub fn put_text<B: BinBuf + ?Sized>(
        &mut self,
        buf: &mut B,
        p: usize,
        col: usize,
        s: &[u8],
        key: u64,
        bits: &mut u64,
    ) -> usize {
        if key != 0 && key == self.prev_key[col] {
            return p;
        }
        self.prev_key[col] = key;
        if s.is_empty() {
            if self.prev[col] == 0 {
                return p;
            }
            self.prev[col] = 0;
            *bits |= 1 << col;
            buf.put(p, 0);
            return p + 1;
        }
        let known = if key != 0 {
            self.keyed_id(key)
        } else {
            self.hashed_id(s)
        };
        if let Some(id) = known {
            if self.prev[col] == id + 1 {
                return p;
            }
            self.prev[col] = id + 1;
            *bits |= 1 << col;
            return put_varint_at(buf, p, id + 2);
        }
        *bits |= 1 << col;
        self.prev[col] = self.next_id + 1;
        self.next_id += 1;
        buf.put(p, 1);
        let p = put_varint_at(buf, p + 1, s.len() as u64);
        buf.put_bytes(p, s);
        p + s.len()
    }

    /// The id of the text with key `key`, or `None` when it has none yet: then the key's
    /// slot is given the next id (the caller writes the text).
    #[inline(always)]
    fn keyed_id(&mut self, key: u64) -> Option<u64> {
        const K: u64 = 0x9e37_79b9_7f4a_7c15;
        let set = (key.wrapping_mul(K) >> 56) as usize * 2 % KEYED;
        let (first, second) = (self.keyed[set], self.keyed[set + 1]);
        if first.0 == key {
            return Some(first.1);
        }
        self.keyed[set] = (key, self.next_id);
        self.keyed[set + 1] = first;
        if second.0 == key {
            self.keyed[set].1 = second.1;
            return Some(second.1);
        }
        None
    }

    /// The id of non-empty text `s`, or `None` when it has none yet: then its slot is
    /// given the next id (the caller writes the text).
    #[inline(always)]
    fn hashed_id(&mut self, s: &[u8]) -> Option<u64> {
        let words = sample(s);
        let slot = &mut self.slots[slot_of(s.len(), words)];
        if slot.len == s.len()
            && slot.words == words
            && (s.len() <= 16 || self.arena.get(slot.off..slot.off + s.len()) == Some(s))
        {
            return Some(slot.id);
        }
        *slot = Slot {
            len: s.len(),
            words,
            off: self.arena.len(),
            id: self.next_id,
        };
        if s.len() > 16 {
            self.arena.extend_from_slice(s);
        }
        None
    }
}

/// Writes the first `n` bytes of `bits` (little-endian) at `buf[4..]`: a record's bitmap.
#[inline(always)]
pub fn put_bitmap<B: BinBuf + ?Sized>(buf: &mut B, n: usize, bits: u64) {
    for i in 0..n {
        buf.put(4 + i, (bits >> (8 * i)) as u8);
    }
}

/// Ends the record built in `buf[..end]` (its first 4 bytes for its length): writes the
/// length and appends the record to `out`.
#[inline(always)]
pub fn bin_end<B: BinBuf + ?Sized>(out: &mut Vec<u8>, buf: &mut B, end: usize) {
    let head = buf.head(end);
    head[..4].copy_from_slice(&((end - 4) as u32).to_le_bytes());
    out.extend_from_slice(head);
}

/// How many whole records a run of blocks holds (the buffered, not yet written records of
/// a binary file): it follows their length prefixes (a block's zero length is no record).
pub fn bin_records(mut bytes: &[u8]) -> u64 {
    let mut n = 0;
    while let Some((len, rest)) = bytes.split_first_chunk::<4>() {
        let len = u32::from_le_bytes(*len) as usize;
        bytes = rest.get(len..).unwrap_or(&[]);
        n += u64::from(len > 0);
    }
    n
}

/// Appends a binary file header for a table: `what` (`trace`/`objects`), its column names
/// and type codes.
pub fn write_bin_header(out: &mut Vec<u8>, what: &str, columns: &[&str], types: &[u8]) {
    let mut h = Vec::with_capacity(512);
    put_varint(&mut h, BIN_VERSION);
    put_varint(&mut h, what.len() as u64);
    h.extend_from_slice(what.as_bytes());
    put_varint(&mut h, columns.len() as u64);
    for (c, t) in columns.iter().zip(types) {
        h.push(*t);
        put_varint(&mut h, c.len() as u64);
        h.extend_from_slice(c.as_bytes());
    }
    out.extend_from_slice(BIN_MAGIC);
    out.extend_from_slice(&(h.len() as u32).to_le_bytes());
    out.extend_from_slice(&h);
}

/// Why bytes did not decode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BinError {
    /// They end before the value does.
    Short,
    /// They are not a valid value: what is wrong.
    Bad(String),
}

/// Reads a varint at `*p`, advancing it.
#[inline(always)]
pub fn get_varint(b: &[u8], p: &mut usize) -> Result<u64, BinError> {
    let mut v = 0u64;
    let mut shift = 0;
    loop {
        let Some(&x) = b.get(*p) else {
            return Err(BinError::Short);
        };
        *p += 1;
        if shift == 63 && x > 1 {
            return Err(BinError::Bad("a varint beyond 64 bits".into()));
        }
        v |= u64::from(x & 0x7f) << shift;
        if x < 0x80 {
            return Ok(v);
        }
        shift += 7;
    }
}

/// One decoded value of a binary record: a number (a signed one as its `i64` bits), the
/// empty text, a text at a range of the decoder's texts, or a text that is not UTF-8.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinValue {
    /// A number.
    Num(u64),
    /// The empty text.
    Empty,
    /// Text at `start..end` of the decoder's texts.
    Known(usize, usize),
    /// A text that is not valid UTF-8: an error when its column is read, as a text read
    /// anywhere else (a record that does not read that column still reads).
    NotUtf8,
}

/// The columns of one binary file, mapped to a table by name (extra columns are decoded
/// and skipped, absent ones read as empty), and the state of the block being decoded
/// (each column's last value, the texts given ids).
#[derive(Debug, Clone)]
pub struct BinDecoder {
    /// Per file column, its type code.
    types: Vec<u8>,
    /// Per table column, its position in the file (`usize::MAX` when absent).
    pos: Vec<usize>,
    /// The bytes of a record's bitmap (0: layout version 2, every column has a value).
    bitmap: usize,
    /// Per file column, its value in the block's previous record.
    prev: Vec<BinValue>,
    /// Per file column, its value at a block's start.
    start: Vec<BinValue>,
    /// The block's texts, by id: [`BinValue::Known`] (their ranges in `texts`) or
    /// [`BinValue::NotUtf8`].
    ids: Vec<BinValue>,
    /// The block's texts, each checked once, when its id is given (a check per text read
    /// was 7-8 % of the time of a report of PyTables' suite's 17M records).
    texts: String,
}

fn header_err(what: &str, e: BinError) -> String {
    match e {
        BinError::Short => format!("the binary {what} header ends early"),
        BinError::Bad(s) => format!("the binary {what} header: {s}"),
    }
}

impl BinDecoder {
    /// Parses a header body (the `H` bytes after the magic and the length) for a table:
    /// its `columns`, their type codes and `required` flags; `what` names the file kind.
    pub fn new(
        body: &[u8],
        columns: &'static [&'static str],
        types: &[u8],
        required: &[bool],
        what: &str,
    ) -> Result<BinDecoder, String> {
        let e = |e| header_err(what, e);
        let mut p = 0;
        let version = get_varint(body, &mut p).map_err(e)?;
        if version != BIN_VERSION && version != BIN_VERSION_NO_BITMAP {
            return Err(format!(
                "binary layout version {version}, this reader knows versions \
                 {BIN_VERSION_NO_BITMAP} and {BIN_VERSION}"
            ));
        }
        let text = |p: &mut usize| -> Result<&[u8], String> {
            let n = get_varint(body, p).map_err(e)? as usize;
            let s = body
                .get(*p..p.saturating_add(n))
                .ok_or_else(|| e(BinError::Short))?;
            *p += n;
            Ok(s)
        };
        let kind = text(&mut p)?;
        if kind != what.as_bytes() {
            return Err(format!(
                "a binary {} file, expected {what}",
                String::from_utf8_lossy(kind)
            ));
        }
        let n = get_varint(body, &mut p).map_err(e)?;
        let mut pos = vec![usize::MAX; columns.len()];
        let mut ftypes = Vec::new();
        for i in 0..n as usize {
            let t = *body.get(p).ok_or_else(|| e(BinError::Short))?;
            p += 1;
            if ![BIN_UNSIGNED, BIN_SIGNED, BIN_TEXT].contains(&t) {
                return Err(format!(
                    "the binary {what} header: column {} has the unknown type code {t}",
                    i + 1
                ));
            }
            let name = text(&mut p)?;
            ftypes.push(t);
            if let Some(c) = columns.iter().position(|c| c.as_bytes() == name) {
                if types[c] != t {
                    return Err(format!(
                        "column `{}` has type `{}` in the file, the h5prov {what} table has `{}`",
                        columns[c], t as char, types[c] as char
                    ));
                }
                pos[c] = i;
            }
        }
        for (c, name) in columns.iter().enumerate() {
            if required[c] && pos[c] == usize::MAX {
                return Err(format!(
                    "header has no `{name}` column (expected the h5prov {what} columns: {})",
                    columns.join(",")
                ));
            }
        }
        if ftypes.len() > BIN_MAX_COLUMNS {
            return Err(format!(
                "the binary {what} header has {} columns, at most {BIN_MAX_COLUMNS} are allowed",
                ftypes.len()
            ));
        }
        let start: Vec<BinValue> = ftypes
            .iter()
            .map(|&t| match t {
                BIN_TEXT => BinValue::Empty,
                _ => BinValue::Num(0),
            })
            .collect();
        Ok(BinDecoder {
            bitmap: if version == BIN_VERSION_NO_BITMAP {
                0
            } else {
                bin_bitmap_len(ftypes.len())
            },
            prev: start.clone(),
            start,
            types: ftypes,
            pos,
            ids: Vec::new(),
            texts: String::new(),
        })
    }

    /// A block starts (a record of length zero): numbers and texts start afresh.
    pub fn new_block(&mut self) {
        self.prev.clone_from(&self.start);
        self.ids.clear();
        self.texts.clear();
    }

    /// Decodes a record body into `vals` (one value per file column), advancing the
    /// block's state. `Short` when the fields need more bytes than `body` has; `Bad` when
    /// they are invalid or end before it.
    #[inline]
    pub fn decode(&mut self, body: &[u8], vals: &mut Vec<BinValue>) -> Result<(), BinError> {
        vals.clear();
        let (bits, mut p) = match self.bitmap {
            0 => (u64::MAX, 0),
            n => {
                let b = body.get(..n).ok_or(BinError::Short)?;
                let bits = b.iter().rev().fold(0u64, |a, &x| (a << 8) | u64::from(x));
                if self.types.len() < 64 && bits >> self.types.len() != 0 {
                    return Err(BinError::Bad(format!(
                        "its bitmap names columns beyond the header's {}",
                        self.types.len()
                    )));
                }
                (bits, n)
            }
        };
        for (i, &t) in self.types.iter().enumerate() {
            if bits >> i & 1 == 0 {
                vals.push(self.prev[i]);
                continue;
            }
            let v = get_varint(body, &mut p)?;
            let val = match (t, v) {
                (BIN_TEXT, 0) => BinValue::Empty,
                (BIN_TEXT, 1) => {
                    let n = get_varint(body, &mut p)?;
                    let end = usize::try_from(n)
                        .ok()
                        .and_then(|n| p.checked_add(n))
                        .ok_or(BinError::Short)?;
                    let s = body.get(p..end).ok_or(BinError::Short)?;
                    let val = match std::str::from_utf8(s) {
                        Ok(s) => {
                            let at = self.texts.len();
                            self.texts.push_str(s);
                            BinValue::Known(at, self.texts.len())
                        }
                        Err(_) => BinValue::NotUtf8,
                    };
                    self.ids.push(val);
                    p = end;
                    val
                }
                (BIN_TEXT, id) => usize::try_from(id - 2)
                    .ok()
                    .and_then(|i| self.ids.get(i).copied())
                    .ok_or_else(|| {
                        BinError::Bad(format!(
                            "text id {} is not defined in its block ({} are)",
                            id - 2,
                            self.ids.len()
                        ))
                    })?,
                _ => {
                    let BinValue::Num(prev) = self.prev[i] else {
                        unreachable!("a number column's value is a number")
                    };
                    BinValue::Num(prev.wrapping_add(unzigzag(v) as u64))
                }
            };
            self.prev[i] = val;
            vals.push(val);
        }
        if p != body.len() {
            return Err(BinError::Bad(format!(
                "its fields end after {p} of its {} bytes",
                body.len()
            )));
        }
        Ok(())
    }

    /// The decoded record `vals` as a [`FieldSource`].
    #[inline]
    pub fn source<'a>(&'a self, vals: &'a [BinValue]) -> BinSource<'a> {
        BinSource {
            pos: &self.pos,
            types: &self.types,
            texts: &self.texts,
            vals,
        }
    }
}

/// A decoded binary record as a [`FieldSource`].
pub struct BinSource<'a> {
    pos: &'a [usize],
    types: &'a [u8],
    texts: &'a str,
    vals: &'a [BinValue],
}

impl BinSource<'_> {
    #[inline(always)]
    fn num(&self, col: usize) -> Option<u64> {
        match self.vals.get(self.pos[col]) {
            Some(BinValue::Num(v)) => Some(*v),
            _ => None,
        }
    }
}

impl<'a> FieldSource<'a> for BinSource<'a> {
    type Error = String;

    #[inline(always)]
    fn unsigned(&self, col: usize, _name: &'static str, empty: u64) -> Result<u64, String> {
        Ok(self.num(col).unwrap_or(empty))
    }

    #[inline(always)]
    fn signed(&self, col: usize, _name: &'static str, empty: i64) -> Result<i64, String> {
        Ok(self.num(col).map_or(empty, |v| v as i64))
    }

    #[inline(always)]
    fn text(&self, col: usize, name: &'static str) -> Result<&'a str, String> {
        // Ranges of whole texts appended to `texts`: on character boundaries.
        match self.vals.get(self.pos[col]) {
            Some(&BinValue::Known(s, e)) => Ok(&self.texts[s..e]),
            Some(BinValue::NotUtf8) => Err(format!("column `{name}`: not valid UTF-8")),
            _ => Ok(""),
        }
    }

    #[cold]
    fn out_of_range(&self, col: usize, name: &'static str) -> String {
        let v = self.num(col).unwrap_or(0);
        if self.types.get(self.pos[col]) == Some(&BIN_SIGNED) {
            format!("column `{name}`: {} is out of range", v as i64)
        } else {
            format!("column `{name}`: {v} is out of range")
        }
    }

    #[cold]
    fn empty_value(&self, _col: usize, name: &'static str) -> String {
        format!("column `{name}` is empty")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `new_block` leaves the block empty (what `begin` used to do in the next record):
    /// the next record, the first of a new block, clears nothing.
    #[test]
    fn a_new_block_is_cleared_when_the_buffer_is_written_out() {
        let mut enc = BinEncoder::default();
        let mut out = Vec::new();
        let mut bits = 0;
        for (i, t) in [&b"/a/dataset"[..], b"file.h5", b"dataset.write"]
            .into_iter()
            .enumerate()
        {
            let (block, window, _) = enc.begin(&mut out, 64);
            block.put_text(window, 8, i, t, 0, &mut bits);
            block.put_num(window, 8, i + 3, 42, &mut bits);
            block.put_text(window, 8, i + 6, t, 7 + i as u64, &mut bits);
        }
        let b = &enc.block;
        assert!(
            b.next_id > 0 && b.prev.iter().any(|&v| v != 0),
            "nothing was recorded"
        );
        enc.new_block();
        let b = &enc.block;
        assert_eq!(b.next_id, 0);
        assert!(b.prev.iter().chain(&b.prev_key).all(|&v| v == 0));
        assert!(b.arena.is_empty());
        assert_eq!(b.slots.len(), SLOTS);
        assert!(b
            .slots
            .iter()
            .all(|s| s.len == 0 && s.id == 0 && s.off == 0));
        assert_eq!(b.keyed.len(), KEYED);
        assert!(b.keyed.iter().all(|&k| k == (0, 0)));
        // The next record starts the block (its zero length) and finds it as cleared.
        let n = out.len();
        let (block, _, _) = enc.begin(&mut out, 64);
        assert_eq!(block.next_id, 0);
        assert_eq!(out.len(), n + 4);
    }

    /// `prepare` makes the tables a first record would (so it clears nothing), and the
    /// records written after it are byte for byte those written without it.
    #[test]
    fn a_prepared_encoder_writes_the_same_bytes() {
        let write = |enc: &mut BinEncoder| {
            let mut out = Vec::new();
            let mut bits = 0;
            for (i, t) in [&b"/a/dataset"[..], b"file.h5", b"/a/dataset"]
                .into_iter()
                .enumerate()
            {
                let (block, window, _) = enc.begin(&mut out, 64);
                let end = block.put_text(window, 8, i, t, 0, &mut bits);
                let end = block.put_num(window, end, i + 3, 42, &mut bits);
                out.extend_from_slice(&window[..end]);
            }
            out
        };
        let mut prepared = BinEncoder::default();
        prepared.prepare();
        assert_eq!(prepared.block.slots.len(), SLOTS);
        assert_eq!(prepared.block.keyed.len(), KEYED);
        assert!(!prepared.started, "no block was started");
        assert_eq!(write(&mut prepared), write(&mut BinEncoder::default()));
    }

    #[test]
    fn varints() {
        for v in [0, 1, 127, 128, 300, 1 << 35, u64::MAX - 1, u64::MAX] {
            let mut b = Vec::new();
            put_varint(&mut b, v);
            let mut p = 0;
            assert_eq!(get_varint(&b, &mut p), Ok(v));
            assert_eq!(p, b.len());
            assert_eq!(get_varint(&b[..b.len() - 1], &mut 0), Err(BinError::Short));
        }
        for v in [0, 1, -1, 63, -64, i64::MIN, i64::MAX] {
            assert_eq!(unzigzag(zigzag(v)), v);
        }
        assert_eq!(zigzag(-1), 1);
        assert!(matches!(
            get_varint(&[0xff; 10], &mut 0),
            Err(BinError::Bad(_))
        ));
        assert!(matches!(
            get_varint(&[0xff; 11], &mut 0),
            Err(BinError::Bad(_))
        ));
    }
}
