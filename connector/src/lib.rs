//! `libh5prov.so`: an HDF5 (>= 1.14) pass-through VOL connector that times every VOL
//! callback around the under (terminal) connector and writes per-process provenance traces
//! and per-object summaries.
//!
//! Layout:
//! - [`info`] and [`config`]: the connector string, parsed and validated (pure, safe);
//! - [`tree`]: the homomorphic object tree of shared, reference-counted state nodes;
//! - [`trace`]: timing spans, record encoding, per-thread buffers, trace files;
//! - [`stream`]: `stream=`, messages to a collector while the job runs;
//! - [`ffi`]: the only `unsafe` code: the callback table, the trampolines it generates, the
//!   hand-written callbacks, the FFI guard and the plugin entry points.
//!
//! See `docs/TRACE-FORMAT.md` for what is written and `connector/SAFETY.md` for the HDF5
//! rules this crate relies on.
#![warn(missing_docs)]
#![deny(unsafe_code)]

pub mod clock;
pub mod config;
// The C boundary: the only module with `unsafe` (see `connector/SAFETY.md`).
#[allow(unsafe_code, missing_docs, clippy::missing_safety_doc)]
pub mod ffi;
pub mod info;
pub mod ops;
pub mod stream;
pub mod subops;
pub mod trace;
pub mod tree;
