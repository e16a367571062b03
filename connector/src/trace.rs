//! Provenance capture: timing spans, record encoding, per-thread buffers and per-process
//! trace files. Safe Rust; the few OS calls it needs come from [`crate::ffi::sys`].
//!
//! Hot path (one traced callback): four [`clock`] readings, one relaxed atomic load of the
//! level, one uncontended per-object lock for the counters, and one encode into the calling
//! thread's buffer (uncontended per-thread lock, no allocation, no global lock). Buffers are
//! written to the process's trace file when they fill, at file close, at connector terminate
//! and when the thread exits.

use crate::clock::{self, Tick};
use crate::config::{Config, Format, Level};
use crate::ffi::sys;
use crate::ops::Op;
use crate::stream::{self, Stream};
use crate::subops;
use crate::tree::{Io, Kind, Node};
use h5prov_format::{
    column_index, BinEncoder, ObjectSummaryRef, ProcessMeta, TraceRecordRef, FORMAT_VERSION,
    OBJECT_COLUMNS, PENDING_SUFFIX, TRACE_COLUMNS,
};
use parking_lot::{Mutex, RwLock};
use std::cell::RefCell;
use std::fs::{File, OpenOptions};
use std::io::{Seek, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, LazyLock, OnceLock};
use std::time::{SystemTime, UNIX_EPOCH};

/// A bounded, allocation-free text buffer for `level=element` selection detail.
pub struct Detail {
    buf: [u8; 256],
    len: usize,
}

impl Default for Detail {
    fn default() -> Self {
        Detail {
            buf: [0; 256],
            len: 0,
        }
    }
}

impl Detail {
    /// The text so far.
    pub fn as_str(&self) -> &str {
        std::str::from_utf8(&self.buf[..self.len]).unwrap_or("")
    }
}

impl std::fmt::Write for Detail {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        // Content is limited to 253 bytes so "..." always fits when it is cut.
        const LIMIT: usize = 253;
        if self.len > LIMIT {
            return Err(std::fmt::Error);
        }
        let room = LIMIT - self.len;
        if s.len() <= room {
            self.buf[self.len..self.len + s.len()].copy_from_slice(s.as_bytes());
            self.len += s.len();
            return Ok(());
        }
        let mut cut = room;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        self.buf[self.len..self.len + cut].copy_from_slice(&s.as_bytes()[..cut]);
        self.len += cut;
        self.buf[self.len..self.len + 3].copy_from_slice(b"...");
        self.len += 3;
        Err(std::fmt::Error)
    }
}

// ---------------------------------------------------------------------------------------
// Global state

/// The active level as a number (`Level as u8`), `0` (off) when no session runs.
static LEVEL: AtomicU8 = AtomicU8::new(0);
static EPOCH: AtomicU64 = AtomicU64::new(0);
static SESSION: LazyLock<RwLock<Option<Arc<Session>>>> = LazyLock::new(|| RwLock::new(None));
static SESSIONS_STARTED: AtomicU64 = AtomicU64::new(0);

fn level_from_u8(v: u8) -> Level {
    match v {
        1 => Level::Summary,
        2 => Level::File,
        3 => Level::Group,
        4 => Level::Dataset,
        5 => Level::Element,
        _ => Level::Off,
    }
}

fn level_to_u8(l: Level) -> u8 {
    match l {
        Level::Off => 0,
        Level::Summary => 1,
        Level::File => 2,
        Level::Group => 3,
        Level::Dataset => 4,
        Level::Element => 5,
    }
}

/// The current level (`Off` without a session).
#[inline]
pub fn level() -> Level {
    level_from_u8(LEVEL.load(Ordering::Relaxed))
}

/// Process identity, read once.
struct Process {
    pid: u32,
    rank: i64,
    world: i64,
    host: String,
}

fn env_int(vars: &[&str]) -> i64 {
    vars.iter()
        .find_map(|v| std::env::var(v).ok()?.trim().parse::<i64>().ok())
        .unwrap_or(-1)
}

/// Rank from the launcher's environment; h5prov never calls MPI.
pub fn launcher_rank() -> i64 {
    env_int(&[
        "OMPI_COMM_WORLD_RANK",
        "PMIX_RANK",
        "PMI_RANK",
        "SLURM_PROCID",
        "MV2_COMM_WORLD_RANK",
    ])
}

/// World size from the launcher's environment.
pub fn launcher_size() -> i64 {
    env_int(&[
        "OMPI_COMM_WORLD_SIZE",
        "PMI_SIZE",
        "SLURM_NTASKS",
        "MV2_COMM_WORLD_SIZE",
    ])
}

/// The batch system's or launcher's job id, first of: Slurm, PBS/Torque, LSF, Cobalt,
/// Flux, then the PMIx namespace and Open MPI's job id (one per `mpirun`); empty when none
/// is set. Recorded in the meta as `job_id`: `h5prov export --parquet` partitions by it.
pub fn launcher_job_id() -> String {
    [
        "SLURM_JOB_ID",
        "PBS_JOBID",
        "LSB_JOBID",
        "COBALT_JOBID",
        "FLUX_JOB_ID",
        "PMIX_NAMESPACE",
        "OMPI_MCA_orte_ess_jobid",
        "OMPI_MCA_ess_base_jobid",
    ]
    .iter()
    .find_map(|v| {
        let s = std::env::var(v).ok()?;
        let s = s.trim();
        (!s.is_empty()).then(|| s.to_string())
    })
    .unwrap_or_default()
}

fn process() -> Process {
    Process {
        pid: std::process::id(),
        rank: launcher_rank(),
        world: launcher_size(),
        host: sys::host_name(),
    }
}

/// One process's trace output.
pub struct Session {
    cfg: Config,
    /// The connector string (the metadata's `connector`), to start the same session again
    /// in a forked child.
    info: String,
    pid: u32,
    rank: i64,
    /// `CLOCK_MONOTONIC` at the anchor, ns.
    anchor_mono_ns: u64,
    anchor_wall_ns: u64,
    trace: Option<Mutex<TraceOut>>,
    /// The pending-records sidecar: each thread's buffered records, mirrored where they
    /// survive the process ([`Slot`]).
    pending: Option<Pending>,
    /// The objects file and its pending rows (written in blocks, not a syscall per row).
    objects: Option<Mutex<Objects>>,
    meta: Option<Mutex<(File, ProcessMeta)>>,
    records: AtomicU64,
    bytes: AtomicU64,
    self_ns: AtomicU64,
    dropped: AtomicU64,
    errors: AtomicU64,
    warned: AtomicBool,
    /// The trace file reached `max_size` (noted once on stderr).
    capped: AtomicBool,
    /// The size no file of ours may pass: the process's `RLIMIT_FSIZE` (soft limit) less a
    /// margin for headers and the metadata record. Writing past it would raise `SIGXFSZ`,
    /// which kills the application; records beyond it are dropped and counted instead.
    fsize_cap: Option<u64>,
    /// Bytes written to the objects file.
    objects_bytes: AtomicU64,
    threshold: usize,
    buffers: Arc<Mutex<Vec<Arc<Mutex<Chunk>>>>>,
    /// `stream=`: the messages to a collector.
    stream: Option<Stream>,
    coll_md_reads: AtomicBool,
    coll_md_writes: AtomicBool,
}

/// The trace file and its length (where the next block goes).
struct TraceOut {
    file: File,
    len: u64,
    /// `format=bin`: each block is written as one zstd frame.
    zstd: Option<Zstd>,
}

/// A zstd compressor and its output buffer, reused by every block of a file.
struct Zstd {
    cx: zstd::bulk::Compressor<'static>,
    out: Vec<u8>,
}

/// The zstd level of trace and objects blocks: the fast level -3. Callgrind on the
/// metadata-heavy benchmark, instructions per HDF5 call over uncompressed blocks (14,839):
/// level 1 +793, -1 +672, -3 +549, -5 +496, -7 +464; the rest is zstd's sequence coding,
/// which no level removes (minMatch and hashLog change nothing either). Trace bytes a record
/// on an h5py script (3,000 datasets written, read and annotated, 135,079 records): 21.4
/// uncompressed, 8.6 at level 1, 9.1 at -1, 10.1 at -3, 10.8 at -5; -3 is the cheapest level
/// that keeps both workloads' traces more than 2x smaller (2.1x and 2.25x).
const ZSTD_LEVEL: i32 = -3;

impl Zstd {
    fn new(format: Format) -> Option<Zstd> {
        if !format.compressed() {
            return None;
        }
        Some(Zstd {
            cx: zstd::bulk::Compressor::new(ZSTD_LEVEL).ok()?,
            out: Vec::new(),
        })
    }

    /// `data` as one zstd frame, or the error: compressed, or stored (a raw block) when
    /// it is shorter than [`STORE_BELOW`].
    fn frame(&mut self, data: &[u8]) -> std::io::Result<&[u8]> {
        self.out.clear();
        if data.len() < STORE_BELOW {
            stored_frame(&mut self.out, data);
            return Ok(&self.out);
        }
        self.out
            .reserve(zstd::zstd_safe::compress_bound(data.len()));
        self.cx.compress_to_buffer(data, &mut self.out)?;
        Ok(&self.out)
    }
}

