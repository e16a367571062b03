//! `h5prov collect`: receives the JSON-line streams of processes traced with `stream=`
//! (`docs/STREAMING.md`), over TCP and Unix sockets, aggregates them live, serves them as
//! Prometheus metrics at `/metrics` and to `h5prov top` at `/top.json` ([`crate::live`]),
//! and optionally writes every message it accepted to rolling JSONL files.
//!
//! Stream connections and HTTP clients are tasks on one tokio runtime of a fixed number of
//! worker threads (the available cores, at most [`MAX_WORKERS`]): the thread count does not
//! grow with the connections. The messages are decoded by the same synchronous code
//! ([`Metrics::take`], and the binary frames' records) on the bytes a task has read.
//!
//! Built to face any peer that can reach its ports, with everything bounded ([`Limits`]):
//! - at most [`Limits::max_connections`] stream connections; one over the limit is closed
//!   at once and counted (`h5prov_stream_refused_total{reason}`), and the listener keeps
//!   listening;
//! - a connection whose read waited [`Limits::idle_timeout`] for data is closed (counted);
//! - a line is at most [`MAX_LINE`] bytes: a longer one is skipped without being kept;
//! - label values (job id, host, operation) are at most [`MAX_LABEL`] bytes, and there are
//!   at most [`Limits::max_series`] label sets (job, rank, operation); a job that sent
//!   nothing for [`Limits::job_expiry`] is forgotten, its series with it;
//! - counters saturate instead of wrapping;
//! - the HTTP side is hyper's HTTP/1 server on the same runtime: at most
//!   [`MAX_HTTP`] clients at once, a deadline of [`HTTP_DEADLINE`] for each whole exchange,
//!   so a slow, idle or non-reading client delays nobody else.
//!
//! With `--token-file`, a stream connection is read only after the shared-secret handshake
//! ([`h5prov_format::auth`], the collector proving first), and HTTP wants the token as
//! `Authorization: Bearer`. On a Unix socket the peer's uid (`SO_PEERCRED`) must be the
//! `hello`'s, and a job belongs to the first non-root uid that sent for it (root may send
//! for any job).
//!
//! A line that is not a message is counted (`h5prov_stream_malformed_total`) and skipped;
//! a message refused by a limit or of an unknown version is counted in
//! `h5prov_stream_dropped_total{reason}`. Counters start at zero when the collector
//! restarts (Prometheus handles the reset) and the connectors reconnect within a second.

use crate::live::{Call, Live, Sent};
use h5prov_format::stream::{
    FRAME_HEAD, FRAME_HEADER, FRAME_HELLO, FRAME_RECORDS, STREAM_MAGIC, STREAM_VERSION,
};
use h5prov_format::tls;
use h5prov_format::tls::rustls::ServerConfig;
use h5prov_format::{auth, BinDecoder, BinValue, TraceRecordRef};
use http_body_util::Full;
use hyper::body::Bytes;
use prometheus_client::encoding::{EncodeLabelSet, EncodeLabelValue, LabelValueEncoder};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;
use rustc_hash::{FxHashMap, FxHashSet};
use serde::Deserialize;
use std::borrow::Cow;
use std::future::Future;
use std::io::{self, Write};
use std::net::TcpListener;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{
    AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader,
    ReadBuf,
};
use tokio_rustls::TlsAcceptor;

/// Longest accepted message line; a longer one is skipped (read past, not kept) and
/// counted as dropped (`too_long`).
pub const MAX_LINE: u64 = 1 << 20;
/// Longest job id, host or operation name; a message with a longer one is dropped
/// (`label_too_long`).
pub const MAX_LABEL: usize = 256;
/// HTTP clients served at once; more are closed at once (`http_limit`).
pub const MAX_HTTP: usize = 32;
/// The longest an HTTP client may take to send its request and read the answer.
pub const HTTP_DEADLINE: Duration = Duration::from_secs(10);
/// The version of the stream messages this collector reads (`"v"`).
pub const VERSION: u32 = 1;

/// What a collector holds at most, and for how long (`h5prov collect` flags).
#[derive(Clone, Debug)]
pub struct Limits {
    /// Stream connections open at once (`--max-connections`).
    pub max_connections: usize,
    /// Label sets (job, rank, operation) held (`--max-series`).
    pub max_series: usize,
    /// A job that sent nothing for this long is forgotten (`--job-expiry`).
    pub job_expiry: Duration,
    /// A stream connection silent for this long is closed (`--idle-timeout`).
    pub idle_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_connections: 1024,
            max_series: 100_000,
            job_expiry: Duration::from_secs(600),
            idle_timeout: Duration::from_secs(3600),
        }
    }
}

/// A label value as the exposition must spell it: prometheus-client 0.24 writes a
/// `String` label value raw (its issue #151), so a `"`, `\` or newline that came off the
/// network would end the value early and forge series or break the whole scrape. This one
/// writes them escaped (`\"`, `\\`, `\n`), as the text format and OpenMetrics define.
#[derive(Clone, Debug, Hash, PartialEq, Eq, PartialOrd, Ord)]
pub struct LabelValue(pub String);

impl std::ops::Deref for LabelValue {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl EncodeLabelValue for LabelValue {
    fn encode(&self, e: &mut LabelValueEncoder) -> Result<(), std::fmt::Error> {
        use std::fmt::Write;
        let s = self.0.as_str();
        let mut start = 0;
        for (i, b) in s.bytes().enumerate() {
            let esc = match b {
                b'\\' => "\\\\",
                b'"' => "\\\"",
                b'\n' => "\\n",
                _ => continue,
            };
            e.write_str(&s[start..i])?;
            e.write_str(esc)?;
            start = i + 1;
        }
        e.write_str(&s[start..])
    }
}

/// Labels of the per-process, per-operation counters.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct OpLabels {
    /// Launcher job id (empty outside a batch job). Not `job`: Prometheus sets that label
    /// to the scrape job's name and would rename ours `exported_job`.
    pub job_id: LabelValue,
    /// MPI rank, or `p<pid>` when the process has none.
    pub rank: LabelValue,
    /// Operation (`dataset.write`, ...).
    pub op: LabelValue,
}

/// Labels of the latency histograms (per job and operation: per rank would multiply the
/// series by the buckets).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct JobOpLabels {
    /// Launcher job id.
    pub job_id: LabelValue,
    /// Operation.
    pub op: LabelValue,
}

/// Labels of the message counter.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct TypeLabels {
    /// `hello`, `event` or `interval`.
    pub r#type: String,
}

/// Labels of the drop and refusal counters.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ReasonLabels {
    /// Why (`too_long`, `version`, `connection_limit`, ...).
    pub reason: &'static str,
}

fn latency_histogram() -> Histogram {
    // 1 µs to ~16 s, ×4 per bucket.
    Histogram::new(exponential_buckets(1e-6, 4.0, 13))
}

/// The label sets held, per job: what `--max-series` counts and job expiry removes.
#[derive(Default)]
struct Series {
    jobs: FxHashMap<String, JobSeries>,
    count: usize,
}

#[derive(Default)]
struct JobSeries {
    /// Second of the last message.
    last_s: u64,
    /// The uid of the first Unix socket peer that sent for the job: other non-root uids
    /// may not send for it.
    owner: Option<u32>,
    /// Its (job, rank, operation) sets; operation empty for a process that only said
    /// `hello`.
    sets: FxHashSet<OpLabels>,
}

/// The collector's metrics.
pub struct Metrics {
    ops: Family<OpLabels, Counter>,
    bytes: Family<OpLabels, Counter>,
    seconds: Family<OpLabels, Counter<f64, AtomicU64>>,
    latency: Family<JobOpLabels, Histogram, fn() -> Histogram>,
    messages: Family<TypeLabels, Counter>,
    malformed: Counter,
    dropped: Family<ReasonLabels, Counter>,
    refused: Family<ReasonLabels, Counter>,
    connections: Counter,
    open: Gauge,
    series_held: Gauge,
    expired: Counter,
    out_lost: Counter,
    frames: Counter,
    series: Mutex<Series>,
    /// Bumped when jobs expire: a binary connection's cached series handles are stale.
    generation: AtomicU64,
    max_series: usize,
    registry: Registry,
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new(Limits::default().max_series)
    }
}

