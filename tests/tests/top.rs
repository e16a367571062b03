//! `h5prov top` in a real terminal: tmux (a detached session of fixed size, read with
//! `capture-pane`) runs the view against `h5prov collect` while four processes of the real
//! `workloads/vpic_write`, traced by the real `libh5prov.so`, stream to it (one job of four
//! ranks as Slurm describes it: `SLURM_JOB_ID`, `SLURM_PROCID`). The screen must agree with
//! the trace files; `q` must end the view with status 0 and give the terminal back as it
//! was. Pointed at a dead address, the view says so and keeps running.
//!
//! Needs `tmux` (`scripts/test.sh` installs it).

use h5prov_tests::{analyzer, read_records, scratch, shell_quote, start_collector, workload, Run};
use std::collections::BTreeMap;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

const RANKS: usize = 4;
const COLS: u16 = 150;
const LINES: u16 = 50;

/// A tmux server of our own (`tmux -L NAME`), killed when dropped.
struct Tmux(String);

impl Tmux {
    /// Starts `script` (a `sh -c` line) in a detached session of COLS × LINES.
    fn start(name: &str, script: &str) -> Tmux {
        let t = Tmux(format!("h5prov-{name}-{}", std::process::id()));
        let out = t.cmd(&[
            "new-session",
            "-d",
            "-x",
            &COLS.to_string(),
            "-y",
            &LINES.to_string(),
            script,
        ]);
        assert!(
            out.status.success(),
            "tmux new-session: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        t
    }

    fn cmd(&self, args: &[&str]) -> Output {
        Command::new("tmux")
            .args(["-u", "-L", &self.0])
            .args(args)
            .env("LC_ALL", "C.UTF-8")
            .output()
            .expect("tmux is not installed (apt-get install tmux; scripts/test.sh does)")
    }

    /// The visible screen.
    fn screen(&self) -> String {
        String::from_utf8_lossy(&self.cmd(&["capture-pane", "-p"]).stdout).into_owned()
    }

    /// Polls the screen until `ok` holds (at most `secs`); the last screen.
    fn wait_for(&self, secs: u64, what: &str, ok: impl Fn(&str) -> bool) -> String {
        let t0 = Instant::now();
        loop {
            let s = self.screen();
            if ok(&s) {
                return s;
            }
            assert!(
                t0.elapsed() < Duration::from_secs(secs),
                "waited {secs} s for {what}; the screen:\n{s}"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    fn display(&self, format: &str) -> String {
        let out = self.cmd(&["display-message", "-p", format]);
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.cmd(&["kill-server"]);
    }
}

/// The shell line tmux runs: `h5prov top`, then whether the terminal's settings are the
/// ones it started with, and top's status; then it stays, so the screen can be read.
fn top_script(collector: &str) -> String {
    format!(
        "before=$(stty -g); {} top --collector {} --interval 300; st=$?; \
         if [ \"$(stty -g)\" = \"$before\" ]; then echo 'tty restored'; else echo 'tty NOT restored'; fi; \
         echo \"top exited $st\"; exec sleep 600",
        shell_quote(&analyzer().to_string_lossy()),
        shell_quote(collector)
    )
}

/// `q`, then top's exit status and the terminal: status 0, the shell's own screen back
/// (not the alternate screen), the same stty settings as before.
fn quit_and_check_restored(t: &Tmux) {
    let out = t.cmd(&["send-keys", "q"]);
    assert!(out.status.success());
    let s = t.wait_for(20, "top to exit on q", |s| s.contains("top exited"));
    assert!(s.contains("top exited 0"), "{s}");
    assert!(s.contains("tty restored"), "{s}");
    assert_eq!(
        t.display("#{alternate_on}"),
        "0",
        "still on the alternate screen"
    );
    assert_eq!(t.display("#{cursor_flag}"), "1", "cursor still hidden");
}

/// `1.5 MiB`, as `h5prov top` writes sizes.
fn iec(b: u64) -> String {
    let mut v = b as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit < 5 {
        v /= 1024.0;
        unit += 1;
    }
    match unit {
        0 => format!("{b} B"),
        u => format!("{v:.1} {}", ["KiB", "MiB", "GiB", "TiB", "PiB"][u - 1]),
    }
}

/// The cells of a table row: the text between `│`s, trimmed (a row of two tables side by
/// side gives both).
fn cells(line: &str) -> Vec<&str> {
    line.split('│').map(str::trim).collect()
}

/// The rows of the bordered table titled `title` (header row first).
fn table<'a>(screen: &'a str, title: &str) -> Vec<&'a str> {
    screen
        .lines()
        .skip_while(|l| !l.contains(title))
        .skip(1)
        .take_while(|l| !l.starts_with('└'))
        .collect()
}

#[test]
fn top_shows_a_streaming_job_and_quits_cleanly() {
    let dir = scratch("top");
    let data = dir.join("data");
    let traces = dir.join("traces");
    std::fs::create_dir_all(&data).unwrap();
    let (_coll, listen, metrics) = start_collector("127.0.0.1:0", &[]);
    let tmux = Tmux::start("top", &top_script(&metrics));
    tmux.wait_for(30, "top's first poll", |s| {
        s.contains("No job has streamed to this collector yet")
    });

    // One job of four ranks, each a process of its own, streaming events.
    let job_id = format!("top{}", std::process::id());
    let exe = workload("vpic_write");
    let runs: Vec<_> = (0..RANKS)
        .map(|r| {
            let (exe, data, traces, listen, job_id) = (
                exe.clone(),
                data.clone(),
                traces.clone(),
                listen.clone(),
                job_id.clone(),
            );
            std::thread::spawn(move || {
                Run::with_h5prov(
                    &exe,
                    &["-d", ".", "-p", "4096", "-t", "40"],
                    &data,
                    &traces,
                    &format!("stream={listen}"),
                )
                .env("SLURM_JOB_ID", &job_id)
                .env("SLURM_PROCID", &r.to_string())
                .env("SLURM_NTASKS", &RANKS.to_string())
                .ok()
            })
        })
        .collect();
    for r in runs {
        r.join().expect("a vpic_write process failed");
    }

    // What the traces say.
    let records = read_records(&traces);
    let mut bytes: BTreeMap<String, u64> = BTreeMap::new();
    for rec in &records {
        *bytes.entry(rec.rank.to_string()).or_default() += rec.bytes;
    }
    assert_eq!(bytes.len(), RANKS, "{bytes:?}");
    let calls = records.iter().filter(|r| r.op == "dataset.write").count();

    // The sparkline of the last minute has the bytes once their second is complete (the
    // current one is left out).
    let sparkline_peak = |s: &str| -> bool {
        s.lines()
            .find(|l| l.contains(&format!("bytes/s of job {job_id}")))
            .is_some_and(|l| l.contains("(peak ") && !l.contains("(peak 0 B/s)"))
    };
    // The screen, once every message has arrived: the dataset.write row has every call.
    let screen = tmux.wait_for(30, "every dataset.write and the bytes on screen", |s| {
        sparkline_peak(s)
            && table(s, "operations").iter().any(|l| {
                let c = cells(l);
                // operation ops/s bytes/s(2 words) calls bytes(2) time(2)
                let w: Vec<&str> = c.get(3).map_or(vec![], |r| r.split_whitespace().collect());
                w.first() == Some(&"dataset.write")
                    && w.len() >= 5
                    && w[w.len() - 5] == calls.to_string()
            })
    });
    assert!(screen.contains("jobs 1 "), "{screen}");
    // The job: its id, four ranks, bytes.
    let job_row = table(&screen, "jobs")
        .into_iter()
        .find(|l| l.contains(&job_id))
        .unwrap_or_else(|| panic!("no row of job {job_id}:\n{screen}"));
    let jc: Vec<&str> = cells(job_row)[1]
        .split_whitespace()
        .skip_while(|w| *w != job_id)
        .collect();
    assert_eq!(jc.get(1), Some(&"4"), "ranks of the job: {job_row}");
    assert!(
        !job_row.trim_end_matches('│').trim_end().ends_with(" 0 B"),
        "{job_row}"
    );
    // Every rank, with the bytes it wrote.
    let ranks: Vec<Vec<&str>> = table(&screen, &format!("ranks of job {job_id}"))
        .iter()
        .skip(1)
        .map(|l| cells(l)[1].split_whitespace().collect())
        .filter(|c: &Vec<&str>| !c.is_empty())
        .collect();
    let shown: Vec<&str> = ranks.iter().map(|c| c[0]).collect();
    assert_eq!(shown, ["0", "1", "2", "3"], "{screen}");
    for c in &ranks {
        // rank host ops/s bytes/s(2 words) in-HDF5 bytes(2 words)
        let shown = c[c.len() - 2..].join(" ");
        let traced = bytes[c[0]];
        assert!(traced > 0);
        assert_eq!(shown, iec(traced), "bytes of rank {}:\n{screen}", c[0]);
    }
    // The slowest calls are real calls of the traces: operation, rank, file:path.
    let slow: Vec<Vec<&str>> = table(&screen, "slowest calls")
        .iter()
        .skip(1)
        .map(|l| cells(l)[1].split_whitespace().collect())
        .filter(|c: &Vec<&str>| !c.is_empty())
        .collect();
    assert!(!slow.is_empty(), "no slowest calls:\n{screen}");
    for c in &slow {
        let (op, rank, at) = (c[0], c[1], c[c.len() - 1]);
        let (file, path) = at
            .split_once(':')
            .unwrap_or_else(|| panic!("slow call {c:?}: no file:path (an event has one)"));
        assert!(
            records.iter().any(|r| r.op == op
                && r.rank.to_string() == rank
                && r.file == file
                && r.path == path),
            "slow call {c:?} is not in the traces:\n{screen}"
        );
    }

    quit_and_check_restored(&tmux);
}

#[test]
fn top_says_when_it_cannot_reach_the_collector() {
    // A port nothing listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let addr = format!("127.0.0.1:{port}");
    let tmux = Tmux::start("top-dead", &top_script(&addr));
    let msg = format!("cannot reach collector {addr}");
    let s = tmux.wait_for(30, "the unreachable collector on screen", |s| {
        s.contains(&msg)
    });
    assert!(s.contains("retrying every 0.3 s"), "{s}");
    // Still running (on the alternate screen), and quits cleanly.
    assert_eq!(tmux.display("#{alternate_on}"), "1", "{s}");
    quit_and_check_restored(&tmux);
}

/// Issue 35, defect 7: job id, host, operation and path came off the network. With OSC
/// (retitle) and CSI (clear, colour) sequences in them, `h5prov top` draws them with the
/// control bytes replaced: the pane keeps its title and shows the strings inert.
#[test]
fn top_draws_escape_sequences_from_the_network_inert() {
    use std::io::Write;
    let (_coll, listen, metrics) = start_collector("127.0.0.1:0", &[]);
    let osc = |what: &str| format!("\x1b]2;PWNED-{what}\x07\x1b[2J\x1b[41m");
    let mut line = serde_json::json!({
        "v": 1, "type": "event", "job_id": format!("j{}", osc("JOB")), "rank": 0, "pid": 7,
        "host": format!("h{}", osc("HOST")), "seq": 0, "tid": 1, "start_ns": 1,
        "dur_ns": 9000, "op": format!("o{}", osc("OP")), "kind": "dataset", "file": "/f.h5",
        "path": format!("/p{}", osc("PATH")), "bytes": 8, "xfer": "", "status": 0
    })
    .to_string();
    line.push('\n');
    std::net::TcpStream::connect(&listen)
        .unwrap()
        .write_all(line.as_bytes())
        .unwrap();
    let tmux = Tmux::start("top-esc", &top_script(&metrics));
    let title = tmux.display("#{pane_title}");
    let shown = |s: &str| {
        ["JOB", "HOST", "OP", "PATH"]
            .iter()
            .all(|w| s.contains(&format!("\u{FFFD}]2;PWNED-{w}\u{FFFD}")))
    };
    let s = tmux.wait_for(30, "the hostile strings drawn inert", shown);
    // Two more polls: nothing retitled the pane.
    std::thread::sleep(Duration::from_millis(800));
    let now = tmux.display("#{pane_title}");
    assert!(
        !now.contains("PWNED"),
        "top let the network retitle the terminal: {now:?}"
    );
    assert_eq!(now, title, "{s}");
    quit_and_check_restored(&tmux);
}
