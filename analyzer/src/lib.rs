//! The h5prov analyzer: reads the per-process trace, objects and meta files that
//! `libh5prov.so` writes and tells which HDF5 operations are hot, which calls, ranks and
//! objects straggle, how the run splits into I/O phases, and what to do about it.
//!
//! The crate is laid out by pipeline stage; data flows one way, no module imports a later
//! stage and no two modules import each other (`tests/stages.rs` checks it). The order
//! enforced, earliest first: [`units`], [`read`], [`aggregate`], [`analysis`],
//! [`insights`], [`report`], [`render`], then [`export`] and [`live`] (the same stage, not
//! importing each other), then this crate root.
//! 1. [`read`]: discovery and streaming readers (binary, CSV, JSONL) that yield borrowed
//!    [`read::record::RecordRef`]s;
//! 2. [`aggregate`]: one [`aggregate::Accumulator`] per worker thread folds files one after
//!    another (with the consistency [`aggregate::check`]s, latency sketches, timeline,
//!    collective calls, asynchronous operations and dataset facts), and a commutative merge
//!    combines the workers';
//! 3. [`analysis`], detection (hot functions, stragglers, objects, phases, collective
//!    skew), into the serialisable [`analysis::Report`], whose findings are typed in
//!    [`analysis::findings`];
//! 4. [`insights`], the rules that read a report and its aggregate and make the findings;
//! 5. [`report`], whose [`report::analyze`] runs detection, then the rules;
//! 6. [`render`]: pure renderers (terminal, JSON, CSV, HTML, SVG) that return bytes, and
//!    [`render::compare`] of two reports.
//!
//! Beside the pipeline: [`units`] formats quantities for people (usable by every stage);
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
pub mod report;
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

/// [`load`] then [`report::analyze`], without progress reporting.
pub fn report_for(
    dir: &Path,
    opts: &read::ReadOptions,
    th: &insights::Thresholds,
) -> Result<analysis::Report, read::Error> {
    let agg = load(dir, opts, &|_| {})?;
    Ok(report::analyze(agg, th, &[dir.display().to_string()]))
}
