//! Metadata, layout-on-disk and MPI rules: `metadata_time`, `tiny_datasets`,
//! `open_close_churn`, `unaligned_io`, `independent_small_io`, `collective_metadata_off`,
//! `straggler_ranks`, `rank_imbalance_bytes`/`_time`, `collective_late_arrival` and
//! `straggler_calls`. `docs/INSIGHTS.md` gives each rule's trigger, evidence, severity
//! and references. Every severity comes from [`severity_for_share`]: the share of the
//! run's HDF5 time the finding explains.
//!
//! MPI wording and MPI advice are for processes that really used MPI-IO: a file opened
//! with the MPI-IO driver (the `mpio` column of the file's objects row) or a data transfer
//! with an MPI-IO mode. A launcher rank alone (`PMI_RANK`, `OMPI_COMM_WORLD_RANK`) makes a
//! process numbered, not parallel.

use crate::aggregate::Aggregate;
use crate::analysis::{RankRow, Report};
use crate::insights::{
    below, dims_elems, ins, severity_for_share, Evidence, Insight, Level, Quantity, Thresholds,
};
use crate::read::record::{OpClass, ProcKey};
use crate::units::{fmt_bytes, fmt_ns, pct};
use std::collections::{BTreeMap, BTreeSet};

/// Metadata calls a run needs before it can be called metadata-dominated (a program that
/// creates one file and one dataset is all metadata, and nothing to fix).
pub const METADATA_MIN_CALLS: u64 = 100;
/// Ranks using MPI-IO from which collective metadata is recommended. The HDF Group's
/// guidance ("Collective Metadata I/O", HDF5 1.10) is about many ranks reading the same
/// metadata; four is the smallest count at which the duplicated reads are already four
/// requests per block, and the share rule keeps small effects quiet.
pub const COLL_MD_MIN_RANKS: usize = 4;
/// A rank moving at least this many times the median data of an operation is materially
/// imbalanced (balanced programs on busy nodes stay well below ×2 in bytes: 1.0).
pub const RANK_MATERIAL_RATIO: f64 = 2.0;
/// A straggler call must take at least this long (10 ms) to be worth an insight: on a busy
/// node a call the scheduler preempts takes a time slice (a few ms) longer, which says
/// nothing about I/O.
pub const CALL_MIN_NS: u64 = 10_000_000;
/// Straggler calls must explain at least this share of the run's HDF5 time (their excess
/// over the median) to be an insight.
pub const CALLS_MIN_SHARE: f64 = 0.05;
/// Matched calls a collective operation needs before a late arrival is a pattern rather
/// than the order of one call.
pub const LATE_MIN_CALLS: u64 = 3;
/// `independent_small_io` needs at least this fraction of the data accesses to be small
/// ("mostly small"), whatever `small_io`'s own fraction is.
pub const MOSTLY_SMALL: f64 = 0.5;
/// Stripe size assumed for a recorded parallel file system when `--stripe-size` is not
/// given: Lustre's default (1 MiB).
pub const DEFAULT_STRIPE: u64 = 1 << 20;

/// File opens: one per file, a fixed cost (under MPI-IO, `MPI_File_open`), not the
/// per-object metadata the metadata rules are about. `file.close` counts: it flushes the
/// metadata cache, the objects' headers and heaps.
const FILE_OPS: &[&str] = &["file.create", "file.open"];

/// Which processes used MPI-IO.
struct Mpi {
    procs: BTreeSet<ProcKey>,
}

impl Mpi {
    fn of(agg: &Aggregate) -> Mpi {
        Mpi {
            procs: crate::analysis::mpi_io_procs(agg),
        }
    }

    fn used(&self) -> bool {
        !self.procs.is_empty()
    }

    /// `rank N` for an MPI-IO process, else `process PID`.
    fn who(&self, rank: i64, pid: u32) -> String {
        let p = ProcKey { rank, pid };
        if rank >= 0 && self.procs.contains(&p) {
            format!("rank {rank}")
        } else {
            format!("process {pid}")
        }
    }
}

/// The run of a program a process belongs to ([`RankRow::group`]).
fn group_of(rep: &Report, rank: i64, pid: u32) -> &str {
    rep.ranks
        .iter()
        .find(|r| r.rank == rank && r.pid == pid)
        .map_or("", |r| r.group.as_str())
}

/// ` of GROUP` for a finding's title when its lines are about one group, else ` in N
/// runs`: rank findings always say whose processes they compared.
fn of_groups<'a>(groups: impl IntoIterator<Item = &'a str>) -> String {
    let g: BTreeSet<&str> = groups.into_iter().collect();
    match g.len() {
        0 => String::new(),
        1 => format!(" of {}", g.into_iter().next().unwrap_or_default()),
        n => format!(" in {n} runs"),
    }
}

/// Runs the rules of this module.
/// `churn` is [`open_close_churn`]'s finding, made before the report took the aggregate's
/// object tables apart.
pub fn detect(
    rep: &Report,
    agg: &Aggregate,
    th: &Thresholds,
    churn: Vec<Insight>,
    out: &mut Vec<Insight>,
) {
    let mpi = Mpi::of(agg);
    let call_ns = rep.run.call_ns.max(1);
    tiny_datasets(rep, th, call_ns, out);
    out.extend(churn);
    file_open_close_churn(rep, th, call_ns, out);
    unaligned_io(rep, agg, th, call_ns, out);
    if mpi.used() {
        independent_small_io(rep, agg, &mpi, th, call_ns, out);
        collective_metadata_off(rep, &mpi, call_ns, out);
        collective_late_arrival(rep, &mpi, th, call_ns, out);
    }
    straggler_ranks(rep, &mpi, th, call_ns, out);
    rank_imbalance(rep, &mpi, th, call_ns, out);
    straggler_calls(rep, agg, &mpi, th, call_ns, out);
    // Last: its severity depends on the metadata mechanisms found above.
    metadata_time(rep, th, call_ns, out);
}

/// Time and calls of metadata operations other than file opens ([`FILE_OPS`]).
fn object_metadata(rep: &Report) -> (u64, u64) {
    rep.ops
        .iter()
        .filter(|o| o.class == "metadata" && !FILE_OPS.contains(&o.op.as_str()))
        .fold((0, 0), |a, o| (a.0 + o.total_ns, a.1 + o.count))
}

/// The codes of rules that name a mechanism of the metadata layer: work in the object,
/// link, attribute, file and metadata-cache layers that a change of the program removes.
pub const METADATA_MECHANISMS: &[&str] = &[
    "tiny_datasets",
    "open_close_churn",
    "path_traversal",
    "file_open_close_churn",
    "collective_metadata_off",
    "flush_per_write",
    "link_by_index",
    "repeated_link_iteration",
    "external_link_reopen",
    "attribute_storage_compact",
];