/// Adds `v` to `c`, stopping at `u64::MAX` (a wrapped counter reads as a reset). Called
/// with the series lock held, so no other add comes between the read and the add.
fn add_saturating(c: &Counter, v: u64) {
    c.inc_by(v.min(u64::MAX - c.get()));
}

/// Why [`Metrics::take`] did not take a line.
#[derive(Debug)]
pub enum Rejected {
    /// Not a message (counted as malformed).
    Malformed(serde_json::Error),
    /// A message of another version than [`VERSION`].
    Version(u32),
    /// A job id, host or operation longer than [`MAX_LABEL`].
    LabelTooLong,
    /// A new label set beyond `--max-series`.
    Cardinality,
    /// From a Unix socket peer whose uid is not the `hello`'s, or not the job's owner.
    Uid,
}

impl Metrics {
    /// Metrics holding at most `max_series` label sets.
    pub fn new(max_series: usize) -> Self {
        let mut m = Metrics {
            ops: Family::default(),
            bytes: Family::default(),
            seconds: Family::default(),
            latency: Family::new_with_constructor(latency_histogram as fn() -> Histogram),
            messages: Family::default(),
            malformed: Counter::default(),
            dropped: Family::default(),
            refused: Family::default(),
            connections: Counter::default(),
            open: Gauge::default(),
            series_held: Gauge::default(),
            expired: Counter::default(),
            out_lost: Counter::default(),
            frames: Counter::default(),
            series: Mutex::default(),
            generation: AtomicU64::new(0),
            max_series,
            registry: Registry::default(),
        };
        let r = &mut m.registry;
        r.register(
            "h5prov_ops",
            "HDF5 operations (VOL callbacks) traced, per job, rank and operation",
            m.ops.clone(),
        );
        r.register(
            "h5prov_bytes",
            "Bytes read or written by the operation (dataset and attribute I/O)",
            m.bytes.clone(),
        );
        r.register(
            "h5prov_op_seconds",
            "Time spent in the operations, seconds",
            m.seconds.clone(),
        );
        r.register(
            "h5prov_op_duration_seconds",
            "Duration of single operations (stream_level=event only)",
            m.latency.clone(),
        );
        r.register(
            "h5prov_stream_messages",
            "Stream messages accepted, by type",
            m.messages.clone(),
        );
        r.register(
            "h5prov_stream_malformed",
            "Stream lines that were not a valid message (skipped)",
            m.malformed.clone(),
        );
        r.register(
            "h5prov_stream_dropped",
            "Stream lines dropped, by reason: too_long (over 1 MiB), version (unknown \"v\"), \
             label_too_long (job id, host or op over 256 bytes), cardinality (--max-series), \
             uid (a Unix socket peer sending for another uid or another uid's job)",
            m.dropped.clone(),
        );
        r.register(
            "h5prov_stream_refused",
            "Stream connections closed by the collector, by reason: connection_limit \
             (--max-connections), idle (--idle-timeout), auth (no token proof); and HTTP clients: http_limit, http_timeout, http_auth",
            m.refused.clone(),
        );
        r.register(
            "h5prov_stream_connections",
            "Stream connections accepted",
            m.connections.clone(),
        );
        r.register(
            "h5prov_stream_connections_open",
            "Stream connections open now",
            m.open.clone(),
        );
        r.register(
            "h5prov_collect_series",
            "Label sets (job, rank, operation) held now",
            m.series_held.clone(),
        );
        r.register(
            "h5prov_collect_jobs_expired",
            "Jobs forgotten after --job-expiry without a message",
            m.expired.clone(),
        );
        r.register(
            "h5prov_collect_out_lost",
            "Accepted messages that could not be written to --out",
            m.out_lost.clone(),
        );
        r.register(
            "h5prov_stream_frames",
            "Binary frames of trace records taken (stream_format=bin)",
            m.frames.clone(),
        );
        m
    }

    fn drop_for(&self, reason: &'static str) {
        self.dropped.get_or_create(&ReasonLabels { reason }).inc();
    }

    fn refuse_for(&self, reason: &'static str) {
        self.refused.get_or_create(&ReasonLabels { reason }).inc();
    }

    /// Takes one line into the metrics and `live` (received at second `now_s`) from a
    /// peer of uid `peer` (a Unix socket's `SO_PEERCRED`; `None` for TCP and for root,
    /// which may send for any job); `Err` (counted as malformed or dropped) when it is not
    /// taken.
    pub fn take(
        &self,
        line: &[u8],
        live: &Live,
        now_s: u64,
        peer: Option<u32>,
    ) -> Result<(), Rejected> {
        let p: Message = match serde_json::from_slice(line) {
            Ok(m) => m,
            Err(e) => {
                self.malformed.inc();
                return Err(Rejected::Malformed(e));
            }
        };
        if p.v != VERSION {
            self.drop_for("version");
            return Err(Rejected::Version(p.v));
        }
        let kind = match p.kind() {
            Ok(k) => k,
            Err(e) => {
                self.malformed.inc();
                return Err(Rejected::Malformed(e));
            }
        };
        let op = match kind {
            Kind::Hello => "",
            Kind::Event { op, .. } | Kind::Interval { op, .. } => op,
        };
        if [p.job_id.as_str(), &p.host, op]
            .iter()
            .any(|s| s.len() > MAX_LABEL)
        {
            self.drop_for("label_too_long");
            return Err(Rejected::LabelTooLong);
        }
        if peer.is_some() && p.uid.is_some_and(|u| Some(u) != peer) {
            self.drop_for("uid");
            return Err(Rejected::Uid);
        }
        let l = p.labels(op);
        let _guard = self.admit(&l, now_s, peer)?;
        let who = who(&l, &p.host);
        let kind = match kind {
            Kind::Hello => {
                live.add(&who, "", 0, 0, 0, None, now_s);
                "hello"
            }
            Kind::Event { dur_ns, bytes, .. } => {
                let call = Call {
                    dur_ns,
                    file: &p.file,
                    path: &p.path,
                    interval: false,
                };
                live.add(&who, &l.op, 1, bytes, dur_ns, Some(call), now_s);
                add_saturating(&self.ops.get_or_create(&l), 1);
                add_saturating(&self.bytes.get_or_create(&l), bytes);
                self.seconds.get_or_create(&l).inc_by(dur_ns as f64 * 1e-9);
                self.latency
                    .get_or_create(&JobOpLabels {
                        job_id: l.job_id.clone(),
                        op: l.op.clone(),
                    })
                    .observe(dur_ns as f64 * 1e-9);
                "event"
            }
            Kind::Interval {
                count,
                bytes,
                dur_ns,
                ..
            } => {
                let call = Call {
                    dur_ns: p.max_ns,
                    file: "",
                    path: "",
                    interval: true,
                };
                live.add(
                    &who,
                    &l.op,
                    count,
                    bytes,
                    dur_ns,
                    (count > 0).then_some(call),
                    now_s,
                );
                add_saturating(&self.ops.get_or_create(&l), count);
                add_saturating(&self.bytes.get_or_create(&l), bytes);
                self.seconds.get_or_create(&l).inc_by(dur_ns as f64 * 1e-9);
                "interval"
            }
        };
        self.messages
            .get_or_create(&TypeLabels {
                r#type: kind.into(),
            })
            .inc();
        Ok(())
    }

