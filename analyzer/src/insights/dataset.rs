//! Dataset-level insights: chunk size against the access (`chunk_too_small`,
//! `chunk_too_large`), chunk-cache thrashing (`chunk_cache_thrash`), datatype conversion
//! (`datatype_conversion`), re-reading the same selection (`repeated_reads`) and small
//! accesses (`small_io`, `contiguous_small_writes`). `docs/INSIGHTS.md` gives each rule's
//! trigger, thresholds and references.
//!
//! What the rules need beyond the generic aggregate is collected during aggregation, in
//! [`crate::aggregate::dataset_io`]; its types and thresholds are re-exported here.

pub use crate::aggregate::dataset_io::*;
use crate::aggregate::{FileAccess, SizeHist};
use crate::analysis::Report;
use crate::insights::costmodel::{small_io_level, small_io_saving};
use crate::insights::{ins, push_hits, Evidence, Hit, Insight, RowFacts, Thresholds};
use crate::units::{fmt_bytes, fmt_ns, pct};
use std::collections::BTreeMap;

// ---------------------------------------------------------------------------------------
// The rules.

fn dims_of(s: &str) -> Option<Vec<u64>> {
    if s.is_empty() {
        return None;
    }
    s.split('x')
        .map(|d| d.trim().parse::<u64>().ok().filter(|&v| v > 0))
        .collect()
}

/// One dataset's chunk geometry against its accesses.
struct Geometry<'a> {
    file: &'a str,
    path: &'a str,
    chunk: Vec<u64>,
    chunk_bytes: u64,
    /// Chunks in the dataset.
    nchunks: u64,
    filtered: bool,
    cache_bytes: u64,
    cache_slots: u64,
    io: &'a DatasetIo,
}

/// Per access shape: chunks touched by one access (at least: an access aligned to the
/// chunk grid touches exactly this many), accesses, time and bytes.
struct ShapeCost {
    chunks: u64,
    reads: u64,
    writes: u64,
    ns: u64,
    read_ns: u64,
    write_ns: u64,
    file_bytes: u64,
}

impl Geometry<'_> {
    fn shapes(&self) -> Vec<ShapeCost> {
        self.io
            .shapes
            .iter()
            .filter_map(|(s, v)| {
                let e = dims_of(s)?;
                (e.len() == self.chunk.len()).then(|| ShapeCost {
                    chunks: e
                        .iter()
                        .zip(&self.chunk)
                        .map(|(e, c)| e.div_ceil(*c))
                        .product(),
                    reads: v.reads,
                    writes: v.writes,
                    ns: v.read_ns + v.write_ns,
                    read_ns: v.read_ns,
                    write_ns: v.write_ns,
                    file_bytes: v.file_bytes,
                })
            })
            .collect()
    }
}

fn geometries<'a>(
    rep: &'a Report,
    facts: &RowFacts<'a>,
    files: &BTreeMap<String, FileAccess>,
) -> Vec<Geometry<'a>> {
    facts
        .by_key
        .iter()
        .filter_map(|&(i, io)| {
            let chunk = dims_of(&io.chunk)?;
            let row = &rep.datasets[i as usize];
            let (f, p) = (&*row.file, row.path.as_str());
            let dims = dims_of(&row.dims)?;
            if dims.len() != chunk.len() || row.type_size == 0 {
                return None;
            }
            let chunk_bytes = chunk.iter().product::<u64>().saturating_mul(row.type_size);
            let file_cache = files.get(f).map_or((0, 0), |a| a.chunk_cache);
            let nchunks = dims
                .iter()
                .zip(&chunk)
                .map(|(d, c)| d.div_ceil(*c))
                .product();
            Some(Geometry {
                file: f,
                path: p,
                chunk,
                chunk_bytes,
                nchunks,
                filtered: !io.filters.is_empty(),
                // The dataset's own (DAPL), else its file's (FAPL), else HDF5's default.
                cache_bytes: [io.cache_bytes, file_cache.1, DEFAULT_CACHE_BYTES]
                    .into_iter()
                    .find(|&v| v > 0)
                    .unwrap_or(DEFAULT_CACHE_BYTES),
                cache_slots: [io.cache_slots, file_cache.0, DEFAULT_CACHE_SLOTS]
                    .into_iter()
                    .find(|&v| v > 0)
                    .unwrap_or(DEFAULT_CACHE_SLOTS),
                io,
            })
        })
        .collect()
}

