//! Mergeable aggregation. Each worker thread reads files, one after another, into its own
//! [`Accumulator`] (streaming, bounded memory; objects in hash maps); the workers'
//! accumulators are merged and turned into one [`Aggregate`] of sorted maps. Every field
//! is an integer sum, min, max, sorted map or bounded top-K with a total order, so merges
//! ([`Accumulator::merge`], [`Aggregate::merge`]) are commutative and associative: the
//! result is the same for any number of threads and any order of files.
//!
//! Memory is bounded by operations × processes (plus objects and timeline bins), never by
//! records: latencies go into [`LogSketch`](sketch::LogSketch)es, slow calls into a top-[`SLOW_CALLS_KEPT`].

mod accumulate;
pub mod asyncops;
pub mod check;
pub mod collective;
mod dataflow;
pub mod dataset_io;
mod diagnostics;
pub mod link_iter;
mod objects;
pub mod sketch;
mod stats;
pub mod timeline;

pub use crate::read::record::{is_anonymous_label, ANONYMOUS_LABEL};
pub use accumulate::{Accumulator, Builder, ANONYMOUS_HELD};
pub use dataflow::{Dataflow, DatasetBytes, FileAccess, DATAFLOW_PER_PROCESS};
pub use diagnostics::Diagnostics;
pub(crate) use objects::join_sorted;
use objects::merge_maps;
pub use objects::{objects_of_kind, ObjectMap};
use stats::min_nonzero;
pub use stats::{
    proc_number, FileStats, ObjStats, OpStats, ProcOpStats, ProcSet, ProcStats, SizeHist, SlowCall,
    SummaryStats, SummarySum, TopK, SLOW_CALLS_KEPT,
};

use crate::aggregate::collective::Collectives;
use crate::aggregate::timeline::Timeline;
use crate::read::record::ProcKey;
use crate::read::stream_capture::{read_capture, Capture, StreamProcess, STREAM_FORMAT};
use crate::read::{Error, Inputs, ReadOptions};
use h5prov_format::{Encoding, ProcessMeta};
use rayon::prelude::*;
use std::cmp::Reverse;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The kinds of objects whose summary rows are added up ([`Aggregate::summaries`]): the
/// report reads file and dataset rows only. Groups, attributes and datatypes made a third
/// of the summaries of an object-heavy run, and no part of the report looked at them.
pub const SUMMARY_KINDS: [&str; 2] = ["dataset", "file"];

impl Aggregate {
    /// Finishes the meta of each process that ended without closing HDF5 (`_exit`,
    /// `os._exit`, `kill -9`: its `end_ns` is null) when its trace was read with its
    /// pending sidecar and nothing was cut: nothing was lost, so `records`,
    /// `bytes_written` and `end_ns` (its last call's end) come from the data, and it is
    /// counted in [`Diagnostics::unclosed`] instead of as unfinished. A cut trace, or one
    /// without a sidecar (the process died with records only in memory, or an older
    /// h5prov), stays unfinished: records may have been lost.
    pub fn finish_unclosed(&mut self) {
        let d = &mut self.diag;
        for (stem, m) in d.meta_facts.iter_mut() {
            if m.end_ns.is_some() {
                continue;
            }
            let Some(t) = d.trace_facts.get(stem) else {
                continue;
            };
            if !t.recovered || t.files != 1 || d.truncated.iter().any(|(p, _)| *p == t.path) {
                continue;
            }
            let key = ProcKey {
                rank: m.rank,
                pid: m.pid,
            };
            let Some(meta) = self
                .metas
                .iter_mut()
                .find(|x| x.rank == m.rank && x.pid == m.pid && x.end_ns.is_none())
            else {
                continue;
            };
            let last = self.procs.get(&key).map_or(0, |p| p.last_ns);
            let end = last.max(meta.start_ns);
            (m.records, m.bytes_written, m.end_ns) =
                (t.rows + t.malformed, t.data_bytes, Some(end));
            meta.records = m.records;
            meta.bytes_written = m.bytes_written;
            meta.end_ns = Some(end);
            d.unclosed += 1;
        }
    }
}

