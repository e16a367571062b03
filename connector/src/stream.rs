//! `stream=`: messages to a collector (`h5prov collect`) while the job runs (schema in
//! `docs/STREAMING.md`): at `stream_level=event`, frames of trace records in the binary
//! trace encoding (`stream_format=bin`, [`h5prov_format::stream`]) or JSON lines
//! (`stream_format=jsonl`); at `stream_level=interval`, JSON lines.
//!
//! The application is never slowed or harmed by the stream:
//! - the hot path encodes an event into the calling thread's own buffer (no allocation, no
//!   shared lock: the buffer sits next to the thread's trace buffer, under the same
//!   uncontended per-thread lock), or at `stream_level=interval` adds it to the thread's
//!   per-operation sums;
//! - a full buffer (16 KiB, ~100 events) is handed to the sender thread through a bounded
//!   queue with `try_send`: when the queue is full the batch is dropped and counted;
//! - the sender thread alone touches the socket: it connects (retrying every second), sends
//!   with a write timeout, drops and counts what it cannot send, and every
//!   `stream_interval` collects the threads' pending events and interval sums;
//! - at the end of the session, what is still queued gets up to [`FINISH_WAIT`] to go;
//!   `meta.json` gets `stream_sent` and `stream_dropped` (messages made but not sent);
//! - with `stream_token_file=`, each connection first runs the shared-secret handshake
//!   ([`h5prov_format::auth`]): the collector proves it holds the token before the process's
//!   `hello` (uid, executable) or any path is sent; a peer that cannot is dropped like an
//!   absent collector.

use crate::config::{StreamFormat, StreamLevel, StreamTarget};
use crate::ffi::sys;
use h5prov_format::stream::{self as wire, FRAME_HEADER, FRAME_HELLO, FRAME_RECORDS};
use h5prov_format::tls::rustls::{self, ClientConfig, ClientConnection};
use h5prov_format::{auth, write_json_fields, BinEncoder, JsonValue, TraceRecordRef};
use parking_lot::{Condvar, Mutex};
use std::io::{self, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::os::fd::AsFd;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A thread's buffer is handed to the sender when it holds this many bytes.
const HANDOFF: usize = 16 << 10;
/// Batches the queue holds (~1 MiB of events).
const QUEUE: usize = 64;
/// How long the end of a session waits for queued messages to be sent.
pub const FINISH_WAIT: Duration = Duration::from_secs(2);
/// A send that makes no progress for this long drops its batch and the connection.
const WRITE_TIMEOUT: Duration = Duration::from_millis(500);
/// Between two connection attempts.
const RETRY: Duration = Duration::from_secs(1);
/// How long the collector has to answer the handshake.
const AUTH_TIMEOUT: Duration = Duration::from_secs(2);

/// One operation's sums over an interval, in one thread.
#[derive(Clone, Copy)]
struct OpSum {
    op: &'static str,
    count: u64,
    bytes: u64,
    dur_ns: u64,
    max_ns: u64,
}

/// A thread's pending stream messages: encoded events (JSON lines, or one frame of
/// binary records), or interval sums.
#[derive(Default)]
pub struct ThreadBuf {
    lines: Vec<u8>,
    n: u64,
    sums: Vec<OpSum>,
    /// The binary encoder of the frame being built (made at the first binary event).
    enc: Option<Box<BinEncoder>>,
    /// `lines` holds a frame whose length is not written yet.
    framed: bool,
}

impl ThreadBuf {
    /// Takes the pending events (a binary frame with its length written) and their count.
    fn take_events(&mut self) -> (Vec<u8>, u64) {
        let mut lines = std::mem::take(&mut self.lines);
        if std::mem::take(&mut self.framed) {
            wire::end_frame(&mut lines, 0);
        }
        (lines, std::mem::take(&mut self.n))
    }
}

/// What the sender thread is sent.
enum Msg {
    Batch(Vec<u8>, u64),
    Stop,
}

/// Counters shared with the sender thread.
#[derive(Default)]
struct Shared {
    /// Messages made (handed off, or dropped at the hand-off).
    made: AtomicU64,
    /// Messages the socket took.
    sent: AtomicU64,
    stop: AtomicBool,
    /// What exited threads left (and records made without a thread buffer).
    orphans: Mutex<ThreadBuf>,
    done: Mutex<bool>,
    done_cv: Condvar,
}

/// Visits every thread's [`ThreadBuf`] (the session's list of per-thread buffers).
pub type ForEachThread = Box<dyn Fn(&mut dyn FnMut(&mut ThreadBuf)) + Send + Sync>;

/// One process's stream: the encoder's constant prefix, the queue and the counters.
pub struct Stream {
    level: StreamLevel,
    /// Events as binary frames (`stream_format=bin` at `stream_level=event`).
    bin: bool,
    /// `{"v":1,"type":"event","job_id":..,"rank":..,"pid":..,"host":..`
    event_prefix: Box<str>,
    tx: SyncSender<Msg>,
    shared: Arc<Shared>,
}

/// The process identity and settings the messages carry.
pub struct Identity<'a> {
    /// Launcher job id.
    pub job_id: &'a str,
    /// MPI rank, -1 when unknown.
    pub rank: i64,
    /// World size.
    pub world_size: i64,
    /// Process id.
    pub pid: u32,
    /// Host name.
    pub host: &'a str,
    /// Executable.
    pub exe: &'a str,
    /// User id.
    pub uid: u32,
    /// Trace level name.
    pub level: &'a str,
}

