//! What the objects files say per process beyond the object sums: the data each process
//! moved per dataset ([`Dataflow`], for the report's dataflow graph) and how each
//! container file was opened ([`FileAccess`]).

use super::objects::{merge_maps, Numbering};
use crate::read::record::ProcKey;
use compact_str::CompactString;
use h5prov_format::ObjectSummaryRef;
use rustc_hash::FxHashMap;
use std::collections::{BTreeMap, BTreeSet};

/// Datasets of each process the dataflow graph keeps (its top ones by bytes moved): the
/// graph shows [`crate::analysis::DATAFLOW_DATASETS`].
pub const DATAFLOW_PER_PROCESS: usize = 16;

/// One process's data bytes per dataset `(file, path)`: `(read, written)`.
pub type DatasetBytes = BTreeMap<(String, String), (u64, u64)>;

/// The data each process moved per dataset, from the objects files: for the report's
/// dataflow graph ([`crate::analysis::dataflow`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Dataflow {
    /// The `dataset` rows that read or wrote bytes, by process `(rank, pid)`, then
    /// `(file, path)`: `(bytes read, bytes written)`; of each objects file, only its
    /// [`DATAFLOW_PER_PROCESS`] datasets that moved the most.
    pub bytes: BTreeMap<(i64, u32), DatasetBytes>,
    /// The identity `(dev, ino)` of each file name of a `file` row that has one: names of
    /// one file (`sim.h5`, `/run/sim.h5`) are one node of the graph.
    pub identity: BTreeMap<String, (u64, u64)>,
}

/// A dataset of [`FlowRows::finish`]: (bytes moved, file, path, (read, written)).
type FlowEntry<'a> = (u64, &'a str, &'a str, (u64, u64));

/// [`FlowRows`]' bytes by `(rank, pid, file number)`, then path: `(read, written)`.
type FlowBytes = FxHashMap<(i64, u32, u32), FxHashMap<CompactString, (u64, u64)>>;

/// One objects file's part of the [`Dataflow`] as its rows go by: dataset bytes by process
/// and file number, then path, looked up with the row's borrowed texts (a row of a dataset
/// seen before allocates nothing; a new one, its path once, and only when longer than 24
/// bytes: shorter ones are kept inline). Owned names are made only for
/// the datasets [`FlowRows::finish`] keeps: a tree keyed by two `String`s per row, and its
/// long-prefix comparisons, were ~5 % of a report's CPU on the 10M-record set.
#[derive(Default)]
pub(super) struct FlowRows {
    files: Numbering,
    bytes: FlowBytes,
    identity: BTreeMap<String, (u64, u64)>,
}

impl FlowRows {
    pub(super) fn add(&mut self, o: &ObjectSummaryRef<'_>) {
        if o.kind == "file" && o.ino != 0 && !self.identity.contains_key(o.file) {
            self.identity.insert(o.file.to_string(), (o.dev, o.ino));
        }
        if o.kind == "dataset" && (o.bytes_read > 0 || o.bytes_written > 0) {
            let file = self.files.number(o.file).0 as u32;
            let by_path = self.bytes.entry((o.rank, o.pid, file)).or_default();
            match by_path.get_mut(o.path) {
                Some(e) => {
                    e.0 += o.bytes_read;
                    e.1 += o.bytes_written;
                }
                None => {
                    by_path.insert(o.path.into(), (o.bytes_read, o.bytes_written));
                }
            }
        }
    }

