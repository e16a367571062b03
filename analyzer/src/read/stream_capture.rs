//! Reading what `h5prov collect --out DIR` wrote: the `collect-<start>-<pid>-<n>.jsonl`
//! files of stream messages (`docs/STREAMING.md`), many processes in each file, one
//! process's messages possibly spread over several files.
//!
//! Every `event` message becomes a trace record of its process, built by the record
//! table's one parser ([`TraceRecordRef::from_source`]) from an [`EventSource`] that maps
//! the columns the stream carries ([`CARRIED`]) to the message's keys and reads every
//! other column as empty. The events are grouped per process (`job_id`, `host`, `pid`), as
//! if each process had written a trace file, in `seq` order; its `hello` gives the facts a
//! `meta.json` would (executable, user id, trace level, world size), in a [`ProcessMeta`]
//! whose `format` is [`STREAM_FORMAT`]. `interval` messages (per-operation sums) are
//! counted, not read: a capture with sums only is an error that says so.

use super::jsonl_trace::drive_jsonl;
use super::{Error, FileDiag, InputFile, ReadOptions};
use h5prov_format::{FieldSource, ProcessMeta, TraceRecordRef, FORMAT_VERSION, TRACE_COLUMNS};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The `format` of a [`ProcessMeta`] made from a `hello` message: it was not read from a
/// `meta.json`, and knows only what the stream carries.
pub const STREAM_FORMAT: &str = "stream";

/// The stream schema version this analyzer reads.
const STREAM_VERSION: u32 = 1;

/// The trace columns an `event` message carries, and its key for each (the record's
/// `total_ns` is the message's `dur_ns`). Every other column reads as empty.
pub const CARRIED: [(&str, &str); 13] = [
    ("seq", "seq"),
    ("start_ns", "start_ns"),
    ("total_ns", "dur_ns"),
    ("rank", "rank"),
    ("pid", "pid"),
    ("tid", "tid"),
    ("op", "op"),
    ("kind", "kind"),
    ("file", "file"),
    ("path", "path"),
    ("status", "status"),
    ("bytes", "bytes"),
    ("xfer", "xfer"),
];

/// The trace columns a stream capture does not carry (they read as empty), in table order.
pub fn not_carried() -> Vec<&'static str> {
    TRACE_COLUMNS
        .iter()
        .copied()
        .filter(|c| !CARRIED.iter().any(|(col, _)| col == c))
        .collect()
}

/// Whether a file is one `h5prov collect --out` writes: `collect-*.jsonl`, optionally
/// `.zst` or `.gz`.
pub fn is_capture(path: &Path) -> bool {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
        return false;
    };
    let (_, inner) = super::input::Compression::of_name(name);
    inner.starts_with("collect-") && inner.ends_with(".jsonl")
}

/// One stream message as read; unknown keys are ignored, as the schema asks.
#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
enum Message {
    Hello(Hello),
    Event(Event),
    Interval(Interval),
}

/// The process every message names.
#[derive(Deserialize, Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Who {
    job_id: String,
    host: String,
    pid: u32,
    rank: i64,
}

#[derive(Deserialize)]
struct Hello {
    v: u32,
    #[serde(flatten)]
    who: Who,
    world_size: i64,
    uid: u32,
    exe: String,
    level: String,
}

/// An `event` message: every key the connector sends.
#[derive(Deserialize, Debug, Clone)]
pub struct Event {
    v: u32,
    #[serde(flatten)]
    who: Who,
    seq: u64,
    tid: u64,
    start_ns: u64,
    dur_ns: u64,
    op: String,
    kind: String,
    file: String,
    path: String,
    bytes: u64,
    xfer: String,
    status: i32,
    /// The capture file (its index in [`Capture::files`]) and line.
    #[serde(skip)]
    at: (u32, u64),
}

#[derive(Deserialize)]
struct Interval {
    v: u32,
    #[serde(flatten)]
    who: Who,
}

fn check_version(v: u32) -> Result<(), String> {
    if v > STREAM_VERSION {
        return Err(format!(
            "stream schema version {v}; this analyzer reads version {STREAM_VERSION}"
        ));
    }
    Ok(())
}

/// An event as the record table's [`FieldSource`]: the columns the stream carries from
/// the message ([`CARRIED`]), the others empty.
pub struct EventSource<'a>(pub &'a Event);

impl<'a> FieldSource<'a> for EventSource<'a> {
    type Error = String;

    fn unsigned(&self, _col: usize, name: &'static str, empty: u64) -> Result<u64, String> {
        let e = self.0;
        Ok(match name {
            "seq" => e.seq,
            "start_ns" => e.start_ns,
            "total_ns" => e.dur_ns,
            "pid" => u64::from(e.who.pid),
            "tid" => e.tid,
            "bytes" => e.bytes,
            _ => empty,
        })
    }

    fn signed(&self, _col: usize, name: &'static str, empty: i64) -> Result<i64, String> {
        let e = self.0;
        Ok(match name {
            "rank" => e.who.rank,
            "status" => i64::from(e.status),
            _ => empty,
        })
    }

    fn text(&self, _col: usize, name: &'static str) -> Result<&'a str, String> {
        let e = self.0;
        Ok(match name {
            "op" => &e.op,
            "kind" => &e.kind,
            "file" => &e.file,
            "path" => &e.path,
            "xfer" => &e.xfer,
            _ => "",
        })
    }

    fn out_of_range(&self, _col: usize, name: &'static str) -> String {
        format!("`{name}` out of range")
    }

    fn empty_value(&self, _col: usize, name: &'static str) -> String {
        let key = CARRIED
            .iter()
            .find(|(c, _)| *c == name)
            .map_or(name, |(_, k)| k);
        format!("event with an empty `{key}`")
    }
}

