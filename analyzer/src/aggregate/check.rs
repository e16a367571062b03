//! Consistency checks: what the analyzer refuses to take on trust.
//!
//! Traces come from processes that may have been killed, from file systems that filled up,
//! and from copies that may be partial. Every check runs where the data is read anyway (no
//! second pass over the records):
//!
//! - per record, while a trace file is aggregated ([`RecordChecks`], kept by the builder):
//!   impossible timestamps, `under_ns > total_ns`, sequence numbers that do not increase
//!   within a thread, zero durations;
//! - per meta file, while it is read: keys of the wrong type, a newer `format_version`,
//!   write errors and dropped records;
//! - per process, once everything is merged ([`warnings`]): the meta's `records`,
//!   `dropped` and `bytes_written` against the rows and bytes its trace file held.
//!
//! Each kind of problem becomes one [`TraceWarning`]: how often it occurred, in how many
//! files, and the first occurrence (smallest path, then line) as the example, so the
//! output does not depend on the number of threads. `docs/TRACE-FORMAT.md` ("What the
//! analyzer checks") lists the kinds.

use crate::aggregate::Diagnostics;
use crate::read::input::Compression;
use crate::read::record::RecordRef;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;

/// Timestamps and durations at or above 2^63 ns are not times: they are negative numbers
/// or sentinels (`u64::MAX`) cast to `u64` (2^63 ns since the epoch is the year 2262).
pub const TIME_LIMIT: u64 = 1 << 63;

/// A kind of inconsistency (`snake_case` in JSON).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WarningKind {
    /// A meta's `format_version` is newer than this analyzer's (read anyway: `--lenient`).
    NewerFormat,
    /// A `meta.json` that is not readable JSON (ignored).
    MetaUnreadable,
    /// A `meta.json` with a key of the wrong type (ignored).
    MetaWrongType,
    /// A finished process's meta counts records, and there is no trace file.
    MissingTrace,
    /// A trace file without records (empty or header only) whose meta counts records, or
    /// that has no meta.
    EmptyTrace,
    /// A trace file with fewer records than its meta's `records − dropped`.
    TraceShort,
    /// A meta whose `records − dropped` or `bytes_written` disagree with its trace file in
    /// any other way (more rows than recorded, other bytes, `dropped > records`).
    MetaMismatch,
    /// Trace write errors the connector counted (`write_errors`).
    WriteErrors,
    /// Records the connector dropped (`dropped`: `max_size` reached, or write errors).
    Dropped,
    /// A process that did not finish (`end_ns` null): its counts cannot be checked.
    Unfinished,
    /// Records whose `start_ns` is 0 or ≥ 2^63, or whose `total_ns` is ≥ 2^63.
    BadTimestamp,
    /// Records whose `under_ns` exceeds their `total_ns`.
    UnderExceedsTotal,
    /// Records whose `seq` is not above every earlier `seq` of their thread.
    SeqOrder,
    /// Records whose `total_ns` is 0.
    ZeroDuration,
}

impl WarningKind {
    /// The JSON name.
    pub fn name(self) -> &'static str {
        match self {
            WarningKind::NewerFormat => "newer_format",
            WarningKind::MetaUnreadable => "meta_unreadable",
            WarningKind::MetaWrongType => "meta_wrong_type",
            WarningKind::MissingTrace => "missing_trace",
            WarningKind::EmptyTrace => "empty_trace",
            WarningKind::TraceShort => "trace_short",
            WarningKind::MetaMismatch => "meta_mismatch",
            WarningKind::WriteErrors => "write_errors",
            WarningKind::Dropped => "dropped",
            WarningKind::Unfinished => "unfinished",
            WarningKind::BadTimestamp => "bad_timestamp",
            WarningKind::UnderExceedsTotal => "under_exceeds_total",
            WarningKind::SeqOrder => "seq_order",
            WarningKind::ZeroDuration => "zero_duration",
        }
    }
}

/// One kind of inconsistency, summarised.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TraceWarning {
    /// What is wrong.
    pub kind: WarningKind,
    /// How often: records for the per-record kinds, write errors for `write_errors`,
    /// dropped records for `dropped`, else files.
    pub count: u64,
    /// Files affected.
    pub files: u64,
    /// The first file affected (the example).
    pub file: String,
    /// Its line, for the per-record kinds.
    pub line: Option<u64>,
    /// The summary for people, with the example.
    pub message: String,
}