/// Blocks shorter than this many bytes are stored in their zstd frame, not compressed.
/// Compressing a block costs a fixed ~20k instructions (the compressor's reset and its
/// tables, whatever the size) and ~22 a byte on trace records (callgrind): a drain of a
/// few records at a file close (a trace block of ~250 bytes took 26k instructions, the
/// objects block of its summary rows 16k) cost as much as a few HDF5 calls, to save a
/// few hundred bytes. From 4 KiB on the fixed part is under a fifth of the whole. The
/// blocks of a running application (up to the buffer's threshold, 256 KiB by default)
/// are compressed as before.
const STORE_BELOW: usize = 4096;

/// Appends `data` (shorter than [`STORE_BELOW`], so less than zstd's largest block) as a
/// zstd frame holding one raw block (RFC 8878, section 3.1.1): every zstd decoder reads
/// it, with no compressor involved.
fn stored_frame(out: &mut Vec<u8>, data: &[u8]) {
    const _: () = assert!(STORE_BELOW <= 128 << 10);
    // Magic number, little-endian.
    out.extend_from_slice(&0xFD2F_B528u32.to_le_bytes());
    // Frame header descriptor: a 4-byte content size (flag 2, bits 7-6), single segment
    // (bit 5: no window descriptor, the window is the content size), no checksum, no
    // dictionary.
    out.push(0b1010_0000);
    out.extend_from_slice(&(data.len() as u32).to_le_bytes());
    // Block header, 3 bytes little-endian: last block (bit 0), type raw (bits 1-2 = 0),
    // size (bits 3-23).
    let header = 1 | ((data.len() as u32) << 3);
    out.extend_from_slice(&header.to_le_bytes()[..3]);
    out.extend_from_slice(data);
}

/// Writes `data` to `file`, as one zstd frame when `zstd` is given; returns the bytes
/// written (the file's growth).
fn write_block(file: &mut File, zstd: Option<&mut Zstd>, data: &[u8]) -> std::io::Result<u64> {
    match zstd {
        Some(z) => {
            let frame = z.frame(data)?;
            file.write_all(frame)?;
            Ok(frame.len() as u64)
        }
        None => {
            file.write_all(data)?;
            Ok(data.len() as u64)
        }
    }
}

/// The pending-records sidecar (`<stem>.pending`, layout in `h5prov_format::pending`):
/// one slot per thread buffer, each a shared mapping of its part of the file.
struct Pending {
    path: std::path::PathBuf,
    slots: Mutex<PendingSlots>,
    /// Bytes of a slot, its header included (a multiple of the page size).
    size: usize,
    /// Where slot 0 starts (one page: mappings start at page boundaries).
    first: u64,
}

struct PendingSlots {
    file: File,
    /// Slots made so far.
    made: u64,
    /// Slots of threads that ended, empty, for the next thread.
    free: Vec<Slot>,
    /// A slot could not be made (noted once on stderr).
    failed: bool,
}

impl Pending {
    /// A slot for a new thread buffer: a freed one, else a new one at the end of the
    /// file, its blocks allocated before it is mapped (a store into a hole of a full file
    /// system would raise `SIGBUS`). `None` when the file cannot grow: the thread's records
    /// are then only in memory until written, as without a sidecar.
    fn take(&self, fsize_cap: Option<u64>) -> Option<Slot> {
        let mut g = self.slots.lock();
        if let Some(slot) = g.free.pop() {
            return Some(slot);
        }
        let off = self.first + g.made * self.size as u64;
        let end = off + self.size as u64;
        let made = if fsize_cap.is_some_and(|cap| end > cap) {
            Err(std::io::Error::from_raw_os_error(libc::EFBIG))
        } else {
            sys::allocate(&g.file, off, self.size as u64)
                .and_then(|()| sys::SharedMap::new(&g.file, off, self.size))
        };
        match made {
            Ok(map) => {
                g.made += 1;
                Some(Slot { map, len: 0 })
            }
            Err(e) => {
                if !std::mem::replace(&mut g.failed, true) {
                    eprintln!(
                        "h5prov: note: cannot extend {}: {e}; records buffered by new threads \
                         are lost if the process ends without closing HDF5",
                        self.path.display()
                    );
                }
                None
            }
        }
    }

    /// Takes back the (empty) slot of a thread that ended.
    fn give(&self, slot: Slot) {
        self.slots.lock().free.push(slot);
    }
}

/// A thread buffer's slot in the sidecar: the block's bytes, and its state word (filling
/// with a length, or draining at a trace offset) stored after each whole record. Plain
/// stores into a shared mapping: the kernel keeps them whatever kills the process. With a
/// slot, the slot *is* the thread's block: each record is encoded into the chunk's small
/// staging buffer, moved here, and the block is written to the trace from the mapping, so
/// the records' bytes are stored once, not in a private buffer and again in the mapping.
struct Slot {
    map: sys::SharedMap,
    /// The length last stored (the block's bytes the slot holds).
    len: usize,
}

impl Slot {
    /// Copies `bytes` (whole records) after the slot's and stores the new length. False,
    /// and nothing stored, when they do not fit.
    #[inline]
    fn push(&mut self, bytes: &[u8]) -> bool {
        if !self
            .map
            .write(h5prov_format::PENDING_SLOT_HEADER + self.len, bytes)
        {
            return false;
        }
        self.len += bytes.len();
        self.map.store_u64(0, self.len as u64);
        true
    }

    /// The block's bytes the slot holds.
    fn held(&self) -> &[u8] {
        self.map
            .bytes(h5prov_format::PENDING_SLOT_HEADER, self.len)
            .unwrap_or(&[])
    }

    /// About to write `len` buffered bytes at byte `at` of the trace file: if the slot
    /// holds them all, it says so (a reader cuts the trace at `at` and reads the slot);
    /// else it claims nothing (a cut write is then a truncated trace, reported as such).
    fn draining(&self, at: u64, len: usize) {
        if len == self.len && len > 0 {
            self.map.store_u64(8, at);
            self.map
                .store_u64(0, h5prov_format::PENDING_DRAINING | self.len as u64);
        } else {
            self.disclaim();
        }
    }

    /// The slot claims to hold nothing (its bytes are written, dropped or not all of the
    /// block); [`clear`](Self::clear) empties it once they are no longer read.
    fn disclaim(&self) {
        self.map.store_u64(0, 0);
    }

    /// The block was written (or dropped and counted): the slot holds nothing.
    fn clear(&mut self) {
        self.len = 0;
        self.disclaim();
    }
}

/// The objects file and its pending rows.
struct Objects {
    file: File,
    /// `format=bin`: each block is written as one zstd frame.
    zstd: Option<Zstd>,
    /// Encoded rows, whole rows only.
    buf: Vec<u8>,
    /// The binary encoding's block (`format=bin`): one per write of `buf`.
    bin: BinEncoder,
}

/// A thread's pending records: encoded bytes, whole records only.
struct Chunk {
    /// Without a sidecar slot, the block's encoded bytes. With one, the record being
    /// encoded, until it moves to the slot (so it stays in cache: only its first bytes
    /// are ever touched), plus a record that did not fit there, written at once.
    buf: Vec<u8>,
    /// The binary encoding's block (`format=bin`): one per write of `buf`.
    bin: BinEncoder,
    /// Time spent recording since the last drain, ns (the session's `self_ns` then).
    self_ns: u64,
    /// Pending stream messages (`stream=`).
    stream: stream::ThreadBuf,
    /// The sidecar slot that mirrors `buf`, when there is one.
    slot: Option<Slot>,
}

impl Chunk {
    fn new(cap: usize) -> Chunk {
        Chunk {
            buf: Vec::with_capacity(cap),
            bin: BinEncoder::default(),
            self_ns: 0,
            stream: stream::ThreadBuf::default(),
            slot: None,
        }
    }

    /// Does now what the buffer's first record would do once (inside an application's
    /// call, maybe a timed one such as an asynchronous file create's issue): makes the
    /// binary block's tables, and touches the first page of the staging buffer and of the
    /// sidecar slot, which the first records go to (a page fault each, the slot's a write
    /// fault on a shared file mapping). Only for a buffer sure to be written: the session
    /// starter's.
    fn prepare(&mut self, format: Format) {
        if format == Format::Bin {
            self.bin.prepare();
        }
        let page = self.buf.capacity().min(4096);
        self.buf.resize(page, 0);
        self.buf.clear();
        if let Some(slot) = &self.slot {
            slot.disclaim(); // the state word: 0, holds nothing, as it is
        }
    }
}

impl Session {
    fn warn_once(&self, what: &str, err: &std::io::Error) {
        self.errors.fetch_add(1, Ordering::Relaxed);
        if !self.warned.swap(true, Ordering::Relaxed) {
            eprintln!(
                "h5prov: warning: {what}: {err}; tracing continues without it, the application is not affected"
            );
        }
    }