/// `metadata_time`: metadata operations take at least `metadata_fraction` of HDF5 time.
/// A share alone cannot tell the metadata a program needs (a small round trip of h5py or
/// netCDF4, 3000 links read back in one H5Literate2, 300 small datasets each opened once)
/// from waste, and names nothing to change. So the finding is serious only when a
/// metadata mechanism ([`METADATA_MECHANISMS`]) is serious in the same run: it is then
/// the total of the metadata layer that mechanism is part of, reported once material
/// ([`SHARE_WARN`](crate::insights::SHARE_WARN)) with its share as severity, so that a
/// share near `metadata_fraction` does not come and go from run to run. Otherwise it
/// fires from `metadata_fraction`, at INFO: a timing note
/// ([`crate::insights::TIMING_CODES`]).
fn metadata_time(rep: &Report, th: &Thresholds, call_ns: u64, out: &mut Vec<Insight>) {
    let (meta_ns, calls) = object_metadata(rep);
    let share = meta_ns as f64 / call_ns as f64;
    let named = out.iter().any(|i| {
        matches!(i.level, Level::High | Level::Warn)
            && METADATA_MECHANISMS.contains(&i.code.as_str())
    });
    let from = if named {
        th.metadata_fraction.min(crate::insights::SHARE_WARN)
    } else {
        th.metadata_fraction
    };
    if calls < METADATA_MIN_CALLS || share < from {
        return;
    }
    let level = if named {
        severity_for_share(share)
    } else {
        Level::Info
    };
    let top: Vec<String> = rep
        .ops
        .iter()
        .filter(|o| o.class == "metadata" && !FILE_OPS.contains(&o.op.as_str()))
        .take(3)
        .map(|o| {
            format!(
                "{} {} calls, {} ({})",
                o.op,
                o.count,
                fmt_ns(o.total_ns),
                pct(o.share)
            )
        })
        .collect();
    out.push(
        ins(
            level,
            "metadata_time",
            format!("Metadata operations take {} of HDF5 time", pct(share)),
            format!("{calls} metadata calls; top: {}", top.join(", ")),
            "Do less metadata work per byte: keep groups and datasets open instead of reopening \
         them, store many small arrays in one dataset, create files with \
         H5Pset_libver_bounds(fapl, H5F_LIBVER_LATEST, H5F_LIBVER_LATEST) (compact object \
         headers and link storage) and aggregate metadata with H5Pset_meta_block_size (or \
         paged aggregation, H5Pset_file_space_strategy + H5Pset_page_buffer_size).",
        )
        .with(
            Evidence::new()
                .fraction("share", share)
                .count("calls", calls),
        )
        .with_items(
            rep.ops
                .iter()
                .filter(|o| o.class == "metadata" && !FILE_OPS.contains(&o.op.as_str()))
                .take(3)
                .map(|o| {
                    Evidence::new()
                        .name("op", o.op.as_str())
                        .count("calls", o.count)
                        .ns("time", o.total_ns)
                        .fraction("share", o.share)
                })
                .collect(),
        ),
    );
}

fn tiny_datasets(rep: &Report, th: &Thresholds, call_ns: u64, out: &mut Vec<Insight>) {
    let tiny: Vec<_> = rep
        .datasets
        .iter()
        .filter(|d| {
            let size = dims_elems(&d.dims)
                .map(|e| e.saturating_mul(d.type_size.max(1)))
                .unwrap_or_else(|| d.bytes_written.max(d.bytes_read) / (d.procs.max(1) as u64));
            size < th.tiny_dataset_bytes
        })
        .collect();
    let count = tiny.len() as u64;
    if count < th.tiny_dataset_count {
        return;
    }
    let ns: u64 = tiny.iter().map(|d| d.total_ns).sum();
    let bytes: u64 = tiny.iter().map(|d| d.bytes_written.max(d.bytes_read)).sum();
    let share = ns as f64 / call_ns as f64;
    out.push(
        ins(
            severity_for_share(share),
            "tiny_datasets",
            format!(
                "{count} datasets are smaller than {}",
                fmt_bytes(th.tiny_dataset_bytes)
            ),
            format!(
                "{count} of {} datasets; {} of data in them (mean {} each); calls on them take {} \
             ({} of HDF5 time)",
                rep.datasets.len(),
                fmt_bytes(bytes),
                fmt_bytes(bytes / count.max(1)),
                fmt_ns(ns),
                pct(share)
            ),
            "Store the small arrays in one larger dataset (an extra dimension, or a compound \
         type) or as attributes; if they must stay separate datasets, use the compact layout \
         (H5Pset_layout(dcpl, H5D_COMPACT): data inside the object header), create the file \
         with H5Pset_libver_bounds(fapl, H5F_LIBVER_LATEST, H5F_LIBVER_LATEST), and \
         aggregate metadata allocations with H5Pset_meta_block_size. Every dataset costs an \
         object header, a link and its own allocation.",
        )
        .with(
            Evidence::new()
                .count("tiny", count)
                .bytes("tiny_below", th.tiny_dataset_bytes)
                .count("datasets", rep.datasets.len() as u64)
                .bytes("bytes", bytes)
                .bytes("mean_bytes", bytes / count.max(1))
                .ns("time", ns)
                .fraction("share", share),
        ),
    );
}