/// Runs the dataset rules, appending their findings to `out`.
pub(crate) fn detect(
    rep: &Report,
    dio: &DatasetsIo,
    facts: &RowFacts,
    files: &BTreeMap<String, FileAccess>,
    th: &Thresholds,
    out: &mut Vec<Insight>,
) {
    let call_ns = rep.run.call_ns.max(1) as f64;
    let geo = geometries(rep, facts, files);

    // Chunks too small for the access.
    let mut hits: Vec<Hit> = Vec::new();
    for g in geo.iter().filter(|g| g.chunk_bytes < CHUNK_SMALL_BYTES) {
        let shapes = g.shapes();
        let (mut n, mut touched, mut ns, mut bytes) = (0u64, 0u64, 0u64, 0u64);
        for s in shapes
            .iter()
            .filter(|s| s.chunks as f64 >= CHUNKS_PER_ACCESS)
        {
            n += s.reads + s.writes;
            touched += s.chunks * (s.reads + s.writes);
            ns += s.ns;
            bytes += s.file_bytes;
        }
        if n > 0 {
            hits.push((
                ns,
                format!(
                    "{}:{} chunk {} ({}): {} access(es) of {} on average touch {} chunks each, {}",
                    g.file,
                    g.path,
                    g.io.chunk,
                    fmt_bytes(g.chunk_bytes),
                    n,
                    fmt_bytes(bytes / n),
                    touched / n,
                    fmt_ns(ns)
                ),
                Evidence::new()
                    .name("file", g.file)
                    .name("dataset", g.path)
                    .name("chunk", g.io.chunk.as_str())
                    .bytes("chunk_bytes", g.chunk_bytes)
                    .count("accesses", n)
                    .bytes("access_bytes", bytes / n)
                    .count("chunks_per_access", touched / n)
                    .ns("time", ns),
            ));
        }
    }
    push_hits(
        out,
        "chunk_too_small",
        hits,
        call_ns,
        |share| {
            format!(
                "Chunks below {} make each access touch many chunks ({} of HDF5 time)",
                fmt_bytes(CHUNK_SMALL_BYTES),
                pct(share)
            )
        },
        "Choose chunks of roughly 10 KiB–1 MiB shaped like the accesses (H5Pset_chunk): \
             every chunk costs an index lookup and a separate I/O (and a filter call when \
             compressed). Keep chunks within the chunk cache (H5Pset_chunk_cache).",
    );

    // Chunks too large for the access: filtered chunks that do not fit the cache are read
    // (and decompressed) whole for every access that uses part of them.
    let mut hits: Vec<Hit> = Vec::new();
    for g in geo
        .iter()
        .filter(|g| g.filtered && g.chunk_bytes > g.cache_bytes)
    {
        let (mut n, mut touched, mut ns, mut bytes) = (0u64, 0u64, 0u64, 0u64);
        for s in g.shapes() {
            let used = s.file_bytes as f64
                / ((s.reads + s.writes).max(1) * s.chunks * g.chunk_bytes) as f64;
            if used <= CHUNK_USED_FRACTION {
                n += s.reads + s.writes;
                touched += s.chunks * (s.reads + s.writes);
                ns += s.ns;
                bytes += s.file_bytes;
            }
        }
        if n > 0 {
            hits.push((
                ns,
                format!(
                    "{}:{} chunk {} ({}, {}) over a {} cache: {} access(es) of {} on average \
                     each process whole chunks, {} in all (×{:.0} the data), {}",
                    g.file,
                    g.path,
                    g.io.chunk,
                    fmt_bytes(g.chunk_bytes),
                    g.io.filters,
                    fmt_bytes(g.cache_bytes),
                    n,
                    fmt_bytes(bytes / n),
                    fmt_bytes(touched * g.chunk_bytes),
                    (touched * g.chunk_bytes) as f64 / bytes.max(1) as f64,
                    fmt_ns(ns)
                ),
                Evidence::new()
                    .name("file", g.file)
                    .name("dataset", g.path)
                    .name("chunk", g.io.chunk.as_str())
                    .bytes("chunk_bytes", g.chunk_bytes)
                    .name("filters", g.io.filters.as_str())
                    .bytes("cache_bytes", g.cache_bytes)
                    .count("accesses", n)
                    .bytes("access_bytes", bytes / n)
                    .bytes("processed_bytes", touched * g.chunk_bytes)
                    .ratio(
                        "processed_per_byte",
                        (touched * g.chunk_bytes) as f64 / bytes.max(1) as f64,
                    )
                    .ns("time", ns),
            ));
        }
    }
    push_hits(
        out,
        "chunk_too_large",
        hits,
        call_ns,
        |share| {
            format!(
                "Accesses use a small part of large filtered chunks ({} of HDF5 time)",
                pct(share)
            )
        },
        "A filtered chunk is read and decompressed (and on write recompressed) whole; one \
             larger than the chunk cache is never kept, so every access pays for all of it. \
             Make chunks match the access (H5Pset_chunk), or give the dataset a chunk cache \
             that holds them (H5Pset_chunk_cache on the DAPL).",
    );

    // Chunk cache thrashing: each chunk fits the cache, but the chunks one access spans do
    // not, so chunks are evicted before the next access uses them again.
    let mut hits: Vec<Hit> = Vec::new();
    for g in geo.iter().filter(|g| g.chunk_bytes <= g.cache_bytes) {
        for (dir, is_read) in [("read", true), ("write", false)] {
            let (mut n, mut touched, mut ns, mut span) = (0u64, 0u64, 0u64, 0u64);
            let mut all_touched = 0u64;
            for s in g.shapes() {
                let (calls, t) = if is_read {
                    (s.reads, s.read_ns)
                } else {
                    (s.writes, s.write_ns)
                };
                all_touched += s.chunks * calls;
                let over = s.chunks * g.chunk_bytes > g.cache_bytes || s.chunks > g.cache_slots;
                if over && calls > 0 {
                    n += calls;
                    touched += s.chunks * calls;
                    ns += t;
                    span = span.max(s.chunks);
                }
            }
            if n > 0 && all_touched as f64 >= CHUNK_RETOUCH * g.nchunks as f64 {
                hits.push((
                    ns,
                    format!(
                        "{}:{} {dir}s: {} call(s) each span {} chunks of {} ({}) against a \
                         cache of {} in {} slots; {} chunk loads for {} chunks (×{:.1}), {}",
                        g.file,
                        g.path,
                        n,
                        span,
                        g.io.chunk,
                        fmt_bytes(g.chunk_bytes),
                        fmt_bytes(g.cache_bytes),
                        g.cache_slots,
                        touched,
                        g.nchunks,
                        all_touched as f64 / g.nchunks.max(1) as f64,
                        fmt_ns(ns)
                    ),
                    Evidence::new()
                        .name("file", g.file)
                        .name("dataset", g.path)
                        .name("direction", dir)
                        .count("calls", n)
                        .count("chunks_per_call", span)
                        .name("chunk", g.io.chunk.as_str())
                        .bytes("chunk_bytes", g.chunk_bytes)
                        .bytes("cache_bytes", g.cache_bytes)
                        .count("cache_slots", g.cache_slots)
                        .count("chunk_loads", touched)
                        .count("chunks", g.nchunks)
                        .ratio(
                            "loads_per_chunk",
                            all_touched as f64 / g.nchunks.max(1) as f64,
                        )
                        .ns("time", ns),
                ));
            }
        }
    }
    push_hits(
        out,
        "chunk_cache_thrash",
        hits,
        call_ns,
        |share| {
            format!(
                "The chunk cache cannot hold the chunks an access spans ({} of HDF5 time)",
                pct(share)
            )
        },
        "Chunks are evicted before the next access uses them again, so each is read (and \
             decompressed) many times. Give the dataset a chunk cache that holds a whole row \
             of chunks across the access (H5Pset_chunk_cache(dapl, nslots, nbytes, w0), with \
             nslots a prime about 100 × the chunks it holds), or access along the chunks.",
    );

    // Datatype conversion.
    let hits: Vec<Hit> = dio
        .iter()
        .filter(|(_, d)| d.conv_calls > 0)
        .map(|((f, p), d)| {
            let mem: Vec<&str> = d.conv_mem_types.iter().map(String::as_str).collect();
            (
                d.conv_ns,
                format!(
                    "{f}:{p} ({} in the file, {} in memory): {} transfer(s), {} in memory for \
                     {} in the file, {}",
                    if d.ftype.is_empty() { "?" } else { &d.ftype },
                    if mem.is_empty() {
                        "?".to_string()
                    } else {
                        mem.join("/")
                    },
                    d.conv_calls,
                    fmt_bytes(d.conv_bytes),
                    fmt_bytes(d.conv_file_bytes),
                    fmt_ns(d.conv_ns)
                ),
                Evidence::new()
                    .name("file", f)
                    .name("dataset", p)
                    .count("transfers", d.conv_calls)
                    .bytes("memory_bytes", d.conv_bytes)
                    .bytes("file_bytes", d.conv_file_bytes)
                    .ns("time", d.conv_ns),
            )
        })
        .collect();
    push_hits(
        out,
        "datatype_conversion",
        hits,
        call_ns,
        |share| {
            format!(
                "Transfers that convert datatypes take {} of HDF5 time",
                pct(share)
            )
        },
        "Pass the file's datatype as the memory type of H5Dread/H5Dwrite (convert in your \
             own code once, if at all): a conversion runs through HDF5's type-conversion \
             buffer in pieces of H5Pset_buffer's size (1 MiB by default) and prevents \
             collective MPI-IO.",
    );

    // Repeated reads of one selection.
    let hits: Vec<Hit> = dio
        .iter()
        .filter(|(_, d)| d.repeat_reads >= REPEAT_MIN)
        .map(|((f, p), d)| {
            (
                d.repeat_ns,
                format!(
                    "{f}:{p}: {} re-read(s) of selections already read, {} in all, {}",
                    d.repeat_reads,
                    fmt_bytes(d.repeat_bytes),
                    fmt_ns(d.repeat_ns)
                ),
                Evidence::new()
                    .name("file", f)
                    .name("dataset", p)
                    .count("rereads", d.repeat_reads)
                    .bytes("bytes", d.repeat_bytes)
                    .ns("time", d.repeat_ns),
            )
        })
        .collect();
    push_hits(
        out,
        "repeated_reads",
        hits,
        call_ns,
        |share| {
            format!(
                "The same selections are read again and again ({} of HDF5 time)",
                pct(share)
            )
        },
        "Read each selection once and keep it in memory; if re-reading is unavoidable, \
             size the chunk cache (H5Pset_chunk_cache) or the page buffer \
             (H5Pset_page_buffer_size) so repeats are served from memory.",
    );

    small_io(rep, dio, facts, th, call_ns, out);
}

