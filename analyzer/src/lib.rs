//! The h5prov analyzer: reads the per-process trace, objects and meta files that
//! `libh5prov.so` writes and tells which HDF5 operations are hot, which calls, ranks and
//! objects straggle, how the run splits into I/O phases, and what to do about it.
//!
//! Layers (each usable on its own):
//! 1. [`read`]: discovery and streaming readers (CSV, JSONL) that yield borrowed
//!    [`record::RecordRef`]s;
//! 2. [`aggregate`]: one [`aggregate::Accumulator`] per worker thread reads files one
//!    after another, and a commutative merge combines the workers';
//! 3. [`analysis`]: detection (hot functions, stragglers, objects, phases, insights) into a
//!    serialisable [`analysis::Report`], with [`check`]'s warnings about inconsistent
//!    traces (checked as the data is read);
//! 4. [`render`]: pure renderers (terminal, JSON, CSV, HTML) that return bytes;
//!    [`export`] writes Chrome/Perfetto trace-event JSON; [`compare`] compares two runs.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod aggregate;
pub mod analysis;
pub mod asyncops;
pub mod check;
pub mod collect;
pub mod collective;
pub mod columnar;
pub mod compare;
pub mod costmodel;
pub mod export;
pub mod insights;
pub mod insights_dataset;
pub mod insights_mpi;
pub mod live;
pub mod prov;
pub mod read;
pub mod record;
pub mod render;
pub mod run;
pub mod sketch;
pub mod stats;
pub mod timeline;
pub mod top;
pub mod units;

use std::path::Path;

/// Reads every h5prov file under `dir` on the current rayon pool and returns the merged
/// aggregate. `progress` receives the byte size of each file as it finishes.
pub fn load(
    dir: &Path,
    opts: &read::ReadOptions,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<aggregate::Aggregate, read::Error> {
    let inputs = read::discover(dir)?;
    aggregate::aggregate_all(&inputs, opts, progress)
}

/// [`load`] then [`analysis::analyze`], without progress reporting.
pub fn report_for(
    dir: &Path,
    opts: &read::ReadOptions,
    th: &insights::Thresholds,
) -> Result<analysis::Report, read::Error> {
    let agg = load(dir, opts, &|_| {})?;
    Ok(analysis::analyze(agg, th, &[dir.display().to_string()]))
}
