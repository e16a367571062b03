//! `h5prov top`: a live terminal view of a collector. Polls `GET /top.json`
//! ([`crate::live::Snapshot`]) on a thread of its own and draws, with ratatui: the
//! collector's counters, the jobs, the selected job's ranks and operations (rates from the
//! deltas between the last two snapshots), its slowest recent calls, and a sparkline of its
//! bytes per second over the last minute.
//!
//! [`draw`] is a pure function of the [`App`] state (tested on ratatui's `TestBackend`);
//! [`run`] owns the terminal and restores it however it ends.

use crate::live::{rank_order, JobSnapshot, Snapshot, Totals, WINDOW_S};
use crate::units::{fmt_bytes_compact, fmt_ns_compact, pct_whole};
use h5prov_format::tls::rustls::{ClientConfig, ClientConnection, StreamOwned};
use ratatui::crossterm::event::{self, Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style, Stylize};
use ratatui::text::Line;
use ratatui::widgets::{Block, Cell, Paragraph, Row, Sparkline, Table, TableState, Wrap};
use ratatui::Frame;
use std::io::{self, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::sync::{mpsc, Arc};
use std::time::Duration;

/// What the view shows: the last two snapshots, the last error, the selected job.
pub struct App {
    /// The collector's `--metrics` address.
    pub addr: String,
    /// Time between polls.
    pub interval: Duration,
    /// The newest snapshot.
    pub snap: Option<Snapshot>,
    /// The one before (rates are the deltas to it).
    pub prev: Option<Snapshot>,
    /// Why the last poll failed; `None` after a good one.
    pub error: Option<String>,
    /// Index of the selected job in `snap.jobs`.
    pub selected: usize,
}

impl App {
    /// A view of `addr` with nothing received yet.
    pub fn new(addr: &str, interval: Duration) -> App {
        App {
            addr: addr.to_string(),
            interval,
            snap: None,
            prev: None,
            error: None,
            selected: 0,
        }
    }

    /// Takes one poll's result. A failure keeps the last snapshot on screen, marked stale.
    /// Every string that came off the network is made [`printable`] here, before anything
    /// draws it.
    pub fn update(&mut self, r: Result<Snapshot, String>) {
        match r {
            Ok(mut s) => {
                make_printable(&mut s);
                // The selection follows its job when jobs come and go.
                let sel = self.selected_job().map(|j| j.job_id.clone());
                self.prev = self.snap.replace(s);
                self.error = None;
                let jobs = &self.snap.as_ref().expect("set above").jobs;
                self.selected = sel
                    .and_then(|id| jobs.iter().position(|j| j.job_id == id))
                    .unwrap_or(0)
                    .min(jobs.len().saturating_sub(1));
            }
            Err(e) => self.error = Some(printable(&e).into_owned()),
        }
    }

    /// Handles a key; `true` means quit (`q`, Esc, Ctrl-C).
    pub fn key(&mut self, k: KeyEvent) -> bool {
        let n = self.snap.as_ref().map_or(0, |s| s.jobs.len());
        match k.code {
            KeyCode::Char('q') | KeyCode::Esc => return true,
            KeyCode::Char('c') if k.modifiers.contains(KeyModifiers::CONTROL) => return true,
            KeyCode::Down | KeyCode::Char('j') if self.selected + 1 < n => self.selected += 1,
            KeyCode::Up | KeyCode::Char('k') => self.selected = self.selected.saturating_sub(1),
            _ => {}
        }
        false
    }

    fn selected_job(&self) -> Option<&JobSnapshot> {
        self.snap.as_ref()?.jobs.get(self.selected)
    }

    /// Seconds between the last two snapshots (collector clock), when there are two.
    fn dt(&self) -> Option<f64> {
        let (a, b) = (self.prev.as_ref()?, self.snap.as_ref()?);
        let dt = b.now_ns.checked_sub(a.now_ns)? as f64 * 1e-9;
        (dt > 0.0).then_some(dt)
    }

    fn prev_job(&self, id: &str) -> Option<&JobSnapshot> {
        let p = self.prev.as_ref()?;
        p.jobs
            .binary_search_by(|j| j.job_id.as_str().cmp(id))
            .ok()
            .map(|i| &p.jobs[i])
    }
}

/// `s` with every control character (C0, DEL, C1: ESC, CSI, OSC's BEL, newlines) replaced
/// by U+FFFD: a job id, host, operation or path that came off the network cannot move the
/// cursor, clear, recolour or retitle the operator's terminal.
pub fn printable(s: &str) -> std::borrow::Cow<'_, str> {
    if s.chars().any(char::is_control) {
        s.chars()
            .map(|c| if c.is_control() { '\u{FFFD}' } else { c })
            .collect::<String>()
            .into()
    } else {
        s.into()
    }
}