/// Everything the analysis needs, reduced over all input files.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Aggregate {
    /// Reading diagnostics.
    pub diag: Diagnostics,
    /// Per operation.
    pub ops: BTreeMap<String, OpStats>,
    /// Per process.
    pub procs: BTreeMap<ProcKey, ProcStats>,
    /// Per object from records: by container file, then (`kind`, `path`).
    pub objects: BTreeMap<String, ObjectMap<ObjStats>>,
    /// Per object from objects files, of the kinds the report reads ([`SUMMARY_KINDS`]): by
    /// container file, then (`kind`, `path`).
    pub summaries: BTreeMap<String, ObjectMap<SummaryStats>>,
    /// Per container file from records.
    pub files: BTreeMap<String, FileStats>,
    /// Data transfers by (requested, actual) mode, from records that carry one.
    pub xfer: BTreeMap<(String, String), u64>,
    /// Access sizes of data reads (index 0) and writes (index 1).
    pub io_sizes: [SizeHist; 2],
    /// Process metadata, sorted by rank, pid, start.
    pub metas: Vec<ProcessMeta>,
    /// Activity over time.
    pub timeline: Timeline<String>,
    /// First call start, ns since the epoch (0 when no records).
    pub first_ns: u64,
    /// Last call end, ns since the epoch.
    pub last_ns: u64,
    /// Collective calls of MPI ranks, for arrival skew.
    pub collectives: Collectives,
    /// What the dataset insights need: per dataset transfers and storage settings, and
    /// time by access size ([`crate::insights::dataset`]).
    pub datasets_io: crate::aggregate::dataset_io::DatasetsIo,
    /// How each container file was accessed (objects files' `file` rows): driver,
    /// alignment, file system.
    pub file_access: BTreeMap<String, FileAccess>,
    /// Asynchronous operations, issue to completion, by operation ([`crate::aggregate::asyncops`]).
    pub async_ops: BTreeMap<String, crate::aggregate::asyncops::AsyncStats>,
    /// What the report's dataflow graph needs of the objects files.
    pub dataflow: Dataflow,
}

/// The order of [`Aggregate::metas`]: rank, pid, start, host (compared in place, without
/// building a key per comparison).
fn meta_order(a: &ProcessMeta, b: &ProcessMeta) -> std::cmp::Ordering {
    (a.rank, a.pid, a.start_ns, &a.host).cmp(&(b.rank, b.pid, b.start_ns, &b.host))
}

impl Aggregate {
    /// Adds everything in `o` to `self` (commutative and associative).
    pub fn merge(&mut self, o: Aggregate) {
        self.diag.merge(o.diag);
        for (k, v) in o.ops {
            match self.ops.get_mut(&k) {
                Some(s) => s.merge(v),
                None => {
                    self.ops.insert(k, v);
                }
            }
        }
        for (k, v) in o.procs {
            self.procs.entry(k).or_default().merge(v);
        }
        merge_maps(&mut self.objects, o.objects, |a, b| {
            a.merge(b, ObjStats::merge)
        });
        merge_maps(&mut self.summaries, o.summaries, |a, b| {
            a.merge(b, SummaryStats::merge)
        });
        merge_maps(&mut self.files, o.files, |a, b| a.merge(b));
        for (k, v) in o.xfer {
            *self.xfer.entry(k).or_default() += v;
        }
        self.io_sizes[0].merge(&o.io_sizes[0]);
        self.io_sizes[1].merge(&o.io_sizes[1]);
        if !o.metas.is_empty() {
            self.metas.extend(o.metas);
            self.metas.sort_by(meta_order);
        }
        self.timeline.merge(o.timeline);
        self.first_ns = min_nonzero(self.first_ns, o.first_ns);
        self.last_ns = self.last_ns.max(o.last_ns);
        self.collectives.merge(o.collectives);
        self.datasets_io.merge(o.datasets_io);
        merge_maps(&mut self.file_access, o.file_access, |a, b| a.merge(b));
        self.dataflow.merge(o.dataflow);
        for (k, v) in o.async_ops {
            self.async_ops.entry(k).or_default().merge(&v);
        }
    }