impl Stream {
    /// Starts the sender thread. `threads` visits the threads' buffers at each interval.
    /// `token`: the shared secret of `stream_token_file=`, when given; `tls`: the
    /// configuration trusting `stream_tls_ca=`, when given.
    #[allow(clippy::too_many_arguments)]
    pub fn start(
        target: &StreamTarget,
        level: StreamLevel,
        format: StreamFormat,
        interval: Duration,
        id: &Identity<'_>,
        token: Option<Vec<u8>>,
        tls: Option<Arc<ClientConfig>>,
        threads: ForEachThread,
    ) -> io::Result<Stream> {
        let ident = ident_json(id);
        let bin = level == StreamLevel::Event && format == StreamFormat::Bin;
        let mut hello = hello_line(&ident, id, level);
        if bin {
            // The binary connection: its preface, the identity once, the record columns.
            let mut h = wire::stream_preface().to_vec();
            h.extend_from_slice(&wire::frame(FRAME_HELLO, &hello));
            h.extend_from_slice(&wire::frame(FRAME_HEADER, &wire::trace_header_body()));
            hello = h;
        }
        let (tx, rx) = mpsc::sync_channel(QUEUE);
        let shared = Arc::new(Shared::default());
        let sender = Sender {
            target: target.clone(),
            token,
            tls,
            conn: None,
            next_try: Instant::now(),
            hello,
            interval_prefix: format!("{{\"v\":1,\"type\":\"interval\",{ident}"),
            shared: shared.clone(),
            threads,
            interval,
            level,
            seq: 0,
            last_sweep_ns: wall_ns(),
        };
        std::thread::Builder::new()
            .name("h5prov-stream".into())
            .spawn(move || sender.run(rx))?;
        Ok(Stream {
            level,
            bin,
            event_prefix: format!("{{\"v\":1,\"type\":\"event\",{ident}").into_boxed_str(),
            tx,
            shared,
        })
    }

