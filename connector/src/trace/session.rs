//! Global state: the process's trace [`Session`] (its files, counters and stream), the
//! level and session every record reads, the process's identity, and the session's life:
//! [`start`], [`flush`] and [`finish`].

use super::files::{create_files, write_block, Objects, TraceOut, Zstd};
use super::pending::{Pending, PendingSlots, Slot};
use super::summary::object_summary;
use super::thread::{Chunk, THREAD};
use crate::clock::{self, Tick};
use crate::config::{Config, Format, Level};
use crate::ffi::sys;
use crate::stream::{self, Stream};
use h5prov_format::{
    BinEncoder, ObjectSummaryRef, ProcessMeta, TraceRecordRef, FORMAT_VERSION, OBJECT_COLUMNS,
    PENDING_SUFFIX, TRACE_COLUMNS,
};
use parking_lot::{Mutex, RwLock};
use std::fs::File;
use std::io::{Seek, Write};
use std::os::unix::fs::DirBuilderExt;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, LazyLock};
use std::time::{SystemTime, UNIX_EPOCH};

/// The active level as a number (`Level as u8`), `0` (off) when no session runs.
pub(super) static LEVEL: AtomicU8 = AtomicU8::new(0);
pub(super) static EPOCH: AtomicU64 = AtomicU64::new(0);
pub(super) static SESSION: LazyLock<RwLock<Option<Arc<Session>>>> =
    LazyLock::new(|| RwLock::new(None));
pub(super) static SESSIONS_STARTED: AtomicU64 = AtomicU64::new(0);

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

pub(super) fn level_to_u8(l: Level) -> u8 {
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
    pub(super) cfg: Config,
    /// The connector string (the metadata's `connector`), to start the same session again
    /// in a forked child.
    pub(super) info: String,
    pub(super) pid: u32,
    pub(super) rank: i64,
    /// `CLOCK_MONOTONIC` at the anchor, ns.
    pub(super) anchor_mono_ns: u64,
    pub(super) anchor_wall_ns: u64,
    pub(super) trace: Option<Mutex<TraceOut>>,
    /// The pending-records sidecar: each thread's buffered records, mirrored where they
    /// survive the process ([`Slot`]).
    pub(super) pending: Option<Pending>,
    /// The objects file and its pending rows (written in blocks, not a syscall per row).
    pub(super) objects: Option<Mutex<Objects>>,
    pub(super) meta: Option<Mutex<(File, ProcessMeta)>>,
    pub(super) records: AtomicU64,
    pub(super) bytes: AtomicU64,
    pub(super) self_ns: AtomicU64,
    pub(super) dropped: AtomicU64,
    pub(super) errors: AtomicU64,
    pub(super) warned: AtomicBool,
    /// The trace file reached `max_size` (noted once on stderr).
    pub(super) capped: AtomicBool,
    /// The size no file of ours may pass: the process's `RLIMIT_FSIZE` (soft limit) less a
    /// margin for headers and the metadata record. Writing past it would raise `SIGXFSZ`,
    /// which kills the application; records beyond it are dropped and counted instead.
    pub(super) fsize_cap: Option<u64>,
    /// Bytes written to the objects file.
    pub(super) objects_bytes: AtomicU64,
    pub(super) threshold: usize,
    pub(super) buffers: Arc<Mutex<Vec<Arc<Mutex<Chunk>>>>>,
    /// `stream=`: the messages to a collector.
    pub(super) stream: Option<Stream>,
    pub(super) coll_md_reads: AtomicBool,
    pub(super) coll_md_writes: AtomicBool,
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
    pub(super) fn write_trace(&self, bytes: &[u8], slot: Option<&Slot>) {
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
    pub(super) fn drain(&self, chunk: &mut Chunk) {
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
    pub(super) fn drain_objects(&self, objects: &mut Objects) {
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

    pub(super) fn wall_ns(&self, t: Tick) -> u64 {
        (self.anchor_wall_ns + clock::mono_ns(t)).saturating_sub(self.anchor_mono_ns)
    }
}

/// The number of whole records in encoded bytes.
pub(super) fn count_records(format: Format, bytes: &[u8]) -> u64 {
    match format {
        Format::Bin => h5prov_format::bin_records(bytes),
        _ => bytes.iter().filter(|&&b| b == b'\n').count() as u64,
    }
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
    // docs/ASYNC.md). Its first record's one-time work too (`Chunk::prepare`).
    let _ = THREAD.try_with(|t| {
        if let Ok(mut t) = t.try_borrow_mut() {
            t.refresh();
            t.prepare_first_record(cfg.format);
        }
    });
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
