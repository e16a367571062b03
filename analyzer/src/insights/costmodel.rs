//! The cost model: per dataset, per file and over the run, the work the application asked
//! HDF5 for (transfers, elements, bytes in the file's datatype) against the work HDF5 did
//! for it at each layer a request passes through, derived from recorded facts:
//!
//! - **chunk layer**: chunks touched per access (the access's bounding box against the
//!   chunk dimensions), whole filtered chunks brought in against the bytes used, fill
//!   values written at allocation ([`fill_bytes`]);
//! - **selection layer**: elements selected one by one (point selections) and hyperslabs
//!   of many small blocks, each a separate piece for the sieve buffer or the chunk layer;
//! - **datatype conversion**: bytes converted between the memory and the file datatype;
//! - **metadata**: extent changes (`H5Dset_extent`) and flushes (`H5Dflush`, `H5Fflush`),
//!   each a write of dirty object headers and indexes.
//!
//! Each finding names the dominant waste by its mechanism, as a ratio with its numbers,
//! the HDF5 call that removes it and the expected gain (the time of the calls that do the
//! waste); its severity is the share of the run's HDF5 time those calls take
//! ([`severity_for_share`]). The chunk-layer rules that already were such mechanisms
//! (`chunk_too_small`, `chunk_too_large`, `chunk_cache_thrash`) and the conversion rule
//! (`datatype_conversion`) stay in [`crate::insights::dataset`] and are this model's chunk
//! and conversion layers; the rules here are the layers they did not cover.
//! `docs/INSIGHTS.md` ("The cost model") gives each code's trigger and references.

use crate::aggregate::dataset_io::{DatasetIo, DatasetsIo};
use crate::aggregate::{Aggregate, ObjStats};
use crate::analysis::{DatasetRow, Report};
use crate::insights::{
    dims_elems, ins, push_hits, severity_for_share, Evidence, Insight, Level, RowFacts,
};
use crate::units::{fmt_bytes, fmt_ns, pct};

pub use crate::aggregate::dataset_io::FRAG_BLOCKS;
/// Fragmented transfers are a waste when their pieces are smaller than this on average
/// (256 bytes: HDF5's work per piece, an offset computed and a sieve-buffer copy, then
/// outweighs the copy; a block of 64 columns of doubles, 512 bytes a row, is the usual
/// fix of a single-column read and is not judged).
pub const FRAG_BLOCK_BYTES: u64 = 256;
/// Elements selected by point selections before they are judged.
pub const POINT_MIN_ELEMS: u64 = 1000;
/// Elements per point-selection transfer before point selections are judged (a transfer of
/// a single point costs what a one-element hyperslab does).
pub const POINT_MIN_PER_CALL: u64 = 16;
/// Extent changes of one dataset before they are judged.
pub const EXTEND_MIN: u64 = 100;
/// Writes per extent change up to which a dataset is appended record by record (each
/// extent makes room for the write or two that follow it).
pub const EXTEND_WRITES_PER: u64 = 2;
/// Flushes (`H5Fflush`, `H5Dflush`) in the run before they are judged.
pub const FLUSH_MIN: u64 = 10;
/// Elements transferred of a variable-length dataset before it is judged.
pub const VLEN_MIN_ELEMS: u64 = 1000;
/// A filtered dataset whose data take at most this many times their stored size gains
/// nothing from its filters (ratio under 1.1: less than a tenth saved).
pub const FILTER_MIN_RATIO: f64 = 1.1;
/// Bytes of a filtered dataset before its filters are judged (1 MiB).
pub const FILTER_MIN_BYTES: u64 = 1 << 20;
/// Bytes written, as a fraction of the dataset's size, above which fill values written at
/// allocation were overwritten (wasted).
pub const FILL_OVERWRITTEN: f64 = 0.5;

/// `small_io` is never more than INFO when batching its calls would save less than this
/// much of HDF5's own time (1.5 ms, all processes): [`small_io_saving`].
///
/// Why a model and an absolute floor, not a share. A small call's traced time is mostly
/// h5prov's own recording (at 4 KiB about 7 µs of the connector's against 2.6 µs inside
/// HDF5), so the small calls' share of the traced HDF5 time overstates them; and the share
/// of HDF5's own (under-connector) time swings with whatever else the run did (one 4 MiB
/// `H5Dwrite` that takes 1 ms in one run and 10 ms in the next moved the share of the same
/// 1024 reads from 6 % to 45 %). What batching gives back does not depend on the rest of
/// the run: each call HDF5 no longer makes saves its fixed cost, the time HDF5 needs for
/// a call however few bytes it moves, while the bytes still have to be moved. The fixed
/// cost comes from the trace itself: the least under-connector time of any small call
/// ([`DatasetsIo::small_call_ns`]), which leaves out h5prov's recording and the
/// occasional slow call (a preempted process, a sieve-buffer flush), and only rises on a
/// loaded machine by what every call pays. For accesses of a few KiB it still includes
/// moving those bytes, so the saving is an upper bound there and exact for tiny accesses.
/// 1.5 ms sits between the suite's small savings that are real (4000 32-byte `H5Dwrite`
/// calls of `vlen_log --fixed`: 1.9 ms, natively 2.9 ms against 0.44 ms buffered) and
/// those that are not (1024 reads of 4 KiB in `attr_read_in_loop`: 0.7–0.8 ms, 1.05 ms on a loaded machine, natively
/// 1.7 ms against 0.9 ms for one read, a few per cent of the program's HDF5 time): a
/// saving of a millisecond is nothing a user should change code for, however small the
/// rest of the run.
pub const SMALL_IO_MIN_SAVING_NS: u64 = 1_500_000;

/// What batching `small` data accesses of `procs` processes into one call per process
/// would save, ns, at `call_ns` of HDF5's own time per call (the fixed cost,
/// [`DatasetsIo::small_call_ns`]): every call but one per process.
pub fn small_io_saving(small: u64, procs: u64, call_ns: u64) -> u64 {
    small
        .saturating_sub(procs.clamp(1, small.max(1)))
        .saturating_mul(call_ns)
}

/// `small_io`'s severity: the share of the run's HDF5 time its calls take
/// ([`severity_for_share`]), but INFO when the model's saving is known and below
/// [`SMALL_IO_MIN_SAVING_NS`].
pub fn small_io_level(share: f64, saving_ns: Option<u64>) -> Level {
    match saving_ns {
        Some(s) if s < SMALL_IO_MIN_SAVING_NS => Level::Info,
        _ => severity_for_share(share),
    }
}

/// `H5Aread` calls on one attribute, per process and per value it held (its writes plus
/// one), before the reads are judged as rereads of an unchanged value.
pub const REREAD_MIN: u64 = 100;

/// The attributes whose value a process read again and again with no write to change it:
/// `(file, attribute path, reads, values, time of the calls on it)`, `values` being the
/// values it can have held (its `H5Awrite` calls plus one, per process). The metadata
/// layer's ledger for attributes: work done `reads`, work asked `values`.
pub fn reread_attributes(agg: &Aggregate) -> Vec<(String, String, u64, u64, u64)> {
    crate::aggregate::objects_of_kind(&agg.objects, "attr")
        .filter(|(_, o)| reread(o))
        .map(|((f, p), o)| {
            (
                f.to_string(),
                p.to_string(),
                o.attr_reads,
                attr_values(o),
                o.total_ns.saturating_sub(o.read_ns + o.write_ns),
            )
        })
        .collect()
}

/// The values attribute `o` can have held: its `H5Awrite` calls plus one per process.
fn attr_values(o: &ObjStats) -> u64 {
    o.attr_writes + (o.procs.len() as u64).max(1)
}

/// Whether attribute `o` was read again and again with no write to change its value
/// (at least [`REREAD_MIN`] reads per value it can have held): one of
/// [`reread_attributes`].
pub fn reread(o: &ObjStats) -> bool {
    o.attr_reads >= REREAD_MIN.saturating_mul(attr_values(o))
}