    /// Writes `bytes` to the trace file; `slot` is the sidecar slot that holds them (all
    /// or in part), told where they go before the write. The caller clears it after.
    fn write_trace(&self, bytes: &[u8], slot: Option<&Slot>) {
        if bytes.is_empty() {
            return;
        }
        // Whole records only are buffered: dropped records are counted by line, or by
        // length prefix in the binary encoding.
        let records = || count_records(self.cfg.format, bytes);
        let Some(f) = &self.trace else {
            self.dropped.fetch_add(records(), Ordering::Relaxed);
            return;
        };
        let mut file = f.lock();
        let written = self.bytes.load(Ordering::Relaxed);
        // The cap is on the file's size: a compressed block is taken at its uncompressed
        // size, an upper bound of its frame (give or take a frame header, inside the
        // margin of the file-size limit).
        let size = if file.zstd.is_some() {
            file.len
        } else {
            written
        };
        if let Some((cap, from_ulimit)) = self.trace_cap() {
            if size + bytes.len() as u64 > cap {
                if let Some(slot) = slot {
                    slot.disclaim();
                }
                self.dropped.fetch_add(records(), Ordering::Relaxed);
                if !self.capped.swap(true, Ordering::Relaxed) {
                    let why = if from_ulimit {
                        format!("this process's file-size limit (ulimit -f, {cap} bytes usable)")
                    } else {
                        format!("max_size={cap} bytes")
                    };
                    eprintln!(
                        "h5prov: note: the trace file reached {why}; later records are dropped \
                         and counted (per-object summaries stay complete), the application is \
                         not affected"
                    );
                }
                return;
            }
        }
        let at = file.len;
        if let Some(slot) = slot {
            slot.draining(at, bytes.len());
        }
        let TraceOut { file: f, zstd, .. } = &mut *file;
        let res = write_block(f, zstd.as_mut(), bytes);
        // A failed write may have written part of the block: the end is not known.
        file.len = match &res {
            Ok(n) => at + n,
            Err(_) => file.file.stream_position().unwrap_or(at),
        };
        if let Some(slot) = slot {
            slot.disclaim();
        }
        match res {
            Ok(_) => {
                self.bytes
                    .store(written + bytes.len() as u64, Ordering::Relaxed);
            }
            Err(e) => {
                drop(file);
                self.dropped.fetch_add(records(), Ordering::Relaxed);
                self.warn_once("cannot write the trace file", &e);
            }
        }
    }

    /// The size the trace file may not pass: the smaller of `max_size` and the file-size
    /// limit, with `true` when it is the file-size limit.
    fn trace_cap(&self) -> Option<(u64, bool)> {
        let max = self.cfg.max_size.map(|c| (c, false));
        let fsize = self.fsize_cap.map(|c| (c, true));
        match (max, fsize) {
            (Some(a), Some(b)) => Some(if b.0 < a.0 { b } else { a }),
            (a, b) => a.or(b),
        }
    }

    /// Writes a thread's pending records and empties its buffer.
    fn drain(&self, chunk: &mut Chunk) {
        match &mut chunk.slot {
            // The block is in the slot: written from the mapping.
            Some(slot) if chunk.buf.is_empty() => {
                self.write_trace(slot.held(), Some(slot));
                slot.clear();
            }
            // A record did not fit in the slot: the block is the slot's bytes and it (a
            // copy, rare: the slot has room for a block and a record of 4 KiB).
            Some(slot) => {
                let mut all = Vec::with_capacity(slot.len + chunk.buf.len());
                all.extend_from_slice(slot.held());
                all.extend_from_slice(&chunk.buf);
                self.write_trace(&all, Some(slot));
                slot.clear();
            }
            None => self.write_trace(&chunk.buf, None),
        }
        chunk.buf.clear();
        chunk.bin.new_block();
        self.self_ns
            .fetch_add(std::mem::take(&mut chunk.self_ns), Ordering::Relaxed);
    }

    /// Writes the pending object summary rows.
    fn drain_objects(&self, objects: &mut Objects) {
        let Objects {
            file,
            zstd,
            buf: pending,
            bin,
        } = objects;
        bin.new_block();
        let done = self.objects_bytes.load(Ordering::Relaxed);
        if self
            .fsize_cap
            .is_some_and(|limit| done + pending.len() as u64 > limit)
        {
            // Summary rows past the file-size limit are lost, never a SIGXFSZ. They are not
            // trace records (`dropped` counts those): a write error, noted once.
            pending.clear();
            self.warn_once(
                "the objects file reached the process's file-size limit (ulimit -f)",
                &std::io::Error::from_raw_os_error(libc::EFBIG),
            );
            return;
        }
        let res = write_block(file, zstd.as_mut(), pending);
        self.objects_bytes.fetch_add(
            res.as_ref().map_or(pending.len() as u64, |n| *n),
            Ordering::Relaxed,
        );
        pending.clear();
        if let Err(e) = res {
            self.warn_once("cannot write the objects file", &e);
        }
    }

    fn flush_all(&self) {
        if let Some(o) = &self.objects {
            self.drain_objects(&mut o.lock());
        }
        let bufs: Vec<_> = self.buffers.lock().clone();
        for b in bufs {
            self.drain(&mut b.lock());
        }
    }

    fn wall_ns(&self, t: Tick) -> u64 {
        (self.anchor_wall_ns + clock::mono_ns(t)).saturating_sub(self.anchor_mono_ns)
    }
}

/// The number of whole records in encoded bytes.
fn count_records(format: Format, bytes: &[u8]) -> u64 {
    match format {
        Format::Bin => h5prov_format::bin_records(bytes),
        _ => bytes.iter().filter(|&&b| b == b'\n').count() as u64,
    }
}

/// Creates a process's files, `stem` + each of `suffixes`, all with one collision
/// suffix: the first `N` (none, then `.1`, `.2`, ...) for which none of them exists, so
/// that a process's trace, objects, meta and sidecar always share a stem (a suffix chosen
/// per file paired one process's trace with another's meta). Returns the stem used and
/// the files, in `suffixes` order; files of a set that collided are removed again.
fn create_files(
    dir: &std::path::Path,
    stem: &str,
    suffixes: &[&str],
    mode: u32,
) -> std::io::Result<(String, Vec<File>)> {
    let mut last = None;
    'attempt: for attempt in 0..100 {
        let stem = if attempt == 0 {
            stem.to_string()
        } else {
            format!("{stem}.{attempt}")
        };
        let mut files = Vec::with_capacity(suffixes.len());
        for suffix in suffixes {
            let made = OpenOptions::new()
                .read(true)
                .write(true)
                .create_new(true)
                .custom_flags(libc::O_NOFOLLOW)
                .mode(mode)
                .open(dir.join(format!("{stem}{suffix}")));
            match made {
                Ok(f) => files.push(f),
                Err(e) => {
                    for done in &suffixes[..files.len()] {
                        let _ = std::fs::remove_file(dir.join(format!("{stem}{done}")));
                    }
                    if e.kind() == std::io::ErrorKind::AlreadyExists {
                        last = Some(e);
                        continue 'attempt;
                    }
                    return Err(e);
                }
            }
        }
        return Ok((stem, files));
    }
    Err(last.unwrap_or_else(|| std::io::Error::other("no free file name")))
}

fn now_wall_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}

/// The metadata record as its file holds it: one JSON line, built in memory so that it
/// is written with one call.
fn meta_line(meta: &ProcessMeta) -> Vec<u8> {
    let mut text = serde_json::to_vec(meta).unwrap_or_default();
    text.push(b'\n');
    text
}

