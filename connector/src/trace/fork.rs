//! `fork()`: the handlers that keep the session lock whole across a fork and give a forked
//! child trace files of its own, registered through [`sys::register_fork_handlers`] (which
//! names nothing above it).

use super::session::{level_to_u8, start, Session, EPOCH, LEVEL, SESSION, SESSIONS_STARTED};
use crate::config::Config;
use crate::ffi::sys;
use parking_lot::Mutex;
use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Incremented in a forked child: thread states cached before the fork belong to the
/// parent and are dropped unwritten.
pub(super) static FORK_GEN: AtomicU64 = AtomicU64::new(0);

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
pub(super) fn start_after_fork() {
    let pending = AFTER_FORK.lock().take();
    if let Some((cfg, info)) = pending {
        start(&cfg, || info);
    }
}