    /// One trace record (the hot path): encoded into the thread's buffer, or added to its
    /// interval sums.
    #[inline]
    pub fn record(&self, tb: &mut ThreadBuf, op: &'static str, r: &TraceRecordRef<'_>) {
        match self.level {
            StreamLevel::Event => {
                if tb.lines.capacity() == 0 {
                    tb.lines.reserve(HANDOFF + 1024);
                }
                if self.bin {
                    let enc = tb.enc.get_or_insert_with(Box::default);
                    if !tb.framed {
                        // A frame is one block: it decodes on its own.
                        tb.framed = true;
                        enc.new_block();
                        wire::begin_frame(&mut tb.lines, FRAME_RECORDS);
                    }
                    r.write_bin(&mut tb.lines, enc);
                } else {
                    encode_event(&mut tb.lines, &self.event_prefix, r);
                }
                tb.n += 1;
                if tb.lines.len() >= HANDOFF {
                    self.hand_off(tb);
                }
            }
            StreamLevel::Interval => {
                let s = match tb.sums.iter_mut().find(|s| std::ptr::eq(s.op, op)) {
                    Some(s) => s,
                    None => {
                        tb.sums.push(OpSum {
                            op,
                            count: 0,
                            bytes: 0,
                            dur_ns: 0,
                            max_ns: 0,
                        });
                        tb.sums.last_mut().expect("just pushed")
                    }
                };
                s.count += 1;
                s.bytes += r.bytes;
                s.dur_ns += r.total_ns;
                s.max_ns = s.max_ns.max(r.total_ns);
            }
        }
    }

    /// A record made without a thread buffer (a thread-local gone at exit): sent alone.
    pub fn record_alone(&self, op: &'static str, r: &TraceRecordRef<'_>) {
        let mut orphans = self.shared.orphans.lock();
        self.record(&mut orphans, op, r);
        self.hand_off(&mut orphans);
    }

    /// A thread that exits: its pending events are handed off and its interval sums
    /// join the next interval's.
    pub fn absorb(&self, tb: &mut ThreadBuf) {
        self.hand_off(tb);
        if !tb.sums.is_empty() {
            let mut orphans = self.shared.orphans.lock();
            orphans.sums.append(&mut tb.sums);
        }
    }

    /// Hands the thread's pending events to the sender, or drops and counts them.
    pub fn hand_off(&self, tb: &mut ThreadBuf) {
        if tb.n == 0 {
            return;
        }
        let (lines, n) = tb.take_events();
        tb.lines = Vec::with_capacity(HANDOFF + 1024);
        self.shared.made.fetch_add(n, Ordering::Relaxed);
        // A full queue or a stopped sender: the batch is dropped (made but never sent).
        let _ = self.tx.try_send(Msg::Batch(lines, n));
    }

    /// Ends the stream: the pending messages (collected by the caller with
    /// [`Stream::hand_off`] first) get up to [`FINISH_WAIT`] to be sent. Returns
    /// `(sent, dropped)`.
    pub fn finish(&self) -> (u64, u64) {
        self.shared.stop.store(true, Ordering::Release);
        let _ = self.tx.try_send(Msg::Stop);
        let deadline = Instant::now() + FINISH_WAIT;
        let mut done = self.shared.done.lock();
        while !*done {
            if self
                .shared
                .done_cv
                .wait_until(&mut done, deadline)
                .timed_out()
            {
                break;
            }
        }
        drop(done);
        self.counts()
    }

    /// `(sent, dropped)` so far.
    pub fn counts(&self) -> (u64, u64) {
        let sent = self.shared.sent.load(Ordering::Relaxed);
        let made = self.shared.made.load(Ordering::Relaxed);
        (sent, made.saturating_sub(sent))
    }
}

/// `"job_id":..,"rank":..,"pid":..,"host":..` (no braces): every message's start.
fn ident_json(id: &Identity<'_>) -> String {
    wire::ident_json(id.job_id, id.rank, id.pid, id.host)
}