/// Occurrences of one kind of problem over files.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Issue {
    /// Occurrences (records, errors, ...: see [`TraceWarning::count`]).
    pub count: u64,
    /// Files with at least one.
    pub files: u64,
    /// The first: file, line (0 when not about a line), detail.
    pub first: Option<(String, u64, String)>,
}

impl Issue {
    /// Adds `count` occurrences in one more file; `first` competes for the example.
    pub fn note(&mut self, count: u64, first: (String, u64, String)) {
        self.merge(Issue {
            count,
            files: 1,
            first: Some(first),
        });
    }

    /// Adds another file's or worker's occurrences (commutative: the example is the
    /// smallest file, then line).
    pub fn merge(&mut self, o: Issue) {
        self.count += o.count;
        self.files += o.files;
        self.first = match (self.first.take(), o.first) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
    }
}

/// Adds every issue of `o` into `into`.
pub fn merge_issues(into: &mut BTreeMap<WarningKind, Issue>, o: BTreeMap<WarningKind, Issue>) {
    for (k, v) in o {
        into.entry(k).or_default().merge(v);
    }
}

/// What a trace file held, for the comparison with its meta.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TraceFacts {
    /// The file (the smallest path, should two files share a stem).
    pub path: String,
    /// Files with this stem (1, unless a file is there twice, e.g. also compressed).
    pub files: u64,
    /// Valid rows.
    pub rows: u64,
    /// Malformed rows skipped (`--lenient`): they were written, so they count as rows.
    pub malformed: u64,
    /// Bytes of complete rows (see [`crate::read::FileDiag::data_bytes`]).
    pub data_bytes: u64,
    /// Its pending sidecar was read ([`crate::read::FileDiag::recovered`]).
    pub recovered: bool,
}

impl TraceFacts {
    /// Adds another file with the same stem.
    pub fn merge(&mut self, o: TraceFacts) {
        if self.files == 0 || o.path < self.path {
            self.path = o.path;
        }
        self.files += o.files;
        self.rows += o.rows;
        self.malformed += o.malformed;
        self.data_bytes += o.data_bytes;
        self.recovered |= o.recovered;
    }
}

/// What a meta file says about its trace.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct MetaFacts {
    /// The meta file.
    pub path: String,
    /// `format_version`.
    pub format_version: u32,
    /// `records`: every record the process made, written or dropped.
    pub records: u64,
    /// `dropped`.
    pub dropped: u64,
    /// `bytes_written`: bytes of records written to the trace file (not its header).
    pub bytes_written: u64,
    /// `write_errors`.
    pub write_errors: u64,
    /// `end_ns` (None: the process did not finish).
    pub end_ns: Option<u64>,
    /// `rank` and `pid`: the process.
    pub rank: i64,
    /// `pid`.
    pub pid: u32,
}

/// The key that pairs a process's files: the path without `.trace.csv`, `.meta.json`, ...
/// (and without `.zst`/`.gz`).
pub fn stem(path: &Path) -> String {
    let s = path.display().to_string();
    let (_, s) = Compression::of_name(&s);
    for suffix in [
        ".trace.csv",
        ".trace.jsonl",
        ".objects.csv",
        ".objects.jsonl",
        ".trace.bin",
        ".objects.bin",
        ".meta.json",
    ] {
        if let Some(stem) = s.strip_suffix(suffix) {
            return stem.to_string();
        }
    }
    s.to_string()
}

/// The per-record kinds [`RecordChecks`] counts, in its slots' order.
const RECORD_KINDS: [WarningKind; 4] = [
    WarningKind::BadTimestamp,
    WarningKind::UnderExceedsTotal,
    WarningKind::SeqOrder,
    WarningKind::ZeroDuration,
];

/// The per-record checks of one trace file, run by the aggregation as it adds each record.
/// The common case is one combined, well-predicted branch; problems go to a cold function.
#[derive(Debug, Default)]
pub struct RecordChecks {
    /// Per [`RECORD_KINDS`] slot: count and the first line with its detail.
    found: [(u64, Option<(u64, String)>); 4],
    /// The thread of the previous record, and the smallest `seq` its next record may have.
    tid: u64,
    next: u64,
    /// The same for the other threads seen.
    others: Vec<(u64, u64)>,
}