/// `repeated_attribute_reads`: the metadata layer's ledger for attributes. An attribute
/// lives in its object's header (or, in dense storage, a fractal heap under a B-tree of
/// names); each `H5Aopen` looks the name up among the header's messages and decodes the
/// attribute, each `H5Aread` copies (and converts) its value, each `H5Aclose` frees it.
/// A value read `reads` times by a program that wrote it `values - 1` times (`values`
/// counting one per process) did `reads / values` times the work it asked for. Fix:
/// read it once (`H5Aopen`/`H5Aread`/`H5Aclose` before the loop) and keep the value;
/// gain: the calls on those attributes but one per value. Severity is their share of
/// the run's HDF5 time.
pub fn repeated_attribute_reads(agg: &Aggregate) -> Option<Insight> {
    let call_ns = agg.total_ns().max(1);
    let mut hits = reread_attributes(agg);
    if hits.is_empty() {
        return None;
    }
    hits.sort_by(|a, b| b.4.cmp(&a.4).then_with(|| (&a.0, &a.1).cmp(&(&b.0, &b.1))));
    // The waste: all but one read's worth of calls per value.
    let waste = |h: &(String, String, u64, u64, u64)| {
        (h.4 as f64 * (1.0 - h.3 as f64 / h.2.max(1) as f64)) as u64
    };
    let ns: u64 = hits.iter().map(waste).sum();
    let reads: u64 = hits.iter().map(|h| h.2).sum();
    let values: u64 = hits.iter().map(|h| h.3).sum();
    let share = ns as f64 / call_ns as f64;
    Some(
        ins(
            severity_for_share(share),
            "repeated_attribute_reads",
            format!(
                "{} attribute(s) read {reads} times for {values} value(s): {:.0}x the metadata \
             work asked ({} of HDF5 time)",
                hits.len(),
                reads as f64 / values.max(1) as f64,
                pct(share)
            ),
            hits.iter()
                .take(5)
                .map(|h| {
                    format!(
                        "{}:{} read {} times, written {} time(s), {} in opens, reads and closes",
                        h.0,
                        h.1,
                        h.2,
                        h.3.saturating_sub(1),
                        fmt_ns(h.4)
                    )
                })
                .collect::<Vec<_>>()
                .join("; "),
            "Read each attribute once and keep its value: H5Aopen(obj, name, H5P_DEFAULT), \
         H5Aread(attr, type, &value), H5Aclose(attr) before the loop, not in it. Each open \
         looks the name up in the object header (or the dense-storage name index) and \
         decodes the attribute; a value that was not written since it was read is the same. \
         Expected gain: the time of all but one open/read/close per attribute.",
        )
        .with(
            Evidence::new()
                .count("attributes", hits.len() as u64)
                .count("reads", reads)
                .count("values", values)
                .fraction("share", share),
        )
        .with_items(
            hits.iter()
                .take(5)
                .map(|h| {
                    Evidence::new()
                        .name("file", h.0.as_str())
                        .name("attribute", h.1.as_str())
                        .count("reads", h.2)
                        .count("writes", h.3.saturating_sub(1))
                        .ns("time", h.4)
                })
                .collect(),
        ),
    )
}

/// `delete_recreate` for attributes: the object header's ledger. HDF5 refuses to create
/// an attribute whose name exists, so an attribute created again and again under one name
/// by one process (at least [`RECREATE_MIN`] creates per process) was deleted in between
/// (`H5Adelete`, as h5py's `attrs[name] = value` does to an existing attribute): each
/// round removes its message from the object header and inserts a new one (and, in dense
/// storage, updates the name index and the fractal heap) to keep one value. Work asked
/// for: one value per write; done: a delete and a create per write. The waste is the
/// calls on the attribute but one create's worth per process, plus the deletes
/// (`attr.specific:delete`, recorded on the parent object without the attribute's name,
/// counted up to the recreates). Severity is its share of the run's HDF5 time.
pub fn recreated_attributes(agg: &Aggregate) -> Option<Insight> {
    let call_ns = agg.total_ns().max(1) as f64;
    let mut hits: Vec<crate::insights::Hit> = Vec::new();
    let mut recreates = 0u64;
    for ((f, p), o) in crate::aggregate::objects_of_kind(&agg.objects, "attr") {
        let procs = (o.procs.len() as u64).max(1);
        if o.attr_creates < RECREATE_MIN.saturating_mul(procs) {
            continue;
        }
        let again = o.attr_creates - procs;
        recreates += again;
        let ns = (o.total_ns as f64 * again as f64 / o.attr_creates as f64) as u64;
        hits.push((
            ns,
            format!(
                "{f}:{p}: created {} times by {procs} process(es), deleted and created again \
                 {again} times to hold one value each, {} in its calls",
                o.attr_creates,
                fmt_ns(o.total_ns)
            ),
            Evidence::new()
                .name("file", f)
                .name("attribute", p)
                .count("creates", o.attr_creates)
                .count("processes", procs)
                .ns("time", ns),
        ));
    }
    if hits.is_empty() {
        return None;
    }
    // The deletes, up to one per recreate, at their mean time.
    if let Some(d) = agg.ops.get("attr.specific:delete") {
        let n = d.count.min(recreates);
        let ns = d.total_ns / d.count.max(1) * n;
        if let Some(h) = hits.first_mut() {
            h.0 += ns;
        }
    }
    let mut out = Vec::new();
    crate::insights::push_hits(
        &mut out,
        "delete_recreate",
        hits,
        call_ns,
        |share| {
            format!(
                "Attributes are deleted and created again under the same name ({} of HDF5 time)",
                pct(share)
            )
        },
        "Each H5Adelete removes the attribute's message from the object header and each \
         H5Acreate2 inserts a new one (in dense storage: the name index and the fractal heap \
         too), to keep one value. Create the attribute once and write it in place: \
         H5Aopen(obj, name, H5P_DEFAULT) + H5Awrite(attr, type, &value) (h5py: \
         obj.attrs.modify(name, value), which writes in place when the shape and type \
         allow), or write it once at the end. Expected gain: the time shown.",
    );
    out.pop()
}

/// Creates of one dataset path per process before they are judged as a delete and
/// recreate of the same dataset.
pub const RECREATE_MIN: u64 = 10;

/// Whether a dataset path was created again and again (at least [`RECREATE_MIN`] creates
/// per process of the `procs` that used it): deleted and made anew instead of overwritten.
pub fn recreated(io: &DatasetIo, procs: usize) -> bool {
    io.cost.creates >= RECREATE_MIN.saturating_mul((procs as u64).max(1))
}

/// `100x10` → `[100, 10]`; `None` when empty or not numbers.
fn dims_list(s: &str) -> Option<Vec<u64>> {
    if s.is_empty() {
        return None;
    }
    s.split('x').map(|d| d.trim().parse::<u64>().ok()).collect()
}

/// The runs contiguous in the file of a box of extent `e` in a row-major dataset of
/// extent `dims`: the product of the box's extents before the last dimension it does not
/// span whole (a column of a 2-D array: one run per row; whole rows: one run).
pub fn box_pieces(e: &[u64], dims: &[u64]) -> u64 {
    // The dimensions after `j` are spanned whole; the box is contiguous from `j` on.
    let mut j = e.len();
    while j > 0 && e[j - 1] == dims[j - 1] {
        j -= 1;
    }
    if j == 0 {
        return 1;
    }
    e[..j - 1].iter().product()
}

/// Bytes of a dataset's current extent (from its objects row), 0 when unknown.
/// Largest part of the file extent a box spans that its pieces may carry before many
/// narrow boxes over the same rows count as fragmented (each sweeps, or sieves, the rows
/// the others sweep too).
pub const FRAG_COVERAGE: f64 = 0.5;

/// The part of the file extent it spans that a box `e` of a contiguous row-major array of
/// `dims` carries: its elements over the elements from its first to its last row along
/// the outermost dimension it extends (1 for a block of whole rows, 1/4 for a quarter of
/// the columns, 0 when the shapes do not match).
pub fn box_coverage(e: &[u64], dims: &[u64]) -> f64 {
    if e.len() != dims.len() || e.is_empty() {
        return 0.0;
    }
    let i0 = e.iter().position(|&x| x > 1).unwrap_or(e.len() - 1);
    let extent: u64 = e[i0].saturating_mul(dims[i0 + 1..].iter().product::<u64>());
    let elems: u64 = e[i0..].iter().product();
    elems as f64 / extent.max(1) as f64
}