    /// Total time in all calls, ns.
    pub fn total_ns(&self) -> u64 {
        self.ops.values().map(|o| o.total_ns).sum()
    }
}

/// Reads one trace file into an [`Aggregate`].
pub fn aggregate_trace(path: &Path, enc: Encoding, opts: &ReadOptions) -> Result<Aggregate, Error> {
    let mut acc = Accumulator::default();
    acc.add_trace(path, enc, opts)?;
    Ok(acc.finish())
}

/// Reads one objects file into an [`Aggregate`].
pub fn aggregate_objects(
    path: &Path,
    enc: Encoding,
    opts: &ReadOptions,
) -> Result<Aggregate, Error> {
    let mut acc = Accumulator::default();
    acc.add_objects(path, enc, opts)?;
    Ok(acc.finish())
}

/// Reads one meta file into an [`Aggregate`]; an unreadable one is recorded, not fatal.
pub fn aggregate_meta(path: &Path) -> Aggregate {
    let mut acc = Accumulator::default();
    acc.add_meta(path);
    acc.finish()
}

/// Keeps in `err` the error of the smallest path (and line) of those seen, so the error
/// reported does not depend on the order of the threads.
fn keep_first_error(err: &mut Option<Error>, e: Error) {
    *err = Some(match err.take() {
        Some(a) if a.sort_key() <= e.sort_key() => a,
        _ => e,
    });
}

