//! Spans and records: [`Span`] times one callback, and its [`Event`] becomes one trace
//! record, encoded into the calling thread's buffer (or written at once without one), sent
//! to the stream and to stderr as configured.

use super::session::{level, Session};
use super::thread::{with_session, Chunk};
use crate::clock::{self, Tick};
use crate::config::{Format, Level};
use crate::ffi::sys;
use crate::ops::Op;
use crate::subops;
use crate::tree::{Io, Kind, Node};
use h5prov_format::{column_index, BinEncoder, TraceRecordRef, TRACE_COLUMNS};
use parking_lot::Mutex;
use std::io::Write;
use std::sync::atomic::Ordering;
use std::sync::{LazyLock, OnceLock};

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
pub(super) struct TextKeys {
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
pub(super) fn op_name(op: Op, sub: u32) -> &'static str {
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
pub(super) fn encode(
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