fn clean(s: &mut String) {
    if let std::borrow::Cow::Owned(p) = printable(s) {
        *s = p;
    }
}

/// Every string of `snap` made [`printable`].
fn make_printable(snap: &mut Snapshot) {
    for j in &mut snap.jobs {
        clean(&mut j.job_id);
        for r in &mut j.ranks {
            clean(&mut r.rank);
            clean(&mut r.host);
        }
        for o in &mut j.ops {
            clean(&mut o.op);
        }
        for c in &mut j.slowest {
            for f in [&mut c.op, &mut c.rank, &mut c.file, &mut c.path] {
                clean(f);
            }
        }
    }
}

/// Largest `/top.json` answer read (a peer that is not a collector may send without end).
const MAX_ANSWER: u64 = 256 << 20;

/// Per second: calls, bytes, and time in the calls (1.0 = one thread busy all the time).
#[derive(Clone, Copy)]
struct Rate {
    ops: f64,
    bytes: f64,
    busy: f64,
}

fn rate(now: &Totals, before: Option<&Totals>, dt: Option<f64>) -> Option<Rate> {
    let dt = dt?;
    let b = before.copied().unwrap_or_default();
    // A restarted collector starts from zero: no negative rates.
    let d = |x: u64, y: u64| x.saturating_sub(y) as f64 / dt;
    Some(Rate {
        ops: d(now.count, b.count),
        bytes: d(now.bytes, b.bytes),
        busy: d(now.op_ns, b.op_ns) * 1e-9,
    })
}

fn job_totals(j: &JobSnapshot) -> Totals {
    j.ops.iter().fold(Totals::default(), |mut t, o| {
        t.count += o.totals.count;
        t.bytes += o.totals.bytes;
        t.op_ns += o.totals.op_ns;
        t
    })
}

fn fmt_rate(r: Option<Rate>, f: impl Fn(Rate) -> String) -> String {
    r.map_or_else(|| "-".to_string(), f)
}

fn ops_s(r: Rate) -> String {
    if r.ops >= 100.0 {
        format!("{:.0}", r.ops)
    } else {
        format!("{:.1}", r.ops)
    }
}

fn bytes_s(r: Rate) -> String {
    format!("{}/s", fmt_bytes_compact(r.bytes))
}

fn busy(r: Rate) -> String {
    pct_whole(r.busy)
}

fn job_name(id: &str) -> &str {
    if id.is_empty() {
        "(none)"
    } else {
        id
    }
}

fn header_style() -> Style {
    Style::new().add_modifier(Modifier::BOLD | Modifier::UNDERLINED)
}

fn table<'a>(
    title: String,
    head: &'a [&'a str],
    rows: Vec<Row<'a>>,
    widths: &'a [Constraint],
) -> Table<'a> {
    Table::new(rows, widths.iter().copied())
        .header(Row::new(head.iter().copied()).style(header_style()))
        .block(Block::bordered().title(title))
}