/// Starts the process's trace session with `cfg`, unless one runs already.
/// `info` gives the connector string recorded in the metadata; it is asked only when a
/// session starts (every file create and open calls this, and the string costs
/// allocations to build).
pub fn start(cfg: &Config, info: impl FnOnce() -> String) {
    if SESSION.read().is_some() {
        return;
    }
    let mut slot = SESSION.write();
    if slot.is_some() {
        return;
    }
    if cfg.level == Level::Off {
        return;
    }
    let info = info();
    let p = process();
    clock::init();
    let anchor_wall_ns = now_wall_ns();
    let anchor_mono_ns = sys::mono_ns();
    let n = SESSIONS_STARTED.fetch_add(1, Ordering::Relaxed);
    let mut stem = cfg.expand_name(p.rank, p.pid, &p.host, anchor_wall_ns / 1_000_000_000);
    if n > 0 {
        stem.push_str(&format!("-s{n}"));
    }
    let dir = cfg.dir_for(p.rank, p.pid);
    let mut trace = None;
    let mut objects = None;
    let mut meta_file = None;
    let mut pending_file = None;
    let mut setup_err = None;
    if cfg.to_file {
        let made = std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700 | (cfg.mode & 0o077) | if cfg.mode & 0o044 != 0 { 0o055 } else { 0 })
            .create(&dir);
        match made {
            Err(e) => {
                setup_err = Some((
                    format!("cannot create trace directory {}", dir.display()),
                    e,
                ))
            }
            Ok(()) => {
                let ext = cfg.format.file_ext();
                let traced = cfg.level >= Level::File;
                let (trace_suffix, objects_suffix) =
                    (format!(".trace.{ext}"), format!(".objects.{ext}"));
                let mut suffixes = vec![objects_suffix.as_str(), ".meta.json"];
                if traced {
                    suffixes.extend([trace_suffix.as_str(), PENDING_SUFFIX]);
                }
                match create_files(&dir, &stem, &suffixes, cfg.mode) {
                    Ok((used, files)) => {
                        let mut files = files.into_iter();
                        objects = files.next();
                        meta_file = files.next();
                        trace = files.next();
                        pending_file = files
                            .next()
                            .map(|f| (dir.join(format!("{used}{PENDING_SUFFIX}")), f));
                    }
                    Err(e) => {
                        setup_err =
                            Some((format!("cannot create trace files in {}", dir.display()), e))
                    }
                }
            }
        }
    }
    // Every header and the first metadata record is built in memory and written with one
    // call: the session starts inside the application's first file open, and a writer
    // straight to the file made a system call per JSON token (about 200, 0.3-1 ms).
    if cfg.format == Format::Csv {
        if let Some(t) = trace.as_mut() {
            let _ = t.write_all(format!("{}\n", TRACE_COLUMNS.join(",")).as_bytes());
        }
        if let Some(o) = objects.as_mut() {
            let _ = o.write_all(format!("{}\n", OBJECT_COLUMNS.join(",")).as_bytes());
        }
    } else if cfg.format == Format::Bin {
        // The headers name the columns and their types; like the CSV header rows they are
        // not counted in `bytes_written`.
        // Each header is a zstd frame of its own, like every block after it.
        if let Some(t) = trace.as_mut() {
            let mut h = Vec::new();
            TraceRecordRef::write_bin_header(&mut h);
            let _ = write_block(t, Zstd::new(cfg.format).as_mut(), &h);
        }
        if let Some(o) = objects.as_mut() {
            let mut h = Vec::new();
            ObjectSummaryRef::write_bin_header(&mut h);
            let _ = write_block(o, Zstd::new(cfg.format).as_mut(), &h);
        }
    }
    let exe = std::env::current_exe()
        .map(|e| e.display().to_string())
        .unwrap_or_default();
    let job_id = launcher_job_id();
    let buffers: Arc<Mutex<Vec<Arc<Mutex<Chunk>>>>> = Arc::default();
    let mut stream_err = None;
    let stream = cfg.stream.as_ref().and_then(|target| {
        let list = buffers.clone();
        let threads: stream::ForEachThread = Box::new(move |f| {
            // The list's lock is not held while a thread's buffer is.
            let bufs: Vec<_> = list.lock().clone();
            for b in bufs {
                f(&mut b.lock().stream);
            }
        });
        let id = stream::Identity {
            job_id: &job_id,
            rank: p.rank,
            world_size: p.world,
            pid: p.pid,
            host: &p.host,
            exe: &exe,
            uid: sys::uid(),
            level: cfg.level.name(),
        };
        let interval = std::time::Duration::from_millis(cfg.stream_interval_ms);
        let token = cfg
            .stream_token_file
            .as_deref()
            .map(h5prov_format::auth::read_token_file)
            .transpose()
            .map_err(std::io::Error::other);
        let tls = cfg
            .stream_tls_ca
            .as_deref()
            .map(h5prov_format::tls::client_config)
            .transpose()
            .map_err(std::io::Error::other);
        token
            .and_then(|t| Ok((t, tls?)))
            .and_then(|(t, tls)| {
                Stream::start(
                    target,
                    cfg.stream_level,
                    cfg.stream_format,
                    interval,
                    &id,
                    t,
                    tls,
                    threads,
                )
            })
            .map_err(|e| stream_err = Some(e))
            .ok()
    });
    let meta = ProcessMeta {
        format_version: FORMAT_VERSION,
        uid: sys::uid(),
        // Filled in by `finish`: the name service (`getpwuid_r`: files, LDAP, SSSD) cost
        // ~100-150 µs here, inside the application's first file open.
        user: String::new(),
        host: p.host.clone(),
        pid: p.pid,
        rank: p.rank,
        world_size: p.world,
        job_id,
        exe,
        cmdline: std::env::args().collect(),
        hdf5_version: sys::hdf5_version(),
        hdf5_library: sys::hdf5_library(),
        connector: info.clone(),
        level: cfg.level.name().to_string(),
        format: cfg.format.ext().to_string(),
        anchor_wall_ns,
        anchor_mono_ns,
        start_ns: anchor_wall_ns,
        ..ProcessMeta::default()
    };
    if let Some(m) = meta_file.as_mut() {
        let _ = m.write_all(&meta_line(&meta));
    }
    let threshold = (cfg.buffer / 4).clamp(4096, 256 << 10);
    let pending = pending_file.and_then(|(path, mut file)| {
        let page = sys::page_size();
        let size = (threshold + 4096 + h5prov_format::PENDING_SLOT_HEADER).next_multiple_of(page);
        let first = page as u64;
        match file.write_all(&h5prov_format::pending_header(first, size as u64)) {
            Ok(()) => Some(Pending {
                path,
                slots: Mutex::new(PendingSlots {
                    file,
                    made: 0,
                    free: Vec::new(),
                    failed: false,
                }),
                size,
                first,
            }),
            Err(_) => {
                let _ = std::fs::remove_file(&path);
                None
            }
        }
    });
    let trace = trace.map(|mut file| {
        let len = file.stream_position().unwrap_or(0);
        Mutex::new(TraceOut {
            file,
            len,
            zstd: Zstd::new(cfg.format),
        })
    });
    let session = Session {
        threshold,
        cfg: cfg.clone(),
        info,
        pid: p.pid,
        rank: p.rank,
        anchor_mono_ns,
        anchor_wall_ns,
        trace,
        pending,
        objects: objects.map(|file| {
            Mutex::new(Objects {
                file,
                zstd: Zstd::new(cfg.format),
                buf: Vec::new(),
                bin: BinEncoder::default(),
            })
        }),
        meta: meta_file.map(|f| Mutex::new((f, meta))),
        records: AtomicU64::new(0),
        bytes: AtomicU64::new(0),
        self_ns: AtomicU64::new(0),
        dropped: AtomicU64::new(0),
        errors: AtomicU64::new(0),
        warned: AtomicBool::new(false),
        capped: AtomicBool::new(false),
        // Headers and the metadata record stay well inside the margin.
        fsize_cap: sys::file_size_limit().map(|l| l.saturating_sub(64 << 10)),
        objects_bytes: AtomicU64::new(0),
        buffers,
        stream,
        coll_md_reads: AtomicBool::new(false),
        coll_md_writes: AtomicBool::new(false),
    };
    if let Some((what, e)) = setup_err {
        session.warn_once(&what, &e);
    }
    if let Some(e) = stream_err {
        eprintln!("h5prov: warning: cannot stream: {e}; tracing continues without streaming");
    }
    *slot = Some(Arc::new(session));
    EPOCH.fetch_add(1, Ordering::Release);
    LEVEL.store(level_to_u8(cfg.level), Ordering::Relaxed);
    drop(slot);
    // The starting thread's buffer (and its crash sidecar slot: an mmap and a
    // posix_fallocate, ~130 µs) is made now rather than in its first record, which is
    // inside the application's call (an asynchronous file create's issue, see
    // docs/ASYNC.md).
    // Its first record's one-time work too (`Chunk::prepare`).
    let _ = THREAD.try_with(|t| {
        if let Ok(mut t) = t.try_borrow_mut() {
            t.refresh();
            if let Some(c) = &t.chunk {
                c.lock().prepare(cfg.format);
            }
        }
    });
}

// ---------------------------------------------------------------------------------------
// fork()

/// Incremented in a forked child: thread states cached before the fork belong to the
/// parent and are dropped unwritten.
static FORK_GEN: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// The session lock, held by the forking thread across `fork()` so the child never
    /// inherits it half-taken.
    static HELD_ACROSS_FORK: RefCell<Option<parking_lot::RwLockWriteGuard<'static, Option<Arc<Session>>>>> =
        const { RefCell::new(None) };
}

/// Registers [`before_fork`], [`after_fork_parent`] and [`after_fork_child`] as the
/// process's `fork()` handlers (once; through [`sys::register_fork_handlers`], which names
/// nothing above it).
pub fn register_fork_handlers() {
    sys::register_fork_handlers(before_fork, after_fork_parent, after_fork_child);
}

/// `pthread_atfork` prepare handler: takes the session lock.
pub fn before_fork() {
    let g = SESSION.write();
    let _ = HELD_ACROSS_FORK.try_with(|h| *h.borrow_mut() = Some(g));
}

/// `pthread_atfork` parent handler: releases the session lock.
pub fn after_fork_parent() {
    // Dropping the guard releases the lock.
    if let Ok(guard) = HELD_ACROSS_FORK.try_with(|h| h.borrow_mut().take()) {
        drop(guard);
    }
}