/// `small_io` and `contiguous_small_writes`.
fn small_io(
    rep: &Report,
    dio: &DatasetsIo,
    facts: &RowFacts,
    th: &Thresholds,
    call_ns: f64,
    out: &mut Vec<Insight>,
) {
    out.extend(small_io_finding(
        &rep.access_sizes,
        rep.run.processes as u64,
        dio,
        th,
        call_ns,
    ));

    // The rows judged, by index.
    let judged: Vec<&crate::analysis::DatasetRow> = rep
        .datasets
        .iter()
        .zip(&facts.by_row)
        .filter(|(d, io)| partial_writes(d, **io, th))
        .map(|(d, _)| d)
        .collect();
    let partial: Vec<Hit> = judged
        .iter()
        .map(|d| {
            (
                d.write_ns,
                format!(
                    "{}:{} ({} writes, avg {}, {})",
                    d.file,
                    d.path,
                    d.writes,
                    fmt_bytes(d.bytes_written / d.writes.max(1)),
                    fmt_ns(d.write_ns)
                ),
                Evidence::new()
                    .name("file", &*d.file)
                    .name("dataset", d.path.as_str())
                    .count("writes", d.writes)
                    .bytes("write_bytes", d.bytes_written / d.writes.max(1))
                    .ns("time", d.write_ns),
            )
        })
        .collect();
    let datasets = partial.len();
    // The model small_io's severity uses: what writing the same bytes in one call per
    // process would save, from HDF5's own fixed cost per call. A few hundred writes of
    // some KiB each cost little more than their bytes, whatever their share of a short
    // run's time: no layout or buffering gives that share back.
    // Severity: the writes' share of HDF5 time, but INFO when writing the same bytes in
    // one call per process would save less than `SMALL_IO_MIN_SAVING_NS`, as for small_io.
    let writes: u64 = judged.iter().map(|d| d.writes).sum();
    let saving = dio
        .small_call_ns(th.small_io_bytes)
        .map(|c| small_io_saving(writes, rep.run.processes as u64, c));
    let share = partial.iter().map(|h| h.0).sum::<u64>() as f64 / call_ns;
    let level = small_io_level(share, saving);
    let before = out.len();
    push_hits(
        out,
        "contiguous_small_writes",
        partial,
        call_ns,
        |share| {
            format!(
                "{datasets} contiguous dataset(s) get many small partial writes ({} of HDF5 time)",
                pct(share)
            )
        },
        "Use a chunked layout whose chunks match the write selections (H5Pset_chunk), or \
         buffer the writes and write larger hyperslabs.",
    );
    if let Some(f) = out.get_mut(before) {
        f.level = level;
    }
}

