//! Arrival skew at collective operations.
//!
//! In parallel HDF5 every rank must call the collective operations (file create/open/close,
//! dataset/group/attribute create, `H5Dset_extent`, collective data transfers...) together,
//! and each waits inside the call for the last one to arrive. The rank that *arrives late*
//! is the straggler, yet its own call is the shortest: per-rank call time names the victims.
//! So the `k`-th call of an operation on one object is matched across ranks, and for each
//! match the ranks' start times are compared (start times are on one clock: each process's
//! `CLOCK_MONOTONIC` anchored to the wall clock, see docs/TRACE-FORMAT.md).
//!
//! Memory is bounded by collective operations × files × ranks, not by records: each
//! process keeps at most [`SAMPLES_KEPT`] calls per (operation, file); past that it keeps
//! every 2nd, 4th, ... call by index, the same indices on every rank, so matches stay exact
//! and sums are scaled by the stride (the report says when it sampled). Collective calls
//! of one file are matched by their index per operation, not by object: MPI requires all
//! ranks to make the same collective calls on a file in the same order.

use crate::read::record::{ProcKey, RecordExt, RecordRef};
use rustc_hash::FxHashMap;
use std::collections::BTreeMap;

/// Calls kept per (operation, file, process) before sampling by index.
pub const SAMPLES_KEPT: usize = 4096;

/// Operation families that parallel HDF5 requires all ranks to call collectively.
const COLLECTIVE_FAMILIES: &[&str] = &[
    "file.create",
    "file.open",
    "file.close",
    "dataset.create",
    "group.create",
    "attr.create",
    "attr.write",
    "datatype.commit",
    "link.create",
    "link.copy",
    "link.move",
    "object.copy",
];

/// Sub-operations that are collective where their family is not.
const COLLECTIVE_OPS: &[&str] = &[
    "file.specific:flush",
    "dataset.specific:set_extent",
    "attr.specific:delete",
    "attr.specific:rename",
    "link.specific:delete",
];

/// Whether calls of an operation are collective under parallel HDF5.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Never.
    No,
    /// Always (create/open/close of files, creates of objects, ...).
    Yes,
    /// Data transfers: when the requested transfer mode is collective.
    IfCollectiveTransfer,
}

impl Kind {
    /// The kind of an operation name.
    pub fn of(op: &str) -> Kind {
        let family = h5prov_format::op_family(op);
        if family == "dataset.write" || family == "dataset.read" {
            Kind::IfCollectiveTransfer
        } else if COLLECTIVE_FAMILIES.contains(&family) || COLLECTIVE_OPS.contains(&op) {
            Kind::Yes
        } else {
            Kind::No
        }
    }

    /// Whether a call of an operation of this kind, with requested transfer mode `xfer`,
    /// is collective.
    #[inline]
    pub fn applies(self, xfer: &str) -> bool {
        match self {
            Kind::No => false,
            Kind::Yes => true,
            Kind::IfCollectiveTransfer => xfer == "collective",
        }
    }
}

/// Whether a call is collective under parallel HDF5: by its operation, or a data transfer
/// whose requested mode is collective.
pub fn is_collective(op: &str, xfer: &str) -> bool {
    Kind::of(op).applies(xfer)
}

/// `(start_ns, total_ns)` of one call.
pub type Call = (u64, u64);

/// The `start_ns` of a call whose record had no valid times (see [`crate::aggregate::check`]; a valid
/// start is below 2^63): kept so that later calls keep their index, never matched.
pub const NO_TIME: u64 = u64::MAX;

/// The calls of one process to one operation on one file: call `i * stride` for each kept
/// `i` (stride 1 keeps them all).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sampled {
    /// Index distance between kept calls (a power of two).
    pub stride: u64,
    /// Calls seen.
    pub seen: u64,
    /// The kept calls, in call order.
    pub calls: Vec<Call>,
}

impl Default for Sampled {
    fn default() -> Self {
        Sampled {
            stride: 1,
            seen: 0,
            calls: Vec::new(),
        }
    }
}

impl Sampled {
    /// Adds the next call.
    #[inline]
    pub fn push(&mut self, c: Call) {
        let k = self.seen;
        self.seen += 1;
        if k % self.stride != 0 {
            return;
        }
        self.calls.push(c);
        if self.calls.len() > SAMPLES_KEPT {
            self.thin(self.stride * 2);
        }
    }

    /// Keeps only calls whose index is a multiple of `stride` (a multiple of the current one).
    pub fn thin(&mut self, stride: u64) {
        if stride <= self.stride {
            return;
        }
        let step = (stride / self.stride) as usize;
        let kept: Vec<Call> = self.calls.iter().copied().step_by(step).collect();
        self.calls = kept;
        self.stride = stride;
    }
}

/// Collective calls by (`op`, `file`), then process.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Collectives {
    /// The calls.
    pub calls: BTreeMap<(String, String), BTreeMap<ProcKey, Sampled>>,
}

impl Collectives {
    /// Adds `o`. A process normally appears in one trace file; if it appears in two, its
    /// calls are combined in start order (sampled at the coarser stride).
    pub fn merge(&mut self, o: Collectives) {
        for (k, procs) in o.calls {
            let mine = self.calls.entry(k).or_default();
            for (p, mut v) in procs {
                match mine.get_mut(&p) {
                    Some(m) => {
                        let stride = m.stride.max(v.stride);
                        m.thin(stride);
                        v.thin(stride);
                        m.calls.append(&mut v.calls);
                        m.calls.sort_unstable();
                        m.seen += v.seen;
                    }
                    None => {
                        mine.insert(p, v);
                    }
                }
            }
        }
    }
}

/// Collects the collective calls of one trace file (part of the per-file builder), keyed
/// by the builder's operation ids.
#[derive(Debug, Default)]
pub struct Recorder {
    calls: FxHashMap<(u32, ProcKey), PerFile>,
}

/// One process's calls to one operation, per container file (usually one).
type PerFile = Vec<(Box<str>, Sampled)>;

impl Recorder {
    /// Adds one record of operation `op_id` whose [`Kind`] is `kind`.
    #[inline]
    pub fn add(&mut self, op_id: u32, kind: Kind, r: &RecordRef<'_>) {
        if !kind.applies(r.xfer) || r.rank < 0 {
            return;
        }
        let files = self.calls.entry((op_id, r.proc())).or_default();
        let i = match files.iter().position(|(f, _)| &**f == r.file) {
            Some(i) => i,
            None => {
                files.push((r.file.into(), Sampled::default()));
                files.len() - 1
            }
        };
        files[i].1.push((r.start_ns, r.total_ns));
    }

    /// The calls keyed by names (`names[op_id]`).
    pub fn finish(self, names: &[String]) -> Collectives {
        let mut out = Collectives::default();
        for ((id, proc), files) in self.calls {
            for (file, s) in files {
                out.calls
                    .entry((names[id as usize].clone(), file.into()))
                    .or_default()
                    .insert(proc, s);
            }
        }
        out
    }
}