/// The pieces a transfer of box `e` of a contiguous row-major array of `dims` is split
/// into, when that is fragmented: what the file driver
/// does per transfer is one request per file-contiguous piece (or one sieve of the extent
/// the pieces span), so the box is judged by its pieces per transfer (at least
/// [`FRAG_BLOCKS`]) and the part of that extent they carry (at most [`FRAG_COVERAGE`]),
/// not by a piece size: 2048 pieces of 4 KiB that carry a quarter of the rows they cross
/// are as fragmented for the driver as 2048 pieces of 128 bytes.
pub fn fragmented_box(e: &[u64], dims: &[u64]) -> Option<u64> {
    let p = box_pieces(e, dims);
    (p >= FRAG_BLOCKS && box_coverage(e, dims) <= FRAG_COVERAGE).then_some(p)
}

pub(crate) fn dataset_bytes(row: &DatasetRow) -> u64 {
    dims_elems(&row.dims)
        .unwrap_or(0)
        .saturating_mul(row.type_size)
}

/// Whether HDF5 writes the fill value when it allocates the dataset's storage
/// (`H5D__alloc_storage`): fill time `alloc`, or `ifset` with a fill value of the user's.
fn fills_at_alloc(io: &DatasetIo) -> bool {
    let c = &io.cost;
    c.fill_time == "alloc" || (c.fill_time == "ifset" && c.fill == "user")
}

/// The fill-value bytes HDF5 wrote for a dataset the traced program created, and the
/// time they are estimated to have taken: early allocation writes them in
/// `H5Dcreate` (its time); late allocation of a contiguous dataset in its first write
/// unless that write covers it all (estimated as the fill's part of the bytes written).
/// Chunked datasets (incremental allocation, fill per partly written chunk) are not
/// counted.
pub fn fill_bytes(row: &DatasetRow, io: &DatasetIo) -> (u64, u64) {
    let c = &io.cost;
    if c.creates == 0 || !fills_at_alloc(io) {
        return (0, 0);
    }
    let size = dataset_bytes(row);
    match (c.alloc_time.as_str(), row.layout.as_str()) {
        ("early", _) => (size, c.create_ns),
        ("late", "contiguous") if row.writes >= 2 => {
            let written = row.bytes_written.max(1);
            let ns = (row.write_ns as f64 * size as f64 / (size + written) as f64) as u64;
            (size, ns)
        }
        _ => (0, 0),
    }
}

/// `H5Fflush` calls in the run and their time, ns.
fn file_flushes(rep: &Report) -> (u64, u64) {
    rep.ops
        .iter()
        .filter(|o| o.op == "file.specific:flush")
        .fold((0, 0), |a, o| (a.0 + o.count, a.1 + o.total_ns))
}