/// Draws the whole view: a pure function of `app`.
pub fn draw(f: &mut Frame, app: &App) {
    let [head, body] =
        Layout::vertical([Constraint::Length(2), Constraint::Min(0)]).areas(f.area());
    draw_header(f, head, app);
    let Some(snap) = &app.snap else {
        let msg = match &app.error {
            Some(_) => "No data: the collector has not answered yet.".to_string(),
            None => format!("Connecting to {} ...", app.addr),
        };
        f.render_widget(Paragraph::new(msg).block(Block::bordered()), body);
        return;
    };
    if snap.jobs.is_empty() {
        let msg = "No job has streamed to this collector yet. Run one with \
                   HDF5_VOL_CONNECTOR=\"h5prov ...;stream=HOST:PORT\" (docs/STREAMING.md).";
        f.render_widget(
            Paragraph::new(msg)
                .wrap(Wrap { trim: true })
                .block(Block::bordered()),
            body,
        );
        return;
    }
    let job = &snap.jobs[app.selected.min(snap.jobs.len() - 1)];
    let slow_h = job.slowest.len().clamp(1, crate::live::SLOWEST) as u16 + 3;
    let jobs_h = snap.jobs.len().min(5) as u16 + 3;
    let [jobs_a, mid, slow_a, spark_a] = Layout::vertical([
        Constraint::Length(jobs_h),
        Constraint::Min(6),
        Constraint::Length(slow_h),
        Constraint::Length(5),
    ])
    .areas(body);
    let [ranks_a, ops_a] =
        Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)]).areas(mid);
    draw_jobs(f, jobs_a, app, snap);
    draw_ranks(f, ranks_a, app, job);
    draw_ops(f, ops_a, app, job);
    draw_slowest(f, slow_a, snap, job);
    draw_sparkline(f, spark_a, job);
}

fn draw_header(f: &mut Frame, area: Rect, app: &App) {
    let mut first = format!("h5prov top - collector {}", app.addr);
    if let Some(s) = &app.snap {
        let msgs = match (app.dt(), &app.prev) {
            (Some(dt), Some(p)) => {
                format!("{:.0}", s.messages.saturating_sub(p.messages) as f64 / dt)
            }
            _ => "-".to_string(),
        };
        first += &format!(
            "   jobs {}   connections {}   messages/s {msgs}   malformed {}",
            s.jobs.len(),
            s.connections_open,
            s.malformed
        );
    }
    let second = match &app.error {
        Some(e) => Line::from(format!(
            "cannot reach collector {}: {e} (retrying every {:.1} s)",
            app.addr,
            app.interval.as_secs_f64()
        ))
        .style(Style::new().fg(Color::Red).add_modifier(Modifier::BOLD)),
        None => Line::from(format!(
            "q quit   up/down select job   every {:.1} s   rates over the last poll",
            app.interval.as_secs_f64()
        ))
        .dim(),
    };
    f.render_widget(Paragraph::new(vec![Line::from(first).bold(), second]), area);
}

fn draw_jobs(f: &mut Frame, area: Rect, app: &App, snap: &Snapshot) {
    let dt = app.dt();
    let rows: Vec<Row> = snap
        .jobs
        .iter()
        .map(|j| {
            let t = job_totals(j);
            let before = app.prev_job(&j.job_id).map(job_totals);
            let r = rate(&t, before.as_ref(), dt);
            Row::new(vec![
                Cell::from(job_name(&j.job_id).to_string()),
                Cell::from(j.ranks.len().to_string()),
                Cell::from(fmt_rate(r, ops_s)),
                Cell::from(fmt_rate(r, bytes_s)),
                Cell::from(fmt_rate(r, |r| {
                    busy(Rate {
                        busy: r.busy / j.ranks.len().max(1) as f64,
                        ..r
                    })
                })),
                Cell::from(t.count.to_string()),
                Cell::from(fmt_bytes_compact(t.bytes as f64)),
            ])
        })
        .collect();
    const HEAD: [&str; 7] = [
        "job", "ranks", "ops/s", "bytes/s", "in HDF5", "ops", "bytes",
    ];
    const W: [Constraint; 7] = [
        Constraint::Min(12),
        Constraint::Length(6),
        Constraint::Length(9),
        Constraint::Length(13),
        Constraint::Length(8),
        Constraint::Length(10),
        Constraint::Length(11),
    ];
    let t = table("jobs".into(), &HEAD, rows, &W)
        .row_highlight_style(Style::new().reversed())
        .highlight_symbol("> ");
    let mut st = TableState::default().with_selected(Some(app.selected));
    f.render_stateful_widget(t, area, &mut st);
}