impl RecordChecks {
    /// Checks one record read at `line`; returns whether its times are times: `start_ns`
    /// neither 0 nor ≥ 2^63, `total_ns` below 2^63 ([`TIME_LIMIT`]).
    #[inline]
    pub fn check(&mut self, line: u64, r: &RecordRef<'_>) -> bool {
        if r.tid != self.tid {
            self.switch_thread(r.tid);
        }
        let seq_ok = r.seq >= self.next;
        self.next = self.next.max(r.seq.saturating_add(1));
        // `x - 1 < LIMIT - 1`: neither 0 nor ≥ LIMIT, in one comparison each (a zero
        // duration goes to the slow path too, to be counted).
        let plain = r.start_ns.wrapping_sub(1) < TIME_LIMIT - 1
            && r.total_ns.wrapping_sub(1) < TIME_LIMIT - 1;
        if seq_ok & plain & (r.under_ns <= r.total_ns) {
            return true;
        }
        self.odd(line, r, seq_ok)
    }

    /// Sorts out what is wrong with a record that failed [`RecordChecks::check`]'s test.
    #[cold]
    #[inline(never)]
    fn odd(&mut self, line: u64, r: &RecordRef<'_>, seq_ok: bool) -> bool {
        let times_ok = r.start_ns.wrapping_sub(1) < TIME_LIMIT - 1 && r.total_ns < TIME_LIMIT;
        if !times_ok {
            self.note(0, line, || {
                format!("start_ns {}, total_ns {}", r.start_ns, r.total_ns)
            });
        }
        if r.under_ns > r.total_ns {
            self.note(1, line, || {
                format!("under_ns {} > total_ns {}", r.under_ns, r.total_ns)
            });
        }
        if !seq_ok {
            let before = self.next.saturating_sub(1);
            self.note(2, line, || {
                format!("seq {} after seq {before} in thread {}", r.seq, r.tid)
            });
        }
        if r.total_ns == 0 {
            self.note(3, line, || format!("total_ns 0 ({})", r.op));
        }
        times_ok
    }

    fn note(&mut self, slot: usize, line: u64, detail: impl FnOnce() -> String) {
        let f = &mut self.found[slot];
        f.0 += 1;
        if f.1.is_none() {
            f.1 = Some((line, detail()));
        }
    }

    /// Makes `tid` the current thread (its next `seq` remembered from before, or 0).
    #[cold]
    fn switch_thread(&mut self, tid: u64) {
        let (old, next) = (self.tid, self.next);
        match self.others.iter_mut().find(|t| t.0 == old) {
            Some(t) => t.1 = next,
            None => self.others.push((old, next)),
        }
        self.tid = tid;
        self.next = self.others.iter().find(|t| t.0 == tid).map_or(0, |t| t.1);
    }

    /// The issues found in the file at `path`.
    pub fn issues(self, path: &Path) -> BTreeMap<WarningKind, Issue> {
        let mut out = BTreeMap::new();
        for (kind, (count, first)) in RECORD_KINDS.into_iter().zip(self.found) {
            if let Some((line, detail)) = first {
                out.entry(kind)
                    .or_insert_with(Issue::default)
                    .note(count, (path.display().to_string(), line, detail));
            }
        }
        out
    }
}

/// `count` and the singular or plural phrase: "1 file", "2 files".
fn n(count: u64, one: &str, many: &str) -> String {
    format!("{count} {}", if count == 1 { one } else { many })
}