/// One process of a capture: its events (in `seq` order) and what its `hello` said.
#[derive(Debug, Clone)]
pub struct StreamProcess {
    /// The name it has in reports and diagnostics, as if it were a trace file:
    /// `<first capture file with its messages>#<job_id>/<host>/<pid>`.
    pub source: PathBuf,
    /// The job id its messages carry.
    pub job_id: String,
    /// The facts of its `hello` (format [`STREAM_FORMAT`]); `None` when the capture holds
    /// none (the collector started after the process connected).
    pub meta: Option<ProcessMeta>,
    /// Its events, sorted by `seq`.
    pub events: Vec<Event>,
}

impl StreamProcess {
    /// Event `i` as a trace record, and its line in its capture file.
    pub fn record(&self, i: usize, capture: &Capture) -> Result<(u64, TraceRecordRef<'_>), Error> {
        let e = &self.events[i];
        let (f, line) = e.at;
        TraceRecordRef::from_source(&EventSource(e))
            .map(|r| (line, r))
            .map_err(|reason| Error::Malformed {
                path: capture.files[f as usize].0.clone(),
                line,
                reason,
            })
    }
}

/// What reading a capture found.
#[derive(Debug, Clone, Default)]
pub struct Capture {
    /// The capture files read, in path order, with what reading each found (`rows`: the
    /// messages).
    pub files: Vec<(PathBuf, FileDiag)>,
    /// The processes, by job, host and pid.
    pub processes: Vec<StreamProcess>,
}

/// What one capture file held.
struct FileMessages {
    diag: FileDiag,
    hellos: Vec<Hello>,
    events: Vec<Event>,
    intervals: Vec<Who>,
}

fn read_file(path: &Path, index: u32, opts: &ReadOptions) -> Result<FileMessages, Error> {
    let (mut hellos, mut events, mut intervals) = (Vec::new(), Vec::new(), Vec::new());
    let diag = drive_jsonl(path, opts, |line, body| {
        let msg: Message = serde_json::from_slice(body).map_err(|e| e.to_string())?;
        match msg {
            Message::Hello(h) => {
                check_version(h.v)?;
                hellos.push(h);
            }
            Message::Event(mut e) => {
                check_version(e.v)?;
                if e.op.is_empty() {
                    return Err("event with an empty `op`".into());
                }
                e.at = (index, line);
                events.push(e);
            }
            Message::Interval(i) => {
                check_version(i.v)?;
                intervals.push(i.who);
            }
        }
        Ok(())
    })?;
    Ok(FileMessages {
        diag,
        hellos,
        events,
        intervals,
    })
}

/// Reads the capture files `files` (on the current rayon pool) and groups their messages
/// by process. A malformed line is an error naming its file and line unless
/// `opts.lenient`; a capture whose messages are all interval sums is an error.
pub fn read_capture(files: &[InputFile], opts: &ReadOptions) -> Result<Capture, Error> {
    use rayon::prelude::*;
    let mut paths: Vec<&Path> = files.iter().map(|f| f.path.as_path()).collect();
    paths.sort();
    let read: Vec<Result<FileMessages, Error>> = paths
        .par_iter()
        .enumerate()
        .map(|(i, p)| read_file(p, i as u32, opts))
        .collect();
    // The error of the smallest path, whatever the order of the threads.
    let mut parts = Vec::with_capacity(read.len());
    for r in read {
        parts.push(r?);
    }
    type Key = (String, String, u32);
    let key = |w: &Who| (w.job_id.clone(), w.host.clone(), w.pid);
    let mut procs: BTreeMap<Key, (usize, Option<ProcessMeta>, Vec<Event>)> = BTreeMap::new();
    let mut capture = Capture::default();
    let (mut events, mut intervals) = (0usize, 0usize);
    for (i, part) in parts.into_iter().enumerate() {
        capture.files.push((paths[i].to_path_buf(), part.diag));
        for h in part.hellos {
            let p = procs.entry(key(&h.who)).or_insert((i, None, Vec::new()));
            p.1 = Some(meta_of(h));
        }
        events += part.events.len();
        for e in part.events {
            procs
                .entry(key(&e.who))
                .or_insert((i, None, Vec::new()))
                .2
                .push(e);
        }
        intervals += part.intervals.len();
        for w in part.intervals {
            procs.entry(key(&w)).or_insert((i, None, Vec::new()));
        }
    }
    if events == 0 && intervals > 0 {
        return Err(Error::Other(format!(
            "{}: this stream capture holds only interval sums ({intervals} `interval` \
             messages, no `event`): its processes streamed with stream_level=interval, whose \
             per-operation sums have no calls to report on; h5prov report reads captures of \
             stream_level=event, and the sums are in the collector's Prometheus metrics",
            paths[0].display()
        )));
    }
    for ((job, host, pid), (first, meta, mut evs)) in procs {
        evs.sort_by_key(|e| e.seq);
        capture.processes.push(StreamProcess {
            source: PathBuf::from(format!("{}#{job}/{host}/{pid}", paths[first].display())),
            job_id: job,
            meta,
            events: evs,
        });
    }
    Ok(capture)
}