/// The `open_close_churn` insight, if any object of `agg.objects` is opened repeatedly.
/// Called by [`crate::report::analyze`] before the dataset rows take the object tables.
///
/// An attribute that [`crate::insights::costmodel::reread_attributes`] names (its value
/// read again and again unchanged) is left to that more specific finding: its opens are
/// the rereads, and the fix is to read it once, not to keep it open. So is a dataset that
/// [`crate::insights::costmodel::recreated`] names (its opens are creates: `delete_recreate`).
pub fn open_close_churn(agg: &Aggregate, th: &Thresholds) -> Option<Insight> {
    let call_ns = agg.total_ns().max(1);
    use crate::insights::costmodel::{recreated, reread};
    let mut churn: Vec<(u64, u64, String, Evidence)> = agg
        .objects
        .iter()
        .flat_map(|(f, m)| {
            // The file's dataset facts, sorted by path as its dataset objects are: a
            // cursor over them finds each one's without a lookup.
            let mut facts = agg
                .datasets_io
                .datasets
                .get(f)
                .into_iter()
                .flatten()
                .peekable();
            m.iter().map(move |((kind, p), o)| {
                let mut io = None;
                if kind == "dataset" {
                    while facts.next_if(|(q, _)| q.as_str() < p).is_some() {}
                    io = facts.next_if(|(q, _)| q.as_str() == p).map(|(_, io)| io);
                }
                (kind, f, p, o, io)
            })
        })
        .filter(|(kind, _, _, o, io)| match *kind {
            // Rereads of an unchanged value are `repeated_attribute_reads`'s.
            "attr" => !reread(o),
            "dataset" => io.is_none_or(|io| !recreated(io, o.procs.len())),
            _ => true,
        })
        .filter_map(|(kind, f, p, o, _)| {
            let procs = (o.procs.len() as u64).max(1);
            // An attribute's creates are not opens: created again and again, it is
            // deleted and recreated (`delete_recreate`), not kept open.
            let opens = o.opens.saturating_sub(o.attr_creates);
            let per = opens / procs;
            // Time on the object other than moving data: opens, closes, queries.
            let ns = o.total_ns.saturating_sub(o.read_ns + o.write_ns);
            (per >= th.churn_opens).then(|| {
                (
                    ns,
                    opens,
                    format!(
                        "{kind} {f}:{p} opened {} times by {procs} process(es), {} in opens, \
                         closes and queries",
                        opens,
                        fmt_ns(ns)
                    ),
                    Evidence::new()
                        .name("kind", kind)
                        .name("file", f.as_str())
                        .name("object", p)
                        .count("opens", opens)
                        .count("processes", procs)
                        .ns("time", ns),
                )
            })
        })
        .collect();
    if churn.is_empty() {
        return None;
    }
    churn.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.2.cmp(&b.2)));
    let ns: u64 = churn.iter().map(|c| c.0).sum();
    let share = ns as f64 / call_ns as f64;
    Some(
        ins(
            severity_for_share(share),
            "open_close_churn",
            format!(
                "{} object(s) are opened and closed repeatedly ({} of HDF5 time)",
                churn.len(),
                pct(share)
            ),
            churn
                .iter()
                .take(5)
                .map(|c| c.2.clone())
                .collect::<Vec<_>>()
                .join("; "),
            "Open each object once and keep its identifier for the whole phase (H5Dopen2/H5Gopen2 \
         outside the loop, H5Dclose after it): every open looks the name up in the group's \
         link storage and reads the object header, every close drops the object's cached \
         state.",
        )
        .with(
            Evidence::new()
                .count("objects", churn.len() as u64)
                .fraction("share", share),
        )
        .with_items(churn.into_iter().take(5).map(|c| c.3).collect()),
    )
}

/// Path components from which reopening an object by its path counts as a deep walk.
const PATH_DEPTH: u64 = 4;
/// Link lookups (reopens times path components) from which `path_traversal` fires.
const PATH_LOOKUPS: u64 = 1000;

/// `path_traversal`: objects deep in the group tree reopened again and again by their
/// full path; every open looks up each component of the path from the root (and careful
/// code checks each prefix with H5Lexists first). Opening the leaf group once and the
/// objects by name in it, or keeping them open, removes the walks.
pub fn path_traversal(agg: &Aggregate) -> Option<Insight> {
    let call_ns = agg.total_ns().max(1);
    let mut hits: Vec<(u64, u64, String, Evidence)> = agg
        .objects
        .iter()
        .flat_map(|(f, m)| m.iter().map(move |((kind, p), o)| (kind, f, p, o)))
        .filter_map(|(kind, f, p, o)| {
            // Reopened first: most objects are opened once, and their paths are not split.
            let procs = (o.procs.len() as u64).max(1);
            if o.opens / procs < 2 {
                return None;
            }
            let depth = p.split('/').filter(|c| !c.is_empty()).count() as u64;
            (depth >= PATH_DEPTH).then(|| {
                let ns = o.total_ns.saturating_sub(o.read_ns + o.write_ns);
                (
                    ns,
                    o.opens * depth,
                    format!(
                        "{kind} {f}:{p} ({depth} components) opened {} times, {} in opens, \
                         closes and queries",
                        o.opens,
                        fmt_ns(ns)
                    ),
                    Evidence::new()
                        .name("kind", kind)
                        .name("file", f.as_str())
                        .name("object", p)
                        .count("components", depth)
                        .count("opens", o.opens)
                        .ns("time", ns),
                )
            })
        })
        .collect();
    let lookups: u64 = hits.iter().map(|h| h.1).sum();
    if lookups < PATH_LOOKUPS {
        return None;
    }
    hits.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.2.cmp(&b.2)));
    let ns: u64 = hits.iter().map(|h| h.0).sum();
    let share = ns as f64 / call_ns as f64;
    Some(
        ins(
            severity_for_share(share),
            "path_traversal",
            format!(
                "{} deep object(s) are reopened by path: {lookups} link lookups ({} of HDF5 time)",
                hits.len(),
                pct(share)
            ),
            hits.iter()
                .take(5)
                .map(|h| h.2.clone())
                .collect::<Vec<_>>()
                .join("; "),
            "Open the leaf group once (H5Gopen2) and the objects by name in it (H5Dopen2(group, \
         name)), or keep the objects open: every open by absolute path looks up each \
         component from the root, and H5Lexists on every prefix repeats the walk.",
        )
        .with(
            Evidence::new()
                .count("objects", hits.len() as u64)
                .count("lookups", lookups)
                .fraction("share", share),
        )
        .with_items(hits.into_iter().take(5).map(|h| h.3).collect()),
    )
}

/// Attributes on one object before their storage is judged.
pub const ATTRS_PER_OBJECT: u64 = 64;