/// The warnings about what was read, one per kind, in [`WarningKind`] order. Empty for
/// consistent traces.
pub fn warnings(d: &Diagnostics) -> Vec<TraceWarning> {
    let mut issues: BTreeMap<WarningKind, Issue> = d.issues.clone();
    for (set, kind) in [
        (&d.bad_metas, WarningKind::MetaUnreadable),
        (&d.wrong_type_metas, WarningKind::MetaWrongType),
    ] {
        for (p, r) in set {
            issues
                .entry(kind)
                .or_default()
                .note(1, (p.clone(), 0, r.clone()));
        }
    }
    let mut note = |kind: WarningKind, count: u64, path: &str, detail: String| {
        issues
            .entry(kind)
            .or_default()
            .note(count, (path.to_string(), 0, detail));
    };
    for (stem, m) in &d.meta_facts {
        if m.write_errors > 0 {
            note(
                WarningKind::WriteErrors,
                m.write_errors,
                &m.path,
                format!("write_errors {}, dropped {}", m.write_errors, m.dropped),
            );
        }
        if m.dropped > 0 {
            note(
                WarningKind::Dropped,
                m.dropped,
                &m.path,
                format!("dropped {} of {} records", m.dropped, m.records),
            );
        }
        if m.end_ns.is_none() {
            note(WarningKind::Unfinished, 1, &m.path, "end_ns null".into());
            continue;
        }
        let Some(expected) = m.records.checked_sub(m.dropped) else {
            note(
                WarningKind::MetaMismatch,
                1,
                &m.path,
                format!("dropped {} > records {}", m.dropped, m.records),
            );
            continue;
        };
        let Some(t) = d.trace_facts.get(stem) else {
            if expected > 0 {
                note(
                    WarningKind::MissingTrace,
                    1,
                    &m.path,
                    format!(
                        "records {} − dropped {} = {expected}, no trace file",
                        m.records, m.dropped
                    ),
                );
            }
            continue;
        };
        let written = t.rows + t.malformed;
        if written == 0 {
            if expected > 0 {
                note(
                    WarningKind::EmptyTrace,
                    1,
                    &t.path,
                    format!(
                        "no records, its meta says records {} − dropped {} = {expected}",
                        m.records, m.dropped
                    ),
                );
            }
        } else if written < expected {
            note(
                WarningKind::TraceShort,
                1,
                &t.path,
                format!(
                    "{written} of the {expected} records its meta counts (records {} − dropped {})",
                    m.records, m.dropped
                ),
            );
        } else if written > expected || t.data_bytes != m.bytes_written {
            note(
                WarningKind::MetaMismatch,
                1,
                &m.path,
                format!(
                    "says records {} − dropped {} = {expected} and bytes_written {}; its trace \
                     holds {written} records, {} bytes",
                    m.records, m.dropped, m.bytes_written, t.data_bytes
                ),
            );
        }
    }
    for (stem, t) in &d.trace_facts {
        if t.rows + t.malformed == 0 && !d.meta_facts.contains_key(stem) {
            note(
                WarningKind::EmptyTrace,
                1,
                &t.path,
                "no records and no meta.json".into(),
            );
        }
    }
    issues
        .into_iter()
        .filter_map(|(kind, i)| {
            let (file, line, detail) = i.first?;
            let at = if line > 0 {
                format!("{file}:{line}")
            } else {
                file.clone()
            };
            let c = i.count;
            let files = n(i.files, "file", "files");
            let procs = n(i.files, "process", "processes");
            let records = n(c, "record", "records");
            let traces = n(c, "trace file holds", "trace files hold");
            let metas = n(c, "meta.json file", "meta.json files");
            let message = match kind {
                WarningKind::NewerFormat => format!(
                    "{} a format_version newer than this analyzer understands (version {}), \
                     read as version {} (--lenient), e.g. {at}: {detail}",
                    n(c, "meta.json file has", "meta.json files have"),
                    h5prov_format::FORMAT_VERSION,
                    h5prov_format::FORMAT_VERSION
                ),
                WarningKind::MetaUnreadable => {
                    format!("{c} unreadable meta.json file(s), e.g. {at}: {detail}")
                }
                WarningKind::MetaWrongType => format!(
                    "{metas} with keys of the wrong type, ignored, e.g. {at}: {detail}"
                ),
                WarningKind::MissingTrace => format!(
                    "{} records but no trace file (not copied?), e.g. {at}: {detail}",
                    n(c, "meta.json file counts", "meta.json files count")
                ),
                WarningKind::EmptyTrace => format!(
                    "{traces} no records (empty, or header only), e.g. {at}: {detail}"
                ),
                WarningKind::TraceShort => format!(
                    "{traces} fewer records than their meta.json counts (cut, or copied \
                     partially?), e.g. {at}: {detail}"
                ),
                WarningKind::MetaMismatch => format!(
                    "{} with their trace file, e.g. {at}: {detail}",
                    n(c, "meta.json file disagrees", "meta.json files disagree")
                ),
                WarningKind::WriteErrors => format!(
                    "{} in {procs} (file system full?): records were lost, e.g. {at}: {detail}",
                    n(c, "trace write error", "trace write errors"),
                ),
                WarningKind::Dropped => format!(
                    "{records} dropped by the connector in {procs} (max_size reached, or write \
                     errors), e.g. {at}: {detail}"
                ),
                WarningKind::Unfinished => format!(
                    "{} not finish (meta.json end_ns is null): record counts cannot be \
                     checked, e.g. {at}",
                    n(c, "process did", "processes did")
                ),
                WarningKind::BadTimestamp => format!(
                    "{records} in {files} with an impossible start_ns or total_ns (0, or ≥ 2^63: a \
                     negative or sentinel value), left out of wall time, timeline, phases and \
                     arrival skew; first at {at}: {detail}"
                ),
                WarningKind::UnderExceedsTotal => format!(
                    "{records} in {files} spend more time in the under connector than in the whole \
                     call (under_ns > total_ns); first at {at}: {detail}"
                ),
                WarningKind::SeqOrder => format!(
                    "{records} in {files} with a seq that does not increase within its thread \
                     (duplicated or reordered rows?); first at {at}: {detail}"
                ),
                WarningKind::ZeroDuration => format!(
                    "{records} in {files} with total_ns 0 (no real call takes 0 ns; a coarse clock?); \
                     first at {at}: {detail}"
                ),
            };
            Some(TraceWarning {
                kind,
                count: c,
                files: i.files,
                file,
                line: (line > 0).then_some(line),
                message,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stems_pair_a_process_files() {
        for p in [
            "d/h5prov-r0-p1.trace.csv",
            "d/h5prov-r0-p1.trace.jsonl.zst",
            "d/h5prov-r0-p1.meta.json",
            "d/h5prov-r0-p1.meta.json.gz",
            "d/h5prov-r0-p1.objects.csv",
        ] {
            assert_eq!(stem(Path::new(p)), "d/h5prov-r0-p1", "{p}");
        }
    }

    fn rec(seq: u64, tid: u64, start_ns: u64, total_ns: u64, under_ns: u64) -> RecordRef<'static> {
        RecordRef {
            seq,
            tid,
            start_ns,
            total_ns,
            under_ns,
            op: "group.open",
            ..Default::default()
        }
    }

    #[test]
    fn record_checks_count_and_keep_the_first_line() {
        let mut c = RecordChecks::default();
        let t = 1_700_000_000_000_000_000;
        let recs = [
            (2, rec(0, 7, t, 10, 5)),
            (3, rec(1, 8, t, 10, 5)),  // another thread: its own sequence
            (4, rec(2, 7, 0, 10, 5)),  // start 0
            (5, rec(2, 7, t, 10, 11)), // seq repeats in thread 7, under > total
            (6, rec(1, 7, t, u64::MAX, 5)), // decreasing; total u64::MAX
            (7, rec(3, 8, u64::MAX, 0, 0)), // start u64::MAX, zero total
            (8, rec(9, 7, t, 10, 5)),
        ];
        let ok: Vec<bool> = recs.iter().map(|(l, r)| c.check(*l, r)).collect();
        assert_eq!(ok, [true, true, false, true, false, false, true]);
        let issues = c.issues(Path::new("x.trace.csv"));
        let got: Vec<(WarningKind, u64, u64)> = issues
            .iter()
            .map(|(k, i)| (*k, i.count, i.first.as_ref().unwrap().1))
            .collect();
        assert_eq!(
            got,
            [
                (WarningKind::BadTimestamp, 3, 4),
                (WarningKind::UnderExceedsTotal, 1, 5),
                (WarningKind::SeqOrder, 2, 5),
                (WarningKind::ZeroDuration, 1, 7),
            ]
        );
        assert_eq!(
            issues[&WarningKind::SeqOrder].first.as_ref().unwrap().2,
            "seq 2 after seq 2 in thread 7"
        );
    }

    #[test]
    fn issues_merge_commutatively() {
        let mut a = Issue::default();
        a.note(2, ("b".into(), 9, "x".into()));
        let mut b = Issue::default();
        b.note(1, ("a".into(), 30, "y".into()));
        let mut ab = a.clone();
        ab.merge(b.clone());
        let mut ba = b;
        ba.merge(a);
        assert_eq!(ab, ba);
        assert_eq!((ab.count, ab.files), (3, 2));
        assert_eq!(ab.first.unwrap().0, "a");
    }
}