/// Runs the cost model's rules, appending their findings to `out`.
pub(crate) fn detect(rep: &Report, dio: &DatasetsIo, facts: &RowFacts, out: &mut Vec<Insight>) {
    let call_ns = rep.run.call_ns.max(1) as f64;
    // The rows with their facts, in the report's order.
    let rows: Vec<(&DatasetRow, &DatasetIo)> = rep
        .datasets
        .iter()
        .zip(&facts.by_row)
        .filter_map(|(r, io)| Some((r, (*io)?)))
        .collect();

    // Fill values written at allocation: overwritten by the application
    // (`fill_on_allocation`), or, allocated early, mostly never written at all
    // (`early_allocation`).
    let (mut over, mut unused) = (Vec::new(), Vec::new());
    for (r, io) in &rows {
        let (fill, ns) = fill_bytes(r, io);
        if fill == 0 {
            continue;
        }
        let written = r.bytes_written;
        let ev = || {
            Evidence::new()
                .name("file", &*r.file)
                .name("dataset", r.path.as_str())
                .name("alloc_time", io.cost.alloc_time.as_str())
                .name("fill_time", io.cost.fill_time.as_str())
                .bytes("fill_bytes", fill)
                .bytes("written_bytes", written)
        };
        let what = format!(
            "{}:{} ({} allocation, fill time {}, fill value {})",
            r.file,
            r.path,
            io.cost.alloc_time,
            io.cost.fill_time,
            if io.cost.fill.is_empty() {
                "?"
            } else {
                &io.cost.fill
            },
        );
        if written as f64 >= FILL_OVERWRITTEN * fill as f64 {
            over.push((
                ns,
                format!(
                    "{what}: wrote {} of fill values, then {} of data over them (×{:.1} the \
                     bytes), {}",
                    fmt_bytes(fill),
                    fmt_bytes(written),
                    (fill + written) as f64 / written.max(1) as f64,
                    fmt_ns(ns)
                ),
                ev().ns("time", ns),
            ));
        } else if io.cost.alloc_time == "early" {
            unused.push((
                ns,
                format!(
                    "{what}: allocated and filled {} to store {} of data (×{:.1}), {} in \
                     H5Dcreate",
                    fmt_bytes(fill),
                    fmt_bytes(written),
                    fill as f64 / written.max(1) as f64,
                    fmt_ns(ns)
                ),
                ev().ns("time", ns),
            ));
        }
    }
    push_hits(
        out,
        "fill_on_allocation",
        over,
        call_ns,
        |share| {
            format!(
                "HDF5 writes fill values that the program then overwrites ({} of HDF5 time)",
                pct(share)
            )
        },
        "The dataset's storage is written twice: once with fill values when HDF5 allocates \
         it, then with the data. When every element is written anyway, \
         H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER) on the creation property list (and \
         H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_LATE) unless MPI-IO needs early \
         allocation) removes the first pass: the expected gain is the time shown.",
    );
    push_hits(
        out,
        "early_allocation",
        unused,
        call_ns,
        |share| {
            format!(
                "Early allocation fills storage the program never writes ({} of HDF5 time)",
                pct(share)
            )
        },
        "With H5D_ALLOC_TIME_EARLY HDF5 allocates the whole dataset in H5Dcreate and writes \
         the fill value into all of it, although the program writes a small part. Let HDF5 \
         allocate what is written: H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_INCR) for chunked \
         datasets (unwritten chunks read back as the fill value without being stored), \
         H5D_ALLOC_TIME_LATE for contiguous ones, or H5Pset_fill_time(dcpl, \
         H5D_FILL_TIME_NEVER): the expected gain is the time shown.",
    );

    // Delete and recreate: one dataset made again and again under the same name.
    let hits = rows
        .iter()
        .filter(|(r, io)| recreated(io, r.procs))
        .map(|(r, io)| {
            let c = &io.cost;
            (
                c.create_ns,
                format!(
                    "{}:{}: created {} times by {} process(es) ({} object headers, links and \
                     allocations for one dataset), {} in H5Dcreate",
                    r.file,
                    r.path,
                    c.creates,
                    r.procs.max(1),
                    c.creates,
                    fmt_ns(c.create_ns)
                ),
                Evidence::new()
                    .name("file", &*r.file)
                    .name("dataset", r.path.as_str())
                    .count("creates", c.creates)
                    .count("processes", r.procs.max(1) as u64)
                    .ns("time", c.create_ns),
            )
        })
        .collect();
    push_hits(
        out,
        "delete_recreate",
        hits,
        call_ns,
        |share| {
            format!(
                "A dataset is deleted and created again under the same name ({} of HDF5 time)",
                pct(share)
            )
        },
        "Each H5Dcreate2 writes a new object header and link and allocates the data anew; \
         H5Ldelete only unlinks the old one, whose space goes to a free-space list that is \
         lost when the file closes (without persistent free-space tracking) and fragments \
         the file. Create the dataset once and overwrite it in place: H5Dwrite(d, type, \
         H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) on the open dataset, or make it chunked with an \
         unlimited maximum and H5Dset_extent when its shape changes. Expected gain: the \
         create time shown, and the deletes.",
    );

    // Point selections: every element a piece of its own.
    let hits = rows
        .iter()
        .filter(|(_, io)| {
            let c = &io.cost;
            c.point_elems >= POINT_MIN_ELEMS && c.point_elems >= POINT_MIN_PER_CALL * c.point_calls
        })
        .map(|(r, io)| {
            let c = &io.cost;
            (
                c.point_ns,
                format!(
                    "{}:{}: {} element(s) selected one by one in {} point-selection \
                     transfer(s) ({:.0} per call), {}",
                    r.file,
                    r.path,
                    c.point_elems,
                    c.point_calls,
                    c.point_elems as f64 / c.point_calls.max(1) as f64,
                    fmt_ns(c.point_ns)
                ),
                Evidence::new()
                    .name("file", &*r.file)
                    .name("dataset", r.path.as_str())
                    .count("elements", c.point_elems)
                    .count("transfers", c.point_calls)
                    .ns("time", c.point_ns),
            )
        })
        .collect();
    push_hits(
        out,
        "point_selection",
        hits,
        call_ns,
        |share| {
            format!(
                "Point selections make HDF5 handle each element separately ({} of HDF5 time)",
                pct(share)
            )
        },
        "HDF5 maps every selected point to its own offset (and chunk) and copies it on its \
         own. Select runs of neighbouring elements as hyperslabs \
         (H5Sselect_hyperslab(space, H5S_SELECT_OR, ...)), or read the bounding box in one \
         hyperslab and pick the elements in memory: the expected gain is most of the time \
         shown.",
    );

    // Fragmented hyperslabs: many small pieces per transfer. Selections with holes are
    // split at their blocks (recorded per transfer); a selection that fills its bounding
    // box is, in a contiguous dataset, one piece per run of the box that is contiguous in
    // the file (a column of a row-major array: one piece per row).
    let hits = rows
        .iter()
        .filter_map(|(r, io)| {
            let c = &io.cost;
            let (mut calls, mut pieces, mut bytes, mut ns) = (0u64, 0u64, 0u64, 0u64);
            if c.frag_calls > 0 && c.frag_bytes / c.frag_blocks.max(1) < FRAG_BLOCK_BYTES {
                (calls, pieces, bytes, ns) = (c.frag_calls, c.frag_blocks, c.frag_bytes, c.frag_ns);
            }
            // MPI-IO's two-phase I/O aggregates the pieces of collective transfers (the
            // pieces of all ranks together into contiguous requests), as it does for the
            // selections with holes above.
            if r.layout == "contiguous" && r.type_size > 0 && r.coll_io <= r.ind_io {
                // Parsed for the first box transferred more than once (most datasets have
                // none: nothing is parsed for them).
                let mut dims: Option<Vec<u64>> = None;
                for (shape, v) in io.shapes.iter() {
                    let n = v.reads + v.writes;
                    // One transfer of a box sweeps its rows once, which reading it needs
                    // anyway; the waste is the same rows swept again by each of many
                    // narrow boxes (strided_column's fix reads its column block once).
                    if n < 2 {
                        continue;
                    }
                    let Some(e) = dims_list(shape) else { continue };
                    let elems: u64 = e.iter().product();
                    let dims = dims.get_or_insert_with(|| dims_list(&r.dims).unwrap_or_default());
                    if e.len() != dims.len() || v.file_bytes != n * elems * r.type_size {
                        continue;
                    }
                    if let Some(p) = fragmented_box(&e, dims) {
                        calls += n;
                        pieces += n * p;
                        bytes += v.file_bytes;
                        ns += v.read_ns + v.write_ns;
                    }
                }
            }
            (calls > 0).then(|| {
                (
                    ns,
                    format!(
                        "{}:{}: {} transfer(s) of {:.0} pieces each, {} per piece on average \
                         ({} in {} pieces), {}",
                        r.file,
                        r.path,
                        calls,
                        pieces as f64 / calls as f64,
                        fmt_bytes(bytes / pieces.max(1)),
                        fmt_bytes(bytes),
                        pieces,
                        fmt_ns(ns)
                    ),
                    Evidence::new()
                        .name("file", &*r.file)
                        .name("dataset", r.path.as_str())
                        .count("transfers", calls)
                        .bytes("piece_bytes", bytes / pieces.max(1))
                        .bytes("bytes", bytes)
                        .count("pieces", pieces)
                        .ns("time", ns),
                )
            })
        })
        .collect();
    push_hits(
        out,
        "fragmented_selection",
        hits,
        call_ns,
        |share| {
            format!(
                "Selections of many small blocks split each transfer into small pieces ({} of \
                 HDF5 time)",
                pct(share)
            )
        },
        "Each hyperslab block is a separate piece for the sieve buffer, the chunk layer and \
         the file driver. Read the bounding box in one block and subset in memory, or write \
         from a memory buffer laid out like the file; for strided access to contiguous data \
         a larger sieve buffer (H5Pset_sieve_buf_size(fapl, bytes)) merges the pieces.",
    );

    // Extent changes, one per write. When the dataset grows by about one extent per write
    // (at most [`EXTEND_WRITES_PER`] writes each), the writes are the records the extents
    // make room for, one call each: appending in blocks removes them with the extents (one
    // H5Dset_extent and one H5Dwrite per block), so their time is part of the waste.
    let hits = rows
        .iter()
        .filter(|(_, io)| io.cost.extends >= EXTEND_MIN)
        .map(|(r, io)| {
            let c = &io.cost;
            let per_record = r.writes <= EXTEND_WRITES_PER * c.extends;
            let write_ns = if per_record { r.write_ns } else { 0 };
            (
                c.extend_ns + write_ns,
                format!(
                    "{}:{}: {} extent change(s) for {} write(s) of {} on average, {} in \
                     H5Dset_extent{}",
                    r.file,
                    r.path,
                    c.extends,
                    r.writes,
                    fmt_bytes(r.bytes_written / r.writes.max(1)),
                    fmt_ns(c.extend_ns),
                    if per_record {
                        format!(" and {} in the record writes", fmt_ns(write_ns))
                    } else {
                        String::new()
                    }
                ),
                Evidence::new()
                    .name("file", &*r.file)
                    .name("dataset", r.path.as_str())
                    .count("extends", c.extends)
                    .count("writes", r.writes)
                    .bytes("write_bytes", r.bytes_written / r.writes.max(1))
                    .ns("extend_time", c.extend_ns)
                    .ns("write_time", write_ns),
            )
        })
        .collect();
    push_hits(
        out,
        "extend_per_record",
        hits,
        call_ns,
        |share| {
            format!(
                "Datasets are extended in many small steps ({} of HDF5 time)",
                pct(share)
            )
        },
        "Every H5Dset_extent rewrites the dataspace in the object header and updates the \
         chunk index. Grow the dataset in large steps (double its extent, or by thousands of \
         rows) and shrink it once at the end, or create it at its final size: the expected \
         gain is the time shown.",
    );

    // Flushes.
    let (fflush, fflush_ns) = file_flushes(rep);
    let dflush: u64 = rows.iter().map(|(_, io)| io.cost.flushes).sum();
    let dflush_ns: u64 = rows.iter().map(|(_, io)| io.cost.flush_ns).sum();
    let writes: u64 = rep.datasets.iter().map(|d| d.writes).sum();
    if fflush + dflush >= FLUSH_MIN {
        let hits = vec![(
            fflush_ns + dflush_ns,
            format!(
                "{} H5Fflush and {} H5Dflush call(s) for {} dataset write(s) (one flush every \
                 {:.1} writes), {}",
                fflush,
                dflush,
                writes,
                writes as f64 / (fflush + dflush) as f64,
                fmt_ns(fflush_ns + dflush_ns)
            ),
            Evidence::new()
                .count("file_flushes", fflush)
                .count("dataset_flushes", dflush)
                .count("writes", writes)
                .ns("time", fflush_ns + dflush_ns),
        )];
        push_hits(
            out,
            "flush_per_write",
            hits,
            call_ns,
            |share| {
                format!(
                    "Flushes write the metadata over and over ({} of HDF5 time)",
                    pct(share)
                )
            },
            "Each flush writes every dirty metadata cache entry and the file's superblock, \
             and asks the file system to sync. Flush at checkpoints (or never: closing the \
             file flushes it); for readers of a file being written use SWMR \
             (H5Fstart_swmr_write) instead of flushing: the expected gain is the time shown.",
        );
    }

    // Variable-length data: every element a heap object of its own.
    let hits = rows
        .iter()
        .filter(|(_, io)| names_vlen(io))
        .map(|(r, io)| {
            let c = &io.cost;
            (
                c.xfer_ns,
                format!(
                    "{}:{} ({}): {} element(s) in {} transfer(s), each element a separate \
                     global-heap object, {}",
                    r.file,
                    r.path,
                    io.ftype,
                    c.elems,
                    c.xfers,
                    fmt_ns(c.xfer_ns)
                ),
                Evidence::new()
                    .name("file", &*r.file)
                    .name("dataset", r.path.as_str())
                    .name("type", io.ftype.as_str())
                    .count("elements", c.elems)
                    .count("transfers", c.xfers)
                    .ns("time", c.xfer_ns),
            )
        })
        .collect();
    push_hits(
        out,
        "vlen_strings",
        hits,
        call_ns,
        |share| {
            format!(
                "Variable-length data is stored element by element in the global heap ({} of \
                 HDF5 time)",
                pct(share)
            )
        },
        "HDF5 stores each variable-length element as its own global-heap object (one \
         allocation, one heap write or read each) and cannot compress them. Use \
         fixed-length strings (H5Tset_size(type, N) with the longest length) or a \
         fixed-size element with a length column: the expected gain is most of the time \
         shown.",
    );
    compound_subset(dio, call_ns, out);
    filters_without_gain(&rows, call_ns, out);
    implicit_file_opens(rep, call_ns, out);
    links_by_index(rep, call_ns, out);
    repeated_listings(dio, call_ns, out);
    rank_redundant_reads(dio, call_ns, out);
}