    /// Holds label set `l` (its job's owner checked against `peer`, the cap against a new
    /// set), its job seen at `now_s`; the series lock, held, or why not (counted).
    fn admit(
        &self,
        l: &OpLabels,
        now_s: u64,
        peer: Option<u32>,
    ) -> Result<std::sync::MutexGuard<'_, Series>, Rejected> {
        let mut guard = self.series.lock().unwrap_or_else(|e| e.into_inner());
        let series = &mut *guard;
        let owner = series.jobs.get(&l.job_id.0).and_then(|j| j.owner);
        if peer.is_some() && owner.is_some() && owner != peer {
            drop(guard);
            self.drop_for("uid");
            return Err(Rejected::Uid);
        }
        let known = series
            .jobs
            .get(&l.job_id.0)
            .is_some_and(|j| j.sets.contains(l));
        if !known {
            if series.count >= self.max_series {
                drop(guard);
                self.drop_for("cardinality");
                return Err(Rejected::Cardinality);
            }
            series.count += 1;
            self.series_held.set(series.count as i64);
            if !series.jobs.contains_key(&l.job_id.0) {
                series.jobs.insert(l.job_id.0.clone(), JobSeries::default());
            }
        }
        let job = series.jobs.get_mut(&l.job_id.0).expect("inserted above");
        job.last_s = now_s;
        if job.owner.is_none() {
            job.owner = peer;
        }
        if !known {
            job.sets.insert(l.clone());
        }
        Ok(guard)
    }

    /// Takes one binary frame's records (a block of the binary trace encoding, decoded by
    /// `c`'s decoder) from the process `c` said `hello` for: per operation, the counters
    /// are added once a frame and the live view is told once; each record's duration goes
    /// to the histogram. A bad record is counted as malformed and ends the frame (what came
    /// before it is taken). Returns the accepted records as event JSON lines for `--out`
    /// when `out` is given.
    fn take_records(
        &self,
        c: &mut BinConn,
        body: &[u8],
        live: &Live,
        now_s: u64,
        mut out: Option<&mut Vec<u8>>,
    ) -> u64 {
        let gen = self.generation.load(Ordering::Acquire);
        if c.generation != gen {
            c.ops.clear();
            c.generation = gen;
        }
        let (Some(ident), Some(dec)) = (&c.ident, &mut c.decoder) else {
            self.malformed.inc();
            return 0;
        };
        dec.new_block();
        let mut p = 0;
        let mut taken = 0u64;
        let mut last = 0usize;
        while p < body.len() {
            let Some(len) = body.get(p..p + 4) else {
                self.malformed.inc();
                break;
            };
            let len = u32::from_le_bytes(len.try_into().expect("4 bytes")) as usize;
            p += 4;
            if len == 0 {
                dec.new_block();
                continue;
            }
            let Some(rec) = body.get(p..p.saturating_add(len)) else {
                self.malformed.inc();
                break;
            };
            p += len;
            if dec.decode(rec, &mut c.vals).is_err() {
                self.malformed.inc();
                break;
            }
            let r = match TraceRecordRef::from_bin(dec, &c.vals) {
                Ok(r) => r,
                Err(_) => {
                    self.malformed.inc();
                    break;
                }
            };
            if r.op.len() > MAX_LABEL {
                self.drop_for("label_too_long");
                continue;
            }
            let i = if c.ops.get(last).is_some_and(|e| e.op == r.op) {
                last
            } else if let Some(i) = c.ops.iter().position(|e| e.op == r.op) {
                i
            } else {
                let labels = OpLabels {
                    job_id: ident.labels.job_id.clone(),
                    rank: ident.labels.rank.clone(),
                    op: LabelValue(r.op.to_string()),
                };
                let handles = match self.admit(&labels, now_s, c.peer) {
                    Ok(_guard) => Ok(Handles {
                        ops: self.ops.get_or_create(&labels).clone(),
                        bytes: self.bytes.get_or_create(&labels).clone(),
                        seconds: self.seconds.get_or_create(&labels).clone(),
                        latency: self
                            .latency
                            .get_or_create(&JobOpLabels {
                                job_id: labels.job_id.clone(),
                                op: labels.op.clone(),
                            })
                            .clone(),
                    }),
                    Err(e) => Err(match e {
                        Rejected::Uid => "uid",
                        _ => "cardinality",
                    }),
                };
                c.ops.push(OpEntry {
                    op: r.op.to_string(),
                    labels,
                    handles,
                    sums: FrameSums::default(),
                });
                c.ops.len() - 1
            };
            last = i;
            let e = &mut c.ops[i];
            let h = match &e.handles {
                Ok(h) => h,
                Err(reason) => {
                    self.drop_for(reason);
                    continue;
                }
            };
            h.latency.observe(r.total_ns as f64 * 1e-9);
            let s = &mut e.sums;
            s.count += 1;
            s.bytes = s.bytes.saturating_add(r.bytes);
            s.dur_ns = s.dur_ns.saturating_add(r.total_ns);
            if s.count == 1 || r.total_ns > s.slow_ns {
                s.slow_ns = r.total_ns;
                s.slow_file.clear();
                s.slow_file.push_str(r.file);
                s.slow_path.clear();
                s.slow_path.push_str(r.path);
            }
            if let Some(o) = out.as_deref_mut() {
                h5prov_format::stream::write_event_json(o, ident.event_prefix.as_bytes(), &r);
            }
            taken += 1;
        }
        // The frame's sums: the counters under the series lock (saturating adds), the
        // job seen now, the live view once per operation.
        let mut series = self.series.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(j) = series.jobs.get_mut(&ident.labels.job_id.0) {
            j.last_s = now_s;
        }
        for e in &mut c.ops {
            let s = std::mem::take(&mut e.sums);
            let Ok(h) = &e.handles else { continue };
            if s.count == 0 {
                e.sums = s;
                continue;
            }
            add_saturating(&h.ops, s.count);
            add_saturating(&h.bytes, s.bytes);
            h.seconds.inc_by(s.dur_ns as f64 * 1e-9);
            let call = Call {
                dur_ns: s.slow_ns,
                file: &s.slow_file,
                path: &s.slow_path,
                interval: false,
            };
            live.add(
                &who(&e.labels, &ident.host),
                &e.op,
                s.count,
                s.bytes,
                s.dur_ns,
                Some(call),
                now_s,
            );
            // Keep the strings' buffers for the next frame.
            e.sums = FrameSums {
                slow_file: s.slow_file,
                slow_path: s.slow_path,
                ..FrameSums::default()
            };
        }
        drop(series);
        self.messages
            .get_or_create(&TypeLabels {
                r#type: "event".into(),
            })
            .inc_by(taken);
        self.frames.inc();
        taken
    }

    /// Forgets the jobs whose last message is older than `max_idle_s` at second `now_s`:
    /// their series here and in `live`.
    pub fn expire(&self, live: &Live, now_s: u64, max_idle_s: u64) {
        let mut series = self.series.lock().unwrap_or_else(|e| e.into_inner());
        let old: Vec<String> = series
            .jobs
            .iter()
            .filter(|(_, j)| now_s.saturating_sub(j.last_s) >= max_idle_s)
            .map(|(id, _)| id.clone())
            .collect();
        for id in old {
            let job = series.jobs.remove(&id).expect("listed above");
            series.count -= job.sets.len();
            for l in &job.sets {
                self.ops.remove(l);
                self.bytes.remove(l);
                self.seconds.remove(l);
                self.latency.remove(&JobOpLabels {
                    job_id: l.job_id.clone(),
                    op: l.op.clone(),
                });
            }
            live.remove(&id);
            self.expired.inc();
            self.generation.fetch_add(1, Ordering::AcqRel);
        }
        self.series_held.set(series.count as i64);
    }

    /// The OpenMetrics text exposition.
    pub fn encode(&self) -> String {
        let mut out = String::new();
        let _ = prometheus_client::encoding::text::encode(&mut out, &self.registry);
        out
    }
}

/// A stream message (`docs/STREAMING.md`): the fields of every type in one flat struct,
/// checked per type before it is taken; unknown fields are ignored. (serde's internally
/// tagged enums and `flatten` buffer a whole message before reading it, which cost several
/// times the parse of the message itself.)
#[derive(Deserialize, Debug)]
pub struct Message<'a> {
    /// Message version ([`VERSION`]; 0 when absent, which is refused).
    #[serde(default)]
    pub v: u32,
    /// `hello`, `event` or `interval`.
    #[serde(rename = "type", borrow)]
    pub kind: Cow<'a, str>,
    /// Launcher job id.
    pub job_id: String,
    /// MPI rank, -1 when unknown.
    pub rank: i64,
    /// Process id.
    pub pid: u32,
    /// Host name.
    #[serde(borrow)]
    pub host: Cow<'a, str>,
    /// User id (in `hello`).
    #[serde(default)]
    pub uid: Option<u32>,
    /// Operation (`event`, `interval`).
    #[serde(default, borrow)]
    pub op: Option<Cow<'a, str>>,
    /// Duration, ns (`event`); summed duration (`interval`).
    #[serde(default)]
    pub dur_ns: Option<u64>,
    /// Bytes transferred (`event`, `interval`).
    #[serde(default)]
    pub bytes: Option<u64>,
    /// Start, wall-clock ns since the epoch (`event`).
    #[serde(default)]
    pub start_ns: Option<u64>,
    /// Calls in the interval (`interval`).
    #[serde(default)]
    pub count: Option<u64>,
    /// Longest call of the interval, ns.
    #[serde(default)]
    pub max_ns: u64,
    /// The HDF5 file as opened (`event`; borrowed from the line unless it has escapes).
    #[serde(default, borrow)]
    pub file: Cow<'a, str>,
    /// Object path (`event`).
    #[serde(default, borrow)]
    pub path: Cow<'a, str>,
}