/// `pthread_atfork` child handler. The child is a new process: it gets trace files of its
/// own (its pid, a fresh buffer and sequence) and per-object counters that start at zero.
/// Nothing the parent buffered is written by the child: the parent writes it.
pub fn after_fork_child() {
    let held = HELD_ACROSS_FORK
        .try_with(|h| h.borrow_mut().take())
        .ok()
        .flatten();
    let Some(mut slot) = held else {
        return;
    };
    FORK_GEN.fetch_add(1, Ordering::SeqCst);
    let old = slot.take();
    drop(slot);
    LEVEL.store(0, Ordering::Relaxed);
    EPOCH.fetch_add(1, Ordering::Release);
    SESSIONS_STARTED.store(0, Ordering::Relaxed);
    let Some(old) = old else { return };
    crate::tree::forget_counts_after_fork();
    let level = level_to_u8(old.cfg.level);
    *AFTER_FORK.lock() = Some((old.cfg.clone(), old.info.clone()));
    // The parent's files and buffers: never written, closed or freed here (the parent
    // owns them; the child keeps its inherited descriptors open until it exits).
    std::mem::forget(old);
    // Spans stay active; the child's session starts with its first record, so a child
    // that only execs (system(), popen()) leaves no trace files behind.
    LEVEL.store(level, Ordering::Relaxed);
}

/// The session a forked child starts when it first records: (config, connector string).
static AFTER_FORK: Mutex<Option<(Config, String)>> = Mutex::new(None);

/// Starts the session a forked child inherited the settings of, if any.
fn start_after_fork() {
    let pending = AFTER_FORK.lock().take();
    if let Some((cfg, info)) = pending {
        start(&cfg, || info);
    }
}

/// Notes collective-metadata settings seen on a FAPL (parallel HDF5).
pub fn note_coll_metadata(reads: bool, writes: bool) {
    if let Some(s) = SESSION.read().as_ref() {
        if reads {
            s.coll_md_reads.store(true, Ordering::Relaxed);
        }
        if writes {
            s.coll_md_writes.store(true, Ordering::Relaxed);
        }
    }
}

/// Writes all buffered records (file close).
pub fn flush() {
    let s = SESSION.read().clone();
    if let Some(s) = s {
        s.flush_all();
    }
}

/// Ends the session: flushes every thread's buffer and completes the metadata record.
pub fn finish() {
    // Objects parked for a reopen get their rows while the session can still write them.
    crate::tree::drain_all(&mut object_summary);
    let s = SESSION.write().take();
    LEVEL.store(0, Ordering::Relaxed);
    EPOCH.fetch_add(1, Ordering::Release);
    let Some(s) = s else { return };
    s.flush_all();
    let streamed = s.stream.as_ref().map(|st| {
        let bufs: Vec<_> = s.buffers.lock().clone();
        for b in bufs {
            st.hand_off(&mut b.lock().stream);
        }
        st.finish()
    });
    if let Some(m) = &s.meta {
        let mut g = m.lock();
        let (file, meta) = &mut *g;
        meta.end_ns = Some(now_wall_ns());
        if meta.user.is_empty() {
            meta.user = sys::user_name();
        }
        meta.records = s.records.load(Ordering::Relaxed);
        meta.bytes_written = s.bytes.load(Ordering::Relaxed);
        meta.self_ns = s.self_ns.load(Ordering::Relaxed);
        meta.dropped = s.dropped.load(Ordering::Relaxed);
        meta.write_errors = s.errors.load(Ordering::Relaxed);
        meta.coll_metadata_reads = s.coll_md_reads.load(Ordering::Relaxed);
        meta.coll_metadata_writes = s.coll_md_writes.load(Ordering::Relaxed);
        if let Some((sent, dropped)) = streamed {
            (meta.stream_sent, meta.stream_dropped) = (Some(sent), Some(dropped));
        }
        let text = meta_line(meta);
        let ok = file
            .set_len(0)
            .and_then(|_| file.rewind())
            .and_then(|_| file.write_all(&text));
        if let Err(e) = ok {
            s.warn_once("cannot complete the metadata record", &e);
        }
    }
    if let Some(t) = &s.trace {
        let _ = t.lock().file.flush();
    }
    // Every buffer was written: the sidecar holds nothing (threads that still record
    // write into their slots of the removed file, and to the trace when they drain).
    if let Some(p) = &s.pending {
        let _ = std::fs::remove_file(&p.path);
    }
}

// ---------------------------------------------------------------------------------------
// Per-thread buffers

struct ThreadState {
    epoch: u64,
    /// [`FORK_GEN`] when this state was filled.
    fork_gen: u64,
    tid: u64,
    session: Option<Arc<Session>>,
    chunk: Option<Arc<Mutex<Chunk>>>,
}

impl ThreadState {
    fn refresh(&mut self) {
        let e = EPOCH.load(Ordering::Acquire);
        if e == self.epoch && self.session.is_some() {
            return;
        }
        self.forget_if_forked();
        self.flush_mine();
        if FORK_GEN.load(Ordering::Relaxed) != 0 && SESSION.read().is_none() {
            start_after_fork();
        }
        let e = EPOCH.load(Ordering::Acquire);
        self.epoch = e;
        self.session = SESSION.read().clone();
        self.chunk = self.session.as_ref().map(|s| {
            let mut chunk = Chunk::new(s.threshold + 1024);
            chunk.slot = s.pending.as_ref().and_then(|p| p.take(s.fsize_cap));
            let c = Arc::new(Mutex::new(chunk));
            s.buffers.lock().push(c.clone());
            c
        });
    }

    /// In a forked child, what this thread cached is the parent's: dropped unwritten (the
    /// parent writes its own buffers), and the thread id is the child's.
    fn forget_if_forked(&mut self) {
        let g = FORK_GEN.load(Ordering::SeqCst);
        if g != self.fork_gen {
            self.fork_gen = g;
            self.session = None;
            self.chunk = None;
            self.tid = sys::gettid();
        }
    }

    fn flush_mine(&mut self) {
        if let (Some(s), Some(c)) = (&self.session, &self.chunk) {
            let mut c = c.lock();
            s.drain(&mut c);
            if let Some(st) = &s.stream {
                st.absorb(&mut c.stream);
            }
            // The buffer is left behind (another session, or the thread ends): its
            // emptied slot goes to the next thread.
            if let (Some(p), Some(slot)) = (&s.pending, c.slot.take()) {
                p.give(slot);
            }
        }
    }
}

impl Drop for ThreadState {
    fn drop(&mut self) {
        self.forget_if_forked();
        self.flush_mine();
        if let (Some(s), Some(c)) = (&self.session, &self.chunk) {
            s.buffers.lock().retain(|b| !Arc::ptr_eq(b, c));
        }
    }
}

thread_local! {
    static THREAD: RefCell<ThreadState> = RefCell::new(ThreadState {
        epoch: u64::MAX,
        fork_gen: FORK_GEN.load(Ordering::SeqCst),
        tid: sys::gettid(),
        session: None,
        chunk: None,
    });
}

// ---------------------------------------------------------------------------------------
// Spans and records

/// Timing of one callback: entry, before the under call, after it, exit.
pub struct Span {
    op: Op,
    sub: u32,
    lvl: Level,
    /// The level from which this span writes a record: its operation's, or lower (see
    /// [`record_with`](Self::record_with)).
    min: Option<Level>,
    t0: Tick,
    t1: Tick,
    t2: Tick,
    is_async: bool,
    /// The `req` column: the request id of an operation left in flight, or of the request a
    /// `request.*` callback acts on.
    req: u64,
    /// The `req_done` column.
    req_done: u8,
    /// The `exec_ns` column.
    exec_ns: u64,
}

/// One event to record.
pub struct Event<'a> {
    /// The object's state node, when there is one.
    pub node: Option<&'a Node>,
    /// Kind of the object when there is no node.
    pub kind: Kind,
    /// HDF5 status.
    pub status: i32,
    /// Data I/O details.
    pub io: Option<&'a Io>,
    /// Datasets in a multi-dataset call (records share the call's time).
    pub batch: u32,
    /// `level=element` detail.
    pub detail: &'a str,
    /// Bounding box of the file selection (`level>=dataset`).
    pub bbox: &'a str,
    /// Path override (e.g. the name of a created link).
    pub path: Option<&'a str>,
    /// The label an anonymous object's earlier records carry, on the link that names it.
    pub anon: &'a str,
}

impl Default for Event<'_> {
    fn default() -> Self {
        Event {
            node: None,
            kind: Kind::None,
            status: 0,
            io: None,
            batch: 1,
            detail: "",
            bbox: "",
            path: None,
            anon: "",
        }
    }
}

impl Span {
    /// Entry of a callback. Reads the clock only when something will be recorded. The
    /// under call is taken to start here too (a clock read costs ~20 ns on a VM: the
    /// wrappers call the under connector right away); a callback with work of its own
    /// before the under call marks it with [`under_start`](Self::under_start).
    #[inline]
    pub fn begin(op: Op, sub: u32) -> Span {
        let lvl = level();
        let now = if lvl == Level::Off {
            0 // never read when off
        } else {
            clock::now()
        };
        Span {
            op,
            sub,
            lvl,
            min: op.min_level(),
            t0: now,
            t1: now,
            t2: now,
            is_async: false,
            req: 0,
            req_done: 0,
            exec_ns: 0,
        }
    }