fn draw_ranks(f: &mut Frame, area: Rect, app: &App, job: &JobSnapshot) {
    let dt = app.dt();
    let prev = app.prev_job(&job.job_id);
    let rows: Vec<Row> = job
        .ranks
        .iter()
        .map(|rk| {
            let before = prev.and_then(|p| {
                p.ranks
                    .binary_search_by(|x| rank_order(&x.rank, &rk.rank))
                    .ok()
                    .map(|i| &p.ranks[i].totals)
            });
            let r = rate(&rk.totals, before, dt);
            Row::new(vec![
                rk.rank.clone(),
                rk.host.clone(),
                fmt_rate(r, ops_s),
                fmt_rate(r, bytes_s),
                fmt_rate(r, busy),
                fmt_bytes_compact(rk.totals.bytes as f64),
            ])
        })
        .collect();
    const HEAD: [&str; 6] = ["rank", "host", "ops/s", "bytes/s", "in HDF5", "bytes"];
    const W: [Constraint; 6] = [
        Constraint::Length(5),
        Constraint::Min(5),
        Constraint::Length(7),
        Constraint::Length(11),
        Constraint::Length(7),
        Constraint::Length(9),
    ];
    let title = format!("ranks of job {}", job_name(&job.job_id));
    f.render_widget(table(title, &HEAD, rows, &W), area);
}

fn draw_ops(f: &mut Frame, area: Rect, app: &App, job: &JobSnapshot) {
    let dt = app.dt();
    let prev = app.prev_job(&job.job_id);
    let mut ops: Vec<_> = job.ops.iter().collect();
    // The operations that took the most time first.
    ops.sort_by_key(|o| std::cmp::Reverse(o.totals.op_ns));
    let rows: Vec<Row> = ops
        .into_iter()
        .map(|o| {
            let before = prev.and_then(|p| {
                p.ops
                    .binary_search_by(|x| x.op.cmp(&o.op))
                    .ok()
                    .map(|i| &p.ops[i].totals)
            });
            let r = rate(&o.totals, before, dt);
            Row::new(vec![
                o.op.clone(),
                fmt_rate(r, ops_s),
                fmt_rate(r, bytes_s),
                o.totals.count.to_string(),
                fmt_bytes_compact(o.totals.bytes as f64),
                fmt_ns_compact(o.totals.op_ns),
            ])
        })
        .collect();
    const HEAD: [&str; 6] = ["operation", "ops/s", "bytes/s", "calls", "bytes", "time"];
    const W: [Constraint; 6] = [
        Constraint::Min(13),
        Constraint::Length(7),
        Constraint::Length(11),
        Constraint::Length(8),
        Constraint::Length(9),
        Constraint::Length(8),
    ];
    f.render_widget(table("operations".into(), &HEAD, rows, &W), area);
}

fn draw_slowest(f: &mut Frame, area: Rect, snap: &Snapshot, job: &JobSnapshot) {
    let now_s = snap.now_ns / 1_000_000_000;
    let rows: Vec<Row> = job
        .slowest
        .iter()
        .map(|c| {
            let at = if c.interval {
                "(longest call of an interval)".to_string()
            } else {
                format!("{}:{}", c.file, c.path)
            };
            Row::new(vec![
                c.op.clone(),
                c.rank.clone(),
                fmt_ns_compact(c.dur_ns),
                format!("{} s ago", now_s.saturating_sub(c.at_s)),
                at,
            ])
        })
        .collect();
    const HEAD: [&str; 5] = ["operation", "rank", "duration", "received", "file:path"];
    const W: [Constraint; 5] = [
        Constraint::Length(22),
        Constraint::Length(8),
        Constraint::Length(10),
        Constraint::Length(10),
        Constraint::Min(10),
    ];
    let title = format!("slowest calls of the last {WINDOW_S} s");
    f.render_widget(table(title, &HEAD, rows, &W), area);
}

fn draw_sparkline(f: &mut Frame, area: Rect, job: &JobSnapshot) {
    // The newest second is still filling: left out, so the line does not dip at its end.
    let full = &job.bytes_per_s[..job.bytes_per_s.len().saturating_sub(1)];
    // The last seconds that fit, one column each.
    let w = area.width.saturating_sub(2) as usize;
    let shown = &full[full.len().saturating_sub(w)..];
    let peak = shown.iter().copied().max().unwrap_or(0);
    let title = format!(
        "bytes/s of job {}, last {} s (peak {}/s)",
        job_name(&job.job_id),
        shown.len(),
        fmt_bytes_compact(peak as f64)
    );
    f.render_widget(
        Sparkline::default()
            .data(shown)
            .style(Style::new().fg(Color::Cyan))
            .block(Block::bordered().title(title)),
        area,
    );
}