/// The `hello` line.
fn hello_line(ident: &str, id: &Identity<'_>, level: StreamLevel) -> Vec<u8> {
    let mut hello = Vec::new();
    write_json_fields(
        &mut hello,
        format!("{{\"v\":1,\"type\":\"hello\",{ident}").as_bytes(),
        &[
            (b",\"world_size\":", JsonValue::Signed(id.world_size)),
            (b",\"uid\":", JsonValue::Unsigned(id.uid.into())),
            (b",\"exe\":", JsonValue::Text(id.exe)),
            (b",\"level\":", JsonValue::Text(id.level)),
            (
                b",\"stream_level\":",
                JsonValue::Text(match level {
                    StreamLevel::Event => "event",
                    StreamLevel::Interval => "interval",
                }),
            ),
        ],
        b"}\n",
    );
    hello
}

fn wall_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}

/// One event line: the record's fields after the process's `prefix`
/// ([`wire::write_event_json`], the collector's `--out` writes the same).
#[inline]
fn encode_event(out: &mut Vec<u8>, prefix: &str, r: &TraceRecordRef<'_>) {
    wire::write_event_json(out, prefix.as_bytes(), r);
}

enum Conn {
    Tcp(TcpStream),
    Unix(UnixStream),
    /// TLS over TCP (`stream_tls_ca=`), the collector verified at connect.
    Tls(Box<ClientConnection>, TcpStream),
}

/// The TCP socket as rustls reads and writes it: sends with `MSG_NOSIGNAL`, so a collector
/// gone never raises SIGPIPE in the application.
struct NoSigPipe<'a>(&'a TcpStream);

impl Read for NoSigPipe<'_> {
    fn read(&mut self, b: &mut [u8]) -> io::Result<usize> {
        (&*self.0).read(b)
    }
}

impl Write for NoSigPipe<'_> {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        sys::send_nosignal(self.0.as_fd(), b)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Conn {
    /// Reads one line of at most [`auth::MAX_AUTH_LINE`] bytes (the read timeout set).
    fn read_line(&mut self) -> io::Result<String> {
        let mut line = Vec::new();
        let mut b = [0u8; 1];
        while line.len() < auth::MAX_AUTH_LINE {
            let n = match self {
                Conn::Tcp(s) => (&*s).read(&mut b)?,
                Conn::Unix(s) => (&*s).read(&mut b)?,
                Conn::Tls(c, s) => rustls::Stream::new(&mut **c, &mut NoSigPipe(s)).read(&mut b)?,
            };
            if n == 0 {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
            if b[0] == b'\n' {
                return String::from_utf8(line).map_err(|_| io::ErrorKind::InvalidData.into());
            }
            line.push(b[0]);
        }
        Err(io::ErrorKind::InvalidData.into())
    }

    /// The client's side of the handshake: the collector must prove it holds `token`
    /// before anything else is sent.
    fn authenticate(&mut self, token: &[u8]) -> io::Result<()> {
        let denied = || {
            io::Error::new(
                io::ErrorKind::PermissionDenied,
                "collector not authenticated",
            )
        };
        let cn = auth::nonce()?;
        match self {
            Conn::Tcp(s) | Conn::Tls(_, s) => s.set_read_timeout(Some(AUTH_TIMEOUT))?,
            Conn::Unix(s) => s.set_read_timeout(Some(AUTH_TIMEOUT))?,
        }
        self.send_all(auth::client_greeting(&cn).as_bytes())?;
        let answer = self.read_line()?;
        let proof = auth::client_proof(token, &cn, &answer).ok_or_else(denied)?;
        self.send_all(proof.as_bytes())
    }

    fn send_all(&mut self, mut buf: &[u8]) -> io::Result<()> {
        if let Conn::Tls(c, s) = self {
            let mut sock = NoSigPipe(s);
            let mut t = rustls::Stream::new(&mut **c, &mut sock);
            t.write_all(buf)?;
            return t.flush();
        }
        while !buf.is_empty() {
            let n = match self {
                Conn::Tcp(s) => sys::send_nosignal(s.as_fd(), buf)?,
                Conn::Unix(s) => sys::send_nosignal(s.as_fd(), buf)?,
                Conn::Tls(..) => unreachable!("sent above"),
            };
            if n == 0 {
                return Err(io::ErrorKind::WriteZero.into());
            }
            buf = &buf[n..];
        }
        Ok(())
    }
}