    /// `req` is the request id [`crate::ffi::wrap_req`] gave (0: none). A request marks the
    /// operation as still in flight when the callback returns (vol-async runs it on a
    /// background thread). A request slot alone does not count: the native connector leaves
    /// it empty and has finished.
    #[inline]
    pub fn set_in_flight(&mut self, req: u64) {
        self.is_async = req != 0;
        self.req = req;
    }

    /// For a `request.*` callback: the request it acts on, and `done` (1 succeeded, 2 failed,
    /// 3 canceled) when this callback is the first to see it finished, else 0.
    /// `exec_ns`: how long the operation ran, as the connector below answered once it had
    /// finished (0: no answer).
    #[inline]
    pub fn set_request(&mut self, req: u64, done: u8, exec_ns: u64) {
        self.req = req;
        self.req_done = done;
        self.exec_ns = exec_ns;
    }

    /// When the callback started (0 when nothing is recorded).
    #[inline]
    pub fn start(&self) -> Tick {
        self.t0
    }

    /// Whether this span records anything (a session runs).
    #[inline]
    pub fn active(&self) -> bool {
        self.lvl != Level::Off
    }

    /// The level in force for this span.
    #[inline]
    pub fn level(&self) -> Level {
        self.lvl
    }

    /// Whether this span writes a trace record (the level in force reaches its
    /// operation's): only a record has the time inside the under connector, so only then
    /// is the clock read around the under call.
    #[inline]
    fn records(&self) -> bool {
        self.lvl > Level::Summary && self.min.is_some_and(|m| self.lvl >= m)
    }

    /// For a `request.*` callback: it writes its record also wherever the row of `origin`,
    /// the operation that left the request in flight, is written, so that the operation's
    /// completion is in the trace at every level that has the operation (a file create's
    /// wait at `level=file`). Call it right after [`begin`](Self::begin).
    #[inline]
    pub fn record_with(&mut self, origin: Op) {
        self.min = match (self.min, origin.min_level()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
    }

    /// Just before the under connector is called, after work of the callback's own.
    #[inline]
    pub fn under_start(&mut self) {
        if self.records() {
            self.t1 = clock::now();
        }
    }

    /// Just after the under connector returned.
    #[inline]
    pub fn under_end(&mut self) {
        if self.records() {
            self.t2 = clock::now();
        }
    }

    /// Exit: updates the node's counters and writes the record.
    pub fn finish(&self, ev: &Event<'_>) {
        if !self.active() {
            return;
        }
        let t3 = clock::now();
        with_session(|s, sink| self.record(s, sink, ev, t3));
    }

    fn record(&self, s: &Session, sink: Option<(&Mutex<Chunk>, u64)>, ev: &Event<'_>, t3: Tick) {
        let total = clock::ns_between(self.t0, t3);
        let under = clock::ns_between(self.t1, self.t2);
        let start_ns = s.wall_ns(self.t0);
        if let Some(node) = ev.node {
            node.note_call(start_ns, total, ev.status, ev.io, ev.batch);
        }
        if !self.records() {
            return;
        }
        // A multi-dataset call's records share its time (a division only then: it costs
        // tens of cycles).
        let (total_ns, under_ns) = match u64::from(ev.batch.max(1)) {
            1 => (total, under.min(total)),
            b => (total / b, (under / b).min(total / b)),
        };
        let io = ev.io.copied().unwrap_or_default();
        let mut mem_type = [0u8; 40];
        let op = op_name(self.op, self.sub);
        let kind = ev.node.map_or(ev.kind, |n| n.kind);
        let keys = TextKeys {
            op: op_key(self.op, self.sub),
            kind: kind.name_key(),
            file: ev.node.map_or(0, |n| n.file_key),
            path: match (ev.node, ev.path) {
                (Some(n), None) => n.path_key(),
                _ => 0,
            },
        };
        let rec = TraceRecordRef {
            seq: s.records.fetch_add(1, Ordering::Relaxed),
            start_ns,
            total_ns,
            under_ns,
            rank: s.rank,
            pid: s.pid,
            tid: sink.map_or_else(sys::gettid, |(_, tid)| tid),
            op,
            kind: kind.name(),
            file: ev.node.map_or("", |n| &n.file_name),
            path: ev.path.unwrap_or(ev.node.map_or("", |n| n.path())),
            status: ev.status,
            is_async: u8::from(self.is_async),
            bytes: io.bytes,
            type_size: io.type_size,
            ndims: io.ndims,
            npoints: io.npoints,
            sel: io.sel,
            xfer: io.xfer,
            xfer_actual: io.xfer_actual,
            batch: ev.batch.max(1),
            detail: if self.lvl >= Level::Element {
                ev.detail
            } else {
                ""
            },
            mem_type: io.mem_type.map_or("", |t| t.name(&mut mem_type)),
            conv: io.conv,
            file_bytes: io.file_bytes,
            blocks: io.blocks,
            bbox: ev.bbox,
            anon: ev.anon,
            req: self.req,
            req_done: self.req_done,
            exec_ns: self.exec_ns,
        };
        emit(s, sink, op, &rec, &keys, t3);
    }
}

/// The keys of a trace record's texts that have one (see [`crate::tree::text_key`]; 0:
/// none): the binary encoder finds their ids by key, without reading them.
#[derive(Default)]
struct TextKeys {
    op: u64,
    kind: u64,
    file: u64,
    path: u64,
}

impl TextKeys {
    /// The key of trace column `col`.
    #[inline(always)]
    fn of(&self, col: usize) -> u64 {
        const OP: usize = column_index(TRACE_COLUMNS, "op");
        const KIND: usize = column_index(TRACE_COLUMNS, "kind");
        const FILE: usize = column_index(TRACE_COLUMNS, "file");
        const PATH: usize = column_index(TRACE_COLUMNS, "path");
        match col {
            OP => self.op,
            KIND => self.kind,
            FILE => self.file,
            PATH => self.path,
            _ => 0,
        }
    }
}

/// One record in this many is timed for `self_ns` (see [`emit`]).
const SELF_SAMPLE: u64 = 16;

/// Sub-operation codes with a precomputed name; others are written as `?`.
const SUBS: usize = 64;

/// The names of one operation: its sub-operations `0..SUBS`, then itself.
type OpRow = Box<[OnceLock<Box<str>>]>;

/// Every `class.callback[:sub]` string, each built the first time it is recorded, so
/// encoding a record formats nothing. Building all of an operation's names at once cost
/// ~77,000 instructions per operation (64 formatted sub-operation names, when most
/// operations only ever record `sub == NONE`): ~0.8 million in a process that makes ten
/// kinds of call, inside its first calls.
static OP_NAMES: LazyLock<Vec<OnceLock<OpRow>>> =
    LazyLock::new(|| Op::ALL.iter().map(|_| OnceLock::new()).collect());

/// The name of `op` with sub-operation `sub` (`subops::NONE`: `op` alone).
fn build_op_name(op: Op, sub: u32) -> Box<str> {
    let name = subops::name(op, sub);
    if name.is_empty() {
        op.name().into()
    } else {
        format!("{}:{name}", op.name()).into_boxed_str()
    }
}

/// Where `op` with sub-operation `sub` is in its row of [`OP_NAMES`], `None` when it has
/// no precomputed name.
#[inline]
fn op_index(sub: u32) -> Option<usize> {
    if sub == subops::NONE {
        Some(SUBS)
    } else if (sub as usize) < SUBS {
        Some(sub as usize)
    } else {
        None
    }
}

/// The op column for `op` and sub-operation `sub`.
fn op_name(op: Op, sub: u32) -> &'static str {
    let Some(idx) = op_index(sub) else {
        return "?";
    };
    let row = OP_NAMES[op as usize].get_or_init(|| (0..=SUBS).map(|_| OnceLock::new()).collect());
    row[idx].get_or_init(|| build_op_name(op, sub))
}

/// The text key of [`op_name`]`(op, sub)` (below [`crate::tree::KIND_TEXT_KEYS`]), 0 for `?`.
#[inline]
fn op_key(op: Op, sub: u32) -> u64 {
    // Operation keys never reach the kinds' (a key stands for one text).
    const _: () = assert!(Op::ALL.len() * (SUBS + 1) < crate::tree::KIND_TEXT_KEYS as usize);
    op_index(sub).map_or(0, |idx| 1 + (op as usize * (SUBS + 1) + idx) as u64)
}

/// Appends one trace record in the session's format (the encoders are generated from the
/// record table in `h5prov_format`); `keys` are its texts' keys, for `bin`.
#[inline]
fn encode(
    out: &mut Vec<u8>,
    bin: &mut BinEncoder,
    format: Format,
    r: &TraceRecordRef<'_>,
    keys: &TextKeys,
) {
    match format {
        Format::Csv => r.write_csv(out),
        Format::Jsonl => r.write_jsonl(out),
        Format::Bin => r.write_bin_keyed(out, bin, |c| keys.of(c)),
    }
}