/// `attribute_storage_compact`: the attribute layer's ledger, attributes per object
/// against their storage. In a file whose FAPL's low bound is `earliest` (HDF5's default,
/// the rows' `libver`), object headers are version 1 and keep every attribute in the
/// header: each `H5Acreate`/`H5Aopen` scans the header's messages, so n attributes on an
/// object cost n² message reads. From version 1.8 of the format (`H5F_LIBVER_V18`), more
/// than 8 attributes go to dense storage (a fractal heap indexed by a B-tree of names).
/// Objects with at least [`ATTRS_PER_OBJECT`] attributes (attribute nodes named
/// `<holder>/<name>`) in such a file are the finding; its cost is the time of the calls
/// on those attributes. Files without a recorded `libver` (older traces) are not judged.
pub fn attribute_storage_compact(agg: &Aggregate) -> Option<Insight> {
    let call_ns = agg.total_ns().max(1);
    let mut hits: Vec<(u64, String, Evidence)> = Vec::new();
    for (f, m) in &agg.objects {
        if agg
            .file_access
            .get(f)
            .is_none_or(|fa| fa.libver != "earliest")
        {
            continue;
        }
        let mut holders: BTreeMap<&str, (u64, u64)> = BTreeMap::new();
        for ((kind, p), o) in m.iter() {
            if kind != "attr" {
                continue;
            }
            let holder = p
                .rsplit_once('/')
                .map_or("/", |(h, _)| if h.is_empty() { "/" } else { h });
            let e = holders.entry(holder).or_default();
            e.0 += 1;
            e.1 += o.total_ns;
        }
        for (h, (n, ns)) in holders {
            if n >= ATTRS_PER_OBJECT {
                hits.push((
                    ns,
                    format!(
                        "{f}:{h}: {n} attributes in a version-1 object header (libver \
                         earliest), {} in calls on them",
                        fmt_ns(ns)
                    ),
                    Evidence::new()
                        .name("file", f.as_str())
                        .name("object", h)
                        .count("attributes", n)
                        .ns("time", ns),
                ));
            }
        }
    }
    if hits.is_empty() {
        return None;
    }
    hits.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    let ns: u64 = hits.iter().map(|h| h.0).sum();
    let share = ns as f64 / call_ns as f64;
    Some(
        ins(
            severity_for_share(share),
            "attribute_storage_compact",
            format!(
                "{} object(s) hold many attributes in their object header ({} of HDF5 time)",
                hits.len(),
                pct(share)
            ),
            hits.iter()
                .take(5)
                .map(|h| h.1.clone())
                .collect::<Vec<_>>()
                .join("; "),
            "With the earliest file format every attribute stays in the object header, and each \
         H5Acreate2/H5Aopen scans all of them. Create the file with \
         H5Pset_libver_bounds(fapl, H5F_LIBVER_V18, H5F_LIBVER_LATEST) so that attributes \
         beyond H5Pset_attr_phase_change's limit (8) go to dense storage, or keep many \
         values in one attribute or a dataset: the expected gain is most of the time shown.",
        )
        .with(
            Evidence::new()
                .count("objects", hits.len() as u64)
                .fraction("share", share),
        )
        .with_items(hits.into_iter().take(5).map(|h| h.2).collect()),
    )
}

/// Files opened or created per process from which the files' fixed costs are judged over
/// all of them (many files, each opened once), not per file.
pub const MANY_FILES: u64 = 16;

/// How many times the data time the files' life cycle must take before many files are
/// judged to be the waste. At about equal times, merging the files would save at most
/// half, and which of the two is larger flips from run to run on a busy machine (a
/// virtual dataset's 16 small source files, read once: life cycle 0.1-0.5x the data time
/// in five runs, once above it); a run made of per-file overhead is clear of it
/// (300 files of 8 KiB each: 11x).
pub const MANY_FILES_OVER_DATA: u64 = 2;

/// `file_open_close_churn`: the per-file fixed cost paid again and again. Every
/// `H5Fcreate`/`H5Fopen` writes or reads the superblock and the root group and sets up the
/// metadata cache and the file driver, every `H5Fclose` flushes the cache and closes the
/// driver, whatever data the file carries. The cost is judged over all files of the run:
/// one file reopened at least `--churn-opens` times per process, or at least
/// [`MANY_FILES`] opens or creates per process (of one file or of many) whose life-cycle
/// time (opens, creates, closes) is at least [`MANY_FILES_OVER_DATA`] times the time moving
/// the data they carry (the fixed cost per file well above the data time per file).
/// Severity: the life-cycle time over HDF5 time.
fn file_open_close_churn(rep: &Report, th: &Thresholds, call_ns: u64, out: &mut Vec<Insight>) {
    let procs = (rep.run.processes as u64).max(1);
    let opens: u64 = rep.files.iter().map(|f| f.opens).sum();
    // Opens and closes of all files: the report keeps them per operation, not per file.
    let ns: u64 = rep
        .ops
        .iter()
        .filter(|o| ["file.open", "file.create", "file.close"].contains(&o.op.as_str()))
        .map(|o| o.total_ns)
        .sum();
    // Every dataset row belongs to one of the files.
    let data_ns: u64 = rep.datasets.iter().map(|d| d.read_ns + d.write_ns).sum();
    let bytes: u64 = rep
        .files
        .iter()
        .map(|f| f.bytes_read + f.bytes_written)
        .sum();
    let mut churn: Vec<&crate::analysis::FileRow> = rep
        .files
        .iter()
        .filter(|f| f.opens / (f.procs as u64).max(1) >= th.churn_opens)
        .collect();
    let many = opens / procs >= MANY_FILES && ns >= MANY_FILES_OVER_DATA * data_ns;
    if churn.is_empty() && !many {
        return;
    }
    if churn.is_empty() {
        churn = rep.files.iter().filter(|f| f.opens > 0).collect();
    }
    let share = ns as f64 / call_ns as f64;
    churn.sort_by(|a, b| b.opens.cmp(&a.opens).then_with(|| a.file.cmp(&b.file)));
    let files = rep.files.iter().filter(|f| f.opens > 0).count() as u64;
    let per_open_ns = ns / opens.max(1);
    let per_open_bytes = bytes / opens.max(1);
    let data_per_open_ns = data_ns / opens.max(1);
    let mut detail = format!(
        "{opens} file open(s) or create(s) of {files} file(s) by {procs} process(es): {} of \
         life cycle (open, create, close) per open against {} of data carried per open, moved \
         in {}",
        fmt_ns(per_open_ns),
        fmt_bytes(per_open_bytes),
        fmt_ns(data_per_open_ns)
    );
    let reopened: Vec<String> = churn
        .iter()
        .filter(|f| f.opens / (f.procs as u64).max(1) >= 2)
        .take(5)
        .map(|f| {
            format!(
                "{} opened {} times by {} process(es)",
                f.file, f.opens, f.procs
            )
        })
        .collect();
    if !reopened.is_empty() {
        detail.push_str("; ");
        detail.push_str(&reopened.join("; "));
    }
    out.push(
        ins(
            severity_for_share(share),
            "file_open_close_churn",
            format!(
                "Files are opened and closed again and again, each carrying little data ({} of \
                 HDF5 time in file opens, creates and closes)",
                pct(share)
            ),
            detail,
            "Every H5Fcreate/H5Fopen writes or reads the superblock and the root group and \
         sets up the metadata cache and the file driver, every H5Fclose flushes the cache and \
         closes the driver: a fixed cost per file, whatever data it carries. Keep one file \
         open for the whole run (H5Fopen before the loop, H5Fclose at the end), and store \
         the steps in it: a group per step, or better one extendible dataset with a row per \
         step (H5Dset_extent + H5Sselect_hyperslab + H5Dwrite). To make data durable between \
         steps, H5Fflush is cheaper than a close and reopen. Expected gain: most of the time \
         shown.",
        )
        .with(
            Evidence::new()
                .count("files", files)
                .count("opens", opens)
                .count("processes", procs)
                .ns("open_time", per_open_ns)
                .bytes("bytes_per_open", per_open_bytes)
                .ns("data_time_per_open", data_per_open_ns)
                .fraction("share", share),
        )
        .with_items(
            churn
                .iter()
                .take(5)
                .map(|f| {
                    Evidence::new()
                        .name("file", f.file.as_str())
                        .count("opens", f.opens)
                        .count("processes", f.procs as u64)
                })
                .collect(),
        ),
    );
}