/// A plain or a TLS connection.
trait ReadWrite: Read + Write {}
impl<T: Read + Write> ReadWrite for T {}

/// One `GET /top.json` from `addr` (`HOST:PORT`), presenting `token` (the collector's
/// `--token-file`) when given, in TLS trusting `tls`'s CA when given (`--tls-ca`).
pub fn fetch(
    addr: &str,
    token: Option<&[u8]>,
    tls: Option<&Arc<ClientConfig>>,
) -> Result<Snapshot, String> {
    let sa = addr
        .to_socket_addrs()
        .map_err(|e| e.to_string())?
        .next()
        .ok_or_else(|| "no address".to_string())?;
    let sock =
        TcpStream::connect_timeout(&sa, Duration::from_secs(2)).map_err(|e| e.to_string())?;
    sock.set_read_timeout(Some(Duration::from_secs(5)))
        .map_err(|e| e.to_string())?;
    sock.set_write_timeout(Some(Duration::from_secs(5)))
        .map_err(|e| e.to_string())?;
    let mut s: Box<dyn ReadWrite> = match tls {
        None => Box::new(sock),
        Some(cfg) => {
            let name = h5prov_format::tls::server_name(addr)?;
            let conn = ClientConnection::new(cfg.clone(), name).map_err(|e| e.to_string())?;
            Box::new(StreamOwned::new(conn, sock))
        }
    };
    let auth = token.map_or(String::new(), |t| {
        format!("Authorization: Bearer {}\r\n", String::from_utf8_lossy(t))
    });
    write!(
        s,
        "GET /top.json HTTP/1.1\r\nHost: {addr}\r\n{auth}Connection: close\r\n\r\n"
    )
    .and_then(|()| s.flush())
    .map_err(|e| e.to_string())?;
    let mut resp = Vec::new();
    s.take(MAX_ANSWER)
        .read_to_end(&mut resp)
        .map_err(|e| e.to_string())?;
    let split = resp
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or("not an HTTP answer")?;
    let status = String::from_utf8_lossy(&resp[..split]);
    let status = status.lines().next().unwrap_or("");
    if !status.contains(" 200 ") {
        return Err(format!(
            "GET /top.json answered `{status}` (not an h5prov collect?)"
        ));
    }
    serde_json::from_slice(&resp[split + 4..]).map_err(|e| format!("/top.json: {e}"))
}