/// Writes record `r` (its `seq` and `tid` filled in) to the trace file (through the
/// thread's buffer when it has one), the stream and stderr, as configured; `t3` is when
/// the callback's own work ended, for the time spent recording (`self_ns`).
fn emit(
    s: &Session,
    sink: Option<(&Mutex<Chunk>, u64)>,
    op: &'static str,
    r: &TraceRecordRef<'_>,
    keys: &TextKeys,
    t3: Tick,
) {
    if s.cfg.to_stderr {
        let mut w = Vec::new();
        encode(&mut w, &mut BinEncoder::default(), Format::Csv, r, keys);
        let _ = std::io::stderr().write_all(&w);
    }
    let to_file = s.cfg.to_file && s.trace.is_some();
    if !to_file && !s.cfg.to_stderr {
        s.dropped.fetch_add(1, Ordering::Relaxed);
    }
    match sink {
        Some((chunk, _)) => {
            let mut c = chunk.lock();
            let c = &mut *c;
            // The stream gets every record, whether or not the trace file does, from the
            // same per-thread buffer under the same lock.
            if let Some(st) = &s.stream {
                st.record(&mut c.stream, op, r);
            }
            let mut full = false;
            if to_file {
                let from = c.buf.len();
                encode(&mut c.buf, &mut c.bin, s.cfg.format, r, keys);
                // The new record moves into the thread's sidecar slot (a copy of tens of
                // bytes and one store): what makes it survive `_exit` and `kill -9`. One
                // that does not fit is written out now, with the slot's.
                if let Some(slot) = &mut c.slot {
                    if from == 0 && slot.push(&c.buf) {
                        c.buf.clear();
                    } else {
                        full = true;
                    }
                }
            }
            // The time spent recording (summed into the session's `self_ns` when the
            // buffer is drained: no atomic per record): one record in `SELF_SAMPLE`
            // is timed and counts for all of them, drains are timed exactly. A clock
            // read per record would cost more than encoding a binary record.
            if r.seq % SELF_SAMPLE == 0 {
                c.self_ns += clock::ns_between(t3, clock::now()) * SELF_SAMPLE;
            }
            let pending = c.buf.len() + c.slot.as_ref().map_or(0, |slot| slot.len);
            if to_file && (full || pending >= s.threshold) {
                let t = clock::now();
                s.drain(c);
                c.self_ns += clock::ns_between(t, clock::now());
            }
        }
        None => {
            if let Some(st) = &s.stream {
                st.record_alone(op, r);
            }
            if to_file {
                let mut data = Vec::with_capacity(512);
                encode(&mut data, &mut BinEncoder::default(), s.cfg.format, r, keys);
                s.write_trace(&data, None);
            }
            let spent = clock::ns_between(t3, clock::now());
            s.self_ns.fetch_add(spent, Ordering::Relaxed);
        }
    }
}

/// Writes the summary row of a state node whose last holder went ([`crate::tree::release`]).
pub fn object_summary(n: &Node) {
    // Before the row reads the node, and whatever the level: the deferred work also lets
    // go of what it holds (a property list).
    n.describe_deferred();
    if level() == Level::Off {
        return;
    }
    with_session(|s, _| summary_of(s, n));
}

/// Runs `f` with the session and, when the calling thread has one, its record buffer
/// and thread id: the thread's cached ones (no lock, no reference count), else the global
/// session without a buffer (thread-locals gone at process exit, or busy).
fn with_session(f: impl FnOnce(&Session, Option<(&Mutex<Chunk>, u64)>)) {
    let mut f = Some(f);
    let _ = THREAD.try_with(|t| {
        let Ok(mut t) = t.try_borrow_mut() else {
            return;
        };
        t.refresh();
        let t = &*t;
        if let (Some(s), Some(f)) = (&t.session, f.take()) {
            f(s, t.chunk.as_deref().map(|c| (c, t.tid)));
        }
    });
    if let Some(f) = f {
        let s = SESSION.read().clone();
        if let Some(s) = s {
            f(&s, None);
        }
    }
}

fn summary_of(s: &Session, n: &Node) {
    let Some(objects) = s.objects.as_ref() else {
        return;
    };
    let min = match n.kind {
        Kind::File => Level::Summary,
        Kind::Group => Level::Group,
        Kind::Request | Kind::None => return,
        _ => Level::Summary,
    };
    if s.cfg.level < min && s.cfg.level != Level::Summary {
        return;
    }
    let st = n.stats.lock().clone();
    let open_ns = if n.kind == Kind::File && st.open_ns == 0 {
        st.last_ns.saturating_sub(st.first_ns)
    } else {
        st.open_ns
    };
    let shape = n.shape.lock();
    let Some(shape) = shape.as_ref() else {
        // Files: where they live and how they were opened.
        let (mut align_buf, mut fs_buf) = ([0u8; 42], [0u8; 20]);
        let desc = Desc {
            align: st
                .align
                .map_or("", |(t, a)| join_pair(&mut align_buf, t, a)),
            fs: st
                .fs_magic
                .map_or("", |m| crate::tree::fs_name(m, &mut fs_buf)),
            cache: st.chunk_cache.as_deref().unwrap_or(""),
            libver: st.libver.unwrap_or(""),
            // Once per file row: the state the process's last close left it in.
            at_close: if n.kind == Kind::File {
                crate::tree::FileStat::of(std::path::Path::new(&*n.file_name)).unwrap_or_default()
            } else {
                crate::tree::FileStat::default()
            },
            ..Desc::default()
        };
        return write_summary(s, objects, n, &st, &desc, open_ns);
    };
    let (mut dims_buf, mut chunk_buf, mut ftype_buf) = ([0u8; 32 * 21], [0u8; 32 * 21], [0u8; 40]);
    let mut desc = Desc {
        dims: join_dims(&mut dims_buf, &shape.dims),
        type_size: shape.type_size,
        layout: shape.layout,
        ..Desc::default()
    };
    // The storage description is about datasets (attributes have no DCPL).
    if n.kind == Kind::Dataset {
        desc.chunk = join_dims(&mut chunk_buf, &shape.chunk);
        desc.ftype = shape.ftype.map_or("", |t| t.name(&mut ftype_buf));
        desc.filters = &shape.filters;
        desc.fill_time = shape.fill_time;
        desc.alloc_time = shape.alloc_time;
        desc.fill = shape.fill;
        desc.cache = &shape.cache;
    }
    write_summary(s, objects, n, &st, &desc, open_ns);
}

/// `threshold:alignment` into `buf`, without allocating.
fn join_pair(buf: &mut [u8; 42], a: u64, b: u64) -> &str {
    let mut len = 0;
    for (i, v) in [a, b].into_iter().enumerate() {
        if i > 0 {
            buf[len] = b':';
            len += 1;
        }
        let mut digits = itoa::Buffer::new();
        let text = digits.format(v).as_bytes();
        buf[len..len + text.len()].copy_from_slice(text);
        len += text.len();
    }
    std::str::from_utf8(&buf[..len]).unwrap_or("")
}

/// `10x20` into `buf`, without allocating: at most 32 dimensions of 20 digits.
fn join_dims<'b>(buf: &'b mut [u8; 32 * 21], dims: &[u64]) -> &'b str {
    let mut len = 0;
    for (i, d) in dims.iter().enumerate() {
        let mut digits = itoa::Buffer::new();
        let text = digits.format(*d).as_bytes();
        let sep = usize::from(i > 0);
        if len + sep + text.len() > buf.len() {
            break;
        }
        if sep == 1 {
            buf[len] = b'x';
        }
        buf[len + sep..len + sep + text.len()].copy_from_slice(text);
        len += sep + text.len();
    }
    std::str::from_utf8(&buf[..len]).unwrap_or("")
}

/// The shape columns of an objects-file row.
#[derive(Default)]
struct Desc<'a> {
    dims: &'a str,
    type_size: u64,
    layout: &'static str,
    chunk: &'a str,
    ftype: &'a str,
    filters: &'a str,
    fill_time: &'static str,
    alloc_time: &'static str,
    fill: &'static str,
    cache: &'a str,
    align: &'a str,
    fs: &'a str,
    libver: &'static str,
    at_close: crate::tree::FileStat,
}

