//! `h5prov collect`: receives the JSON-line streams of processes traced with `stream=`
//! (`docs/STREAMING.md`), over TCP and Unix sockets, aggregates them live, serves them as
//! Prometheus metrics at `/metrics` and to `h5prov top` at `/top.json` ([`crate::live`]),
//! and optionally writes every message it accepted to rolling JSONL files.
//!
//! One thread per connection. A line that is not a message is counted
//! (`h5prov_stream_malformed_total`) and skipped; a connection that ends or breaks ends its
//! thread only. Counters start at zero when the collector restarts (Prometheus handles the
//! reset) and the connectors reconnect within a second.

use crate::live::{Call, Live, Sent};
use prometheus_client::encoding::{EncodeLabelSet, EncodeLabelValue, LabelValueEncoder};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;
use serde::Deserialize;
use std::borrow::Cow;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Longest accepted message line; longer lines are malformed.
const MAX_LINE: u64 = 1 << 20;

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

fn latency_histogram() -> Histogram {
    // 1 µs to ~16 s, ×4 per bucket.
    Histogram::new(exponential_buckets(1e-6, 4.0, 13))
}

/// The collector's metrics.
pub struct Metrics {
    ops: Family<OpLabels, Counter>,
    bytes: Family<OpLabels, Counter>,
    seconds: Family<OpLabels, Counter<f64, AtomicU64>>,
    latency: Family<JobOpLabels, Histogram, fn() -> Histogram>,
    messages: Family<TypeLabels, Counter>,
    malformed: Counter,
    connections: Counter,
    open: Gauge,
    registry: Registry,
}

impl Default for Metrics {
    fn default() -> Self {
        let mut m = Metrics {
            ops: Family::default(),
            bytes: Family::default(),
            seconds: Family::default(),
            latency: Family::new_with_constructor(latency_histogram as fn() -> Histogram),
            messages: Family::default(),
            malformed: Counter::default(),
            connections: Counter::default(),
            open: Gauge::default(),
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
            "h5prov_stream_connections",
            "Stream connections accepted",
            m.connections.clone(),
        );
        r.register(
            "h5prov_stream_connections_open",
            "Stream connections open now",
            m.open.clone(),
        );
        m
    }
}

/// A stream message (`docs/STREAMING.md`); unknown fields are ignored.
#[derive(Deserialize, Debug)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum Message<'a> {
    /// Sent once per connection.
    Hello(Process),
    /// One trace record.
    #[serde(borrow)]
    Event(EventMsg<'a>),
    /// One operation's sums over an interval.
    Interval(IntervalMsg),
}

/// The process fields every message carries.
#[derive(Deserialize, Debug)]
pub struct Process {
    /// Launcher job id.
    pub job_id: String,
    /// MPI rank, -1 when unknown.
    pub rank: i64,
    /// Process id.
    pub pid: u32,
    /// Host name.
    pub host: String,
}

/// An `event` message.
#[derive(Deserialize, Debug)]
pub struct EventMsg<'a> {
    /// The process.
    #[serde(flatten)]
    pub process: Process,
    /// Operation.
    pub op: String,
    /// Duration, ns.
    pub dur_ns: u64,
    /// Bytes transferred.
    pub bytes: u64,
    /// Start, wall-clock ns since the epoch.
    pub start_ns: u64,
    /// The HDF5 file as opened (borrowed from the line unless it has escapes).
    #[serde(borrow, default)]
    pub file: Cow<'a, str>,
    /// Object path.
    #[serde(borrow, default)]
    pub path: Cow<'a, str>,
}

/// An `interval` message.
#[derive(Deserialize, Debug)]
pub struct IntervalMsg {
    /// The process.
    #[serde(flatten)]
    pub process: Process,
    /// Operation.
    pub op: String,
    /// Calls in the interval.
    pub count: u64,
    /// Bytes in the interval.
    pub bytes: u64,
    /// Summed duration, ns.
    pub dur_ns: u64,
    /// Longest call, ns.
    #[serde(default)]
    pub max_ns: u64,
}

