//! The h5prov analyzer: reads the per-process trace, objects and meta files that
//! `libh5prov.so` writes and tells which HDF5 operations are hot, which calls, ranks and
//! objects straggle, how the run splits into I/O phases, and what to do about it.
//!
//! The crate is laid out by pipeline stage; data flows one way and no module imports a
//! later stage (`tests/stages.rs` checks it):
//! 1. [`read`]: discovery and streaming readers (binary, CSV, JSONL) that yield borrowed
//!    [`read::record::RecordRef`]s;
//! 2. [`aggregate`]: one [`aggregate::Accumulator`] per worker thread folds files one after
//!    another (with the consistency [`aggregate::check`]s, latency sketches, timeline,
//!    collective calls, asynchronous operations and dataset facts), and a commutative merge
//!    combines the workers';
//! 3. [`analysis`] and [`insights`]: detection (hot functions, stragglers, objects, phases,
//!    collective skew) and the findings, into a serialisable [`analysis::Report`];
//! 4. [`render`]: pure renderers (terminal, JSON, CSV, HTML, SVG) that return bytes, and
//!    [`render::compare`] of two reports.
//!
//! Beside the pipeline: [`units`] formats quantities for people (detection, renderers, `top`);
//! [`export`] writes Perfetto JSON, Parquet and PROV; [`live`] is `h5prov run`, the
//! streaming collector and `h5prov top`.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod aggregate;
pub mod analysis;
pub mod export;
pub mod insights;
pub mod live;
pub mod read;
pub mod render;
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