fn unaligned_io(
    rep: &Report,
    agg: &Aggregate,
    th: &Thresholds,
    call_ns: u64,
    out: &mut Vec<Insight>,
) {
    let mut hits = Vec::new();
    let mut items = Vec::new();
    let mut ns = 0u64;
    for (file, fa) in &agg.file_access {
        let parallel_fs = matches!(fa.fs.as_str(), "lustre" | "gpfs" | "beegfs");
        let stripe = match (th.stripe_size, parallel_fs) {
            (0, false) => continue,
            (0, true) => DEFAULT_STRIPE,
            (s, _) => s,
        };
        let Some((threshold, alignment)) = fa.align else {
            continue;
        };
        let aligned_to_stripe = alignment >= stripe && alignment % stripe == 0;
        let big: Vec<_> = rep
            .datasets
            .iter()
            .filter(|d| *d.file == **file && (d.layout == "contiguous" || d.layout.is_empty()))
            .filter(|d| d.reads + d.writes > 0)
            .filter_map(|d| {
                let size = dims_elems(&d.dims)?.saturating_mul(d.type_size.max(1));
                // HDF5 aligns allocations of at least `threshold` bytes.
                let aligned = aligned_to_stripe && size >= threshold;
                (size >= stripe && !aligned).then_some((d, size))
            })
            .collect();
        if big.is_empty() {
            continue;
        }
        let t: u64 = big.iter().map(|(d, _)| d.read_ns + d.write_ns).sum();
        let bytes: u64 = big.iter().map(|(_, s)| s).sum();
        ns += t;
        hits.push(format!(
            "{file} on {} (stripe {}{}), H5Pset_alignment threshold {threshold} alignment \
             {alignment}: {} contiguous dataset(s) of {} at unaligned addresses, {} in \
             their reads and writes",
            if fa.fs.is_empty() { "?" } else { &fa.fs },
            fmt_bytes(stripe),
            if th.stripe_size == 0 { ", assumed" } else { "" },
            big.len(),
            fmt_bytes(bytes),
            fmt_ns(t)
        ));
        items.push(
            Evidence::new()
                .name("file", file.as_str())
                .name("fs", fa.fs.as_str())
                .bytes("stripe", stripe)
                .bytes("threshold", threshold)
                .bytes("alignment", alignment)
                .count("datasets", big.len() as u64)
                .bytes("bytes", bytes)
                .ns("time", t),
        );
    }
    if hits.is_empty() {
        return;
    }
    let share = ns as f64 / call_ns as f64;
    out.push(
        ins(
            severity_for_share(share),
            "unaligned_io",
            format!(
                "Large datasets are not aligned to the file system's stripes ({} of HDF5 time in \
             their I/O)",
                pct(share)
            ),
            format!(
                "{}. Judged from the file's alignment setting and the datasets' sizes: h5prov \
             does not record file offsets",
                hits.join("; ")
            ),
            "Align large allocations to the stripe size: H5Pset_alignment(fapl, threshold, \
         stripe_size) on the file access property list (e.g. threshold 1 MiB, alignment = \
         the Lustre stripe size from `lfs getstripe`), so that each stripe-sized access hits \
         one stripe on one server.",
        )
        .with(Evidence::new().fraction("share", share))
        .with_items(items),
    );
}

fn independent_small_io(
    rep: &Report,
    agg: &Aggregate,
    mpi: &Mpi,
    th: &Thresholds,
    call_ns: u64,
    out: &mut Vec<Insight>,
) {
    let t = &rep.transfers;
    let mut sizes = agg.io_sizes[0].clone();
    sizes.merge(&agg.io_sizes[1]);
    let (mut n, mut small) = (sizes.total(), below(&sizes, th.small_io_bytes));
    let mut data_ns: u64 = rep
        .ops
        .iter()
        .filter(|o| o.class != "metadata")
        .map(|o| o.total_ns)
        .sum();
    if others_than_mpi(rep, mpi) {
        // Other programs' accesses are not the MPI job's: judge its processes' data calls
        // alone, each process's calls of an operation by their mean size (the access-size
        // histograms are of the whole directory).
        (n, small, data_ns) = (0, 0, 0);
        for r in rep.rank_ops.iter().filter(|r| {
            mpi.procs.contains(&ProcKey {
                rank: r.rank,
                pid: r.pid,
            }) && OpClass::of(&r.op) != OpClass::Metadata
        }) {
            n += r.count;
            data_ns += r.total_ns;
            if r.bytes < th.small_io_bytes.saturating_mul(r.count) {
                small += r.count;
            }
        }
    }
    if t.independent == 0
        || t.independent <= t.collective
        || n < crate::insights::MIN_DATA_ACCESSES
        || (small as f64) < MOSTLY_SMALL * n as f64
    {
        return;
    }
    // The independent small transfers' part of the data time.
    let ind = t.independent as f64 / (t.independent + t.collective + t.broken_collective) as f64;
    let share = data_ns as f64 * ind * small as f64 / n as f64 / call_ns as f64;
    out.push(
        ins(
            severity_for_share(share),
            "independent_small_io",
            format!(
                "MPI ranks make {} small independent transfers ({} of HDF5 time)",
                t.independent,
                pct(share)
            ),
            format!(
                "independent {}, collective {}; {small} of {n} accesses below {}; data calls take \
             {}",
                t.independent,
                t.collective,
                fmt_bytes(th.small_io_bytes),
                fmt_ns(data_ns)
            ),
            "Write each rank's part with one collective transfer: select it as one hyperslab and \
         set H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE), so that MPI-IO's two-phase I/O \
         aggregates the ranks' pieces into large contiguous file-system requests \
         (collective buffering, tuned with the romio_cb_write / cb_buffer_size hints).",
        )
        .with(
            Evidence::new()
                .count("independent", t.independent)
                .count("collective", t.collective)
                .fraction("share", share)
                .count("small", small)
                .count("accesses", n)
                .bytes("small_below", th.small_io_bytes)
                .ns("data_time", data_ns),
        ),
    );
}

/// Metadata time and calls of the MPI-IO processes alone, file opens and flushes aside
/// ([`collective_metadata_off`]'s cost): a directory may hold other
/// programs' processes next to an MPI job.
fn mpi_object_metadata(rep: &Report, mpi: &Mpi) -> (u64, u64) {
    rep.rank_ops
        .iter()
        .filter(|r| {
            mpi.procs.contains(&ProcKey {
                rank: r.rank,
                pid: r.pid,
            }) && OpClass::of(&r.op) == OpClass::Metadata
                && !FILE_OPS.contains(&r.op.as_str())
                && !is_flush(&r.op)
        })
        .fold((0, 0), |a, r| (a.0 + r.total_ns, a.1 + r.count))
}