/// Runs the view until `q`: polls `addr` every `interval`, redraws, restores the terminal
/// however it ends (ratatui's panic hook restores it on a panic).
pub fn run(
    addr: &str,
    interval: Duration,
    token: Option<Vec<u8>>,
    tls: Option<Arc<ClientConfig>>,
) -> io::Result<()> {
    let (tx, rx) = mpsc::channel();
    let a = addr.to_string();
    // A slow or unreachable collector never delays the keys; the thread ends with the
    // process.
    std::thread::spawn(move || {
        while tx.send(fetch(&a, token.as_deref(), tls.as_ref())).is_ok() {
            std::thread::sleep(interval);
        }
    });
    let mut app = App::new(addr, interval);
    let mut term = ratatui::try_init()?;
    let r = (|| -> io::Result<()> {
        loop {
            while let Ok(r) = rx.try_recv() {
                app.update(r);
            }
            term.draw(|f| draw(f, &app))?;
            if event::poll(Duration::from_millis(100))? {
                if let Event::Key(k) = event::read()? {
                    if k.kind == KeyEventKind::Press && app.key(k) {
                        return Ok(());
                    }
                }
            }
        }
    })();
    let restored = ratatui::try_restore();
    r.and(restored)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::live::{Call, Live, Sent};
    use ratatui::backend::TestBackend;
    use ratatui::Terminal;

    fn screen(app: &App, w: u16, h: u16) -> String {
        let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
        t.draw(|f| draw(f, app)).unwrap();
        let buf = t.backend().buffer().clone();
        let mut s = String::new();
        for y in 0..h {
            for x in 0..w {
                s.push_str(buf[(x, y)].symbol());
            }
            s.push('\n');
        }
        s
    }

    fn snap(live: &Live, s: u64) -> Snapshot {
        let mut snap = live.snapshot(s * 1_000_000_000);
        snap.connections_open = 2;
        snap
    }

    #[test]
    fn shows_jobs_ranks_rates_and_slow_calls() {
        let live = Live::default();
        let who = |rank| Sent {
            job_id: "4242",
            rank,
            host: "node7",
        };
        let call = Some(Call {
            dur_ns: 3_500_000,
            file: "out.h5",
            path: "/Timestep_0/x",
            interval: false,
        });
        live.add(&who("0"), "dataset.write", 1, 1 << 20, 1_000_000, None, 100);
        let mut app = App::new("127.0.0.1:9464", Duration::from_secs(1));
        app.update(Ok(snap(&live, 100)));
        // One poll: totals, no rates yet.
        let s = screen(&app, 120, 40);
        assert!(s.contains("4242"), "{s}");
        assert!(s.contains("1.0 MiB"), "{s}");
        live.add(
            &who("0"),
            "dataset.write",
            2,
            2 << 20,
            500_000_000,
            call,
            102,
        );
        live.add(&who("1"), "file.open", 1, 0, 1000, None, 102);
        app.update(Ok(snap(&live, 102)));
        let s = screen(&app, 120, 40);
        // Rank 0 wrote 2 MiB and spent 0.5 s in HDF5 over the 2 s between the polls.
        let r0 = s
            .lines()
            .find(|l| l.contains("node7") && l.contains("│0 "))
            .unwrap_or("");
        assert!(r0.contains("1.0 MiB/s") && r0.contains("25%"), "{s}");
        assert!(s.contains("dataset.write"), "{s}");
        assert!(
            s.contains("3.5 ms") && s.contains("out.h5:/Timestep_0/x"),
            "{s}"
        );
        assert!(s.contains("connections 2"), "{s}");
        // The collector goes away: the last data stays, the error is on screen.
        app.update(Err("Connection refused (os error 111)".into()));
        let s = screen(&app, 120, 40);
        assert!(
            s.contains("cannot reach collector 127.0.0.1:9464: Connection refused"),
            "{s}"
        );
        assert!(s.contains("out.h5"), "{s}");
        // Small terminals get what fits (no panic, the header first).
        for (w, h) in [(80, 24), (30, 8), (1, 1)] {
            let head = "h5prov top";
            assert!(screen(&app, w, h).starts_with(&head[..head.len().min(w as usize)]));
        }
    }

    #[test]
    fn keys_select_jobs_and_quit() {
        let live = Live::default();
        for id in ["a", "b"] {
            let w = Sent {
                job_id: id,
                rank: "0",
                host: "h",
            };
            live.add(&w, "file.open", 1, 0, 1, None, 5);
        }
        let mut app = App::new("x:1", Duration::from_secs(1));
        app.update(Ok(snap(&live, 5)));
        let key = |c| KeyEvent::new(c, KeyModifiers::NONE);
        assert!(!app.key(key(KeyCode::Down)));
        assert!(!app.key(key(KeyCode::Down)));
        assert_eq!(app.selected, 1);
        assert!(screen(&app, 100, 30).contains("ranks of job b"));
        // The selection follows the job when a new one sorts before it.
        live.add(
            &Sent {
                job_id: "0",
                rank: "0",
                host: "h",
            },
            "file.open",
            1,
            0,
            1,
            None,
            6,
        );
        app.update(Ok(snap(&live, 6)));
        assert_eq!(app.selected, 2);
        assert!(app.key(key(KeyCode::Char('q'))));
        assert!(app.key(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL)));
    }

    #[test]
    fn an_unreachable_collector_is_shown_not_fatal() {
        let mut app = App::new("127.0.0.1:1", Duration::from_millis(500));
        let e = fetch("127.0.0.1:1", None, None).unwrap_err();
        app.update(Err(e));
        let s = screen(&app, 100, 10);
        assert!(s.contains("cannot reach collector 127.0.0.1:1"), "{s}");
        assert!(s.contains("retrying every 0.5 s"), "{s}");
    }
}
