//! `h5prov-bench collector`: the ingest rate of `h5prov collect` pinned to one core, and
//! its memory with many label sets (issue 35).
//!
//! 1. Ingest: `--events` event messages (as the connector writes them, one job of
//!    `--senders` ranks: JSON lines, or with `binary` the binary frames of
//!    `stream_format=bin`, 16 KiB each as the connector hands them off) sent over
//!    `--senders` loopback connections to a collector started
//!    under `taskset -c CPU`; the rate is the events over the time from the first byte sent
//!    to the collector's `h5prov_stream_messages_total{type="event"}` reaching them all.
//! 2. Cardinality: `--series` distinct (job, rank, operation) label sets, one message
//!    each, then the collector's resident memory (`VmRSS`, `VmHWM`) and the size and time
//!    of one `GET /metrics`.
//!
//! The senders run in this process: run it as `taskset -c 1 h5prov-bench collector` so
//! they do not share the collector's core.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// What one run measured.
#[derive(Debug, serde::Serialize)]
pub struct CollectorResult {
    /// Event messages sent.
    pub events: u64,
    /// Events per second ingested on one core.
    pub events_per_s: f64,
    /// Label sets of the cardinality phase.
    pub series: u64,
    /// Resident memory after it, KiB.
    pub rss_kib: u64,
    /// Peak resident memory of the whole run, KiB.
    pub hwm_kib: u64,
    /// Bytes of one `/metrics`.
    pub metrics_bytes: usize,
    /// Seconds of one `/metrics`.
    pub metrics_s: f64,
}

struct Collector {
    child: Child,
    listen: String,
    metrics: String,
}

impl Drop for Collector {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start(h5prov: &Path, cpu: usize) -> Result<Collector, String> {
    let mut child = Command::new("taskset")
        .args(["-c", &cpu.to_string()])
        .arg(h5prov)
        .args([
            "collect",
            "--listen",
            "127.0.0.1:0",
            "--metrics",
            "127.0.0.1:0",
        ])
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("taskset -c {cpu} {}: {e}", h5prov.display()))?;
    let mut lines = BufReader::new(child.stdout.take().expect("piped")).lines();
    let mut next = |p: &str| -> Result<String, String> {
        let l = lines
            .next()
            .ok_or("h5prov collect ended")?
            .map_err(|e| e.to_string())?;
        l.strip_prefix(p)
            .map(str::to_string)
            .ok_or_else(|| format!("h5prov collect printed {l:?}, not {p}ADDR"))
    };
    let (listen, metrics) = (next("listen ")?, next("metrics ")?);
    std::thread::spawn(move || for _ in lines {});
    Ok(Collector {
        child,
        listen,
        metrics,
    })
}