/// What a [`Message`] is, with the fields its type requires.
enum Kind<'m> {
    Hello,
    Event {
        op: &'m str,
        dur_ns: u64,
        bytes: u64,
    },
    Interval {
        op: &'m str,
        count: u64,
        bytes: u64,
        dur_ns: u64,
    },
}

impl Message<'_> {
    /// Its type, or why it is not a message (a field its type requires is missing).
    fn kind(&self) -> Result<Kind<'_>, serde_json::Error> {
        use serde::de::Error;
        let need = |f: &'static str| serde_json::Error::missing_field(f);
        let op = || self.op.as_deref().ok_or_else(|| need("op"));
        match &*self.kind {
            "hello" => Ok(Kind::Hello),
            "event" => {
                self.start_ns.ok_or_else(|| need("start_ns"))?;
                Ok(Kind::Event {
                    op: op()?,
                    dur_ns: self.dur_ns.ok_or_else(|| need("dur_ns"))?,
                    bytes: self.bytes.ok_or_else(|| need("bytes"))?,
                })
            }
            "interval" => Ok(Kind::Interval {
                op: op()?,
                count: self.count.ok_or_else(|| need("count"))?,
                bytes: self.bytes.ok_or_else(|| need("bytes"))?,
                dur_ns: self.dur_ns.ok_or_else(|| need("dur_ns"))?,
            }),
            other => Err(serde_json::Error::unknown_variant(
                other,
                &["hello", "event", "interval"],
            )),
        }
    }

    fn labels(&self, op: &str) -> OpLabels {
        OpLabels {
            job_id: LabelValue(self.job_id.clone()),
            rank: LabelValue(if self.rank >= 0 {
                self.rank.to_string()
            } else {
                format!("p{}", self.pid)
            }),
            op: LabelValue(op.to_string()),
        }
    }
}

/// What a binary connection said once: its process, and its labels.
struct Ident {
    /// Job and rank labels (`op` empty).
    labels: OpLabels,
    host: String,
    /// `{"v":1,"type":"event",` and the identity: the start of its events' `--out` lines.
    event_prefix: String,
}

/// The series handles of one operation of a binary connection's process.
struct Handles {
    ops: Counter,
    bytes: Counter,
    seconds: Counter<f64, AtomicU64>,
    latency: Histogram,
}

/// One operation's sums over a frame.
#[derive(Default)]
struct FrameSums {
    count: u64,
    bytes: u64,
    dur_ns: u64,
    slow_ns: u64,
    slow_file: String,
    slow_path: String,
}

/// An operation a binary connection sent: its series, or the reason its records are
/// dropped (`cardinality`, `uid`).
struct OpEntry {
    op: String,
    labels: OpLabels,
    handles: Result<Handles, &'static str>,
    sums: FrameSums,
}

/// The state of one binary connection (`stream_format=bin`).
#[derive(Default)]
struct BinConn {
    peer: Option<u32>,
    ident: Option<Ident>,
    decoder: Option<BinDecoder>,
    vals: Vec<BinValue>,
    /// Per operation, its series handles (cleared when jobs expired: [`Metrics::expire`]).
    ops: Vec<OpEntry>,
    generation: u64,
}

/// The live view's key of the process (borrowed from the labels).
fn who<'a>(l: &'a OpLabels, host: &'a str) -> Sent<'a> {
    Sent {
        job_id: &l.job_id,
        rank: &l.rank,
        host,
    }
}

/// JSONL files of the accepted messages, a new one every `limit` bytes. Lines are
/// buffered and written whole: when a write fails (a full disk, a file size limit), the
/// file is cut back to its last complete line and the buffered lines are counted as lost,
/// so a capture always reads back.
pub struct Rolling {
    dir: PathBuf,
    stem: String,
    limit: u64,
    n: u32,
    /// Bytes in the current file, all complete lines.
    size: u64,
    file: Option<std::fs::File>,
    buf: Vec<u8>,
    /// Lines in `buf`.
    buf_lines: u64,
    /// Lines lost since the collector started.
    lost: u64,
}

/// Bytes buffered before a write.
const OUT_BUF: usize = 64 << 10;

impl Rolling {
    /// Files `DIR/collect-<start>-<pid>-<n>.jsonl`; a restarted collector starts new ones.
    pub fn new(dir: &Path, limit: u64) -> io::Result<Rolling> {
        std::fs::create_dir_all(dir)?;
        let start = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        Ok(Rolling {
            dir: dir.to_path_buf(),
            stem: format!("collect-{start}-{}", std::process::id()),
            limit,
            n: 0,
            size: 0,
            file: None,
            buf: Vec::with_capacity(OUT_BUF),
            buf_lines: 0,
            lost: 0,
        })
    }

    /// Appends one line (with its newline): `Ok(true)` when lines went to the file,
    /// `Ok(false)` when it was only buffered, `Err` when lines were lost.
    pub fn write(&mut self, line: &[u8]) -> io::Result<bool> {
        self.write_lines(line, 1)
    }

    /// Appends `n` whole lines, as [`Rolling::write`].
    pub fn write_lines(&mut self, lines: &[u8], n: u64) -> io::Result<bool> {
        self.buf.extend_from_slice(lines);
        self.buf_lines += n;
        if self.buf.len() >= OUT_BUF {
            return self.flush();
        }
        Ok(false)
    }

    /// Writes what is buffered: `Ok(true)` when lines went to the file, `Ok(false)` when
    /// there were none, `Err` when they were lost.
    pub fn flush(&mut self) -> io::Result<bool> {
        if self.buf.is_empty() {
            return Ok(false);
        }
        let r = self.write_buf();
        if r.is_err() {
            self.lost += self.buf_lines;
        }
        self.buf.clear();
        self.buf_lines = 0;
        r.map(|()| true)
    }

    fn write_buf(&mut self) -> io::Result<()> {
        if self.file.is_none() || self.size >= self.limit {
            let path = self.dir.join(format!("{}-{:04}.jsonl", self.stem, self.n));
            self.n += 1;
            self.size = 0;
            self.file = None;
            self.file = Some(std::fs::File::create(path)?);
        }
        let f = self.file.as_mut().expect("opened above");
        if let Err(e) = f.write_all(&self.buf) {
            // Cut a partly written line off: the file ends with a whole line.
            if f.set_len(self.size).is_err() {
                self.file = None;
            }
            return Err(e);
        }
        self.size += self.buf.len() as u64;
        Ok(())
    }

    /// Lines lost since the collector started.
    pub fn lost(&self) -> u64 {
        self.lost
    }
}

/// `--out` and what its failures were reported as.
pub struct Out {
    rolling: Rolling,
    /// Lost lines already added to the metric.
    counted: u64,
    /// Writing fails now (its one error line is printed).
    failing: bool,
}

impl Out {
    /// `--out` into `rolling`.
    pub fn new(rolling: Rolling) -> Out {
        Out {
            rolling,
            counted: 0,
            failing: false,
        }
    }

    /// Reports what `r` (a write or flush) did: one stderr line when writing starts to
    /// fail, one when it works again (with the messages lost in between); the lost
    /// messages counted in `metrics`.
    fn report(&mut self, r: io::Result<bool>, metrics: &Metrics) {
        let lost = self.rolling.lost();
        metrics.out_lost.inc_by(lost - self.counted);
        self.counted = lost;
        match r {
            Err(e) if !self.failing => {
                self.failing = true;
                eprintln!(
                    "h5prov collect: cannot write --out ({e}); messages are counted as lost \
                     (h5prov_collect_out_lost_total) until it works again"
                );
            }
            Ok(true) if self.failing => {
                self.failing = false;
                eprintln!("h5prov collect: --out writes again; {lost} messages lost so far");
            }
            _ => {}
        }
    }
}