/// Bytes read by the processes beyond the first, per dataset, before the repeats are judged.
pub const REDUNDANT_MIN_BYTES: u64 = 1 << 20;

/// The MPI-IO layer's ledger across the processes of a job: a file selection that n
/// processes each read moves its bytes n times through the file driver and MPI-IO
/// (and n times from the file system, whose cache or servers all n requests reach), for
/// one selection's worth of distinct data. Asked for: the selection once; done: n reads.
/// The waste is the reads beyond one per selection: (n - 1) / n of their bytes and time.
fn rank_redundant_reads(dio: &DatasetsIo, call_ns: f64, out: &mut Vec<Insight>) {
    let mut hits = Vec::new();
    for (file, by_path) in &dio.datasets {
        for (path, io) in by_path {
            let (mut ns, mut bytes, mut distinct, mut procs, mut boxes) = (0u64, 0u64, 0u64, 0, 0);
            for b in io.read_boxes.0.values().filter(|b| b.procs >= 2) {
                let n = u64::from(b.procs);
                ns += b.ns / n * (n - 1);
                bytes += b.bytes / n * (n - 1);
                distinct += b.bytes / n;
                procs = procs.max(b.procs);
                boxes += 1;
            }
            if bytes < REDUNDANT_MIN_BYTES {
                continue;
            }
            hits.push((
                ns,
                format!(
                    "{file}:{path}: {boxes} selection(s) each read by up to {procs} processes:                      {} read to deliver {} of distinct data (x{:.1}); the repeats take {}",
                    fmt_bytes(bytes + distinct),
                    fmt_bytes(distinct),
                    (bytes + distinct) as f64 / distinct.max(1) as f64,
                    fmt_ns(ns)
                ),
                Evidence::new()
                    .name("file", file.as_str())
                    .name("dataset", path.as_str())
                    .count("selections", boxes)
                    .count("processes", u64::from(procs))
                    .bytes("read_bytes", bytes + distinct)
                    .bytes("distinct_bytes", distinct)
                    .ns("time", ns),
            ));
        }
    }
    push_hits(
        out,
        "rank_redundant_reads",
        hits,
        call_ns,
        |share| {
            format!(
                "Several processes read the same selections of a dataset ({} of HDF5 time)",
                pct(share)
            )
        },
        "Have each process read only the part it uses: select it on the file space with \
         H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, count, NULL) and pass that \
         space to H5Dread (collectively, H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE), when \
         the parts interleave); when every process needs all of it, read it on one rank and \
         MPI_Bcast it. The expected gain is the time of the repeated reads.",
    );
}

/// Whether `vlen_strings` accounts for a dataset's transfers: variable-length data
/// (`ftype` `vstring`/`vlen*`) moved in at least [`VLEN_MIN_ELEMS`] elements, each a
/// global-heap object. Its writes' cost is the heap objects, which the rules about small
/// or partial writes then leave to it.
pub fn names_vlen(io: &DatasetIo) -> bool {
    (io.ftype == "vstring" || io.ftype.starts_with("vlen")) && io.cost.elems >= VLEN_MIN_ELEMS
}

/// Listings of one group repeated with no change of its links between, per group, before
/// they are judged.
pub const RELIST_MIN: u64 = 20;

/// The link layer's ledger of listings: a listing (`H5Literate2`, `H5Lvisit2`, h5py's
/// `keys()`/`in list(g)`) visits every link of the group, reading the group's link
/// storage (a symbol table's B-tree and local heap, or the dense storage's fractal heap);
/// a second listing with no link created, deleted, copied or moved in between returns the
/// same names. Asked for: one listing; done: one per call. The work is listings × links
/// (the links are those the trace saw created in the group: a lower bound).
fn repeated_listings(dio: &DatasetsIo, call_ns: f64, out: &mut Vec<Insight>) {
    let hits = dio
        .links
        .0
        .iter()
        .filter(|(_, g)| g.repeats >= RELIST_MIN)
        .map(|((file, group), g)| {
            let links = if g.links_created > 0 {
                format!(
                    " of at least {} links: at least {} link visits for one listing's {}",
                    g.links_created,
                    g.listings.saturating_mul(g.links_created),
                    g.links_created
                )
            } else {
                String::new()
            };
            (
                g.repeat_ns,
                format!(
                    "{file}:{group} listed {} times, {} with no change of its links since the last \
                     listing{links}; the repeats take {}",
                    g.listings,
                    g.repeats,
                    fmt_ns(g.repeat_ns)
                ),
                Evidence::new()
                    .name("file", file.as_str())
                    .name("group", group.as_str())
                    .count("listings", g.listings)
                    .count("repeats", g.repeats)
                    .ns("time", g.repeat_ns),
            )
        })
        .collect();
    push_hits(
        out,
        "repeated_link_iteration",
        hits,
        call_ns,
        |share| {
            format!(
                "Groups are listed again and again with the same links ({} of HDF5 time)",
                pct(share)
            )
        },
        "Each listing (H5Literate2, H5Lvisit2; h5py's keys() or `in list(group)`) visits \
         every link of the group. List it once and keep the names, or look a name up \
         directly: H5Lexists(group, name, H5P_DEFAULT) or H5Oopen(group, name, \
         H5P_DEFAULT) (h5py: `name in group`); when a callback does the work, do it in one \
         pass: H5Literate2(group, H5_INDEX_NAME, H5_ITER_INC, &idx, callback, data). The \
         expected gain is the time of the repeats.",
    );
}

/// Link lookups by index (`H5Lget_name_by_idx`) before they are judged.
pub const LINK_BY_INDEX_MIN: u64 = 100;

/// The link layer's ledger: names asked for by position. `link.get:name` is
/// `H5Lget_name_by_idx`, the only call that asks the VOL for a link's name, and it
/// addresses the link by its index. Unless the group tracks and indexes creation order
/// (`H5Pset_link_creation_order(gcpl, H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED)`)
/// or is iterated in name order over dense storage, HDF5 builds a table of all the
/// group's links, sorted, for every such call: n lookups of a group of n links cost n^2
/// link reads. One H5Literate2 visits them all in one pass.
fn links_by_index(rep: &Report, call_ns: f64, out: &mut Vec<Insight>) {
    let Some(op) = rep
        .ops
        .iter()
        .find(|o| o.op == "link.get:name" && o.count >= LINK_BY_INDEX_MIN)
    else {
        return;
    };
    let hits = vec![(
        op.total_ns,
        format!(
            "{} H5Lget_name_by_idx call(s), {} ({} per call)",
            op.count,
            fmt_ns(op.total_ns),
            fmt_ns(op.total_ns / op.count.max(1))
        ),
        Evidence::new()
            .count("calls", op.count)
            .ns("time", op.total_ns)
            .ns("time_per_call", op.total_ns / op.count.max(1)),
    )];
    push_hits(
        out,
        "link_by_index",
        hits,
        call_ns,
        |share| {
            format!(
                "Links are looked up by index, one call per link ({} of HDF5 time)",
                pct(share)
            )
        },
        "Each lookup by index (H5Lget_name_by_idx, H5Lget_val_by_idx, H5Lget_info_by_idx) \
         may build and sort the table of the group's links again. Visit the links in one \
         pass with H5Literate2(group, H5_INDEX_NAME, H5_ITER_INC, &idx, callback, data) \
         (the callback gets each name and H5L_info2_t), or create the group with \
         H5Pset_link_creation_order(gcpl, H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED) \
         to look links up by creation order: the expected gain is most of the time shown.",
    );
}