/// Encodes one objects-file row straight into the pending block.
fn write_summary(
    s: &Session,
    objects: &Mutex<Objects>,
    n: &Node,
    st: &crate::tree::Stats,
    d: &Desc<'_>,
    open_ns: u64,
) {
    let mut token = [0u8; 52];
    let row = ObjectSummaryRef {
        rank: s.rank,
        pid: s.pid,
        kind: n.kind.name(),
        file: &n.file_name,
        path: n.path(),
        token: n.token_hex(&mut token),
        opens: st.opens,
        accesses: st.accesses,
        reads: st.reads,
        writes: st.writes,
        bytes_read: st.bytes_read,
        bytes_written: st.bytes_written,
        read_ns: st.read_ns,
        write_ns: st.write_ns,
        first_ns: st.first_ns,
        last_ns: st.last_ns,
        dims: d.dims,
        type_size: d.type_size,
        layout: d.layout,
        ind_io: st.ind_io,
        coll_io: st.coll_io,
        broken_coll_io: st.broken_coll_io,
        created: u8::from(st.created),
        dsets_created: st.dsets_created,
        dsets_opened: st.dsets_opened,
        groups_created: st.groups_created,
        groups_opened: st.groups_opened,
        open_ns,
        chunk: d.chunk,
        ftype: d.ftype,
        filters: d.filters,
        fill_time: d.fill_time,
        alloc_time: d.alloc_time,
        cache: d.cache,
        file_bytes_read: st.file_bytes_read,
        file_bytes_written: st.file_bytes_written,
        mpio: u8::from(st.mpio),
        align: d.align,
        fs: d.fs,
        fill: d.fill,
        libver: d.libver,
        dev: st.at_open.map_or(0, |a| a.dev),
        ino: st.at_open.map_or(0, |a| a.ino),
        open_size: st.at_open.map_or(0, |a| a.size),
        open_mtime_ns: st.at_open.map_or(0, |a| a.mtime_ns),
        close_size: d.at_close.size,
        close_mtime_ns: d.at_close.mtime_ns,
        intent: st.intent.name(),
        stored_bytes: st.stored_bytes,
    };
    let mut g = objects.lock();
    let Objects { buf: out, bin, .. } = &mut *g;
    match s.cfg.format {
        Format::Csv => {
            // `write_csv` is not inlined here and reads the row through a reference, so
            // the row must be in memory: a copy made in this arm keeps those stores off
            // the binary and JSONL paths (with the shared `row` in memory, they cost the
            // binary encoding ~117 instructions per row).
            let copy = row;
            copy.write_csv(out)
        }
        Format::Jsonl => row.write_jsonl(out),
        // The node's keys, as for its trace records: most rows then find their kind and
        // file without hashing them, and their path once.
        Format::Bin => row.write_bin_keyed(out, bin, |c| {
            const KIND: usize = column_index(OBJECT_COLUMNS, "kind");
            const FILE: usize = column_index(OBJECT_COLUMNS, "file");
            const PATH: usize = column_index(OBJECT_COLUMNS, "path");
            match c {
                KIND => n.kind.name_key(),
                FILE => n.file_key,
                PATH => n.path_key(),
                _ => 0,
            }
        }),
    }
    if g.buf.len() >= s.threshold {
        s.drain_objects(&mut g);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use h5prov_format::ObjectSummary;
    use std::fmt::Write as _;

    /// `r` encoded alone (a fresh encoder, no text keys).
    fn encoded(format: Format, r: &TraceRecordRef<'_>) -> Vec<u8> {
        let mut out = Vec::new();
        let keys = TextKeys::default();
        encode(&mut out, &mut BinEncoder::default(), format, r, &keys);
        out
    }

    /// Short blocks are stored in their frame (a raw block), longer ones compressed, and
    /// zstd's own decoder reads both back, alone and concatenated as in a file.
    #[test]
    fn short_blocks_are_stored_and_every_frame_decodes() {
        let mut z = Zstd::new(Format::Bin).unwrap();
        let mut file = Vec::new();
        let mut want = Vec::new();
        for len in [0, 1, 255, 256, 4095, 4096, 100_000] {
            let data: Vec<u8> = (0..len).map(|i| (i % 7 * 31 + i / 1000) as u8).collect();
            let frame = z.frame(&data).unwrap().to_vec();
            // Block type, bits 1-2 of the first block header: 0 raw, 2 compressed.
            let stored = frame.len() == 4 + 1 + 4 + 3 + len && (frame[9] >> 1) & 3 == 0;
            assert_eq!(stored, len < STORE_BELOW, "{len}");
            assert_eq!(zstd::stream::decode_all(&frame[..]).unwrap(), data, "{len}");
            file.extend_from_slice(&frame);
            want.extend_from_slice(&data);
        }
        assert_eq!(zstd::stream::decode_all(&file[..]).unwrap(), want);
    }

    #[test]
    fn summary_rows_read_back_with_the_csv_crate() {
        let row = ObjectSummaryRef {
            rank: 2,
            pid: 7,
            kind: "dataset",
            file: "x,\"y\".h5",
            path: "/a",
            token: "1:0b30",
            opens: 2,
            accesses: 5,
            reads: 0,
            writes: 3,
            bytes_read: 0,
            bytes_written: 24,
            read_ns: 0,
            write_ns: 7,
            first_ns: 1,
            last_ns: 2,
            dims: "10x20",
            type_size: 8,
            layout: "chunked",
            ind_io: 3,
            coll_io: 0,
            broken_coll_io: 0,
            created: 1,
            dsets_created: 0,
            dsets_opened: 0,
            groups_created: 0,
            groups_opened: 0,
            open_ns: 9,
            chunk: "64x64",
            ftype: "float64le",
            filters: "shuffle+deflate(6)",
            fill_time: "ifset",
            alloc_time: "incr",
            cache: "12421:16777216:0.75",
            file_bytes_read: 0,
            file_bytes_written: 48,
            mpio: 0,
            align: "",
            fs: "",
            fill: "user",
            dev: 0,
            ino: 0,
            open_size: 0,
            open_mtime_ns: 0,
            close_size: 0,
            close_mtime_ns: 0,
            intent: "",
            libver: "",
            stored_bytes: 0,
        };
        let mut out = format!("{}\n", OBJECT_COLUMNS.join(",")).into_bytes();
        row.write_csv(&mut out);
        let back: ObjectSummary = csv::Reader::from_reader(out.as_slice())
            .deserialize()
            .next()
            .unwrap()
            .unwrap();
        assert_eq!(back.file, "x,\"y\".h5");
        assert_eq!((back.opens, back.writes, back.open_ns), (2, 3, 9));
        assert_eq!(back.dims, "10x20");
        assert_eq!(
            (back.chunk.as_str(), back.cache.as_str()),
            ("64x64", "12421:16777216:0.75")
        );
        let json = serde_json::to_string(&row).unwrap();
        let back2: ObjectSummary = serde_json::from_str(&json).unwrap();
        assert_eq!(back2, back, "CSV and JSONL rows carry the same fields");
    }

    #[test]
    fn binary_buffers_count_their_records_by_length() {
        let r = TraceRecordRef {
            op: "file.open",
            path: "/a\nb",
            ..TraceRecordRef::default()
        };
        let (mut b, mut enc) = (Vec::new(), BinEncoder::default());
        for _ in 0..3 {
            encode(&mut b, &mut enc, Format::Bin, &r, &TextKeys::default());
        }
        // A second block: its zero length is no record.
        enc.new_block();
        encode(&mut b, &mut enc, Format::Bin, &r, &TextKeys::default());
        assert_eq!(count_records(Format::Bin, &b), 4);
        assert_eq!(count_records(Format::Bin, &[]), 0);
    }

    #[test]
    fn detail_is_bounded() {
        let mut d = Detail::default();
        for i in 0..1000 {
            if write!(d, "{i},").is_err() {
                break;
            }
        }
        assert!(d.as_str().len() <= 256);
        assert!(d.as_str().ends_with("..."));
    }

    #[test]
    fn op_names_have_sub_operations() {
        assert_eq!(op_name(Op::FileSpecific, 0), "file.specific:flush");
        assert_eq!(op_name(Op::DatasetWrite, subops::NONE), "dataset.write");
        assert_eq!(op_name(Op::DatasetOptional, 40), "dataset.optional:40");
        assert_eq!(op_name(Op::GenericOptional, 5000), "?");
    }

    #[test]
    fn csv_records_have_every_column() {
        let r = TraceRecordRef {
            seq: 7,
            start_ns: 1,
            total_ns: 10,
            under_ns: 5,
            rank: 3,
            pid: 42,
            tid: 99,
            op: op_name(Op::DatasetWrite, subops::NONE),
            kind: Kind::Dataset.name(),
            file: "a,b.h5",
            path: "/g/\"d\"",
            bytes: 800,
            type_size: 8,
            ndims: 1,
            npoints: 100,
            sel: "hyperslab",
            batch: 1,
            detail: "start=5,10;count=3,4",
            ..TraceRecordRef::default()
        };
        let text = String::from_utf8(encoded(Format::Csv, &r)).unwrap();
        let mut rd = csv::ReaderBuilder::new()
            .has_headers(false)
            .from_reader(text.as_bytes());
        let row = rd.records().next().unwrap().unwrap();
        assert_eq!(row.len(), TRACE_COLUMNS.len());
        let with_header = format!("{}\n{}", TRACE_COLUMNS.join(","), text);
        let mut hdr = csv::Reader::from_reader(with_header.as_bytes())
            .into_deserialize::<h5prov_format::TraceRecord>();
        let rec = hdr.next().unwrap().unwrap();
        assert_eq!(rec.file, "a,b.h5");
        assert_eq!(rec.path, "/g/\"d\"");
        assert_eq!(rec.bytes, 800);
        assert_eq!(rec.op, "dataset.write");
        assert_eq!(rec.seq, 7);
        assert_eq!(rec.detail, "start=5,10;count=3,4", "a quoted last field");

        let line = String::from_utf8(encoded(Format::Jsonl, &r)).unwrap();
        let back: h5prov_format::TraceRecord = serde_json::from_str(line.trim()).unwrap();
        assert_eq!(back, rec, "CSV and JSONL carry the same fields");
    }
}