/// What `h5prov collect` runs.
pub struct Collector {
    /// The metrics.
    pub metrics: Metrics,
    /// `--out`.
    pub out: Option<Mutex<Out>>,
    /// What `GET /top.json` serves.
    pub live: Live,
    /// Its limits.
    pub limits: Limits,
    /// The shared-secret token (`--token-file`): stream clients must prove they hold it,
    /// HTTP clients present it as `Authorization: Bearer`.
    pub token: Option<Vec<u8>>,
    /// `--tls-cert`/`--tls-key`: TLS on every TCP connection, stream and HTTP.
    pub tls: Option<Arc<ServerConfig>>,
    /// Stream connections open (the limit's count; the gauge is the metric).
    streams: AtomicUsize,
}

/// Wall clock, ns since the Unix epoch.
fn now_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

/// Reads past the rest of a line without keeping it: `Ok(true)` at its newline,
/// `Ok(false)` at the end of the stream.
async fn skip_line(r: &mut (impl AsyncBufRead + Unpin)) -> io::Result<bool> {
    loop {
        let buf = r.fill_buf().await?;
        if buf.is_empty() {
            return Ok(false);
        }
        if let Some(i) = memchr::memchr(b'\n', buf) {
            r.consume(i + 1);
            return Ok(true);
        }
        let n = buf.len();
        r.consume(n);
    }
}

fn timed_out(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    )
}

/// Worker threads of the collector's runtime at most: the available cores, capped here.
/// The stream connections and the HTTP clients are tasks on them, so the collector's
/// thread count does not grow with its connections.
pub const MAX_WORKERS: usize = 4;

/// A stream connection's socket whose reads fail with `TimedOut` once one has waited
/// `idle` for data: the per-connection idle timeout, as a timer armed only while a read
/// waits (a busy connection pays a clock read per wait, not one per message).
struct Idle<S> {
    s: S,
    idle: Duration,
    timer: Pin<Box<tokio::time::Sleep>>,
    /// The timer runs for the read waiting now.
    armed: bool,
}

impl<S> Idle<S> {
    /// `s` with reads timing out after `idle` (call within the runtime).
    fn new(s: S, idle: Duration) -> Idle<S> {
        Idle {
            s,
            idle,
            timer: Box::pin(tokio::time::sleep(idle)),
            armed: false,
        }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Idle<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        match Pin::new(&mut this.s).poll_read(cx, buf) {
            Poll::Ready(r) => {
                this.armed = false;
                Poll::Ready(r)
            }
            Poll::Pending => {
                if !this.armed {
                    let now = tokio::time::Instant::now();
                    // An idle timeout too long for the clock: about 30 years.
                    let end = now
                        .checked_add(this.idle)
                        .unwrap_or(now + Duration::from_secs(30 * 365 * 86400));
                    this.timer.as_mut().reset(end);
                    this.armed = true;
                }
                match this.timer.as_mut().poll(cx) {
                    Poll::Ready(()) => Poll::Ready(Err(io::ErrorKind::TimedOut.into())),
                    Poll::Pending => Poll::Pending,
                }
            }
        }
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Idle<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        b: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.s).poll_write(cx, b)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.s).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.s).poll_shutdown(cx)
    }
}

/// A stream connection as it is read: TCP, TLS or Unix, under [`Idle`].
trait Io: AsyncRead + AsyncWrite + Unpin + Send {}

impl<T: AsyncRead + AsyncWrite + Unpin + Send> Io for T {}

/// The buffered reader of a stream connection.
type Conn = BufReader<Box<dyn Io>>;

/// An accepted stream connection.
pub enum StreamConn {
    /// TCP (in TLS when the collector has a certificate).
    Tcp(tokio::net::TcpStream),
    /// Unix stream socket.
    Unix(tokio::net::UnixStream),
}

impl StreamConn {
    /// The peer's uid on a Unix socket unless it is root; `None` for TCP (trusted through
    /// the token) and root (may send for any job).
    fn restricted_uid(&self) -> Option<u32> {
        match self {
            StreamConn::Tcp(_) => None,
            StreamConn::Unix(s) => rustix::net::sockopt::get_socket_peercred(s)
                .ok()
                .map(|c| c.uid.as_raw())
                .filter(|u| *u != 0),
        }
    }
}

/// How long a stream client has for the whole handshake (TLS, then the token's).
const AUTH_TIMEOUT: Duration = Duration::from_secs(5);

/// One line of at most [`auth::MAX_AUTH_LINE`] bytes.
async fn auth_line(r: &mut Conn) -> Option<String> {
    let mut line = Vec::new();
    (&mut *r)
        .take(auth::MAX_AUTH_LINE as u64)
        .read_until(b'\n', &mut line)
        .await
        .ok()?;
    if line.last() != Some(&b'\n') {
        return None;
    }
    String::from_utf8(line).ok()
}