/// `H5Fflush`/`H5Dflush` (`*.specific:flush`): a flush writes the dirty metadata cache
/// and syncs the file driver; collective metadata reads do not make it cheaper (the
/// flushes are `flush_per_write`'s cost), so `collective_metadata_off` does not count them.
fn is_flush(op: &str) -> bool {
    op.ends_with(":flush")
}

/// Whether processes other than the MPI-IO ones made calls: the traces of other programs
/// (or runs) next to an MPI job.
fn others_than_mpi(rep: &Report, mpi: &Mpi) -> bool {
    rep.ranks.iter().any(|r| {
        !mpi.procs.contains(&ProcKey {
            rank: r.rank,
            pid: r.pid,
        })
    })
}

fn collective_metadata_off(rep: &Report, mpi: &Mpi, call_ns: u64, out: &mut Vec<Insight>) {
    let run = &rep.run;
    let ranks = mpi.procs.len();
    if ranks < COLL_MD_MIN_RANKS || (run.coll_metadata_reads && run.coll_metadata_writes) {
        return;
    }
    let (meta_ns, calls) = if others_than_mpi(rep, mpi) {
        mpi_object_metadata(rep, mpi)
    } else {
        rep.ops
            .iter()
            .filter(|o| {
                o.class == "metadata" && !FILE_OPS.contains(&o.op.as_str()) && !is_flush(&o.op)
            })
            .fold((0, 0), |a, o| (a.0 + o.total_ns, a.1 + o.count))
    };
    let share = meta_ns as f64 / call_ns as f64;
    let level = severity_for_share(share);
    if calls < METADATA_MIN_CALLS || level > Level::Warn {
        return;
    }
    let off = match (run.coll_metadata_reads, run.coll_metadata_writes) {
        (false, false) => "reads and writes",
        (false, true) => "reads",
        _ => "writes",
    };
    out.push(
        ins(
            level,
            "collective_metadata_off",
            format!("Collective metadata {off} are off with {ranks} MPI ranks"),
            format!(
                "{calls} metadata calls take {} ({} of HDF5 time); each rank reads the same \
             metadata from the file on its own",
                fmt_ns(meta_ns),
                pct(share)
            ),
            "Set H5Pset_all_coll_metadata_ops(fapl, 1) and H5Pset_coll_metadata_write(fapl, 1) \
         on the file access property list: one rank reads metadata and broadcasts it, and \
         metadata writes become one collective write, instead of every rank hitting the same \
         file-system blocks.",
        )
        .with(
            Evidence::new()
                .name("off", off)
                .count("ranks", ranks as u64)
                .count("calls", calls)
                .ns("time", meta_ns)
                .fraction("share", share),
        ),
    );
}

fn collective_late_arrival(
    rep: &Report,
    mpi: &Mpi,
    th: &Thresholds,
    call_ns: u64,
    out: &mut Vec<Insight>,
) {
    let mut wait = 0u64;
    let mut material = false;
    // The median data of a group's processes: a late rank is heavy against its peers.
    let median_bytes = |group: &str| {
        let mut b: Vec<u64> = rep
            .ranks
            .iter()
            .filter(|r| r.group == group)
            .map(|r| r.bytes_read + r.bytes_written)
            .collect();
        b.sort_unstable();
        b.get(b.len() / 2).copied().unwrap_or(0)
    };
    let mut groups = BTreeSet::new();
    let mut items = Vec::new();
    let late: Vec<String> = rep
        .collective_skew
        .iter()
        .filter_map(|c| {
            let l = c.straggler.as_ref()?;
            let pattern = c.calls >= LATE_MIN_CALLS && l.last * 2 >= c.calls;
            let meaningful = c.wait_ns as f64 >= th.min_op_share * call_ns as f64;
            (pattern && meaningful).then(|| {
                wait += c.wait_ns;
                let group = group_of(rep, l.rank, l.pid);
                groups.insert(group);
                let median_bytes = median_bytes(group);
                let heavy = rep
                    .ranks
                    .iter()
                    .find(|r| r.rank == l.rank && r.pid == l.pid)
                    .is_some_and(|r| {
                        (r.bytes_read + r.bytes_written) as f64
                            >= RANK_MATERIAL_RATIO * median_bytes as f64
                            && r.bytes_read + r.bytes_written > 0
                    });
                material |= heavy;
                if items.len() < 5 {
                    items.push(
                        Evidence::new()
                            .name("op", c.op.as_str())
                            .name("process", mpi.who(l.rank, l.pid))
                            .count("last", l.last)
                            .count("calls", c.calls)
                            .ns("wait", c.wait_ns)
                            .fraction("wait_share", c.wait_share),
                    );
                }
                format!(
                    "{}: {} ({}) arrived last in {}/{} calls; the others waited {} ({} of \
                     the operation's time)",
                    c.op,
                    mpi.who(l.rank, l.pid),
                    if heavy {
                        "it moves materially more data"
                    } else {
                        "no more data than the others"
                    },
                    l.last,
                    c.calls,
                    fmt_ns(c.wait_ns),
                    pct(c.wait_share)
                )
            })
        })
        .collect();
    if late.is_empty() {
        return;
    }
    let share = wait as f64 / call_ns as f64;
    // A late rank that moves no more data than the others is late for reasons the trace
    // cannot see (computation, a busy core or node): worth knowing, INFO.
    let level = if material {
        severity_for_share(share)
    } else {
        Level::Info
    };
    out.push(
        ins(
            level,
            "collective_late_arrival",
            format!(
                "Ranks{} wait for a late arrival at {} collective operation(s) ({} of HDF5 time)",
                of_groups(groups),
                late.len(),
                pct(share)
            ),
            late.iter().take(5).cloned().collect::<Vec<_>>().join("; "),
            "The late rank is busy before the collective call (more data to write, a slower \
         node or OST, CPU contention): balance the work before the call. The other ranks' \
         time in the call is waiting, not I/O, so their long calls are the symptom, not the \
         cause.",
        )
        .with(
            Evidence::new()
                .count("operations", late.len() as u64)
                .fraction("share", share),
        )
        .with_items(items),
    );
}