/// The `small_io` finding of a run with access sizes `a` over `procs` processes, if any:
/// many small dataset accesses. Its severity is the share of the run's HDF5 time
/// (`call_ns`) they take, but INFO when batching them would save little of HDF5's own
/// time ([`small_io_level`], the model of [`crate::insights::costmodel`]).
fn small_io_finding(
    a: &crate::analysis::AccessSizes,
    procs: u64,
    dio: &DatasetsIo,
    th: &Thresholds,
    call_ns: f64,
) -> Option<Insight> {
    let count = |v: &[u64]| v.iter().sum::<u64>();
    let lb = SizeHist::bucket(th.small_io_bytes.next_power_of_two());
    let small_of = |v: &[u64]| v.iter().take(lb).sum::<u64>();
    let n = count(&a.reads) + count(&a.writes);
    let small = small_of(&a.reads) + small_of(&a.writes);
    if n == 0 || small < SMALL_IO_MIN || (small as f64 / n as f64) < th.small_io_fraction {
        return None;
    }
    let ns = dio.small_ns(th.small_io_bytes);
    let share = ns as f64 / call_ns;
    // The model (crate::insights::costmodel::SMALL_IO_MIN_SAVING_NS): what batching
    // would save, from HDF5's own fixed cost per call.
    let per_call = dio.small_call_ns(th.small_io_bytes);
    let saving = per_call.map(|c| small_io_saving(small, procs, c));
    let model = match (per_call, saving) {
        (Some(c), Some(s)) => format!(
            "; HDF5's own time per call at least {}, so one call per process instead \
             would save about {}",
            fmt_ns(c),
            fmt_ns(s)
        ),
        _ => String::new(),
    };
    let finding = ins(
        small_io_level(share, saving),
        "small_io",
        format!(
            "{} of dataset accesses are smaller than {} ({} of HDF5 time)",
            pct(small as f64 / n as f64),
            fmt_bytes(th.small_io_bytes),
            pct(share)
        ),
        format!(
            "{small} of {n} dataset reads/writes ({} small reads, {} small writes) take \
                 {}{model}",
            small_of(&a.reads),
            small_of(&a.writes),
            fmt_ns(ns)
        ),
        "Read/write larger selections per call (aggregate in memory, or use \
             H5Dwrite_multi/H5Dread_multi); chunk datasets to match the access pattern and size \
             the chunk cache (H5Pset_chunk_cache); under MPI use collective transfers \
             (H5Pset_dxpl_mpio) so MPI-IO can aggregate.",
    );
    let mut evidence = Evidence::new()
        .fraction("small_fraction", small as f64 / n as f64)
        .bytes("small_below", th.small_io_bytes)
        .fraction("share", share)
        .count("small", small)
        .count("accesses", n)
        .count("small_reads", small_of(&a.reads))
        .count("small_writes", small_of(&a.writes))
        .ns("time", ns);
    if let (Some(c), Some(s)) = (per_call, saving) {
        evidence = evidence.ns("call_ns", c).ns("saving", s);
    }
    Some(finding.with(evidence))
}