/// Decrements a count of open things when dropped (however the task ends).
struct Slot<'a>(&'a AtomicUsize);

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Collector {
    /// A collector with `limits`, writing to `out` and requiring `token` when given.
    pub fn new(
        limits: Limits,
        out: Option<Rolling>,
        token: Option<Vec<u8>>,
        tls: Option<Arc<ServerConfig>>,
    ) -> Collector {
        Collector {
            metrics: Metrics::new(limits.max_series),
            out: out.map(|r| Mutex::new(Out::new(r))),
            live: Live::default(),
            limits,
            token,
            tls,
            streams: AtomicUsize::new(0),
        }
    }

    /// Runs `f` on `--out` (a buffered write, or a flush of at most [`OUT_BUF`] bytes: short
    /// enough to run on the runtime's workers).
    fn out_do(&self, f: impl FnOnce(&mut Rolling) -> io::Result<bool>) {
        if let Some(out) = &self.out {
            let mut o = out.lock().unwrap_or_else(|e| e.into_inner());
            let r = f(&mut o.rolling);
            o.report(r, &self.metrics);
        }
    }

    /// The collector's side of the handshake ([`auth`]): whether the client proved it
    /// holds the token (after the collector proved it does).
    async fn authenticate(&self, r: &mut Conn, token: &[u8]) -> bool {
        async {
            let sn = auth::nonce().ok()?;
            let (answer, cn) = auth::collector_answer(token, &auth_line(r).await?, &sn)?;
            let w = r.get_mut();
            w.write_all(answer.as_bytes()).await.ok()?;
            w.flush().await.ok()?;
            let proof = auth_line(r).await?;
            auth::collector_verify(token, &cn, &sn, &proof).then_some(())
        }
        .await
        .is_some()
    }

    /// `conn` under the idle timeout, in TLS when the collector has a certificate (the
    /// handshake's reads under the same timeout).
    async fn open(&self, conn: StreamConn) -> io::Result<Conn> {
        let idle = self.limits.idle_timeout;
        let io: Box<dyn Io> = match conn {
            StreamConn::Unix(s) => Box::new(Idle::new(s, idle)),
            StreamConn::Tcp(s) => match &self.tls {
                None => Box::new(Idle::new(s, idle)),
                Some(cfg) => Box::new(
                    TlsAcceptor::from(cfg.clone())
                        .accept(Idle::new(s, idle))
                        .await?,
                ),
            },
        };
        Ok(BufReader::with_capacity(64 << 10, io))
    }

    /// Reads one connection's lines or frames until it ends or stays silent past the idle
    /// timeout; with a token, only after the handshake (TLS and the token's, within
    /// `AUTH_TIMEOUT`).
    pub async fn serve(&self, conn: StreamConn) {
        self.metrics.connections.inc();
        self.metrics.open.inc();
        let peer = conn.restricted_uid();
        let opened = async {
            let mut r = self.open(conn).await?;
            if let Some(t) = &self.token {
                if !self.authenticate(&mut r, t).await {
                    return Err(io::ErrorKind::PermissionDenied.into());
                }
            }
            Ok(r)
        };
        let opened = match &self.token {
            Some(_) => tokio::time::timeout(AUTH_TIMEOUT, opened)
                .await
                .unwrap_or_else(|_| Err(io::ErrorKind::PermissionDenied.into())),
            None => opened.await,
        };
        let mut r: Conn = match opened {
            Ok(r) => r,
            Err(e) => {
                if self.token.is_some() {
                    self.metrics.refuse_for("auth");
                } else if timed_out(&e) {
                    self.metrics.refuse_for("idle");
                }
                self.metrics.open.dec();
                return;
            }
        };
        match r.fill_buf().await {
            Ok(b) if b.first() == Some(&STREAM_MAGIC[0]) => self.serve_bin(&mut r, peer).await,
            Ok(_) => self.serve_lines(&mut r, peer).await,
            Err(e) => {
                if timed_out(&e) {
                    self.metrics.refuse_for("idle");
                }
            }
        }
        // The sender is done: what it sent is in the files now, not at the next periodic
        // flush.
        self.out_do(Rolling::flush);
        self.metrics.open.dec();
    }

    /// Reads a JSON-line connection (`stream_format=jsonl`, and `stream_level=interval`).
    async fn serve_lines(&self, r: &mut Conn, peer: Option<u32>) {
        let mut line = Vec::with_capacity(1024);
        loop {
            line.clear();
            if line.capacity() > 64 << 10 {
                line.shrink_to(64 << 10);
            }
            match (&mut *r).take(MAX_LINE).read_until(b'\n', &mut line).await {
                Ok(0) => break,
                Err(e) => {
                    if timed_out(&e) {
                        self.metrics.refuse_for("idle");
                    }
                    break;
                }
                Ok(_) => {}
            }
            if line.last() != Some(&b'\n') {
                if line.len() as u64 >= MAX_LINE {
                    self.metrics.drop_for("too_long");
                    match skip_line(r).await {
                        Ok(true) => continue,
                        Ok(false) => break,
                        Err(e) => {
                            if timed_out(&e) {
                                self.metrics.refuse_for("idle");
                            }
                            break;
                        }
                    }
                }
                // A line cut by the sender's end.
                self.metrics.malformed.inc();
                break;
            }
            if line.trim_ascii().is_empty() {
                continue;
            }
            let now_s = now_ns() / 1_000_000_000;
            if self.metrics.take(&line, &self.live, now_s, peer).is_ok() {
                self.out_do(|o| o.write(&line));
            }
        }
    }

    /// Reads a binary connection (`stream_format=bin`, [`h5prov_format::stream`]): its
    /// preface, then frames of at most [`MAX_LINE`] bytes. A longer frame is read past
    /// without being kept (`too_long`); another framing version ends the connection
    /// (`version`); a frame cut by the end of the connection, of an unknown kind, or
    /// records before the `hello` and the header, are malformed and end it.
    async fn serve_bin(&self, r: &mut Conn, peer: Option<u32>) {
        // How a read that failed ends the connection: silent too long, or cut short.
        let fail = |e: io::Error| {
            if timed_out(&e) {
                self.metrics.refuse_for("idle");
            } else if e.kind() == io::ErrorKind::UnexpectedEof {
                self.metrics.malformed.inc();
            }
        };
        let bad = || {
            self.metrics.malformed.inc();
        };
        let mut pre = [0u8; 8];
        if let Err(e) = r.read_exact(&mut pre).await {
            return fail(e);
        }
        if pre[..7] != STREAM_MAGIC[..] {
            return bad();
        }
        if pre[7] != STREAM_VERSION {
            self.metrics.drop_for("version");
            return;
        }
        let mut c = BinConn {
            peer,
            ..BinConn::default()
        };
        let mut body = Vec::new();
        let mut out = self.out.is_some().then(Vec::new);
        loop {
            let mut head = [0u8; FRAME_HEAD];
            match r.fill_buf().await {
                Ok([]) => return, // ended between frames
                Ok(_) => {}
                Err(e) => return fail(e),
            }
            if let Err(e) = r.read_exact(&mut head).await {
                return fail(e);
            }
            let len = u64::from(u32::from_le_bytes(head[..4].try_into().expect("4 bytes")));
            if len > MAX_LINE {
                self.metrics.drop_for("too_long");
                match tokio::io::copy(&mut (&mut *r).take(len), &mut tokio::io::sink()).await {
                    Ok(n) if n == len => continue,
                    Ok(_) => return bad(),
                    Err(e) => return fail(e),
                }
            }
            body.clear();
            if body.capacity() > 64 << 10 {
                body.shrink_to(64 << 10);
            }
            body.resize(len as usize, 0);
            if let Err(e) = r.read_exact(&mut body).await {
                return fail(e);
            }
            let now_s = now_ns() / 1_000_000_000;
            match head[4] {
                FRAME_HELLO if c.ident.is_none() => {
                    if self.metrics.take(&body, &self.live, now_s, peer).is_err() {
                        return; // counted by `take`
                    }
                    let Ok(m) = serde_json::from_slice::<Message<'_>>(&body) else {
                        return;
                    };
                    if m.kind != "hello" {
                        return bad();
                    }
                    let ident =
                        h5prov_format::stream::ident_json(&m.job_id, m.rank, m.pid, &m.host);
                    c.ident = Some(Ident {
                        labels: m.labels(""),
                        host: m.host.to_string(),
                        event_prefix: format!("{{\"v\":1,\"type\":\"event\",{ident}"),
                    });
                    self.out_do(|o| o.write(&body));
                }
                FRAME_HEADER if c.decoder.is_none() => match TraceRecordRef::bin_decoder(&body) {
                    Ok(d) => c.decoder = Some(d),
                    Err(_) => return bad(),
                },
                FRAME_RECORDS if c.ident.is_some() && c.decoder.is_some() => {
                    if let Some(o) = &mut out {
                        o.clear();
                    }
                    let n =
                        self.metrics
                            .take_records(&mut c, &body, &self.live, now_s, out.as_mut());
                    if let Some(o) = out.as_ref().filter(|_| n > 0) {
                        self.out_do(|f| f.write_lines(o, n));
                    }
                }
                _ => return bad(),
            }
        }
    }

    /// Serves one accepted stream connection as a task of its own on the runtime, or
    /// closes it at once (counted) when [`Limits::max_connections`] are open.
    fn admit(self: &Arc<Self>, s: StreamConn) {
        if self.streams.fetch_add(1, Ordering::AcqRel) >= self.limits.max_connections {
            self.streams.fetch_sub(1, Ordering::AcqRel);
            self.metrics.refuse_for("connection_limit");
            return;
        }
        let c = self.clone();
        tokio::spawn(async move {
            let _slot = Slot(&c.streams);
            c.serve(s).await;
        });
    }

    /// The answer to one HTTP request: `GET /metrics`, `GET /top.json` (both only with the
    /// token as `Authorization: Bearer` when the collector has one), else 404.
    fn answer<B>(&self, req: &hyper::Request<B>) -> hyper::Response<Full<Bytes>> {
        let authorized = self.token.as_ref().is_none_or(|t| {
            req.headers()
                .get_all(hyper::header::AUTHORIZATION)
                .iter()
                .any(|v| {
                    v.as_bytes()
                        .trim_ascii()
                        .strip_prefix(b"Bearer ")
                        .is_some_and(|p| auth::token_matches(t, p.trim_ascii()))
                })
        });
        let get = req.method() == hyper::Method::GET;
        let (status, ctype, body) = match req.uri().path() {
            "/metrics" | "/top.json" if !authorized => {
                self.metrics.refuse_for("http_auth");
                (
                    hyper::StatusCode::UNAUTHORIZED,
                    "text/plain",
                    "an Authorization: Bearer token is required\n".to_string(),
                )
            }
            "/metrics" if get => (
                hyper::StatusCode::OK,
                "application/openmetrics-text; version=1.0.0; charset=utf-8",
                self.metrics.encode(),
            ),
            "/top.json" if get => {
                let mut snap = self.live.snapshot(now_ns());
                snap.connections_open = self.metrics.open.get();
                snap.malformed = self.metrics.malformed.get();
                snap.messages = ["hello", "event", "interval"]
                    .map(|t| {
                        let l = TypeLabels { r#type: t.into() };
                        self.metrics.messages.get_or_create(&l).get()
                    })
                    .iter()
                    .sum();
                (
                    hyper::StatusCode::OK,
                    "application/json",
                    serde_json::to_string(&snap).unwrap_or_default(),
                )
            }
            _ => (
                hyper::StatusCode::NOT_FOUND,
                "text/plain",
                "try /metrics or /top.json\n".to_string(),
            ),
        };
        let mut r = hyper::Response::new(Full::new(Bytes::from(body)));
        *r.status_mut() = status;
        let h = r.headers_mut();
        h.insert(
            hyper::header::CONTENT_TYPE,
            hyper::header::HeaderValue::from_static(ctype),
        );
        if status == hyper::StatusCode::UNAUTHORIZED {
            h.insert(
                hyper::header::WWW_AUTHENTICATE,
                hyper::header::HeaderValue::from_static("Bearer realm=\"h5prov\""),
            );
        }
        r
    }

    /// One HTTP client's connection (in TLS with `tls`), HTTP/1 by hyper: one request, a
    /// header of at most 16 KiB read within [`HTTP_DEADLINE`], then closed.
    async fn http_conn(self: Arc<Self>, s: tokio::net::TcpStream, tls: Option<TlsAcceptor>) {
        use hyper_util::rt::{TokioIo, TokioTimer};
        let c = self.clone();
        let svc = hyper::service::service_fn(move |req| {
            let r = c.answer(&req);
            async move { Ok::<_, std::convert::Infallible>(r) }
        });
        let mut http = hyper::server::conn::http1::Builder::new();
        http.timer(TokioTimer::new())
            .header_read_timeout(HTTP_DEADLINE)
            .keep_alive(false)
            .max_buf_size(16 << 10);
        let _ = match tls {
            None => http.serve_connection(TokioIo::new(s), svc).await,
            Some(a) => match a.accept(s).await {
                Ok(t) => http.serve_connection(TokioIo::new(t), svc).await,
                Err(_) => return,
            },
        };
    }

    /// Serves HTTP clients forever (call within the collector's runtime): hyper's HTTP/1
    /// server, each client a task, at most [`MAX_HTTP`] at once (more are closed at once,
    /// counted `http_limit`), each whole exchange (TLS handshake, request, answer) within
    /// [`HTTP_DEADLINE`] (else closed, counted `http_timeout`): a client that sends slowly,
    /// idles, or never reads its answer delays nobody else.
    pub async fn serve_http(self: Arc<Self>, l: TcpListener) -> io::Result<()> {
        l.set_nonblocking(true)?;
        let l = tokio::net::TcpListener::from_std(l)?;
        let tls = self.tls.clone().map(TlsAcceptor::from);
        let slots = Arc::new(tokio::sync::Semaphore::new(MAX_HTTP));
        loop {
            let s = match l.accept().await {
                Ok((s, _)) => s,
                Err(_) => {
                    // Out of descriptors, most likely: let some close.
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                }
            };
            let Ok(slot) = slots.clone().try_acquire_owned() else {
                self.metrics.refuse_for("http_limit");
                continue;
            };
            let (c, tls) = (self.clone(), tls.clone());
            tokio::spawn(async move {
                let _slot = slot;
                let served = c.clone().http_conn(s, tls);
                if tokio::time::timeout(HTTP_DEADLINE, served).await.is_err() {
                    c.metrics.refuse_for("http_timeout");
                }
            });
        }
    }
}