impl Process {
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

/// The live view's key of the process (borrowed from the labels).
fn who<'a>(l: &'a OpLabels, host: &'a str) -> Sent<'a> {
    Sent {
        job_id: &l.job_id,
        rank: &l.rank,
        host,
    }
}

impl Metrics {
    /// Takes one line into the metrics and `live` (received at second `now_s`); `Err`
    /// when it is not a message (counted as malformed).
    pub fn take(&self, line: &[u8], live: &Live, now_s: u64) -> Result<(), serde_json::Error> {
        let msg: Message = match serde_json::from_slice(line) {
            Ok(m) => m,
            Err(e) => {
                self.malformed.inc();
                return Err(e);
            }
        };
        let kind = match msg {
            Message::Hello(p) => {
                let l = p.labels("");
                live.add(&who(&l, &p.host), "", 0, 0, 0, None, now_s);
                "hello"
            }
            Message::Event(e) => {
                let l = e.process.labels(&e.op);
                let call = Call {
                    dur_ns: e.dur_ns,
                    file: &e.file,
                    path: &e.path,
                    interval: false,
                };
                live.add(
                    &who(&l, &e.process.host),
                    &l.op,
                    1,
                    e.bytes,
                    e.dur_ns,
                    Some(call),
                    now_s,
                );
                self.ops.get_or_create(&l).inc();
                self.bytes.get_or_create(&l).inc_by(e.bytes);
                self.seconds
                    .get_or_create(&l)
                    .inc_by(e.dur_ns as f64 * 1e-9);
                self.latency
                    .get_or_create(&JobOpLabels {
                        job_id: l.job_id,
                        op: l.op,
                    })
                    .observe(e.dur_ns as f64 * 1e-9);
                "event"
            }
            Message::Interval(i) => {
                let l = i.process.labels(&i.op);
                let call = Call {
                    dur_ns: i.max_ns,
                    file: "",
                    path: "",
                    interval: true,
                };
                live.add(
                    &who(&l, &i.process.host),
                    &l.op,
                    i.count,
                    i.bytes,
                    i.dur_ns,
                    (i.count > 0).then_some(call),
                    now_s,
                );
                self.ops.get_or_create(&l).inc_by(i.count);
                self.bytes.get_or_create(&l).inc_by(i.bytes);
                self.seconds
                    .get_or_create(&l)
                    .inc_by(i.dur_ns as f64 * 1e-9);
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

    /// The OpenMetrics text exposition.
    pub fn encode(&self) -> String {
        let mut out = String::new();
        let _ = prometheus_client::encoding::text::encode(&mut out, &self.registry);
        out
    }
}

/// JSONL files of the accepted messages, a new one every `limit` bytes.
pub struct Rolling {
    dir: PathBuf,
    stem: String,
    limit: u64,
    n: u32,
    size: u64,
    file: Option<io::BufWriter<std::fs::File>>,
}

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
        })
    }

    /// Appends one line (with its newline).
    pub fn write(&mut self, line: &[u8]) -> io::Result<()> {
        if self.file.is_none() || self.size >= self.limit {
            if let Some(mut f) = self.file.take() {
                f.flush()?;
            }
            let path = self.dir.join(format!("{}-{:04}.jsonl", self.stem, self.n));
            self.n += 1;
            self.size = 0;
            self.file = Some(io::BufWriter::new(std::fs::File::create(path)?));
        }
        let f = self.file.as_mut().expect("opened above");
        f.write_all(line)?;
        self.size += line.len() as u64;
        Ok(())
    }

    /// Writes what is buffered.
    pub fn flush(&mut self) -> io::Result<()> {
        self.file.as_mut().map_or(Ok(()), |f| f.flush())
    }
}

/// What `h5prov collect` runs.
pub struct Collector {
    /// The metrics.
    pub metrics: Metrics,
    /// `--out`.
    pub out: Option<Mutex<Rolling>>,
    /// What `GET /top.json` serves.
    pub live: Live,
}

/// Wall clock, ns since the Unix epoch.
fn now_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