/// Whether `contiguous_small_writes` judges dataset `d` (with its dataset-rule facts `io`):
/// a contiguous dataset written many times, in writes below `small_io_bytes` on average
/// that do not each rewrite it whole.
fn partial_writes(
    d: &crate::analysis::DatasetRow,
    io: Option<&DatasetIo>,
    th: &Thresholds,
) -> bool {
    let mean = d.bytes_written / d.writes.max(1);
    d.layout == "contiguous"
        // Many writes per process: a parallel job's few writes per rank are not many.
        && d.writes >= th.partial_writes.saturating_mul(d.procs.max(1) as u64)
        && mean < th.small_io_bytes
        // Writes of the whole dataset each time are rewrites, not partial writes: no
        // layout merges them (deep_path's fix updates its small datasets whole).
        && !(1..=mean).contains(&crate::insights::costmodel::dataset_bytes(d))
        // Variable-length elements written one by one: each write's cost is the
        // global-heap object it allocates, which `vlen_strings` names; the contiguous
        // extent only receives the heap references, and a chunked layout would not
        // remove the heap work.
        && !io.is_some_and(crate::insights::costmodel::names_vlen)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aggregate::dataset_io::CostFacts;
    use crate::analysis::DatasetRow;
    use crate::insights::Level;

    fn row(ftype_bytes: u64) -> DatasetRow {
        DatasetRow::written(
            "/log",
            "contiguous",
            "4000",
            ftype_bytes,
            4000,
            4000 * ftype_bytes,
        )
    }

    #[test]
    fn one_element_writes_of_variable_length_data_are_left_to_vlen_strings() {
        let th = Thresholds::default();
        // A log of 4000 one-element writes of 32-byte fixed strings: partial writes.
        let fixed = DatasetIo {
            ftype: "string32".into(),
            cost: CostFacts {
                elems: 4000,
                ..Default::default()
            },
            ..Default::default()
        };
        assert!(partial_writes(&row(32), Some(&fixed), &th));
        assert!(partial_writes(&row(32), None, &th));
        // The same of variable-length strings: each write a global-heap object, which
        // vlen_strings names.
        let vlen = DatasetIo {
            ftype: "vstring".into(),
            ..fixed.clone()
        };
        assert!(!partial_writes(&row(16), Some(&vlen), &th));
        // Too few elements for vlen_strings to judge: the writes stay partial writes.
        let few = DatasetIo {
            cost: CostFacts {
                elems: 10,
                ..Default::default()
            },
            ..vlen
        };
        assert!(partial_writes(&row(16), Some(&few), &th));
    }

    /// A run of `calls` accesses of `bytes` each (reads), taking `traced_ns` in all (h5prov's
    /// recording included) of the run's `call_ns`, the least inside HDF5 `min_under_ns`.
    fn small_run(
        calls: u64,
        bytes: u64,
        traced_ns: u64,
        min_under_ns: u64,
        call_ns: f64,
    ) -> Option<Insight> {
        let b = SizeHist::bucket(bytes);
        let mut reads = vec![0; b + 1];
        reads[b] = calls;
        let a = crate::analysis::AccessSizes {
            reads,
            writes: Vec::new(),
        };
        let mut dio = DatasetsIo::default();
        dio.size_ns[0] = vec![0; b + 1];
        dio.size_ns[0][b] = traced_ns;
        dio.size_min_under_ns = vec![0; b + 1];
        dio.size_min_under_ns[b] = min_under_ns;
        small_io_finding(&a, 1, &dio, &Thresholds::default(), call_ns)
    }

    #[test]
    fn small_io_severity_comes_from_what_batching_would_save() {
        // attr_read_in_loop --fixed: 1024 reads of 4 KiB, 4 ms traced of the run's 7 ms
        // (57 %: HIGH by the share alone), but at least 0.75 µs each inside HDF5: one
        // read instead saves about 0.77 ms, under the floor. INFO, not HIGH.
        let f = small_run(1024, 4096, 4_000_000, 750, 7e6).unwrap();
        assert_eq!(f.code, "small_io");
        assert_eq!(f.level, Level::Info, "{f:?}");
        assert!(
            f.detail.contains("would save about 767.2 µs"),
            "{}",
            f.detail
        );
        // vlen_log --fixed: 4000 writes of 32 bytes at 0.48 µs each inside HDF5: 1.9 ms
        // saved, above the floor; the share (12.8 of 14 ms) makes it HIGH.
        let f = small_run(4000, 32, 12_800_000, 480, 14e6).unwrap();
        assert_eq!(f.level, Level::High, "{f:?}");
        // Without under-connector times (a live-stream capture) there is no model: the
        // share alone, as before.
        let f = small_run(1024, 4096, 4_000_000, 0, 7e6).unwrap();
        assert_eq!(f.level, Level::High, "{f:?}");
        // The floor only lowers: a saving above it at a small share stays INFO.
        let f = small_run(4000, 32, 1_000_000, 480, 14e6).unwrap();
        assert_eq!(f.level, Level::Info, "{f:?}");
    }

    #[test]
    fn contiguous_small_writes_are_judged_per_process_and_by_what_batching_saves() {
        let th = Thresholds::default();
        // 16 writes of 64 KiB by 4 ranks (mpi_collective_steps --fixed): 4 per rank, not
        // many partial writes.
        let mut d = DatasetRow::written("/v", "contiguous", "2000x64", 8, 16, 16 << 16);
        d.procs = 4;
        assert!(!partial_writes(&d, None, &th));
        // The same 16 writes by one process are.
        d.procs = 1;
        assert!(partial_writes(&d, None, &th));
        // 300 row writes of 8 KiB at 3 µs of HDF5's own time each, 60 % of a short run:
        // one write instead saves 0.9 ms. INFO, not HIGH.
        let saving = small_io_saving(300, 1, 3_000);
        assert_eq!(small_io_level(0.6, Some(saving)), Level::Info);
        // 4000 element writes save more: the share decides.
        let saving = small_io_saving(4000, 1, 3_000);
        assert_eq!(small_io_level(0.6, Some(saving)), Level::High);
        assert_eq!(small_io_level(0.6, None), Level::High);
    }
}