/// Reads all inputs in parallel on the current rayon pool and reduces them. When several
/// files fail, the error of the smallest path (and line) is returned, whatever the order
/// of the threads. `progress` is called with the size of each finished file.
pub fn aggregate_all(
    inputs: &Inputs,
    opts: &ReadOptions,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Aggregate, Error> {
    enum Job<'a> {
        Trace(&'a Path, Encoding, u64),
        Objects(&'a Path, Encoding, u64),
        Meta(&'a Path, u64),
        Stream(&'a StreamProcess, u64),
    }
    // Stream captures are read first: a process's messages may be in any of the files.
    let capture = if inputs.streams.is_empty() {
        Capture::default()
    } else {
        let c = read_capture(&inputs.streams, opts)?;
        progress(inputs.streams.iter().map(|f| f.size).sum());
        c
    };
    let mut jobs: Vec<Job<'_>> = Vec::new();
    jobs.extend(
        capture
            .processes
            .iter()
            .map(|p| Job::Stream(p, p.events.len() as u64 * 256)),
    );
    jobs.extend(
        inputs
            .traces
            .iter()
            .map(|(f, e)| Job::Trace(&f.path, *e, f.size)),
    );
    jobs.extend(
        inputs
            .objects
            .iter()
            .map(|(f, e)| Job::Objects(&f.path, *e, f.size)),
    );
    jobs.extend(inputs.metas.iter().map(|f| Job::Meta(&f.path, f.size)));
    // Big files first: better load balance across threads.
    jobs.sort_by_key(|j| {
        Reverse(match j {
            Job::Trace(_, _, s) | Job::Objects(_, _, s) | Job::Meta(_, s) | Job::Stream(_, s) => *s,
        })
    });
    // One worker per thread, each taking the next file from a shared counter into its own
    // accumulator; then one merge per worker.
    let next = AtomicUsize::new(0);
    let base = Accumulator::default();
    let worker = |_| {
        let mut acc = base.sharing();
        let mut err: Option<Error> = None;
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(job) = jobs.get(i) else { break };
            let (r, size) = match *job {
                Job::Trace(p, e, s) => (acc.add_trace(p, e, opts), s),
                Job::Objects(p, e, s) => (acc.add_objects(p, e, opts), s),
                Job::Meta(p, s) => (acc.add_meta_checked(p, opts), s),
                // Its capture files were counted as they were read.
                Job::Stream(p, _) => (acc.add_stream_process(p, &capture, opts), 0),
            };
            progress(size);
            if let Err(e) = r {
                keep_first_error(&mut err, e);
            }
        }
        (acc, err)
    };
    let workers = rayon::current_num_threads().clamp(1, jobs.len().max(1));
    let results: Vec<(Accumulator, Option<Error>)> = (0..workers)
        .into_par_iter()
        .with_max_len(1)
        .map(worker)
        .collect();
    let mut accs = Vec::with_capacity(results.len());
    let mut err: Option<Error> = None;
    for (acc, e) in results {
        if let Some(e) = e {
            keep_first_error(&mut err, e);
        }
        accs.push(acc);
    }
    if !capture.files.is_empty() {
        let mut acc = base.sharing();
        for (p, d) in &capture.files {
            acc.add_stream_file(p, d);
        }
        accs.push(acc);
    }
    if let Some(e) = err {
        return Err(e);
    }
    let agg = Accumulator::finish_all(accs);
    if !capture.processes.is_empty() {
        refuse_twice_read(&agg)?;
    }
    Ok(agg)
}

/// An error when a process is in both a meta file and a stream capture (the collector's
/// `--out` inside the trace directory): each of its calls would count twice.
fn refuse_twice_read(agg: &Aggregate) -> Result<(), Error> {
    let key = |m: &ProcessMeta| (m.job_id.clone(), m.host.clone(), m.pid);
    let streamed: std::collections::BTreeSet<_> = agg
        .metas
        .iter()
        .filter(|m| m.format == STREAM_FORMAT)
        .map(key)
        .collect();
    match agg
        .metas
        .iter()
        .find(|m| m.format != STREAM_FORMAT && streamed.contains(&key(m)))
    {
        Some(m) => Err(Error::Other(format!(
            "process {} on host {} (job {:?}) is in both a trace (its meta.json) and a stream \
             capture (collect-*.jsonl) of the input: each of its calls would count twice; \
             report the trace files or the capture, not both",
            m.pid, m.host, m.job_id
        ))),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::record::RecordRef;
    use crate::read::FileDiag;

    /// The objects of `a.h5` and their (calls, opens, writes, bytes written) when `recs`
    /// are one trace file: (op, kind, path, anon, bytes).
    fn objects_of(
        recs: &[(&str, &str, &str, &str, u64)],
    ) -> BTreeMap<(String, String), (u64, u64, u64, u64)> {
        let mut acc = Accumulator::default();
        acc.add_trace_with(Path::new("t.trace.csv"), |b| {
            for (i, (op, kind, path, anon, bytes)) in recs.iter().enumerate() {
                let r = RecordRef {
                    seq: i as u64,
                    start_ns: 1_000 + i as u64,
                    total_ns: 1,
                    pid: 9,
                    op,
                    kind,
                    file: "a.h5",
                    path,
                    anon,
                    bytes: *bytes,
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
        let agg = acc.finish();
        agg.objects["a.h5"]
            .iter()
            .map(|((k, p), o)| {
                (
                    (k.to_string(), p.to_string()),
                    (o.calls, o.opens, o.writes, o.bytes_written),
                )
            })
            .collect()
    }

    /// An objects file's dataflow keeps, per process, the DATAFLOW_PER_PROCESS datasets
    /// that moved the most bytes, rows of one dataset added up first, ties by file then
    /// path; other processes' rows and kinds are kept apart.
    #[test]
    fn dataflow_keeps_each_process_top_datasets_with_rows_summed() {
        let mut rows: Vec<h5prov_format::ObjectSummary> = Vec::new();
        let row = |rank: i64, kind: &str, file: &str, path: &str, r: u64, w: u64| {
            h5prov_format::ObjectSummary {
                rank,
                pid: 7,
                kind: kind.into(),
                file: file.into(),
                path: path.into(),
                bytes_read: r,
                bytes_written: w,
                ..Default::default()
            }
        };
        // Rank 0: /d00../d19 of a.h5 move 100 + i bytes; /d00 has a second row of 1000
        // (it becomes the largest); /t1 and /t0 of b.h5 tie at 110 with a.h5's /d10.
        for i in 0..20u64 {
            rows.push(row(0, "dataset", "a.h5", &format!("/d{i:02}"), 100 + i, 0));
        }
        rows.push(row(0, "dataset", "a.h5", "/d00", 0, 1000));
        rows.push(row(0, "dataset", "b.h5", "/t1", 10, 100));
        rows.push(row(0, "dataset", "b.h5", "/t0", 110, 0));
        rows.push(row(0, "group", "a.h5", "/g", 5000, 0));
        rows.push(row(0, "dataset", "a.h5", "/none", 0, 0));
        rows.push(row(1, "dataset", "a.h5", "/d05", 3, 4));
        let mut acc = Accumulator::default();
        acc.add_objects_with(Path::new("o.objects.csv"), |sink| {
            for r in &rows {
                sink(&r.borrowed());
            }
            Ok(FileDiag::default())
        })
        .unwrap();
        let flow = acc.finish().dataflow;
        let of = |rank: i64| -> Vec<(String, String, u64, u64)> {
            flow.bytes[&(rank, 7)]
                .iter()
                .map(|((f, p), &(r, w))| (f.clone(), p.clone(), r, w))
                .collect()
        };
        let zero = of(0);
        assert_eq!(zero.len(), DATAFLOW_PER_PROCESS);
        let mut want: Vec<(String, String, u64, u64)> =
            vec![("a.h5".into(), "/d00".into(), 100, 1000)];
        // /d19../d11 (119..111), then the three at 110 by file, path: a.h5 /d10, b.h5
        // /t0, b.h5 /t1, then /d09../d07: 16 in all.
        want.extend((11..20).map(|i| ("a.h5".into(), format!("/d{i:02}"), 100 + i, 0)));
        want.push(("a.h5".into(), "/d10".into(), 110, 0));
        want.push(("b.h5".into(), "/t0".into(), 110, 0));
        want.push(("b.h5".into(), "/t1".into(), 10, 100));
        want.extend((7..10).map(|i| ("a.h5".into(), format!("/d{i:02}"), 100 + i, 0)));
        want.sort();
        assert_eq!(zero, want);
        assert_eq!(of(1), vec![("a.h5".into(), "/d05".into(), 3, 4)]);
    }

    #[test]
    fn records_of_an_anonymous_object_are_filed_under_the_name_its_link_gave() {
        let a = "(anonymous #1 of pid 9)";
        let never = "(anonymous #2 of pid 9)";
        let got = objects_of(&[
            ("dataset.create", "dataset", a, "", 0),
            ("dataset.write", "dataset", a, "", 8),
            ("dataset.create", "dataset", never, "", 0),
            ("dataset.write", "dataset", "/b", "", 4),
            ("dataset.write", "dataset", never, "", 2),
            ("link.create:hard", "dataset", "/g/a", a, 0),
            ("dataset.write", "dataset", "/g/a", "", 16),
            // A record under a label already named (another thread's, late).
            ("dataset.get:space", "dataset", a, "", 0),
        ]);
        let d = |p: &str| ("dataset".to_string(), p.to_string());
        assert_eq!(
            got,
            BTreeMap::from([
                // create, write, link (not an open), write, get.
                (d("/g/a"), (5, 1, 2, 24)),
                (d("/b"), (1, 0, 1, 4)),
                // Never linked: its label, on its own.
                (d(never), (2, 1, 1, 2)),
            ])
        );
    }

    #[test]
    fn held_anonymous_records_stay_bounded() {
        // More records under labels never named than are held: all are counted, under
        // their labels.
        let labels: Vec<String> = (0..3)
            .map(|i| format!("(anonymous #{i} of pid 9)"))
            .collect();
        let recs: Vec<(&str, &str, &str, &str, u64)> = (0..ANONYMOUS_HELD + 10)
            .map(|i| ("dataset.write", "dataset", labels[i % 3].as_str(), "", 1))
            .collect();
        let got = objects_of(&recs);
        let calls: u64 = got.values().map(|v| v.0).sum();
        assert_eq!(calls, recs.len() as u64);
        assert_eq!(got.len(), 3);
    }
}
