//! The read floor of `h5prov report`: every trace and objects file under a directory read
//! with the analyzer's own readers as `h5prov report` reads them (biggest file first, one
//! worker per CPU taking the next file), into a sink that keeps one field and nothing
//! more. What `h5prov report` spends beyond this is folding, detection and rendering
//! (docs/OVERHEAD.md, "The analyzer").
//!
//! ```sh
//! cargo run --release -p h5prov-analyzer --example read_floor -- DIR
//! ```
//!
//! Prints one line: `read floor: records=R object_rows=O files=F seconds=S records_per_s=N`.

use h5prov_analyzer::read::{discover, objects::read_objects, read_trace, Error, ReadOptions};
use rayon::prelude::*;
use std::hint::black_box;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Instant;

fn main() {
    if let Err(e) = run() {
        eprintln!("read_floor: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let dir: PathBuf = std::env::args_os()
        .nth(1)
        .ok_or("usage: read_floor DIR")?
        .into();
    let t = Instant::now();
    let inputs = discover(&dir)?;
    let mut jobs: Vec<_> = (inputs.traces.iter().map(|(f, e)| (true, f, *e)))
        .chain(inputs.objects.iter().map(|(f, e)| (false, f, *e)))
        .collect();
    jobs.sort_by_key(|(_, f, _)| std::cmp::Reverse(f.size));
    let (records, rows, next) = (AtomicU64::new(0), AtomicU64::new(0), AtomicUsize::new(0));
    let opts = ReadOptions::default();
    let workers = rayon::current_num_threads().clamp(1, jobs.len().max(1));
    (0..workers)
        .into_par_iter()
        .with_max_len(1)
        .try_for_each(|_| {
            while let Some((trace, f, enc)) = jobs.get(next.fetch_add(1, Ordering::Relaxed)) {
                if *trace {
                    let d = read_trace(&f.path, *enc, &opts, |r| {
                        black_box(r.total_ns);
                    })?;
                    records.fetch_add(d.rows, Ordering::Relaxed);
                } else {
                    let d = read_objects(&f.path, *enc, &opts, |o| {
                        black_box(o.opens);
                    })?;
                    rows.fetch_add(d.rows, Ordering::Relaxed);
                }
            }
            Ok::<_, Error>(())
        })?;
    let secs = t.elapsed().as_secs_f64();
    let n = records.load(Ordering::Relaxed);
    println!(
        "read floor: records={n} object_rows={} files={} seconds={secs:.3} records_per_s={:.0}",
        rows.load(Ordering::Relaxed),
        jobs.len(),
        n as f64 / secs
    );
    Ok(())
}
