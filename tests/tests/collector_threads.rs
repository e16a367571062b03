//! Issue 35, defect 4: the collector at the thread limit. The first collector served each
//! stream connection on a thread of its own, and its listener died when the system refused
//! a thread (`RLIMIT_NPROC`, `ulimit -u`): the port refused everything while `/metrics`
//! still looked healthy. The next one closed (and counted, `no_thread`) each connection it
//! had no thread for. Now connections are tasks on a fixed set of worker threads: with only
//! a couple of threads to spare, many more connections than that are all served at once,
//! and the listener still serves a new sender after them.
//!
//! `RLIMIT_NPROC` does not bind root, so the collector runs as `nobody` (uid 65534, through
//! util-linux's `setpriv` and `prlimit`), from a copy of the binary that uid can read.

use h5prov_tests::{analyzer, http_get, metric_value, spawn_collector, KillOnDrop};
use std::io::Write;
use std::net::TcpStream;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// The unprivileged uid the collector runs as.
const NOBODY: &str = "65534";

/// A copy of the `h5prov` binary in a fresh directory under the system temp dir that
/// `nobody` can read and run (the build tree may sit under a mode-700 home).
fn binary_for_nobody() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("h5prov-nproc-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let bin = dir.join("h5prov");
    std::fs::copy(analyzer(), &bin).unwrap();
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
    bin
}

/// Starts `bin collect` as `nobody` with at most `nproc` processes and threads of that uid
/// (no limit when `None`): (the process, the stream and the metrics address).
fn collector_as_nobody(bin: &Path, nproc: Option<u32>) -> (KillOnDrop, String, String) {
    let mut cmd = Command::new("setpriv");
    cmd.args([
        &format!("--reuid={NOBODY}"),
        &format!("--regid={NOBODY}"),
        "--clear-groups",
        "prlimit",
    ]);
    if let Some(n) = nproc {
        cmd.arg(format!("--nproc={n}:{n}"));
    }
    cmd.arg("--")
        .arg(bin)
        .args([
            "collect",
            "--listen",
            "127.0.0.1:0",
            "--metrics",
            "127.0.0.1:0",
        ])
        .current_dir(bin.parent().unwrap());
    spawn_collector(cmd)
}

/// The number of threads of process `pid`.
fn threads(pid: u32) -> u32 {
    let st = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    st.lines()
        .find_map(|l| l.strip_prefix("Threads:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap()
}

/// Waits (at most `secs`) until `ok` holds.
fn wait_for(secs: u64, what: &str, ok: impl Fn() -> bool) {
    let t0 = Instant::now();
    while !ok() {
        assert!(
            t0.elapsed() < Duration::from_secs(secs),
            "waited {secs} s for {what}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// One `event` line of job `job`.
fn event(job: &str) -> String {
    format!(
        "{{\"v\":1,\"type\":\"event\",\"job_id\":\"{job}\",\"rank\":0,\"pid\":7,\"host\":\"h\",\
         \"seq\":0,\"tid\":1,\"start_ns\":1,\"dur_ns\":5000,\"op\":\"dataset.write\",\
         \"kind\":\"dataset\",\"file\":\"/x.h5\",\"path\":\"/d\",\"bytes\":8,\"xfer\":\"\",\
         \"status\":0}}\n"
    )
}

/// Concurrent stream connections, far more than the threads the collector may add.
const CONNS: usize = 50;

/// With two threads to spare, 50 stream connections open at once, each sending one event
/// and staying open: all 50 are served (open together, their events counted), no thread is
/// added for them, nothing is refused; after they leave, a new sender is served.
#[test]
fn many_more_connections_than_spare_threads_are_all_served() {
    let bin = binary_for_nobody();
    // The collector's own threads, unlimited (nobody runs nothing else here).
    let base = {
        let (c, _, metrics) = collector_as_nobody(&bin, None);
        assert!(http_get(&metrics, "/metrics").is_some());
        threads(c.0.id())
    };
    let (coll, listen, metrics) = collector_as_nobody(&bin, Some(base + 2));
    let pid = coll.0.id();
    let mut conns: Vec<TcpStream> = Vec::new();
    for _ in 0..CONNS {
        let mut s = TcpStream::connect(&listen).expect("the listener accepts");
        s.write_all(event("many").as_bytes()).unwrap();
        conns.push(s);
    }
    let open = |text: &str| metric_value(text, "h5prov_stream_connections_open");
    let ops = |text: &str| {
        metric_value(
            text,
            r#"h5prov_ops_total{job_id="many",rank="0",op="dataset.write"}"#,
        )
    };
    let mut last = String::new();
    let t0 = Instant::now();
    loop {
        last = http_get(&metrics, "/metrics").map_or(last, |r| r.1);
        if open(&last) == Some(CONNS as f64) && ops(&last) == Some(CONNS as f64) {
            break;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "with {} threads allowed and {base} in use, {CONNS} connections at once were \
             not all served: {last}",
            base + 2
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(
        threads(pid) <= base,
        "{} threads for {CONNS} connections, {base} without them",
        threads(pid)
    );
    assert!(!last.contains("h5prov_stream_refused_total{"), "{last}");
    drop(conns);
    wait_for(10, "the connections to close", || {
        http_get(&metrics, "/metrics").is_some_and(|r| open(&r.1) == Some(0.0))
    });
    // The listener is alive: a new sender is served.
    let mut s = TcpStream::connect(&listen).expect("the listener accepts after them");
    s.write_all(event("after").as_bytes()).unwrap();
    drop(s);
    wait_for(10, "the new sender's event in /metrics", || {
        http_get(&metrics, "/metrics")
            .is_some_and(|r| r.1.contains("h5prov_ops_total{job_id=\"after\""))
    });
    let _ = std::fs::remove_dir_all(bin.parent().unwrap());
}