/// A `--listen` address: `HOST:PORT` or `unix:PATH`.
pub enum Listener {
    /// TCP.
    Tcp(TcpListener),
    /// Unix stream socket.
    Unix(UnixListener, PathBuf),
}

impl Listener {
    /// Binds `addr`. A Unix socket path where a collector answers is refused (one owner
    /// per path); a stale socket file (nobody answers) is replaced. The socket is made
    /// `mode` (0600: only its owner's processes may stream to it).
    pub fn bind(addr: &str, mode: u32) -> io::Result<Listener> {
        if let Some(p) = addr.strip_prefix("unix:") {
            let path = PathBuf::from(p);
            use std::os::unix::fs::{FileTypeExt, PermissionsExt};
            if std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_socket()) {
                if UnixStream::connect(&path).is_ok() {
                    return Err(io::Error::new(
                        io::ErrorKind::AddrInUse,
                        format!(
                            "{}: another process listens on this socket (a collector \
                             already running?); stop it or choose another path",
                            path.display()
                        ),
                    ));
                }
                std::fs::remove_file(&path)?;
            }
            let l = UnixListener::bind(&path)?;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode))?;
            return Ok(Listener::Unix(l, path));
        }
        Ok(Listener::Tcp(TcpListener::bind(addr)?))
    }

    /// The bound address as `--listen` takes it (the real port for port 0).
    pub fn describe(&self) -> String {
        match self {
            Listener::Tcp(l) => l.local_addr().map(|a| a.to_string()).unwrap_or_default(),
            Listener::Unix(_, p) => format!("unix:{}", p.display()),
        }
    }

    /// Accepts connections forever, as a task on the collector's runtime (call within it),
    /// each served as a task of its own within the limits.
    pub fn spawn(self, c: Arc<Collector>) -> io::Result<()> {
        enum Accepting {
            Tcp(tokio::net::TcpListener),
            Unix(tokio::net::UnixListener),
        }
        let l = match self {
            Listener::Tcp(l) => {
                l.set_nonblocking(true)?;
                Accepting::Tcp(tokio::net::TcpListener::from_std(l)?)
            }
            Listener::Unix(l, _) => {
                l.set_nonblocking(true)?;
                Accepting::Unix(tokio::net::UnixListener::from_std(l)?)
            }
        };
        tokio::spawn(async move {
            loop {
                let s = match &l {
                    Accepting::Tcp(l) => l.accept().await.map(|(s, _)| StreamConn::Tcp(s)),
                    Accepting::Unix(l) => l.accept().await.map(|(s, _)| StreamConn::Unix(s)),
                };
                match s {
                    Ok(s) => c.admit(s),
                    // Out of descriptors, most likely: let some close.
                    Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
                }
            }
        });
        Ok(())
    }
}

/// How `h5prov collect` was asked to run.
pub struct Config<'a> {
    /// `--listen` addresses.
    pub listen: &'a [String],
    /// `--metrics` address.
    pub metrics: &'a str,
    /// `--out` directory.
    pub out: Option<&'a Path>,
    /// Bytes per `--out` file.
    pub roll: u64,
    /// Mode of the Unix sockets (`--unix-mode`).
    pub unix_mode: u32,
    /// The limits.
    pub limits: Limits,
    /// `--token-file`.
    pub token_file: Option<&'a Path>,
    /// `--tls-cert` and `--tls-key`.
    pub tls: Option<(&'a Path, &'a Path)>,
}