fn straggler_ranks(rep: &Report, mpi: &Mpi, th: &Thresholds, call_ns: u64, out: &mut Vec<Insight>) {
    let (mut material, mut time_only) = (Vec::new(), Vec::new());
    let mut excess = 0f64;
    for s in rep
        .straggler_ranks
        .iter()
        .filter(|s| s.op_share >= th.min_op_share)
    {
        // Waiting inside a collective call is the late arrival's doing, not this rank's.
        let collective = mpi.used()
            && crate::aggregate::collective::Kind::of(&s.op)
                == crate::aggregate::collective::Kind::Yes;
        let g = s.group.as_str();
        for o in &s.outliers {
            let who = mpi.who(o.rank, o.pid);
            if o.rule.contains("bytes") && o.bytes_x_median >= RANK_MATERIAL_RATIO {
                // The time the rank spends on its extra data (at its own rate: its time
                // × (1 − median/its bytes)) holds the others up at the next collective
                // call, or the job's end: it costs every process that much. Its own rate,
                // not the median rank's time: ranks writing at once slow each other down.
                excess += o.total_ns as f64 * (1.0 - 1.0 / o.bytes_x_median) * s.ranks as f64;
                material.push((
                    g,
                    format!(
                        "{}: {who} moves ×{:.1} the median data ({}) and takes {} (median {})",
                        s.op,
                        o.bytes_x_median,
                        fmt_bytes(o.bytes),
                        fmt_ns(o.total_ns),
                        fmt_ns(s.median_total_ns)
                    ),
                    Evidence::new()
                        .name("op", s.op.as_str())
                        .name("process", who.as_str())
                        .ratio("bytes_x_median", o.bytes_x_median)
                        .bytes("bytes", o.bytes)
                        .ns("time", o.total_ns)
                        .ns("median_time", s.median_total_ns),
                ));
            } else if !collective
                && !o.rule.starts_with("late-arrival")
                && o.x_median >= RANK_MATERIAL_RATIO
            {
                time_only.push((
                    g,
                    format!(
                        "{}: {who} takes ×{:.1} the median time ({} vs {}) for the same data",
                        s.op,
                        o.x_median,
                        fmt_ns(o.total_ns),
                        fmt_ns(s.median_total_ns)
                    ),
                    Evidence::new()
                        .name("op", s.op.as_str())
                        .name("process", who.as_str())
                        .ratio("x_median", o.x_median)
                        .ns("time", o.total_ns)
                        .ns("median_time", s.median_total_ns),
                ));
            }
        }
    }
    if material.is_empty() && time_only.is_empty() {
        return;
    }
    let share = excess / call_ns as f64;
    // Without more data to move, a slower rank is a node effect (CPU or file-system
    // contention) the trace cannot attribute: worth knowing, not a finding to fix.
    let level = if material.is_empty() {
        Level::Info
    } else {
        severity_for_share(share)
    };
    // Whose processes were compared: the group in the title, or on each line when the
    // finding is about several runs.
    let title_of = of_groups(material.iter().chain(&time_only).map(|(g, _, _)| *g));
    let several = title_of.starts_with(" in ");
    let detail: Vec<String> = material
        .iter()
        .chain(&time_only)
        .map(|(g, l, _)| {
            if several {
                format!("{g}, {l}")
            } else {
                l.clone()
            }
        })
        .collect();
    out.push(
        ins(
            level,
            "straggler_ranks",
            if material.is_empty() {
                format!(
                    "{} slower process(es){title_of} without more data",
                    time_only.len()
                )
            } else {
                format!(
                    "{} process(es){title_of} move materially more data than the others ({} of \
                 HDF5 time)",
                    material.len(),
                    pct(share.min(1.0))
                )
            },
            detail
                .iter()
                .take(5)
                .cloned()
                .collect::<Vec<_>>()
                .join("; "),
            "Balance the data decomposition so that every process moves about the same bytes \
         per phase; the others wait for the heaviest at the next collective call. For a \
         slower process without more data, check its node (CPU oversubscription, a busy \
         storage target) in the timeline.",
        )
        .with(
            Evidence::new()
                .count("heavier", material.len() as u64)
                .count("slower", time_only.len() as u64)
                .fraction("share", share.min(1.0)),
        )
        .with_items(
            material
                .iter()
                .chain(&time_only)
                .take(5)
                .map(|(g, _, e)| {
                    if several {
                        e.clone().name("group", *g)
                    } else {
                        e.clone()
                    }
                })
                .collect(),
        ),
    );
}

fn rank_imbalance(rep: &Report, mpi: &Mpi, th: &Thresholds, call_ns: u64, out: &mut Vec<Insight>) {
    // Processes are compared within one run of one program (a trace directory may hold
    // several programs, and several runs of each).
    let mut groups: BTreeMap<&str, Vec<&RankRow>> = BTreeMap::new();
    for r in &rep.ranks {
        groups.entry(r.group.as_str()).or_default().push(r);
    }
    for (group, ranks) in &groups {
        rank_imbalance_among(rep, group, ranks, mpi, th, call_ns, out);
    }
}