fn get_metrics(addr: &str) -> Result<String, String> {
    let mut s = TcpStream::connect(addr).map_err(|e| format!("{addr}: {e}"))?;
    write!(
        s,
        "GET /metrics HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .map_err(|e| e.to_string())?;
    let mut r = String::new();
    s.read_to_string(&mut r).map_err(|e| e.to_string())?;
    Ok(r.split_once("\r\n\r\n")
        .map_or(r.clone(), |x| x.1.to_string()))
}

fn events_taken(text: &str) -> u64 {
    text.lines()
        .find_map(|l| l.strip_prefix(r#"h5prov_stream_messages_total{type="event"} "#))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0)
}

fn wait_events(addr: &str, n: u64, secs: u64) -> Result<(), String> {
    let t0 = Instant::now();
    loop {
        let got = events_taken(&get_metrics(addr)?);
        if got >= n {
            return Ok(());
        }
        if t0.elapsed() > Duration::from_secs(secs) {
            return Err(format!(
                "the collector took {got} of {n} events in {secs} s"
            ));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// One event message as the connector writes it.
fn event(job: &str, rank: u64, seq: u64, op: &str) -> String {
    format!(
        "{{\"v\":1,\"type\":\"event\",\"job_id\":\"{job}\",\"rank\":{rank},\"pid\":{},\"host\":\"node{:04}\",\
         \"seq\":{seq},\"tid\":{},\"start_ns\":{},\"dur_ns\":{},\"op\":\"{op}\",\"kind\":\"dataset\",\
         \"file\":\"/scratch/run/out.h5\",\"path\":\"/Timestep_{}/x\",\"bytes\":{},\"xfer\":\"independent\",\"status\":0}}\n",
        10_000 + rank,
        rank / 32,
        10_000 + rank,
        1_764_000_000_000_000_000u64 + seq * 1000,
        1500 + seq % 977,
        seq % 50,
        4096 * (seq % 7 + 1)
    )
}

fn rss(pid: u32) -> Result<(u64, u64), String> {
    let st = std::fs::read_to_string(format!("/proc/{pid}/status")).map_err(|e| e.to_string())?;
    let kib = |k: &str| {
        st.lines()
            .find_map(|l| l.strip_prefix(k))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0)
    };
    Ok((kib("VmRSS:"), kib("VmHWM:")))
}

/// One process's binary stream (`stream_format=bin`): its preface, `hello` and columns,
/// then its `per` events in frames of about 16 KiB, as the connector sends them.
fn binary_stream(rank: u64, per: u64) -> Vec<u8> {
    use h5prov_format::stream::{self as wire, FRAME_HEADER, FRAME_HELLO, FRAME_RECORDS};
    use h5prov_format::{BinEncoder, TraceRecordRef};
    let hello = format!(
        "{{\"v\":1,\"type\":\"hello\",\"job_id\":\"bench\",\"rank\":{rank},\"pid\":{},\
         \"host\":\"node{:04}\",\"world_size\":-1,\"uid\":0,\"exe\":\"/bin/b\",\
         \"level\":\"dataset\",\"stream_level\":\"event\"}}\n",
        10_000 + rank,
        rank / 32
    );
    let mut out = wire::stream_preface().to_vec();
    out.extend_from_slice(&wire::frame(FRAME_HELLO, hello.as_bytes()));
    out.extend_from_slice(&wire::frame(FRAME_HEADER, &wire::trace_header_body()));
    let mut enc = BinEncoder::default();
    let mut at = None;
    for seq in 0..per {
        let f = *at.get_or_insert_with(|| {
            enc.new_block();
            wire::begin_frame(&mut out, FRAME_RECORDS)
        });
        let path = format!("/Timestep_{}/x", seq % 50);
        TraceRecordRef {
            seq,
            tid: 10_000 + rank,
            start_ns: 1_764_000_000_000_000_000u64 + seq * 1000,
            total_ns: 1500 + seq % 977,
            op: "dataset.write",
            kind: "dataset",
            file: "/scratch/run/out.h5",
            path: &path,
            bytes: 4096 * (seq % 7 + 1),
            xfer: "independent",
            ..TraceRecordRef::default()
        }
        .write_bin(&mut out, &mut enc);
        if out.len() - f >= 16 << 10 {
            wire::end_frame(&mut out, f);
            at = None;
        }
    }
    if let Some(f) = at {
        wire::end_frame(&mut out, f);
    }
    out
}

/// Runs both phases against `h5prov` (a collector binary) with the collector on `cpu`;
/// the ingest phase in binary frames when `binary`, else JSON lines.
pub fn run(
    h5prov: &Path,
    cpu: usize,
    events: u64,
    senders: u64,
    series: u64,
    binary: bool,
) -> Result<CollectorResult, String> {
    let c = start(h5prov, cpu)?;
    // Ingest: the messages are made before the clock starts.
    let per = events / senders;
    let batches: Vec<Vec<u8>> = (0..senders)
        .map(|r| {
            if binary {
                return binary_stream(r, per);
            }
            (0..per)
                .flat_map(|i| event("bench", r, i, "dataset.write").into_bytes())
                .collect()
        })
        .collect();
    let t0 = Instant::now();
    let threads: Vec<_> = batches
        .into_iter()
        .map(|b| {
            let addr = c.listen.clone();
            std::thread::spawn(move || -> Result<(), String> {
                let mut s = TcpStream::connect(&addr).map_err(|e| e.to_string())?;
                s.write_all(&b).map_err(|e| e.to_string())
            })
        })
        .collect();
    for t in threads {
        t.join().map_err(|_| "a sender panicked")??;
    }
    wait_events(&c.metrics, per * senders, 600)?;
    let secs = t0.elapsed().as_secs_f64();
    let events = per * senders;
    // Cardinality: jobs of 100 ranks, one operation each, up to `series` label sets with
    // the ingest phase's (one per sender).
    let more = series.saturating_sub(senders);
    let mut s = TcpStream::connect(&c.listen).map_err(|e| e.to_string())?;
    let mut buf = Vec::with_capacity(64 << 20);
    for i in 0..more {
        buf.extend_from_slice(
            event(&format!("job{}", i / 100), i % 100, i, "dataset.write").as_bytes(),
        );
        if buf.len() > 16 << 20 {
            s.write_all(&buf).map_err(|e| e.to_string())?;
            buf.clear();
        }
    }
    s.write_all(&buf).map_err(|e| e.to_string())?;
    drop(s);
    wait_events(&c.metrics, events + more, 600)?;
    let (rss_kib, hwm_kib) = rss(c.child.id())?;
    let t1 = Instant::now();
    let text = get_metrics(&c.metrics)?;
    let metrics_s = t1.elapsed().as_secs_f64();
    Ok(CollectorResult {
        events,
        events_per_s: events as f64 / secs,
        series,
        rss_kib,
        hwm_kib,
        metrics_bytes: text.len(),
        metrics_s,
    })
}
