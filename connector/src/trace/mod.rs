//! Provenance capture: timing spans, record encoding, per-thread buffers and per-process
//! trace files. Safe Rust; the few OS calls it needs come from [`crate::ffi::sys`].
//!
//! Hot path (one traced callback): four [`clock`](crate::clock) readings, one relaxed
//! atomic load of the level, one uncontended per-object lock for the counters, and one
//! encode into the calling thread's buffer (uncontended per-thread lock, no allocation, no
//! global lock). Buffers are written to the process's trace file when they fill, at file
//! close, at connector terminate and when the thread exits.
//!
//! The files, in the order a record takes:
//! - `record`: [`Span`] times one callback, its [`Event`] becomes a trace record (encoded,
//!   then buffered, streamed or printed);
//! - `thread`: each thread's buffer of pending records and its cached view of the session;
//! - `session`: the global state: the level, the process's [`Session`] (files, counters,
//!   stream) and its life, [`start`], [`flush`] and [`finish`];
//! - `files`: the trace and objects files and their blocks (zstd frames);
//! - `pending`: the sidecar where buffered records survive a killed process;
//! - `summary`: the objects file's row of each released state node;
//! - `fork`: the `fork()` handlers;
//! - `detail`: [`Detail`], the bounded text of `level=element` selections.

mod detail;
mod files;
mod fork;
mod pending;
mod record;
mod session;
mod summary;
mod thread;

pub use detail::Detail;
pub use fork::{after_fork_child, after_fork_parent, before_fork, register_fork_handlers};
pub use record::{Event, Span};
pub use session::{
    finish, flush, launcher_job_id, launcher_rank, launcher_size, level, note_coll_metadata, start,
    Session,
};
pub use summary::object_summary;

#[cfg(test)]
mod tests;