/// The facts of a `hello`, as a meta of format [`STREAM_FORMAT`]: what the stream does
/// not carry (HDF5 version, command line, clock anchor, end, counts) is left empty.
fn meta_of(h: Hello) -> ProcessMeta {
    ProcessMeta {
        format_version: FORMAT_VERSION,
        uid: h.uid,
        host: h.who.host,
        pid: h.who.pid,
        rank: h.who.rank,
        world_size: h.world_size,
        job_id: h.who.job_id,
        exe: h.exe,
        level: h.level,
        format: STREAM_FORMAT.into(),
        ..ProcessMeta::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn capture(name: &str, text: &str) -> (PathBuf, Vec<InputFile>) {
        let dir =
            std::env::temp_dir().join(format!("h5prov-capture-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("collect-1-2-0000.jsonl");
        std::fs::write(&p, text).unwrap();
        (
            dir,
            vec![InputFile {
                size: text.len() as u64,
                path: p,
            }],
        )
    }

    const HELLO: &str = r#"{"v":1,"type":"hello","job_id":"7","rank":1,"pid":9,"host":"n","world_size":2,"uid":5,"exe":"/bin/x","level":"dataset","stream_level":"event"}"#;

    fn event(seq: u64, op: &str) -> String {
        format!(
            r#"{{"v":1,"type":"event","job_id":"7","rank":1,"pid":9,"host":"n","seq":{seq},"tid":3,"start_ns":1700000000000000000,"dur_ns":42,"op":"{op}","kind":"dataset","file":"a.h5","path":"/d","bytes":8,"xfer":"","status":0,"new_key":1}}"#
        )
    }

    #[test]
    fn events_become_records_of_their_process() {
        let text = format!(
            "{HELLO}\n{}\n{}\n",
            event(2, "dataset.read"),
            event(1, "dataset.write")
        );
        let (_d, files) = capture("ok", &text);
        let c = read_capture(&files, &ReadOptions::default()).unwrap();
        assert_eq!(c.files[0].1.rows, 3);
        let [p] = c.processes.as_slice() else {
            panic!("{:?}", c.processes)
        };
        assert!(p.source.display().to_string().ends_with("0000.jsonl#7/n/9"));
        let m = p.meta.as_ref().unwrap();
        assert_eq!((m.exe.as_str(), m.world_size, m.uid), ("/bin/x", 2, 5));
        assert_eq!(m.format, STREAM_FORMAT);
        let (line, r) = p.record(0, &c).unwrap();
        assert_eq!(
            (line, r.seq, r.op, r.total_ns, r.under_ns),
            (3, 1, "dataset.write", 42, 0)
        );
        assert_eq!((r.rank, r.pid, r.tid, r.bytes, r.batch), (1, 9, 3, 8, 1));
        assert!(not_carried().contains(&"under_ns") && !not_carried().contains(&"seq"));
    }

    #[test]
    fn bad_lines_are_named_or_skipped() {
        let text = format!(
            "{HELLO}\n{{\"v\":1,\"type\":\"event\"}}\n{}\n",
            event(1, "x")
        );
        let (_d, files) = capture("bad", &text);
        let e = read_capture(&files, &ReadOptions::default()).unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("collect-1-2-0000.jsonl:2:"), "{msg}");
        assert!(msg.contains("missing field"), "{msg}");
        let c = read_capture(&files, &ReadOptions { lenient: true }).unwrap();
        assert_eq!(c.files[0].1.malformed, 1);
        assert_eq!(c.processes[0].events.len(), 1);
        let text = format!("{HELLO}\n{}\n", event(1, "x").replace("\"v\":1", "\"v\":2"));
        let (_d, files) = capture("newer", &text);
        let e = read_capture(&files, &ReadOptions::default()).unwrap_err();
        assert!(e.to_string().contains("stream schema version 2"), "{e}");
    }

    #[test]
    fn interval_only_captures_are_refused() {
        let text = format!(
            "{HELLO}\n{}\n",
            r#"{"v":1,"type":"interval","job_id":"7","rank":1,"pid":9,"host":"n","seq":0,"start_ns":1,"end_ns":2,"op":"x","count":3,"bytes":0,"dur_ns":9,"max_ns":4}"#
        );
        let (_d, files) = capture("interval", &text);
        let e = read_capture(&files, &ReadOptions::default()).unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.contains("collect-1-2-0000.jsonl") && msg.contains("only interval sums"),
            "{msg}"
        );
    }
}
