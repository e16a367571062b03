//! [`Diagnostics`]: what reading found besides data (file counts, truncated lines,
//! malformed rows, the consistency checks' facts), merged commutatively like the rest of
//! the aggregate.

use crate::aggregate::check::{self, Issue, MetaFacts, TraceFacts, WarningKind};
use crate::read::FileDiag;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// What reading found besides data: file counts, truncated lines, malformed rows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Diagnostics {
    /// Trace files read.
    pub trace_files: u64,
    /// Objects files read.
    pub objects_files: u64,
    /// Meta files read.
    pub meta_files: u64,
    /// Trace records read.
    pub records: u64,
    /// Objects rows read.
    pub object_rows: u64,
    /// Files with a truncated last line, and that line.
    pub truncated: BTreeSet<(String, u64)>,
    /// Malformed rows skipped (with `--lenient`).
    pub malformed_rows: u64,
    /// Files with malformed rows.
    pub malformed_files: u64,
    /// The first malformed row (smallest path): file, line, reason.
    pub first_malformed: Option<(String, u64, String)>,
    /// Meta files that could not be parsed: file and reason.
    pub bad_metas: BTreeSet<(String, String)>,
    /// Meta files with keys of the wrong type (ignored): file and which keys.
    pub wrong_type_metas: BTreeSet<(String, String)>,
    /// Problems found in records and metas while reading, by kind ([`check`]).
    pub issues: BTreeMap<WarningKind, Issue>,
    /// What each trace file held, by stem ([`check::stem`]).
    pub trace_facts: BTreeMap<String, TraceFacts>,
    /// What each meta file says, by stem (the smallest path, should two share a stem).
    pub meta_facts: BTreeMap<String, MetaFacts>,
    /// Stream capture files read (`h5prov collect --out`).
    pub stream_files: u64,
    /// Messages in them (`hello`, `event` and `interval`).
    pub stream_messages: u64,
    /// Processes read from them, each as if it had a trace file (not counted in
    /// `trace_files`).
    pub stream_processes: u64,
    /// Processes that ended without closing HDF5 (`_exit`, `os._exit`, `kill -9`) and whose
    /// every record was recovered: their metas were finished from the data
    /// ([`Aggregate::finish_unclosed`](super::Aggregate::finish_unclosed)).
    pub unclosed: u64,
    /// Processes that ended without closing HDF5 (their trace has a pending sidecar)
    /// whose objects rows were rebuilt from their records ([`crate::read::rebuild`]).
    pub objects_rebuilt: u64,
    /// The rows so rebuilt (counted in `object_rows` too).
    pub rebuilt_object_rows: u64,
    /// Objects files of such processes, not read (their rows were rebuilt instead).
    pub objects_files_replaced: u64,
}

impl Diagnostics {
    pub(super) fn merge(&mut self, o: Diagnostics) {
        self.trace_files += o.trace_files;
        self.objects_files += o.objects_files;
        self.meta_files += o.meta_files;
        self.records += o.records;
        self.object_rows += o.object_rows;
        self.stream_files += o.stream_files;
        self.stream_messages += o.stream_messages;
        self.stream_processes += o.stream_processes;
        self.unclosed += o.unclosed;
        self.objects_rebuilt += o.objects_rebuilt;
        self.rebuilt_object_rows += o.rebuilt_object_rows;
        self.objects_files_replaced += o.objects_files_replaced;
        self.truncated.extend(o.truncated);
        self.malformed_rows += o.malformed_rows;
        self.malformed_files += o.malformed_files;
        self.first_malformed = match (self.first_malformed.take(), o.first_malformed) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.bad_metas.extend(o.bad_metas);
        self.wrong_type_metas.extend(o.wrong_type_metas);
        check::merge_issues(&mut self.issues, o.issues);
        for (k, v) in o.trace_facts {
            self.trace_facts.entry(k).or_default().merge(v);
        }
        for (k, v) in o.meta_facts {
            self.meta_fact(k, v);
        }
    }

    /// Keeps what the meta with stem `stem` says (of two with one stem, the smaller).
    pub(super) fn meta_fact(&mut self, stem: String, v: MetaFacts) {
        match self.meta_facts.entry(stem) {
            std::collections::btree_map::Entry::Occupied(mut e) => {
                if v < *e.get() {
                    e.insert(v);
                }
            }
            std::collections::btree_map::Entry::Vacant(e) => {
                e.insert(v);
            }
        }
    }

    pub(super) fn file(&mut self, path: &Path, d: &FileDiag) {
        let p = path.display().to_string();
        if let Some(l) = d.truncated_line {
            self.truncated.insert((p.clone(), l));
        }
        if d.malformed > 0 {
            self.malformed_rows += d.malformed;
            self.malformed_files += 1;
            if let Some((l, r)) = &d.first_malformed {
                let cand = (p, *l, r.clone());
                self.first_malformed = Some(match self.first_malformed.take() {
                    Some(a) => a.min(cand),
                    None => cand,
                });
            }
        }
    }
}