fn rank_imbalance_among(
    rep: &Report,
    group: &str,
    ranks: &[&RankRow],
    mpi: &Mpi,
    th: &Thresholds,
    call_ns: u64,
    out: &mut Vec<Insight>,
) {
    if ranks.len() < 2 {
        return;
    }
    let n = ranks.len() as f64;
    let median = |v: &[u64]| {
        let mut s = v.to_vec();
        s.sort_unstable();
        let m = s.len() / 2;
        if s.len() % 2 == 0 {
            (s[m - 1] + s[m]) / 2
        } else {
            s[m]
        }
    };
    // Per process data-call time, for the cost of a bytes imbalance.
    let data_ns = |rank: i64, pid: u32| -> u64 {
        rep.rank_ops
            .iter()
            .filter(|r| r.rank == rank && r.pid == pid && OpClass::of(&r.op) != OpClass::Metadata)
            .map(|r| r.total_ns)
            .sum()
    };
    let data_times: Vec<u64> = ranks.iter().map(|r| data_ns(r.rank, r.pid)).collect();
    for what in ["bytes", "time"] {
        let vals: Vec<u64> = ranks
            .iter()
            .map(|r| match what {
                "bytes" => r.bytes_read + r.bytes_written,
                _ => r.total_ns,
            })
            .collect();
        let sum: u64 = vals.iter().sum();
        let (imax, max) = vals
            .iter()
            .copied()
            .enumerate()
            .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0)))
            .expect("n>=2");
        let min = *vals.iter().min().expect("n>=2");
        let med = median(&vals);
        let imb = if sum > 0 {
            (max - min) as f64 / sum as f64
        } else {
            0.0
        };
        // Drishti's (max − min)/total, and a material ratio to the median: with a handful
        // of processes on a busy node, times differ by tens of percent for the same work.
        if imb <= th.imbalance || (max as f64) < RANK_MATERIAL_RATIO * med as f64 {
            continue;
        }
        // The per-operation finding already names the heavy process of this group and its
        // data.
        if what == "bytes"
            && out
                .iter()
                .any(|i| i.code == "straggler_ranks" && i.level <= Level::Warn)
            && rep.straggler_ranks.iter().any(|s| {
                s.group == group
                    && s.outliers.iter().any(|o| {
                        o.rule.contains("bytes") && o.bytes_x_median >= RANK_MATERIAL_RATIO
                    })
            })
        {
            continue;
        }
        let r = ranks[imax];
        let who = mpi.who(r.rank, r.pid);
        // Bytes: the heavy process's data time spent on its extra data, at its own rate;
        // time: its time above the median. Either holds every process up that long.
        let excess = match what {
            "bytes" => data_times[imax] as f64 * (1.0 - med as f64 / max as f64),
            _ => (max - med) as f64,
        };
        let share = excess * n / call_ns as f64;
        let (vmax, vmed) = if what == "bytes" {
            (fmt_bytes(max), fmt_bytes(med))
        } else {
            (fmt_ns(max), fmt_ns(med))
        };
        // More time for the same data is a node effect (CPU oversubscription, a busy
        // storage target) the trace cannot attribute, as for `straggler_ranks`: INFO
        // unless the process also moves materially more data.
        let bytes_of = |r: &RankRow| r.bytes_read + r.bytes_written;
        let med_bytes = median(&ranks.iter().map(|r| bytes_of(r)).collect::<Vec<_>>());
        let heavier = bytes_of(r) as f64 >= RANK_MATERIAL_RATIO * med_bytes.max(1) as f64;
        let level = if what == "time" && !heavier {
            Level::Info
        } else {
            severity_for_share(share)
        };
        out.push(
            ins(
                level,
                &format!("rank_imbalance_{what}"),
                format!(
                    "Processes of {group} are imbalanced in {what}: {who} has ×{:.1} the median",
                    max as f64 / med.max(1) as f64
                ),
                format!(
                    "max {vmax} ({who}), median {vmed}, min {}, (max − min)/total = {}; its extra \
                 {} cost every process: {} of HDF5 time",
                    if what == "bytes" {
                        fmt_bytes(min)
                    } else {
                        fmt_ns(min)
                    },
                    pct(imb),
                    if what == "bytes" { "data time" } else { "time" },
                    pct(share.min(1.0))
                ),
                "Balance the data decomposition across processes, or give the heavy process's \
             share to aggregators (collective buffering).",
            )
            .with({
                let (qmax, qmed, qmin) = if what == "bytes" {
                    (
                        Quantity::Bytes(max),
                        Quantity::Bytes(med),
                        Quantity::Bytes(min),
                    )
                } else {
                    (Quantity::Ns(max), Quantity::Ns(med), Quantity::Ns(min))
                };
                Evidence::new()
                    .name("group", group)
                    .name("process", who.as_str())
                    .ratio("x_median", max as f64 / med.max(1) as f64)
                    .with("max", qmax)
                    .with("median", qmed)
                    .with("min", qmin)
                    .fraction("imbalance", imb)
                    .fraction("share", share.min(1.0))
            }),
        );
    }
}

fn straggler_calls(
    rep: &Report,
    agg: &Aggregate,
    mpi: &Mpi,
    th: &Thresholds,
    call_ns: u64,
    out: &mut Vec<Insight>,
) {
    let mut excess = 0u64;
    let mut lines = Vec::new();
    let mut items = Vec::new();
    for s in &rep.straggler_calls {
        // Slow calls of a collective operation are ranks waiting for the last one
        // (`collective_late_arrival`), not slow calls.
        if mpi.used()
            && crate::aggregate::collective::Kind::of(&s.op)
                == crate::aggregate::collective::Kind::Yes
        {
            continue;
        }
        let Some(op) = agg.ops.get(&s.op) else {
            continue;
        };
        // For data operations, judge time per byte: a call that moves ten times the
        // bytes of the median call is not slow for taking ten times as long.
        let op_ns_per_byte = (op.bytes > 0).then(|| op.total_ns as f64 / op.bytes as f64);
        let kept: Vec<_> = s
            .calls
            .iter()
            .filter(|c| c.total_ns >= CALL_MIN_NS)
            .filter(|c| {
                let Some(per) = op_ns_per_byte else {
                    return true;
                };
                let bytes = op
                    .slow
                    .calls
                    .iter()
                    .find(|k| k.proc.rank == c.rank && k.proc.pid == c.pid && k.seq == c.seq)
                    .map_or(0, |k| k.bytes);
                bytes == 0 || c.total_ns as f64 / bytes as f64 >= th.call_min_ratio * per
            })
            .collect();
        if kept.is_empty() {
            continue;
        }
        let e: u64 = kept
            .iter()
            .map(|c| c.total_ns.saturating_sub(s.median_ns))
            .sum();
        excess += e;
        let c = kept[0];
        if items.len() < 5 {
            items.push(
                Evidence::new()
                    .name("op", s.op.as_str())
                    .count("calls", kept.len() as u64)
                    .ns("cutoff", s.cutoff_ns)
                    .ns("worst", c.total_ns)
                    .ratio("x_median", c.x_median)
                    .name("process", mpi.who(c.rank, c.pid))
                    .count("seq", c.seq),
            );
        }
        lines.push(format!(
            "{}: {} call(s) of at least {} above {}, worst {} (×{:.1} median) by {} seq {}{}",
            s.op,
            kept.len(),
            fmt_ns(CALL_MIN_NS),
            fmt_ns(s.cutoff_ns),
            fmt_ns(c.total_ns),
            c.x_median,
            mpi.who(c.rank, c.pid),
            c.seq,
            if op_ns_per_byte.is_some() {
                ", slow per byte moved"
            } else {
                ""
            }
        ));
    }
    let share = excess as f64 / call_ns as f64;
    if lines.is_empty() || share < CALLS_MIN_SHARE {
        return;
    }
    // INFO at most: an isolated slow call has no HDF5 setting to fix it, and whether one
    // happens in a run is chance (a preempted process, a writeback), so a level from its
    // share would change from run to run. The finding points at the timeline.
    out.push(
        ins(
            Level::Info,
            "straggler_calls",
            format!(
                "Isolated slow calls in {} operation(s) cost {} of HDF5 time",
                lines.len(),
                pct(share)
            ),
            lines.iter().take(5).cloned().collect::<Vec<_>>().join("; "),
            "Look the listed calls up (process, seq) in the Perfetto export and compare with \
         what else ran then: isolated slow calls of the same size as their neighbours come \
         from a metadata-cache flush or eviction, a page-cache writeback, or a busy storage \
         target.",
        )
        .with(
            Evidence::new()
                .count("operations", lines.len() as u64)
                .fraction("share", share),
        )
        .with_items(items),
    );
}