/// Runs the collector: never returns unless binding fails. Prints `listen ADDR` and
/// `metrics ADDR` lines (the real ports when given port 0) on stdout.
pub fn run(cfg: Config<'_>) -> io::Result<()> {
    let token = cfg
        .token_file
        .map(auth::read_token_file)
        .transpose()
        .map_err(io::Error::other)?;
    let out = cfg.out.map(|d| Rolling::new(d, cfg.roll)).transpose()?;
    let tls = cfg
        .tls
        .map(|(cert, key)| tls::server_config(cert, key))
        .transpose()
        .map_err(io::Error::other)?;
    let c = Arc::new(Collector::new(cfg.limits, out, token, tls));
    // A fixed number of workers for every stream connection and HTTP client.
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(MAX_WORKERS);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .thread_name("h5prov-collect")
        .enable_io()
        .enable_time()
        .build()?;
    let _in_rt = rt.enter();
    let http = TcpListener::bind(cfg.metrics)?;
    let mut stdout = io::stdout().lock();
    for a in cfg.listen {
        let l = Listener::bind(a, cfg.unix_mode)
            .map_err(|e| io::Error::new(e.kind(), format!("{a}: {e}")))?;
        writeln!(stdout, "listen {}", l.describe())?;
        l.spawn(c.clone())?;
    }
    writeln!(stdout, "metrics {}", http.local_addr()?)?;
    stdout.flush()?;
    drop(stdout);
    // Once a second: flush --out; expire idle jobs. A thread of its own: a slow disk
    // stalls no connection.
    let bg = c.clone();
    std::thread::spawn(move || {
        let expiry = bg.limits.job_expiry.as_secs().max(1);
        loop {
            std::thread::sleep(Duration::from_secs(1));
            bg.out_do(Rolling::flush);
            bg.metrics
                .expire(&bg.live, now_ns() / 1_000_000_000, expiry);
        }
    });
    rt.block_on(c.serve_http(http))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_and_intervals_become_metrics_and_junk_is_counted() {
        let m = Metrics::default();
        let live = Live::default();
        let ev = br#"{"v":1,"type":"event","job_id":"7","rank":1,"pid":9,"host":"h","seq":0,"tid":1,"start_ns":5,"dur_ns":2000,"op":"dataset.write","kind":"dataset","file":"f","path":"/x","bytes":800,"xfer":"","status":0}"#;
        m.take(ev, &live, 1, None).unwrap();
        m.take(ev, &live, 1, None).unwrap();
        let iv = br#"{"v":1,"type":"interval","job_id":"7","rank":-1,"pid":9,"host":"h","seq":0,"start_ns":1,"end_ns":2,"op":"file.open","count":3,"bytes":0,"dur_ns":30,"max_ns":10}"#;
        m.take(iv, &live, 1, None).unwrap();
        assert!(m.take(b"{not json", &live, 1, None).is_err());
        assert!(m.take(br#"{"type":"event"}"#, &live, 1, None).is_err());
        let t = m.encode();
        assert!(
            t.contains(r#"h5prov_ops_total{job_id="7",rank="1",op="dataset.write"} 2"#),
            "{t}"
        );
        assert!(t.contains(r#"h5prov_bytes_total{job_id="7",rank="1",op="dataset.write"} 1600"#));
        assert!(t.contains(r#"h5prov_ops_total{job_id="7",rank="p9",op="file.open"} 3"#));
        assert!(t.contains("h5prov_stream_malformed_total 2"), "{t}");
        assert!(t.contains(r#"h5prov_op_duration_seconds_count{job_id="7",op="dataset.write"} 2"#));
        // The live view: both processes, the event's object, the interval's longest call.
        let s = live.snapshot(1_500_000_000);
        let j = &s.jobs[0];
        let ranks: Vec<&str> = j.ranks.iter().map(|r| r.rank.as_str()).collect();
        assert_eq!(ranks, ["1", "p9"]);
        assert_eq!(j.ops[0].totals.bytes, 1600);
        assert_eq!(j.bytes_per_s.last(), Some(&1600));
        let slow: Vec<(&str, &str, u64)> = j
            .slowest
            .iter()
            .map(|c| (c.op.as_str(), c.path.as_str(), c.dur_ns))
            .collect();
        assert_eq!(
            slow,
            [
                ("dataset.write", "/x", 2000),
                ("dataset.write", "/x", 2000),
                ("file.open", "", 10)
            ]
        );
    }

    fn ev(job: &str, op: &str, bytes: u64) -> String {
        format!(
            r#"{{"v":1,"type":"event","job_id":{},"rank":0,"pid":9,"host":"h","start_ns":5,"dur_ns":2,"op":{},"bytes":{bytes}}}"#,
            serde_json::to_string(job).unwrap(),
            serde_json::to_string(op).unwrap()
        )
    }

    #[test]
    fn label_values_are_escaped() {
        let m = Metrics::default();
        let live = Live::default();
        m.take(ev("1\"2\\\n", "o", 1).as_bytes(), &live, 1, None)
            .unwrap();
        let t = m.encode();
        assert!(
            t.contains(r#"h5prov_ops_total{job_id="1\"2\\\n",rank="0",op="o"} 1"#),
            "{t}"
        );
    }

    #[test]
    fn unknown_versions_and_long_labels_are_dropped_and_counted() {
        let m = Metrics::default();
        let live = Live::default();
        let v99 = ev("7", "o", 1).replace(r#""v":1"#, r#""v":99"#);
        assert!(matches!(
            m.take(v99.as_bytes(), &live, 1, None),
            Err(Rejected::Version(99))
        ));
        let long = ev(&"j".repeat(MAX_LABEL + 1), "o", 1);
        assert!(matches!(
            m.take(long.as_bytes(), &live, 1, None),
            Err(Rejected::LabelTooLong)
        ));
        let t = m.encode();
        assert!(
            t.contains(r#"h5prov_stream_dropped_total{reason="version"} 1"#),
            "{t}"
        );
        assert!(t.contains(r#"h5prov_stream_dropped_total{reason="label_too_long"} 1"#));
        assert!(!t.contains("h5prov_ops_total{"), "{t}");
    }

    #[test]
    fn counters_saturate() {
        let m = Metrics::default();
        let live = Live::default();
        for _ in 0..3 {
            m.take(ev("7", "o", u64::MAX).as_bytes(), &live, 1, None)
                .unwrap();
        }
        let t = m.encode();
        assert!(
            t.contains(&format!(
                r#"h5prov_bytes_total{{job_id="7",rank="0",op="o"}} {}"#,
                u64::MAX
            )),
            "{t}"
        );
        assert_eq!(live.snapshot(1 << 31).jobs[0].ops[0].totals.bytes, u64::MAX);
    }

    #[test]
    fn series_are_capped_and_idle_jobs_expire() {
        let m = Metrics::new(3);
        let live = Live::default();
        for op in ["a", "b", "c"] {
            m.take(ev("7", op, 1).as_bytes(), &live, 10, None).unwrap();
        }
        // A known set still counts; a fourth one is dropped.
        m.take(ev("7", "a", 1).as_bytes(), &live, 10, None).unwrap();
        assert!(matches!(
            m.take(ev("8", "a", 1).as_bytes(), &live, 10, None),
            Err(Rejected::Cardinality)
        ));
        let t = m.encode();
        assert!(
            t.contains(r#"h5prov_stream_dropped_total{reason="cardinality"} 1"#),
            "{t}"
        );
        assert!(t.contains("h5prov_collect_series 3"), "{t}");
        m.expire(&live, 14, 5);
        assert!(m.encode().contains("h5prov_collect_series 3"));
        m.expire(&live, 15, 5);
        let t = m.encode();
        assert!(t.contains("h5prov_collect_series 0"), "{t}");
        assert!(t.contains("h5prov_collect_jobs_expired_total 1"), "{t}");
        assert!(!t.contains("job_id=\"7\""), "{t}");
        assert!(live.snapshot(15 << 30).jobs.is_empty());
        m.take(ev("8", "a", 1).as_bytes(), &live, 15, None).unwrap();
    }

    #[test]
    fn a_failed_out_write_leaves_whole_lines_and_counts_the_loss() {
        let dir = std::env::temp_dir().join(format!("h5prov-rolling-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let mut r = Rolling::new(&dir, 1 << 30).unwrap();
        r.write(b"{\"a\":1}\n").unwrap();
        assert!(r.flush().unwrap());
        // The file turns read-only under it: the next flush fails, its lines are lost.
        let f = std::fs::read_dir(&dir)
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        r.file = Some(std::fs::File::open(&f).unwrap()); // read-only: writes fail
        r.write(b"{\"a\":2}\n").unwrap();
        r.write(b"{\"a\":3}\n").unwrap();
        assert!(r.flush().is_err());
        assert_eq!(r.lost(), 2);
        assert_eq!(std::fs::read_to_string(&f).unwrap(), "{\"a\":1}\n");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn unix_peers_send_only_as_themselves_and_for_their_own_jobs() {
        let m = Metrics::default();
        let live = Live::default();
        let hello = |uid: u32| {
            format!(
                r#"{{"v":1,"type":"hello","job_id":"9","rank":0,"pid":1,"host":"h","uid":{uid}}}"#
            )
        };
        // uid 1000 claims to be root: refused; as itself it owns job 9.
        assert!(matches!(
            m.take(hello(0).as_bytes(), &live, 1, Some(1000)),
            Err(Rejected::Uid)
        ));
        m.take(hello(1000).as_bytes(), &live, 1, Some(1000))
            .unwrap();
        m.take(ev("9", "o", 1).as_bytes(), &live, 1, Some(1000))
            .unwrap();
        // Another user may not add to job 9; root and TCP (None) may.
        assert!(matches!(
            m.take(ev("9", "o", 1).as_bytes(), &live, 1, Some(1001)),
            Err(Rejected::Uid)
        ));
        m.take(ev("9", "o", 1).as_bytes(), &live, 1, None).unwrap();
        let t = m.encode();
        assert!(
            t.contains(r#"h5prov_ops_total{job_id="9",rank="0",op="o"} 2"#),
            "{t}"
        );
        assert!(
            t.contains(r#"h5prov_stream_dropped_total{reason="uid"} 2"#),
            "{t}"
        );
    }
}