impl Collector {
    /// Reads one connection's lines until it ends.
    pub fn serve(&self, conn: impl Read) {
        self.metrics.connections.inc();
        self.metrics.open.inc();
        let mut r = BufReader::with_capacity(64 << 10, conn);
        let mut line = Vec::with_capacity(1024);
        loop {
            line.clear();
            match r.by_ref().take(MAX_LINE).read_until(b'\n', &mut line) {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            if line.last() != Some(&b'\n') {
                // A line cut by the sender's end or longer than MAX_LINE.
                self.metrics.malformed.inc();
                if line.len() as u64 >= MAX_LINE {
                    let mut rest = Vec::new();
                    if r.read_until(b'\n', &mut rest).is_ok() {
                        continue;
                    }
                }
                break;
            }
            if line.trim_ascii().is_empty() {
                continue;
            }
            let now_s = now_ns() / 1_000_000_000;
            if self.metrics.take(&line, &self.live, now_s).is_ok() {
                if let Some(out) = &self.out {
                    let mut o = out.lock().unwrap_or_else(|e| e.into_inner());
                    if let Err(e) = o.write(&line) {
                        eprintln!("h5prov collect: cannot write --out: {e}");
                    }
                }
            }
        }
        // The sender is done: what it sent is in the files now, not at the next periodic
        // flush.
        if let Some(out) = &self.out {
            let _ = out.lock().unwrap_or_else(|e| e.into_inner()).flush();
        }
        self.metrics.open.dec();
    }

    /// Answers one HTTP request: `GET /metrics`, `GET /top.json`, else 404.
    pub fn http(&self, mut s: TcpStream) {
        let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
        let mut head = Vec::new();
        let mut buf = [0u8; 1024];
        while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 16 << 10 {
            match s.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => head.extend_from_slice(&buf[..n]),
            }
        }
        let first = head.split(|&b| b == b'\n').next().unwrap_or(&[]);
        let path = first.split(|&b| b == b' ').nth(1).unwrap_or(b"");
        let path = path.split(|&b| b == b'?').next().unwrap_or(b"");
        let get = first.starts_with(b"GET ");
        let (status, ctype, body) = match path {
            b"/metrics" if get => (
                "200 OK",
                "application/openmetrics-text; version=1.0.0; charset=utf-8",
                self.metrics.encode(),
            ),
            b"/top.json" if get => {
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
                    "200 OK",
                    "application/json",
                    serde_json::to_string(&snap).unwrap_or_default(),
                )
            }
            _ => (
                "404 Not Found",
                "text/plain",
                "try /metrics or /top.json\n".to_string(),
            ),
        };
        let _ = write!(
            s,
            "HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
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
    /// Binds `addr`; a stale Unix socket file is replaced.
    pub fn bind(addr: &str) -> io::Result<Listener> {
        if let Some(p) = addr.strip_prefix("unix:") {
            let path = PathBuf::from(p);
            use std::os::unix::fs::FileTypeExt;
            if std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_socket()) {
                std::fs::remove_file(&path)?;
            }
            return Ok(Listener::Unix(UnixListener::bind(&path)?, path));
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

    /// Accepts connections forever, one thread each.
    pub fn run(self, c: Arc<Collector>) {
        match self {
            Listener::Tcp(l) => {
                for s in l.incoming().flatten() {
                    let c = c.clone();
                    std::thread::spawn(move || c.serve(s));
                }
            }
            Listener::Unix(l, _) => {
                for s in l.incoming().flatten() {
                    let c = c.clone();
                    std::thread::spawn(move || c.serve(s));
                }
            }
        }
    }
}

/// Runs the collector: never returns unless binding fails. Prints `listen ADDR` and
/// `metrics ADDR` lines (the real ports when given port 0) on stdout.
pub fn run(listen: &[String], metrics: &str, out: Option<&Path>, roll: u64) -> io::Result<()> {
    let c = Arc::new(Collector {
        metrics: Metrics::default(),
        out: out
            .map(|d| Rolling::new(d, roll).map(Mutex::new))
            .transpose()?,
        live: Live::default(),
    });
    let http = TcpListener::bind(metrics)?;
    let mut stdout = io::stdout().lock();
    for a in listen {
        let l = Listener::bind(a).map_err(|e| io::Error::new(e.kind(), format!("{a}: {e}")))?;
        writeln!(stdout, "listen {}", l.describe())?;
        let c = c.clone();
        std::thread::spawn(move || l.run(c));
    }
    writeln!(stdout, "metrics {}", http.local_addr()?)?;
    stdout.flush()?;
    drop(stdout);
    if c.out.is_some() {
        let c = c.clone();
        std::thread::spawn(move || loop {
            std::thread::sleep(Duration::from_secs(1));
            if let Some(o) = &c.out {
                let _ = o.lock().unwrap_or_else(|e| e.into_inner()).flush();
            }
        });
    }
    for s in http.incoming().flatten() {
        c.http(s);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_and_intervals_become_metrics_and_junk_is_counted() {
        let m = Metrics::default();
        let live = Live::default();
        let ev = br#"{"v":1,"type":"event","job_id":"7","rank":1,"pid":9,"host":"h","seq":0,"tid":1,"start_ns":5,"dur_ns":2000,"op":"dataset.write","kind":"dataset","file":"f","path":"/x","bytes":800,"xfer":"","status":0}"#;
        m.take(ev, &live, 1).unwrap();
        m.take(ev, &live, 1).unwrap();
        let iv = br#"{"v":1,"type":"interval","job_id":"7","rank":-1,"pid":9,"host":"h","seq":0,"start_ns":1,"end_ns":2,"op":"file.open","count":3,"bytes":0,"dur_ns":30,"max_ns":10}"#;
        m.take(iv, &live, 1).unwrap();
        assert!(m.take(b"{not json", &live, 1).is_err());
        assert!(m.take(br#"{"type":"event"}"#, &live, 1).is_err());
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
}