/// Files HDF5 opened on its own (no `H5Fopen`/`H5Fcreate` of the program's in the trace)
/// before they are judged: each such file instance is an open and a close of a file the
/// program did not ask for.
pub const IMPLICIT_FILES_MIN: u64 = 20;
/// Objects per implicitly opened file instance at or below which the file was opened for
/// each object anew.
pub const IMPLICIT_OBJECTS_PER_FILE: f64 = 2.0;

/// The file layer's ledger: file instances the program opened (`H5Fopen`, `H5Fcreate`)
/// against those HDF5 opened for it, which are files with objects but without an open
/// of the program's (each instance has its own file number: a file opened again is
/// another instance). HDF5 opens a file by itself when it traverses an external link
/// (`H5L_TYPE_EXTERNAL`); with the external-link file cache off (the default) it opens
/// the target file for every traversal and closes it with the last object opened
/// through it. Many instances with an object or two each are that reopening; its cost is
/// the time of the calls on those instances (the opens that traverse the link included).
fn implicit_file_opens(rep: &Report, call_ns: f64, out: &mut Vec<Insight>) {
    let implicit: Vec<&crate::analysis::FileRow> = rep
        .files
        .iter()
        .filter(|f| f.opens == 0 && f.datasets_created == 0 && f.calls > 0)
        .collect();
    let n = implicit.len() as u64;
    let objects: u64 = implicit.iter().map(|f| f.datasets_opened.max(1)).sum();
    if n < IMPLICIT_FILES_MIN || objects as f64 > IMPLICIT_OBJECTS_PER_FILE * n as f64 {
        return;
    }
    let ns: u64 = implicit.iter().map(|f| f.total_ns).sum();
    let asked: u64 = rep.files.iter().map(|f| f.opens).sum();
    let hits = vec![(
        ns,
        format!(
            "{n} file instance(s) opened by HDF5 itself for {objects} object(s) ({:.1} per \
             open), against {asked} open(s) and create(s) of the program's; {} in the calls \
             on them",
            objects as f64 / n as f64,
            fmt_ns(ns)
        ),
        Evidence::new()
            .count("files", n)
            .count("objects", objects)
            .count("program_opens", asked)
            .ns("time", ns),
    )];
    push_hits(
        out,
        "external_link_reopen",
        hits,
        call_ns,
        |share| {
            format!(
                "HDF5 opens a file again for every object reached through an external link \
                 ({} of HDF5 time)",
                pct(share)
            )
        },
        "Each traversal of an external link opens the target file (superblock, root \
         group) and closes it with the object. Keep the target files open across \
         traversals with H5Pset_elink_file_cache_size(fapl, n) on the file access property \
         list of the file holding the links (or open the target file once with H5Fopen \
         and its objects in it): the expected gain is most of the time shown.",
    );
}

/// File bytes per memory byte of a converting transfer of compound records from which the
/// memory type keeps a subset of the members: from 2, at least half of every record read
/// through the conversion path is discarded.
pub const SUBSET_MIN_RATIO: u64 = 2;

/// The conversion layer's ledger of bytes: compound records brought through the
/// type-conversion path whole (`conv_file_bytes`, in the file's type) to deliver a subset
/// of their members (`conv_bytes`, in the memory type). The waste is the discarded part:
/// its estimated time is the conversions' time times the discarded fraction.
/// Filtered datasets whose filters do not shrink them (`filter_no_gain`): the stored size
/// (`H5Dget_storage_size`, recorded at close) against the bytes of the extent. Every byte
/// still went through the filter pipeline both ways, so the transfers' time is the cost.
fn filters_without_gain(rows: &[(&DatasetRow, &DatasetIo)], call_ns: f64, out: &mut Vec<Insight>) {
    let hits = rows
        .iter()
        .filter_map(|(r, io)| {
            let size = dataset_bytes(r);
            let stored = io.stored_bytes;
            if io.filters.is_empty() || stored == 0 || size < FILTER_MIN_BYTES {
                return None;
            }
            let ratio = size as f64 / stored as f64;
            if ratio >= FILTER_MIN_RATIO {
                return None;
            }
            let ns = r.read_ns + r.write_ns;
            Some((
                ns,
                format!(
                    "{}:{} ({}): {} of data stored in {} (ratio {ratio:.2}), {} in its {}                      transfer(s) through the filters",
                    r.file,
                    r.path,
                    io.filters,
                    fmt_bytes(size),
                    fmt_bytes(stored),
                    fmt_ns(ns),
                    r.reads + r.writes
                ),
                Evidence::new()
                    .name("file", &*r.file)
                    .name("dataset", r.path.as_str())
                    .name("filters", io.filters.as_str())
                    .bytes("bytes", size)
                    .bytes("stored_bytes", stored)
                    .ns("time", ns)
                    .count("transfers", r.reads + r.writes),
            ))
        })
        .collect();
    push_hits(
        out,
        "filter_no_gain",
        hits,
        call_ns,
        |share| {
            format!(
                "Filters that do not compress: the data pass through the filter pipeline and                  are stored at their own size ({} of HDF5 time)",
                pct(share)
            )
        },
        "Every chunk goes through the filters on each write and read, and the stored size          shows they save less than a tenth: the data (random or already compressed) do not          compress. Create the dataset without the filter (no H5Pset_deflate / H5Pset_filter          on its DCPL; h5py compression=None), or with H5Pset_shuffle before deflate if the          values are typed numbers that shuffle makes compressible: the expected gain is          most of the time shown.",
    );
}