    /// Keeps, of each process, its [`DATAFLOW_PER_PROCESS`] datasets that moved the most
    /// bytes (ties by file, then path): what a process's objects file adds is bounded,
    /// however many datasets it touched (the 10M-record benchmark set has 24 000 a
    /// process).
    pub(super) fn finish(self) -> Dataflow {
        let mut procs: BTreeMap<(i64, u32), Vec<FlowEntry<'_>>> = BTreeMap::new();
        for ((rank, pid, file), by_path) in &self.bytes {
            let name = &*self.files.names[*file as usize];
            let v = procs.entry((*rank, *pid)).or_default();
            v.extend(
                by_path
                    .iter()
                    .map(|(p, &(r, w))| (r + w, name, &**p, (r, w))),
            );
        }
        let bytes = procs
            .into_iter()
            .map(|(p, mut all)| {
                let order = |a: &FlowEntry<'_>, b: &FlowEntry<'_>| {
                    b.0.cmp(&a.0).then(a.1.cmp(b.1)).then(a.2.cmp(b.2))
                };
                // The top ones selected, not all sorted: a process has thousands.
                if all.len() > DATAFLOW_PER_PROCESS {
                    all.select_nth_unstable_by(DATAFLOW_PER_PROCESS - 1, order);
                    all.truncate(DATAFLOW_PER_PROCESS);
                }
                let sets = all
                    .into_iter()
                    .map(|(_, f, path, rw)| ((f.to_string(), path.to_string()), rw))
                    .collect();
                (p, sets)
            })
            .collect();
        Dataflow {
            bytes,
            identity: self.identity,
        }
    }
}

impl Dataflow {
    pub(super) fn merge(&mut self, o: Dataflow) {
        merge_maps(&mut self.bytes, o.bytes, |a, b| {
            merge_maps(a, b, |x, y| {
                x.0 += y.0;
                x.1 += y.1;
            })
        });
        merge_maps(&mut self.identity, o.identity, |_, _| {});
    }
}

/// How one container file was opened, from its `file` rows in objects files.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileAccess {
    /// Processes that opened it with the MPI-IO driver.
    pub mpio_procs: BTreeSet<ProcKey>,
    /// The smallest `H5Pset_alignment` recorded (threshold, alignment); `None` when no row
    /// recorded one.
    pub align: Option<(u64, u64)>,
    /// The file system (`lustre`, `gpfs`, `ext4`, ...), the smallest name recorded.
    pub fs: String,
    /// The chunk cache its FAPL set (`H5Pset_cache`; the rows' `cache`), `(slots, bytes)`,
    /// the largest recorded (0 when none): what a dataset opened without its own gets.
    pub chunk_cache: (u64, u64),
    /// The low bound of its FAPL's `H5Pset_libver_bounds` (the rows' `libver`): `earliest`
    /// when any row recorded it (attributes then never go to dense storage), else the
    /// smallest name recorded; empty when none.
    pub libver: String,
}

impl FileAccess {
    pub(super) fn add(&mut self, o: &ObjectSummaryRef<'_>) {
        if o.mpio != 0 {
            self.mpio_procs.insert(ProcKey {
                rank: o.rank,
                pid: o.pid,
            });
        }
        let align = o.align.split_once(':').and_then(|(t, a)| {
            Some((t.trim().parse::<u64>().ok()?, a.trim().parse::<u64>().ok()?))
        });
        self.merge(FileAccess {
            mpio_procs: BTreeSet::new(),
            align,
            fs: o.fs.to_string(),
            chunk_cache: (
                crate::aggregate::dataset_io::cache_part(o.cache, 0),
                crate::aggregate::dataset_io::cache_part(o.cache, 1),
            ),
            libver: o.libver.to_string(),
        });
    }

    pub(super) fn merge(&mut self, o: FileAccess) {
        self.mpio_procs.extend(o.mpio_procs);
        self.align = match (self.align, o.align) {
            // The weakest alignment: smallest alignment, then largest threshold.
            (Some(a), Some(b)) => Some(
                if (b.1, std::cmp::Reverse(b.0)) < (a.1, std::cmp::Reverse(a.0)) {
                    b
                } else {
                    a
                },
            ),
            (a, b) => a.or(b),
        };
        if self.fs.is_empty() || (!o.fs.is_empty() && o.fs < self.fs) {
            self.fs = o.fs;
        }
        self.chunk_cache = (
            self.chunk_cache.0.max(o.chunk_cache.0),
            self.chunk_cache.1.max(o.chunk_cache.1),
        );
        let rank = |l: &str| (l != "earliest", l.to_string());
        if self.libver.is_empty() || (!o.libver.is_empty() && rank(&o.libver) < rank(&self.libver))
        {
            self.libver = o.libver;
        }
    }
}