/// Connects; verifies the collector's certificate against `tls`'s CA (the whole TLS
/// handshake, before anything is sent) and authenticates the collector when there is a
/// token.
fn connect(
    target: &StreamTarget,
    token: Option<&[u8]>,
    tls: Option<&Arc<ClientConfig>>,
) -> io::Result<Conn> {
    let mut c = connect_plain(target)?;
    if let (Some(cfg), StreamTarget::Tcp(addr), Conn::Tcp(s)) = (tls, target, &c) {
        let name = h5prov_format::tls::server_name(addr).map_err(io::Error::other)?;
        let mut tc = ClientConnection::new(cfg.clone(), name).map_err(io::Error::other)?;
        s.set_read_timeout(Some(AUTH_TIMEOUT))?;
        while tc.is_handshaking() {
            if tc.complete_io(&mut NoSigPipe(s))? == (0, 0) {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
        }
        let Conn::Tcp(s) = c else { unreachable!() };
        c = Conn::Tls(Box::new(tc), s);
    }
    if let Some(t) = token {
        c.authenticate(t)?;
    }
    Ok(c)
}

fn connect_plain(target: &StreamTarget) -> io::Result<Conn> {
    match target {
        StreamTarget::Tcp(addr) => {
            let mut last = io::Error::from(io::ErrorKind::AddrNotAvailable);
            for a in addr.to_socket_addrs()? {
                match TcpStream::connect_timeout(&a, Duration::from_millis(500)) {
                    Ok(s) => {
                        s.set_write_timeout(Some(WRITE_TIMEOUT))?;
                        let _ = s.set_nodelay(true);
                        return Ok(Conn::Tcp(s));
                    }
                    Err(e) => last = e,
                }
            }
            Err(last)
        }
        StreamTarget::Unix(path) => {
            let s = UnixStream::connect(path)?;
            s.set_write_timeout(Some(WRITE_TIMEOUT))?;
            Ok(Conn::Unix(s))
        }
    }
}

/// The sender thread's state.
struct Sender {
    target: StreamTarget,
    token: Option<Vec<u8>>,
    tls: Option<Arc<ClientConfig>>,
    conn: Option<Conn>,
    next_try: Instant,
    hello: Vec<u8>,
    interval_prefix: String,
    shared: Arc<Shared>,
    threads: ForEachThread,
    interval: Duration,
    level: StreamLevel,
    /// Sequence number of interval messages.
    seq: u64,
    last_sweep_ns: u64,
}

impl Sender {
    fn run(mut self, rx: Receiver<Msg>) {
        let mut next_sweep = Instant::now() + self.interval;
        loop {
            let wait = next_sweep.saturating_duration_since(Instant::now());
            match rx.recv_timeout(wait) {
                Ok(Msg::Batch(b, n)) => self.send(&b, n),
                Ok(Msg::Stop) | Err(RecvTimeoutError::Disconnected) => break,
                Err(RecvTimeoutError::Timeout) => {}
            }
            if self.shared.stop.load(Ordering::Acquire) {
                break;
            }
            if Instant::now() >= next_sweep {
                self.sweep();
                next_sweep = Instant::now() + self.interval;
            }
        }
        // The session ends: its last pending messages (the caller handed off the events).
        if self.level == StreamLevel::Interval {
            self.sweep();
        }
        while let Ok(m) = rx.try_recv() {
            if let Msg::Batch(b, n) = m {
                self.send(&b, n);
            }
        }
        *self.shared.done.lock() = true;
        self.shared.done_cv.notify_all();
    }

    /// Collects the threads' pending events and interval sums.
    fn sweep(&mut self) {
        let mut events: Vec<(Vec<u8>, u64)> = Vec::new();
        let mut sums: Vec<OpSum> = Vec::new();
        let orphans = std::mem::take(&mut *self.shared.orphans.lock());
        let mut orphans = Some(orphans);
        let mut visit = |tb: &mut ThreadBuf| {
            if tb.n > 0 {
                events.push(tb.take_events());
            }
            for s in tb.sums.drain(..) {
                match sums.iter_mut().find(|t| std::ptr::eq(t.op, s.op)) {
                    Some(t) => {
                        t.count += s.count;
                        t.bytes += s.bytes;
                        t.dur_ns += s.dur_ns;
                        t.max_ns = t.max_ns.max(s.max_ns);
                    }
                    None => sums.push(s),
                }
            }
        };
        if let Some(mut o) = orphans.take() {
            visit(&mut o);
        }
        (self.threads)(&mut visit);
        for (b, n) in events {
            self.shared.made.fetch_add(n, Ordering::Relaxed);
            self.send(&b, n);
        }
        let now = wall_ns();
        if !sums.is_empty() {
            let mut out = Vec::with_capacity(256 * sums.len());
            for s in &sums {
                write_json_fields(
                    &mut out,
                    self.interval_prefix.as_bytes(),
                    &[
                        (b",\"seq\":", JsonValue::Unsigned(self.seq)),
                        (b",\"start_ns\":", JsonValue::Unsigned(self.last_sweep_ns)),
                        (b",\"end_ns\":", JsonValue::Unsigned(now)),
                        (b",\"op\":", JsonValue::Text(s.op)),
                        (b",\"count\":", JsonValue::Unsigned(s.count)),
                        (b",\"bytes\":", JsonValue::Unsigned(s.bytes)),
                        (b",\"dur_ns\":", JsonValue::Unsigned(s.dur_ns)),
                        (b",\"max_ns\":", JsonValue::Unsigned(s.max_ns)),
                    ],
                    b"}\n",
                );
                self.seq += 1;
            }
            let n = sums.len() as u64;
            self.shared.made.fetch_add(n, Ordering::Relaxed);
            self.send(&out, n);
        }
        self.last_sweep_ns = now;
    }

    /// Sends `n` messages, or drops them (they stay counted as made, not sent).
    fn send(&mut self, buf: &[u8], n: u64) {
        if self.conn.is_none() && Instant::now() >= self.next_try {
            match connect(&self.target, self.token.as_deref(), self.tls.as_ref())
                .and_then(|mut c| c.send_all(&self.hello).map(|()| c))
            {
                Ok(c) => self.conn = Some(c),
                Err(_) => self.next_try = Instant::now() + RETRY,
            }
        }
        let Some(c) = &mut self.conn else { return };
        match c.send_all(buf) {
            Ok(()) => {
                self.shared.sent.fetch_add(n, Ordering::Relaxed);
            }
            Err(_) => {
                // A collector gone, or too slow to take a batch within the timeout: the
                // batch is lost (a cut line is the collector's malformed message), and the
                // next batch reconnects.
                self.conn = None;
                self.next_try = Instant::now() + RETRY;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_json_lines() {
        let mut out = Vec::new();
        let r = TraceRecordRef {
            seq: 3,
            start_ns: 1_700_000_000_000_000_000,
            total_ns: 42,
            op: "dataset.write",
            kind: "dataset",
            file: "a\"b\\c\n.h5",
            path: "/g/\u{1}d",
            bytes: 800,
            xfer: "collective",
            ..TraceRecordRef::default()
        };
        encode_event(
            &mut out,
            "{\"v\":1,\"type\":\"event\",\"job_id\":\"7\",\"rank\":2,\"pid\":9,\"host\":\"n\"",
            &r,
        );
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v["file"], "a\"b\\c\n.h5");
        assert_eq!(v["path"], "/g/\u{1}d");
        assert_eq!(v["start_ns"], 1_700_000_000_000_000_000u64);
        assert_eq!(
            (v["bytes"].as_u64(), v["seq"].as_u64()),
            (Some(800), Some(3))
        );
        assert_eq!(
            (v["rank"].as_i64(), v["xfer"].as_str()),
            (Some(2), Some("collective"))
        );
        assert!(out.ends_with(b"}\n"));
    }

    /// The messages are byte for byte what `serde_json` writes for the same fields.
    #[test]
    fn messages_are_serde_json_bytes() {
        #[derive(serde::Serialize)]
        struct Hello<'a> {
            v: u32,
            r#type: &'a str,
            job_id: &'a str,
            rank: i64,
            pid: u32,
            host: &'a str,
            world_size: i64,
            uid: u32,
            exe: &'a str,
            level: &'a str,
            stream_level: &'a str,
        }
        #[derive(serde::Serialize)]
        struct Event<'a> {
            v: u32,
            r#type: &'a str,
            job_id: &'a str,
            rank: i64,
            pid: u32,
            host: &'a str,
            seq: u64,
            tid: u64,
            start_ns: u64,
            dur_ns: u64,
            op: &'a str,
            kind: &'a str,
            file: &'a str,
            path: &'a str,
            bytes: u64,
            xfer: &'a str,
            status: i32,
        }
        let awkward = [
            "",
            "plain",
            "a\"b\\c\n\r\t.h5",
            "\u{0}\u{1}\u{8}\u{c}\u{1f}\u{7f}",
            "é 日本 😀 \u{2028}",
            "/a/very/long/path/that/goes/on/and/on/through/many/groups/of/the/file/to/take/more/than/the/window/of/two/hundred/bytes/that/the/fast/path/has/for/its/text/so/the/other/branch/runs/too/x",
        ];
        for (i, s) in awkward.iter().enumerate() {
            let id = Identity {
                job_id: s,
                rank: -1,
                world_size: -1,
                pid: u32::MAX,
                host: awkward[(i + 1) % awkward.len()],
                exe: s,
                uid: 0,
                level: "dataset",
            };
            let ident = ident_json(&id);
            let want = serde_json::to_string(&Hello {
                v: 1,
                r#type: "hello",
                job_id: id.job_id,
                rank: id.rank,
                pid: id.pid,
                host: id.host,
                world_size: id.world_size,
                uid: id.uid,
                exe: id.exe,
                level: id.level,
                stream_level: "interval",
            })
            .unwrap();
            let got = hello_line(&ident, &id, StreamLevel::Interval);
            assert_eq!(String::from_utf8(got).unwrap(), want + "\n");
            let r = TraceRecordRef {
                seq: u64::MAX,
                tid: 12,
                start_ns: 1_700_000_000_000_000_000,
                total_ns: 0,
                op: "dataset.write",
                kind: s,
                file: awkward[(i + 2) % awkward.len()],
                path: s,
                bytes: 1 << 40,
                xfer: "",
                status: -1,
                ..TraceRecordRef::default()
            };
            let mut got = Vec::new();
            encode_event(
                &mut got,
                &format!("{{\"v\":1,\"type\":\"event\",{ident}"),
                &r,
            );
            let want = serde_json::to_string(&Event {
                v: 1,
                r#type: "event",
                job_id: id.job_id,
                rank: id.rank,
                pid: id.pid,
                host: id.host,
                seq: r.seq,
                tid: r.tid,
                start_ns: r.start_ns,
                dur_ns: r.total_ns,
                op: r.op,
                kind: r.kind,
                file: r.file,
                path: r.path,
                bytes: r.bytes,
                xfer: r.xfer,
                status: r.status,
            })
            .unwrap();
            assert_eq!(String::from_utf8(got).unwrap(), want + "\n");
        }
    }
}