fn compound_subset(dio: &DatasetsIo, call_ns: f64, out: &mut Vec<Insight>) {
    let hits = dio
        .iter()
        .filter(|(_, d)| {
            d.conv_calls > 0
                && d.ftype.starts_with("compound")
                && d.conv_file_bytes >= SUBSET_MIN_RATIO * d.conv_bytes.max(1)
        })
        .map(|((f, p), d)| {
            let used = d.conv_bytes as f64 / d.conv_file_bytes as f64;
            let ns = (d.conv_ns as f64 * (1.0 - used)) as u64;
            let mem: Vec<&str> = d.conv_mem_types.iter().map(String::as_str).collect();
            (
                ns,
                format!(
                    "{f}:{p} ({} in the file, {} in memory): read {} of records to deliver {} \
                     of members (x{:.1}) in {} transfer(s), {} of their {} on the discarded \
                     part",
                    d.ftype,
                    if mem.is_empty() {
                        "?".to_string()
                    } else {
                        mem.join("/")
                    },
                    fmt_bytes(d.conv_file_bytes),
                    fmt_bytes(d.conv_bytes),
                    d.conv_file_bytes as f64 / d.conv_bytes.max(1) as f64,
                    d.conv_calls,
                    fmt_ns(ns),
                    fmt_ns(d.conv_ns)
                ),
                Evidence::new()
                    .name("file", f)
                    .name("dataset", p)
                    .name("type", d.ftype.as_str())
                    .bytes("file_bytes", d.conv_file_bytes)
                    .bytes("memory_bytes", d.conv_bytes)
                    .count("transfers", d.conv_calls)
                    .ns("time", ns)
                    .ns("transfer_time", d.conv_ns),
            )
        })
        .collect();
    push_hits(
        out,
        "compound_field_subset",
        hits,
        call_ns,
        |share| {
            format!(
                "Whole compound records are read and converted to deliver a few members ({} \
                 of HDF5 time)",
                pct(share)
            )
        },
        "A memory type with a subset of the file type's members makes HDF5 read every \
         record whole and pass it through the type-conversion buffer to pick the members. \
         When members are read on their own, store them column-wise (one dataset per \
         member, or PyTables-style column storage), or read all the members needed in one \
         H5Dread with one compound memory type: the expected gain is the time shown.",
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aggregate::dataset_io::CostFacts;
    use crate::insights::Level;

    fn row(layout: &str, writes: u64, written: u64) -> DatasetRow {
        DatasetRow::written("/d", layout, "1024x1024", 8, writes, written)
    }

    fn io(fill_time: &str, alloc_time: &str, fill: &str) -> DatasetIo {
        DatasetIo {
            cost: CostFacts {
                creates: 1,
                create_ns: 500,
                fill_time: fill_time.into(),
                alloc_time: alloc_time.into(),
                fill: fill.into(),
                ..Default::default()
            },
            ..Default::default()
        }
    }

    #[test]
    fn filters_are_judged_by_the_stored_size() {
        // 8 MiB of data, 1000 ns of writes (of 2000 ns of HDF5 time), deflated.
        let r = row("chunked", 4, 8 << 20);
        let filtered = |stored: u64| DatasetIo {
            filters: "deflate(4)".into(),
            stored_bytes: stored,
            ..Default::default()
        };
        let run = |io: &DatasetIo| {
            let mut out = Vec::new();
            filters_without_gain(&[(&r, io)], 2000.0, &mut out);
            out
        };
        // Stored at 98 % of its size: no gain, the writes' time is the waste.
        let found = run(&filtered((8 << 20) * 98 / 100));
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].code, "filter_no_gain");
        assert_eq!(found[0].level, Level::High, "{found:?}");
        assert!(found[0].detail.contains("ratio 1.02"), "{found:?}");
        // Stored at half its size: the filter earns its time.
        assert!(run(&filtered(4 << 20)).is_empty());
        // Stored size not recorded (an older trace, or not asked): not judged.
        assert!(run(&filtered(0)).is_empty());
        // Not filtered: not judged, whatever the size.
        let plain = DatasetIo {
            stored_bytes: 8 << 20,
            ..Default::default()
        };
        assert!(run(&plain).is_empty());
    }

    #[test]
    fn repeated_listings_are_judged_by_their_time() {
        use crate::aggregate::link_iter::{GroupListings, LinkListings};
        let run = |repeats: u64, repeat_ns: u64| {
            let dio = DatasetsIo {
                links: LinkListings(
                    [(
                        ("f.h5".to_string(), "/runs".to_string()),
                        GroupListings {
                            listings: repeats + 1,
                            repeats,
                            repeat_ns,
                            links_created: 2000,
                        },
                    )]
                    .into(),
                ),
                ..Default::default()
            };
            let mut out = Vec::new();
            repeated_listings(&dio, 1000.0, &mut out);
            out
        };
        // 199 repeats of a listing of 2000 links, 600 of 1000 ns of HDF5 time.
        let found = run(199, 600);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].code, "repeated_link_iteration");
        assert_eq!(found[0].level, Level::High, "{found:?}");
        assert!(
            found[0]
                .detail
                .contains("listed 200 times, 199 with no change"),
            "{found:?}"
        );
        assert!(found[0].detail.contains("400000 link visits"), "{found:?}");
        // Cheap repeats are a note; too few repeats are not judged.
        assert_eq!(run(199, 50).first().map(|i| i.level), Some(Level::Info));
        assert!(run(RELIST_MIN - 1, 600).is_empty());
    }

    #[test]
    fn selections_read_by_several_processes_are_judged_by_their_repeats() {
        use crate::aggregate::dataset_io::{BoxReads, ReadBoxes};
        let run = |procs: u32, bytes: u64, ns: u64| {
            let io = DatasetIo {
                read_boxes: ReadBoxes(
                    [("0:511x0:1023".into(), BoxReads { procs, bytes, ns })]
                        .into_iter()
                        .collect(),
                ),
                ..DatasetIo::default()
            };
            let mut dio = DatasetsIo::default();
            dio.datasets
                .entry("f.h5".into())
                .or_default()
                .insert("/d".into(), io);
            let mut out = Vec::new();
            rank_redundant_reads(&dio, 1000.0, &mut out);
            out
        };
        // 4 processes read one 4 MiB selection: 16 MiB moved for 4 MiB, 3/4 of 800 ns.
        let found = run(4, 16 << 20, 800);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].code, "rank_redundant_reads");
        assert_eq!(found[0].level, Level::High, "{found:?}");
        assert!(found[0].detail.contains("(x4.0)"), "{found:?}");
        assert!(
            found[0].detail.contains("read by up to 4 processes"),
            "{found:?}"
        );
        // One process per selection is no redundancy; small repeats are not judged.
        assert!(run(1, 16 << 20, 800).is_empty());
        assert!(run(2, REDUNDANT_MIN_BYTES, 800).is_empty());
    }

    #[test]
    fn box_pieces_count_the_runs_contiguous_in_the_file() {
        // A column of a 2048 x 2048 array: one run per row.
        assert_eq!(box_pieces(&[2048, 1], &[2048, 2048]), 2048);
        // Whole rows, a whole array: one run.
        assert_eq!(box_pieces(&[16, 1024], &[6400, 1024]), 1);
        assert_eq!(box_pieces(&[10, 20], &[10, 20]), 1);
        // Part of a row: one run; a 3-D box spanning the last dimension only.
        assert_eq!(box_pieces(&[1, 100], &[10, 1000]), 1);
        assert_eq!(box_pieces(&[4, 8, 64], &[100, 100, 64]), 4);
    }

    #[test]
    fn fill_is_counted_where_hdf5_writes_it() {
        let size = 8 << 20;
        // Early allocation with fill at allocation: the whole dataset, in the create.
        assert_eq!(
            fill_bytes(
                &row("contiguous", 1, size),
                &io("alloc", "early", "default")
            ),
            (size, 500)
        );
        // "If set" with a default fill value: nothing written.
        assert_eq!(
            fill_bytes(
                &row("contiguous", 1, size),
                &io("ifset", "early", "default")
            ),
            (0, 0)
        );
        // "If set" with a value of the user's: written.
        assert_eq!(
            fill_bytes(&row("contiguous", 1, size), &io("ifset", "early", "user")).0,
            size
        );
        // Never: nothing.
        assert_eq!(
            fill_bytes(&row("contiguous", 1, size), &io("never", "early", "user")),
            (0, 0)
        );
        // Late contiguous: only when the first write is partial (more than one write);
        // the time is the fill's part of the writes'.
        assert_eq!(
            fill_bytes(&row("contiguous", 1, size), &io("alloc", "late", "default")),
            (0, 0)
        );
        assert_eq!(
            fill_bytes(&row("contiguous", 4, size), &io("alloc", "late", "default")),
            (size, 500)
        );
        // Chunked incremental: not counted.
        assert_eq!(
            fill_bytes(&row("chunked", 4, size), &io("alloc", "incr", "default")),
            (0, 0)
        );
        // A dataset this process only opened: not counted.
        let mut opened = io("alloc", "early", "default");
        opened.cost.creates = 0;
        assert_eq!(fill_bytes(&row("contiguous", 4, size), &opened), (0, 0));
    }

    /// An aggregate of `(op, kind, path)` records of one process, each taking 1000 ns.
    fn agg_of(recs: &[(&str, &str, &str)]) -> Aggregate {
        let recs: Vec<(&str, &str, &str, &str)> =
            recs.iter().map(|r| (r.0, r.1, "a.h5", r.2)).collect();
        agg_in(&recs)
    }

    /// An aggregate of records `(op, kind, file, path)` of one process, 1 µs each.
    fn agg_in(recs: &[(&str, &str, &str, &str)]) -> Aggregate {
        use crate::aggregate::Accumulator;
        use crate::read::record::RecordRef;
        use crate::read::FileDiag;
        let mut acc = Accumulator::default();
        acc.add_trace_with(std::path::Path::new("t.trace.csv"), |b| {
            for (i, (op, kind, file, path)) in recs.iter().enumerate() {
                let r = RecordRef {
                    seq: i as u64,
                    start_ns: 1_000 + 1_000 * i as u64,
                    total_ns: 1_000,
                    pid: 9,
                    op,
                    kind,
                    file,
                    path,
                    batch: 1,
                    ..RecordRef::default()
                };
                b.add(i as u64 + 2, &r);
            }
            Ok(FileDiag {
                rows: recs.len() as u64,
                ..FileDiag::default()
            })
        })
        .unwrap();
        acc.finish()
    }

    /// `n` rounds of open, read, close of the attribute `/d/scale`, with a write before
    /// each read when `write_each`, then one data read of `/d`.
    fn attr_rounds(n: usize, write_each: bool) -> Vec<(&'static str, &'static str, &'static str)> {
        let mut v = vec![
            ("attr.create", "attr", "/d/scale"),
            ("attr.write", "attr", "/d/scale"),
        ];
        for _ in 0..n {
            v.push(("attr.open", "attr", "/d/scale"));
            if write_each {
                v.push(("attr.write", "attr", "/d/scale"));
            }
            v.push(("attr.read", "attr", "/d/scale"));
            v.push(("attr.close", "attr", "/d/scale"));
        }
        v.push(("dataset.read", "dataset", "/d"));
        v
    }

    #[test]
    fn rereads_of_an_unchanged_attribute_are_the_waste_and_churn_steps_back() {
        let th = crate::insights::Thresholds::default();
        // 300 reads of a value written once: 300 reads for 2 values (the write, plus one
        // for the process), judged; the open/close churn of the same attribute is not
        // reported as well.
        let agg = agg_of(&attr_rounds(300, false));
        let hits = reread_attributes(&agg);
        assert_eq!(hits.len(), 1, "{hits:?}");
        assert_eq!(
            (hits[0].1.as_str(), hits[0].2, hits[0].3),
            ("/d/scale", 300, 2)
        );
        let i = repeated_attribute_reads(&agg).expect("the rereads are judged");
        assert_eq!(i.code, "repeated_attribute_reads");
        assert!(matches!(i.level, Level::High), "{i:?}");
        assert!(
            i.title.contains("read 300 times for 2 value(s): 150x"),
            "{}",
            i.title
        );
        assert!(i.recommendation.contains("H5Aread"));
        assert!(crate::insights::mpi::open_close_churn(&agg, &th).is_none());
        // Read once: nothing.
        assert!(repeated_attribute_reads(&agg_of(&attr_rounds(1, false))).is_none());
        // Written before each read: each read asked for a new value; not a reread, and
        // the churn of its opens stays a finding of its own.
        let changing = agg_of(&attr_rounds(300, true));
        assert!(reread_attributes(&changing).is_empty());
        assert!(repeated_attribute_reads(&changing).is_none());
        assert_eq!(
            crate::insights::mpi::open_close_churn(&changing, &th).map(|i| i.code),
            Some("open_close_churn".to_string())
        );
    }

    /// The codes and levels of the findings on `recs` (one process, equal call times).
    fn codes_of(
        recs: &[(&str, &str, &str)],
        th: &crate::insights::Thresholds,
    ) -> Vec<(String, Level)> {
        let rep = crate::report::analyze(agg_of(recs), th, &[]);
        rep.insights
            .iter()
            .map(|i| (i.code.clone(), i.level))
            .collect()
    }

    #[test]
    fn a_dataset_created_again_and_again_is_delete_recreate_not_churn() {
        let th = crate::insights::Thresholds::default();
        let steps = |n: usize| {
            let mut v = Vec::new();
            for i in 0..n {
                if i > 0 {
                    v.push(("link.specific:delete", "file", "/"));
                }
                v.push(("dataset.create", "dataset", "/latest"));
                v.push(("dataset.write", "dataset", "/latest"));
                v.push(("dataset.close", "dataset", "/latest"));
            }
            v
        };
        let codes = |n: usize| codes_of(&steps(n), &th);
        // 150 creates of /latest: named by its mechanism, and not as open/close churn.
        let got = codes(150);
        assert!(
            got.iter()
                .any(|(c, l)| c == "delete_recreate" && matches!(l, Level::Warn | Level::High)),
            "{got:?}"
        );
        assert!(!got.iter().any(|(c, _)| c == "open_close_churn"), "{got:?}");
        // Created once (then overwritten): nothing of the kind.
        let got = codes(1);
        assert!(!got.iter().any(|(c, _)| c == "delete_recreate"), "{got:?}");
    }

    #[test]
    fn an_attribute_deleted_and_created_again_is_delete_recreate_not_churn() {
        // h5py's `attrs["step"] = i` in a loop: H5Adelete (recorded on the dataset, without
        // the attribute's name) then H5Acreate2, H5Awrite, H5Aclose, next to a row write.
        let th = crate::insights::Thresholds::default();
        let steps = |n: usize| {
            let mut v = vec![("dataset.create", "dataset", "/state")];
            for i in 0..n {
                if i > 0 {
                    v.push(("attr.specific:delete", "dataset", "/state"));
                }
                v.push(("attr.create", "attr", "/state/step"));
                v.push(("attr.write", "attr", "/state/step"));
                v.push(("attr.close", "attr", "/state/step"));
                v.push(("dataset.write", "dataset", "/state"));
            }
            v
        };
        let codes = |n: usize| codes_of(&steps(n), &th);
        let got = codes(2000);
        assert!(
            got.iter()
                .any(|(c, l)| c == "delete_recreate" && matches!(l, Level::Warn | Level::High)),
            "{got:?}"
        );
        // Its creates are not opens: keeping it open is not the fix.
        assert!(!got.iter().any(|(c, _)| c == "open_close_churn"), "{got:?}");
        // Created once: neither.
        let got = codes(1);
        assert!(!got.iter().any(|(c, _)| c == "delete_recreate"), "{got:?}");
        // Opened (not created) again and again: still open/close churn.
        let mut v = vec![
            ("attr.create", "attr", "/d/a"),
            ("attr.close", "attr", "/d/a"),
        ];
        for _ in 0..300 {
            v.push(("attr.open", "attr", "/d/a"));
            v.push(("attr.write", "attr", "/d/a"));
            v.push(("attr.close", "attr", "/d/a"));
        }
        assert!(crate::insights::mpi::open_close_churn(&agg_of(&v), &th).is_some());
        assert!(recreated_attributes(&agg_of(&v)).is_none());
    }

    #[test]
    fn many_files_each_opened_once_pay_the_per_file_cost() {
        // One file per step, each created, given one small dataset and closed: no file is
        // reopened, but the run pays a superblock, a root group and a flush per step.
        let th = crate::insights::Thresholds::default();
        let names: Vec<String> = (0..300).map(|i| format!("step{i}.h5")).collect();
        // `n` files, each created with one dataset of `writes` writes and closed, then
        // opened and closed again `reopens` times.
        let files = |n: usize, writes: usize, reopens: usize| {
            let mut v = Vec::new();
            for f in names.iter().take(n) {
                v.push(("file.create", "file", f.as_str(), "/"));
                v.push(("dataset.create", "dataset", f.as_str(), "/x"));
                for _ in 0..writes {
                    v.push(("dataset.write", "dataset", f.as_str(), "/x"));
                }
                v.push(("dataset.close", "dataset", f.as_str(), "/x"));
                v.push(("file.close", "file", f.as_str(), "/"));
                for _ in 0..reopens {
                    v.push(("file.open", "file", f.as_str(), "/"));
                    v.push(("file.close", "file", f.as_str(), "/"));
                }
            }
            v
        };
        let churn = |n: usize, writes: usize, reopens: usize| {
            let rep = crate::report::analyze(agg_in(&files(n, writes, reopens)), &th, &[]);
            rep.insights
                .into_iter()
                .find(|i| i.code == "file_open_close_churn")
        };
        let i = churn(300, 1, 0).expect("300 files of one write each");
        assert!(matches!(i.level, Level::Warn | Level::High), "{i:?}");
        assert!(
            i.detail
                .contains("300 file open(s) or create(s) of 300 file(s)"),
            "{}",
            i.detail
        );
        assert!(
            i.recommendation.contains("extendible dataset"),
            "{}",
            i.recommendation
        );
        // A few files: the fixed cost is paid a few times, nothing to change.
        assert!(churn(3, 1, 0).is_none());
        // Many files, each carrying far more data time than its life cycle: not judged.
        assert!(churn(30, 10, 0).is_none());
        // Many files whose life cycle is only a little above their data time (4 calls of
        // create, close, open, close against 3 writes): merging them would save well under
        // half, and which side is larger flips from run to run; not judged.
        assert!(churn(30, 3, 1).is_none());
    }

    #[test]
    fn a_box_is_fragmented_by_its_pieces_and_the_extent_they_carry_not_their_size() {
        // mpi_column_blocks: a rank's 2048x512 column block of a 2048x2048 double array is
        // 2048 pieces of 4 KiB carrying a quarter of the rows they cross.
        assert_eq!(fragmented_box(&[2048, 512], &[2048, 2048]), Some(2048));
        // strided_column: 2048 pieces of 8 bytes.
        assert_eq!(fragmented_box(&[2048, 1], &[2048, 2048]), Some(2048));
        // sieve_off: 32 Ki pieces of 64 bytes, 1 KiB apart.
        assert_eq!(fragmented_box(&[32768, 8], &[32768, 128]), Some(32768));
        // Blocks of whole rows are one piece; three quarters of each row carry most of
        // the extent; a few pieces are a few requests.
        assert_eq!(fragmented_box(&[512, 2048], &[2048, 2048]), None);
        assert_eq!(fragmented_box(&[2048, 1536], &[2048, 2048]), None);
        assert_eq!(fragmented_box(&[8, 512], &[2048, 2048]), None);
    }
}
