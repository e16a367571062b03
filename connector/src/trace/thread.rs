//! Per-thread buffers: each thread's pending records ([`Chunk`]) and its cached view of
//! the session (`THREAD`), written out when they fill, at file close, at terminate and
//! when the thread exits.

use super::fork::{start_after_fork, FORK_GEN};
use super::pending::Slot;
use super::session::{Session, EPOCH, SESSION};
use crate::config::Format;
use crate::ffi::sys;
use crate::stream;
use h5prov_format::BinEncoder;
use parking_lot::Mutex;
use std::cell::RefCell;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// A thread's pending records: encoded bytes, whole records only.
pub(super) struct Chunk {
    /// Without a sidecar slot, the block's encoded bytes. With one, the record being
    /// encoded, until it moves to the slot (so it stays in cache: only its first bytes
    /// are ever touched), plus a record that did not fit there, written at once.
    pub(super) buf: Vec<u8>,
    /// The binary encoding's block (`format=bin`): one per write of `buf`.
    pub(super) bin: BinEncoder,
    /// Time spent recording since the last drain, ns (the session's `self_ns` then).
    pub(super) self_ns: u64,
    /// Pending stream messages (`stream=`).
    pub(super) stream: stream::ThreadBuf,
    /// The sidecar slot that mirrors `buf`, when there is one.
    pub(super) slot: Option<Slot>,
}

impl Chunk {
    pub(super) fn new(cap: usize) -> Chunk {
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

pub(super) struct ThreadState {
    epoch: u64,
    /// [`FORK_GEN`] when this state was filled.
    fork_gen: u64,
    tid: u64,
    session: Option<Arc<Session>>,
    chunk: Option<Arc<Mutex<Chunk>>>,
}

impl ThreadState {
    /// Prepares this thread's buffer for its first record now ([`Chunk::prepare`]): the
    /// session starter's, at session start.
    pub(super) fn prepare_first_record(&self, format: Format) {
        if let Some(c) = &self.chunk {
            c.lock().prepare(format);
        }
    }

    pub(super) fn refresh(&mut self) {
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
    pub(super) static THREAD: RefCell<ThreadState> = RefCell::new(ThreadState {
        epoch: u64::MAX,
        fork_gen: FORK_GEN.load(Ordering::SeqCst),
        tid: sys::gettid(),
        session: None,
        chunk: None,
    });
}

/// Runs `f` with the session and, when the calling thread has one, its record buffer
/// and thread id: the thread's cached ones (no lock, no reference count), else the global
/// session without a buffer (thread-locals gone at process exit, or busy).
pub(super) fn with_session(f: impl FnOnce(&Session, Option<(&Mutex<Chunk>, u64)>)) {
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
