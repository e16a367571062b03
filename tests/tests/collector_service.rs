//! `h5prov collect` run as a facility service, facing hostile peers (issue 35): each test
//! has a real program traced by the real `libh5prov.so` stream to the collector as the
//! well-behaved job, and raw sockets play the hostile or broken peers. What the collector
//! then serves must stay correct for the well-behaved job, and every refusal or drop must
//! be counted in its own metrics.
//!
//! Needs Debian's `prometheus` (`scripts/test.sh` installs it) for the exposition test.

use h5prov_tests::{
    analyzer, closed_by_peer, h5prov_cmd, http_get, metric_value, prometheus,
    prometheus_with_token, promql, scalar, scratch, shell_quote, start_collector, streamed_job,
    KillOnDrop,
};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// One `event` message line of job `job_id` (the fields the connector sends).
fn event(job_id: &str, rank: i64, host: &str, op: &str, path: &str, bytes: u64) -> String {
    let mut m = serde_json::json!({
        "v": 1, "type": "event", "job_id": job_id, "rank": rank, "pid": 77, "host": host,
        "seq": 0, "tid": 1, "start_ns": 1, "dur_ns": 5000, "op": op, "kind": "dataset",
        "file": "/x.h5", "path": path, "bytes": bytes, "xfer": "", "status": 0
    })
    .to_string();
    m.push('\n');
    m
}

/// Sends `lines` on one TCP connection to the collector and closes it.
fn send(listen: &str, lines: &[String]) {
    let mut s = TcpStream::connect(listen).expect("connect to the collector");
    for l in lines {
        s.write_all(l.as_bytes()).unwrap();
    }
}

/// The real `sample` workload traced by h5prov, streaming as job `job_id`: its number of
/// trace records (the traces prove h5prov was loaded).
fn traced_job(dir: &Path, listen: &str, job_id: &str) -> u64 {
    streamed_job(dir, &format!("stream={listen}"), job_id).0
}

/// Polls `/metrics` until `ok` holds (at most `secs`); the last text.
fn wait_metrics(addr: &str, secs: u64, what: &str, ok: impl Fn(&str) -> bool) -> String {
    let t0 = Instant::now();
    loop {
        let text = http_get(addr, "/metrics").map(|r| r.1).unwrap_or_default();
        if ok(&text) {
            return text;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(secs),
            "waited {secs} s for {what}; /metrics:\n{text}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The collector's peak resident memory, KiB (`VmHWM`).
fn peak_kib(pid: u32) -> u64 {
    let st = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    st.lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

/// The sum of job `job`'s `h5prov_ops_total` series in the exposition `text`.
fn job_ops(text: &str, job: &str) -> u64 {
    let prefix = format!("h5prov_ops_total{{job_id=\"{job}\"");
    text.lines()
        .filter(|l| l.starts_with(&prefix))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum::<f64>() as u64
}

/// Defect 1: label values that came off the network (a job id `12"3`, newlines,
/// backslashes, a forged series in an op name) are escaped in the exposition: a real
/// Prometheus keeps the target `up`, stores the hostile values as they were sent, and the
/// traced job's series are intact and not forged.
#[test]
fn hostile_label_values_neither_take_prometheus_down_nor_forge_series() {
    let dir = scratch("collector-labels");
    let (_coll, listen, metrics) = start_collector("127.0.0.1:0", &[]);
    let (_prom, prom) = prometheus(&dir, &metrics);
    let good = format!("good{}", std::process::id());
    let records = traced_job(&dir, &listen, &good);
    let hostile = [
        ("12\"3", "dataset.write"),
        (
            "a\nb",
            "x\"} 1e15\nh5prov_ops_total{job_id=\"forged\",rank=\"0\",op=\"y",
        ),
        ("c:\\x\\", "op\\\"\n# EOF\n"),
    ];
    let lines: Vec<String> = hostile
        .iter()
        .map(|(j, op)| event(j, 0, "h", op, "/d", 8))
        .collect();
    send(&listen, &lines);
    // Scrapes after both jobs arrived: every series of both, nothing forged, target up.
    let sel = format!("h5prov_ops_total{{job_id=\"{good}\"}}");
    let t0 = Instant::now();
    loop {
        let jobs: Vec<String> = promql(&prom, "h5prov_ops_total")
            .into_iter()
            .map(|(l, _)| l["job_id"].clone())
            .collect();
        let all_in = hostile.iter().all(|(j, _)| jobs.iter().any(|x| x == j));
        if all_in && scalar(&prom, &format!("sum({sel})")) as u64 == records {
            break;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "Prometheus has job ids {jobs:?}, {} ops of {good} (the traces: {records}), up = {}",
            scalar(&prom, &format!("sum({sel})")),
            scalar(&prom, r#"up{job="h5prov"}"#)
        );
        std::thread::sleep(Duration::from_millis(300));
    }
    // Two more scrapes: the target stays up.
    std::thread::sleep(Duration::from_millis(2500));
    assert_eq!(scalar(&prom, r#"up{job="h5prov"}"#), 1.0, "target down");
    for (labels, v) in promql(&prom, "h5prov_ops_total") {
        let (job, op) = (&labels["job_id"], &labels["op"]);
        if *job == good {
            continue;
        }
        assert!(
            hostile.iter().any(|(j, o)| j == job && o == op),
            "forged series {labels:?}"
        );
        assert_eq!(v, 1.0, "{labels:?}");
    }
    assert_eq!(
        scalar(&prom, r#"count(h5prov_ops_total{job_id="forged"})"#),
        0.0
    );
}

/// Defects 3, 6 and 11: four connections each send a 48 MiB line without a newline, then
/// a good message; another sends a `"v":99` message and two events of 2^64-1 bytes. The
/// long lines are skipped without being kept (the collector's peak memory stays far below
/// one of them) and counted, the messages after them are taken, the unknown version is
/// dropped and counted, the byte counter stops at 2^64-1 instead of wrapping, and the
/// traced job's counts are intact.
#[test]
fn long_lines_unknown_versions_and_huge_counts_are_bounded_and_counted() {
    let dir = scratch("collector-bounded");
    let (coll, listen, metrics) = start_collector("127.0.0.1:0", &[]);
    let good = format!("good{}", std::process::id());
    let records = traced_job(&dir, &listen, &good);
    let senders: Vec<_> = (0..4)
        .map(|i| {
            let listen = listen.clone();
            std::thread::spawn(move || {
                let mut s = TcpStream::connect(&listen).unwrap();
                let chunk = vec![b'x'; 1 << 20];
                for _ in 0..48 {
                    s.write_all(&chunk).unwrap();
                }
                s.write_all(b"\n").unwrap();
                s.write_all(event("big", i, "h", "dataset.write", "/d", 1).as_bytes())
                    .unwrap();
            })
        })
        .collect();
    for t in senders {
        t.join().unwrap();
    }
    let huge = event("sat", 0, "h", "dataset.read", "/d", u64::MAX);
    send(
        &listen,
        &[
            event("v99", 0, "h", "dataset.write", "/d", 1).replace("\"v\":1", "\"v\":99"),
            huge.clone(),
            huge,
        ],
    );
    let text = wait_metrics(&metrics, 30, "the messages after the long lines", |t| {
        metric_value(t, r#"h5prov_stream_messages_total{type="event"}"#)
            .is_some_and(|n| n as u64 == records + 4 + 2)
    });
    assert_eq!(
        metric_value(&text, r#"h5prov_stream_dropped_total{reason="too_long"}"#),
        Some(4.0),
        "{text}"
    );
    assert_eq!(
        metric_value(&text, r#"h5prov_stream_dropped_total{reason="version"}"#),
        Some(1.0),
        "{text}"
    );
    assert!(!text.contains("job_id=\"v99\""), "{text}");
    let sat = r#"h5prov_bytes_total{job_id="sat",rank="0",op="dataset.read"} "#;
    let line = text
        .lines()
        .find(|l| l.starts_with(sat))
        .unwrap_or_default();
    assert_eq!(line, format!("{sat}{}", u64::MAX), "{text}");
    assert_eq!(job_ops(&text, &good), records, "{text}");
    let peak = peak_kib(coll.0.id());
    assert!(
        peak < 40 << 10,
        "the collector's peak memory is {peak} KiB after 48 MiB lines"
    );
}

/// Defects 3, 4 and 5: with `--max-connections 3 --idle-timeout 2 --max-series 20
/// --job-expiry 6`, a fourth stream connection is closed at once and counted while the
/// listener keeps serving; silent connections are closed after 2 s and counted; label sets
/// beyond 20 are dropped and counted, and a job silent for 6 s leaves `/metrics`. (With
/// `--job-expiry 2`, whole seconds, a loaded machine could let the job expire while the
/// series cap was checked.) On the
/// HTTP side, a client sending its request a byte at a time and an idle one do not keep
/// `/metrics` from answering.
#[test]
fn connections_series_and_http_clients_are_limited_without_stalling() {
    let (_coll, listen, metrics) = start_collector(
        "127.0.0.1:0",
        &[
            "--max-connections".as_ref(),
            "3".as_ref(),
            "--idle-timeout".as_ref(),
            "2".as_ref(),
            "--max-series".as_ref(),
            "20".as_ref(),
            "--job-expiry".as_ref(),
            "6".as_ref(),
        ],
    );
    // HTTP: a slow client and an idle one, for the whole test.
    let stop = Arc::new(AtomicBool::new(false));
    let slow = {
        let (stop, metrics) = (stop.clone(), metrics.clone());
        std::thread::spawn(move || {
            let _idle = TcpStream::connect(&metrics).unwrap();
            let mut s = TcpStream::connect(&metrics).unwrap();
            for b in b"GET /metrics HTTP/1.1\r\nX-Slow: ".iter().cycle() {
                if stop.load(Ordering::Relaxed) || s.write_all(&[*b]).is_err() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(200));
            }
        })
    };
    std::thread::sleep(Duration::from_millis(500));
    let (st, _) = http_get(&metrics, "/metrics").expect("/metrics does not answer");
    assert!(st.contains(" 200"), "{st}");

    let mut open: Vec<TcpStream> = (0..3)
        .map(|_| TcpStream::connect(&listen).unwrap())
        .collect();
    wait_metrics(&metrics, 10, "three open connections", |t| {
        metric_value(t, "h5prov_stream_connections_open") == Some(3.0)
    });
    let mut fourth = TcpStream::connect(&listen).unwrap();
    fourth
        .set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    assert!(
        closed_by_peer(&mut fourth, 5),
        "the 4th connection was not refused"
    );
    let text = wait_metrics(&metrics, 5, "the refusal counted", |t| {
        metric_value(
            t,
            r#"h5prov_stream_refused_total{reason="connection_limit"}"#,
        ) == Some(1.0)
    });
    assert_eq!(
        metric_value(&text, "h5prov_stream_connections_open"),
        Some(3.0)
    );
    // The silent ones are closed after the idle timeout; then new connections are served.
    for s in &mut open {
        s.set_read_timeout(Some(Duration::from_millis(200)))
            .unwrap();
        assert!(closed_by_peer(s, 10), "an idle connection stayed open");
    }
    wait_metrics(&metrics, 5, "the idle closes counted", |t| {
        metric_value(t, r#"h5prov_stream_refused_total{reason="idle"}"#) == Some(3.0)
            && metric_value(t, "h5prov_stream_connections_open") == Some(0.0)
    });
    let lines: Vec<String> = (0..25)
        .map(|r| event("many", r, "h", "dataset.write", "/d", 1))
        .collect();
    send(&listen, &lines);
    // One scrape is not atomic against the ingest: it may encode the ops counters before
    // the 20th set's first count and the drops after the last event. The state is waited
    // for as a whole.
    let text = wait_metrics(&metrics, 5, "the series cap", |t| {
        metric_value(t, r#"h5prov_stream_dropped_total{reason="cardinality"}"#) == Some(5.0)
            && metric_value(t, "h5prov_collect_series") == Some(20.0)
            && t.matches("h5prov_ops_total{job_id=\"many\"").count() == 20
    });
    assert_eq!(
        metric_value(&text, "h5prov_collect_series"),
        Some(20.0),
        "{text}"
    );
    assert_eq!(text.matches("h5prov_ops_total{job_id=\"many\"").count(), 20);
    // The job expires: its series leave, and a new job has room again.
    let text = wait_metrics(&metrics, 15, "the job to expire", |t| {
        metric_value(t, "h5prov_collect_jobs_expired_total") == Some(1.0)
    });
    assert!(!text.contains("job_id=\"many\""), "{text}");
    send(&listen, &[event("next", 0, "h", "file.open", "/", 0)]);
    wait_metrics(&metrics, 5, "a new job after the expiry", |t| {
        t.contains("h5prov_ops_total{job_id=\"next\"")
    });
    stop.store(true, Ordering::Relaxed);
    slow.join().unwrap();
}

/// Defect 9: a second collector on a Unix socket path where one listens is refused with
/// an error naming the path (the first keeps its socket and its senders); the socket is
/// mode 0600; a stale socket file, with nobody listening, is replaced.
#[test]
fn one_collector_owns_a_unix_socket_path() {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch("collector-unix");
    let sock = dir.join("c.sock");
    let addr = format!("unix:{}", sock.display());
    let (mut first, _, metrics) = start_collector(&addr, &[]);
    let mode = std::fs::metadata(&sock).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "socket mode {mode:o}");
    let second = Command::new(analyzer())
        .args(["collect", "--listen", &addr, "--metrics", "127.0.0.1:0"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut second = KillOnDrop(second);
    let t0 = Instant::now();
    let status = loop {
        if let Some(st) = second.0.try_wait().unwrap() {
            break st;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "a second collector took {addr} while the first listened"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    let mut err = String::new();
    second
        .0
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert!(!status.success());
    assert!(
        err.contains(&sock.display().to_string()) && err.contains("listens"),
        "{err}"
    );
    // The first still has its senders.
    let mut s = UnixStream::connect(&sock).unwrap();
    s.write_all(event("u", 0, "h", "file.open", "/", 0).as_bytes())
        .unwrap();
    drop(s);
    wait_metrics(&metrics, 5, "the message on the first collector", |t| {
        t.contains("h5prov_ops_total{job_id=\"u\"")
    });
    // Killed, it leaves a stale socket file, which the next collector replaces.
    first.0.kill().unwrap();
    first.0.wait().unwrap();
    assert!(sock.exists());
    let (_third, listen, _) = start_collector(&addr, &[]);
    assert_eq!(listen, addr);
    UnixStream::connect(&sock).expect("the new collector's socket");
}

/// Defect 8: `--out` on a file system that refuses the writes (a 200 kB file size limit,
/// `prlimit --fsize`, with SIGXFSZ ignored as a daemon would): one error line on stderr,
/// every lost message counted in `h5prov_collect_out_lost_total`, and the capture holds
/// only whole lines, so it reads back.
#[test]
fn out_on_a_full_disk_says_so_once_and_counts_what_it_lost() {
    let dir = scratch("collector-out-full");
    let out = dir.join("capture");
    let err_path = dir.join("stderr");
    let script = format!(
        "trap '' XFSZ; exec prlimit --fsize=200000 -- {} collect --listen 127.0.0.1:0 \
         --metrics 127.0.0.1:0 --out {}",
        shell_quote(&analyzer().to_string_lossy()),
        shell_quote(&out.to_string_lossy())
    );
    let mut child = Command::new("sh")
        .args(["-c", &script])
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(&err_path).unwrap())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let _guard = KillOnDrop(child);
    let mut next = || lines.next().unwrap().unwrap();
    let listen = next().strip_prefix("listen ").unwrap().to_string();
    let metrics = next().strip_prefix("metrics ").unwrap().to_string();
    const N: u64 = 3000;
    let msgs: Vec<String> = (0..N)
        .map(|i| event("full", 0, "h", "dataset.write", &format!("/d{i}"), i))
        .collect();
    send(&listen, &msgs);
    let text = wait_metrics(
        &metrics,
        20,
        "every message taken and written or lost",
        |t| {
            metric_value(t, r#"h5prov_stream_messages_total{type="event"}"#) == Some(N as f64)
                && metric_value(t, "h5prov_collect_out_lost_total")
                    .is_some_and(|l| l as u64 + h5prov_tests::captured_events(&out) == N)
        },
    );
    let lost = metric_value(&text, "h5prov_collect_out_lost_total").unwrap() as u64;
    assert!(lost > 0 && lost < N, "lost {lost} of {N}");
    for f in h5prov_tests::files_with_suffix(&out, ".jsonl") {
        let data = std::fs::read_to_string(&f).unwrap();
        assert!(data.ends_with('\n'), "{} ends mid-line", f.display());
        for l in data.lines() {
            serde_json::from_str::<serde_json::Value>(l)
                .unwrap_or_else(|e| panic!("{}: {e}: {l}", f.display()));
        }
    }
    let err = std::fs::read_to_string(&err_path).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("--out"), "{err}");
}

/// An HTTP GET with `Authorization: Bearer TOKEN`: (status line, body).
fn get_with_token(addr: &str, path: &str, token: &str) -> (String, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut resp = String::new();
    s.read_to_string(&mut resp).unwrap();
    let (head, body) = resp.split_once("\r\n\r\n").unwrap();
    (head.lines().next().unwrap().to_string(), body.to_string())
}

/// Defects 2 and 10: with a shared-secret token on both ends, two traced jobs stream and
/// both Prometheus (with the token as Bearer) and `/top.json` (with it) see both; a client
/// without the token is refused and counted, and so is an HTTP client without it. A
/// process squatting a port without the token receives the handshake's greeting only:
/// no `hello`, uid, executable or path, while the traced job ends well with the drops
/// counted. A token file others may read is refused by name.
#[test]
fn a_token_authenticates_both_ends_of_the_stream_and_the_http_side() {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch("collector-token");
    let token = dir.join("token");
    let secret = "5f2b8c0d9e7a41c3b6d8e0f1a2b3c4d5";
    std::fs::write(&token, format!("{secret}\n")).unwrap();
    std::fs::set_permissions(&token, std::fs::Permissions::from_mode(0o600)).unwrap();
    let loose = dir.join("loose-token");
    std::fs::write(&loose, format!("{secret}\n")).unwrap();
    std::fs::set_permissions(&loose, std::fs::Permissions::from_mode(0o644)).unwrap();
    let out = h5prov_cmd(&[
        "collect",
        "--listen",
        "127.0.0.1:0",
        "--metrics",
        "127.0.0.1:0",
        "--token-file",
        &loose.to_string_lossy(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains(&*loose.to_string_lossy()) && err.contains("644"),
        "{err}"
    );

    let (_coll, listen, metrics) =
        start_collector("127.0.0.1:0", &["--token-file".as_ref(), token.as_os_str()]);
    let opts = format!("stream={listen};stream_token_file={}", token.display());
    let (a, sent_a, _) = streamed_job(&dir, &opts, "jobA");
    let (b, sent_b, _) = streamed_job(&dir, &opts, "jobB");
    assert_eq!(
        (sent_a, sent_b),
        (a, b),
        "every message of both jobs was sent"
    );
    // A client without the token: closed before it is read, and counted.
    let mut intruder = TcpStream::connect(&listen).unwrap();
    let _ = intruder.write_all(event("intruder", 0, "h", "dataset.write", "/x", 1).as_bytes());
    intruder
        .set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    assert!(
        closed_by_peer(&mut intruder, 10),
        "the intruder stayed connected"
    );
    // HTTP without the token: refused.
    for path in ["/metrics", "/top.json"] {
        let (st, _) = http_get(&metrics, path).unwrap();
        assert!(st.contains(" 401"), "{path} without the token: {st}");
    }
    let (st, top) = get_with_token(&metrics, "/top.json", secret);
    assert!(st.contains(" 200"), "{st}");
    let top: serde_json::Value = serde_json::from_str(&top).unwrap();
    let jobs: Vec<&str> = top["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["job_id"].as_str().unwrap())
        .collect();
    assert_eq!(jobs, ["jobA", "jobB"], "/top.json has exactly the two jobs");
    let (_, text) = get_with_token(&metrics, "/metrics", secret);
    assert_eq!(
        metric_value(&text, r#"h5prov_stream_refused_total{reason="auth"}"#),
        Some(1.0),
        "{text}"
    );
    assert_eq!(
        metric_value(&text, r#"h5prov_stream_refused_total{reason="http_auth"}"#),
        Some(2.0),
        "{text}"
    );
    // Prometheus, with the token.
    let (_prom, prom) = prometheus_with_token(&dir, &metrics, Some(&token));
    let t0 = Instant::now();
    loop {
        let n = |j: &str| scalar(&prom, &format!("sum(h5prov_ops_total{{job_id=\"{j}\"}})")) as u64;
        if n("jobA") == a && n("jobB") == b {
            break;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "Prometheus has {} and {} ops, the traces {a} and {b}",
            n("jobA"),
            n("jobB")
        );
        std::thread::sleep(Duration::from_millis(300));
    }
    assert_eq!(
        scalar(&prom, r#"count(h5prov_ops_total{job_id="intruder"})"#),
        0.0
    );

    // A port squatter without the token: it answers the greeting with a made-up proof.
    let squat = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let squat_addr = squat.local_addr().unwrap().to_string();
    let heard = std::thread::spawn(move || {
        let mut all = Vec::new();
        squat.set_nonblocking(false).unwrap();
        // The connector retries every second while the job runs: take what comes.
        for s in squat.incoming().take(1) {
            let mut s = s.unwrap();
            s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
            let mut r = BufReader::new(s.try_clone().unwrap());
            let mut greeting = String::new();
            r.read_line(&mut greeting).unwrap();
            all.extend_from_slice(greeting.as_bytes());
            let _ = writeln!(s, "{} {}", "0".repeat(32), "0".repeat(64));
            let _ = r.read_to_end(&mut all);
        }
        String::from_utf8_lossy(&all).into_owned()
    });
    let opts = format!("stream={squat_addr};stream_token_file={}", token.display());
    let (c, sent_c, dropped_c) = streamed_job(&dir, &opts, "jobC");
    let heard = heard.join().unwrap();
    assert!(heard.starts_with("h5prov-auth 1 "), "{heard:?}");
    assert_eq!(
        heard.lines().count(),
        1,
        "the squatter heard more: {heard:?}"
    );
    assert_eq!(
        (sent_c, dropped_c),
        (0, c),
        "nothing sent to the squatter, all counted"
    );
}

/// Sends `lines` to the Unix socket `sock` from a process of uid and gid `uid`
/// (`setpriv` running Debian's python3).
fn send_as(uid: u32, sock: &Path, lines: &[String]) {
    let script = "import socket, sys\n\
                  s = socket.socket(socket.AF_UNIX)\n\
                  s.connect(sys.argv[1])\n\
                  s.sendall(sys.stdin.buffer.read())\n\
                  s.close()\n";
    let mut child = Command::new("setpriv")
        .args([
            &format!("--reuid={uid}"),
            &format!("--regid={uid}"),
            "--clear-groups",
            "/usr/bin/python3",
            "-c",
            script,
        ])
        .arg(sock)
        .stdin(Stdio::piped())
        .spawn()
        .expect("setpriv (util-linux) and /usr/bin/python3");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(lines.concat().as_bytes())
        .unwrap();
    assert!(child.wait().unwrap().success(), "the client as uid {uid}");
}

/// Issue 35, the Unix socket policy: the collector knows each Unix peer's uid
/// (`SO_PEERCRED`). A non-root peer's `hello` must carry its own uid, and the first such
/// peer that sends for a job owns it: another non-root uid's messages for that job are
/// dropped and counted; root may send for any job.
#[test]
fn unix_socket_peers_send_only_as_themselves_for_their_own_jobs() {
    let dir = scratch("collector-peercred");
    let sock = dir.join("c.sock");
    let (_coll, _, metrics) = start_collector(
        &format!("unix:{}", sock.display()),
        &["--unix-mode".as_ref(), "666".as_ref()],
    );
    let hello = |uid: u32| {
        format!(
            "{{\"v\":1,\"type\":\"hello\",\"job_id\":\"n\",\"rank\":0,\"pid\":5,\"host\":\"h\",\"uid\":{uid}}}\n"
        )
    };
    let ev = event("n", 0, "h", "dataset.write", "/d", 1);
    // nobody claiming to be root: dropped; as itself, it owns job n.
    send_as(65534, &sock, &[hello(0)]);
    send_as(65534, &sock, &[hello(65534), ev.clone()]);
    wait_metrics(&metrics, 5, "nobody's event", |t| {
        t.contains(r#"h5prov_ops_total{job_id="n",rank="0",op="dataset.write"} 1"#)
    });
    // Another user may not add to job n; root may.
    send_as(65533, &sock, std::slice::from_ref(&ev));
    let mut s = UnixStream::connect(&sock).unwrap();
    s.write_all(ev.as_bytes()).unwrap();
    drop(s);
    let text = wait_metrics(&metrics, 5, "root's event and the drops", |t| {
        metric_value(t, r#"h5prov_stream_dropped_total{reason="uid"}"#) == Some(2.0)
            && t.contains(r#"h5prov_ops_total{job_id="n",rank="0",op="dataset.write"} 2"#)
    });
    assert_eq!(
        metric_value(&text, r#"h5prov_stream_messages_total{type="hello"}"#),
        Some(1.0),
        "{text}"
    );
}

/// A binary stream connection's frames (`h5prov_format::stream`): the preface, the
/// `hello` of job `job_id` (rank 0), the trace columns, and one frame of `n` records of
/// `dataset.write`, each of 1000 bytes.
fn binary_conn(job_id: &str, n: u64) -> (Vec<u8>, Vec<u8>) {
    use h5prov_format::stream::{
        frame, stream_preface, trace_header_body, FRAME_HEADER, FRAME_HELLO, FRAME_RECORDS,
    };
    use h5prov_format::{BinEncoder, TraceRecordRef};
    let hello = serde_json::json!({
        "v": 1, "type": "hello", "job_id": job_id, "rank": 0, "pid": 77, "host": "h",
        "world_size": 1, "uid": 1000, "exe": "/bin/x", "level": "dataset",
        "stream_level": "event"
    })
    .to_string()
        + "\n";
    let mut head = stream_preface().to_vec();
    head.extend_from_slice(&frame(FRAME_HELLO, hello.as_bytes()));
    head.extend_from_slice(&frame(FRAME_HEADER, &trace_header_body()));
    let (mut block, mut enc) = (Vec::new(), BinEncoder::default());
    for i in 0..n {
        TraceRecordRef {
            seq: i,
            start_ns: 1_700_000_000_000_000_000 + i,
            total_ns: 5000,
            op: "dataset.write",
            kind: "dataset",
            file: "/x.h5",
            path: "/d",
            bytes: 1000,
            ..TraceRecordRef::default()
        }
        .write_bin(&mut block, &mut enc);
    }
    (head, frame(FRAME_RECORDS, &block))
}

/// Issue 35 item 7: at `stream_level=event` the connector sends its trace records in
/// binary frames (the default `stream_format=bin`), and every one of a real traced
/// program's records reaches the collector: `/metrics`, `/top.json` and the `--out`
/// capture each count exactly the trace's records, the frames are counted, and the
/// process dropped nothing. (Before, the stream was one JSON line per event: no frames.)
#[test]
fn a_traced_job_streams_every_record_in_binary_frames() {
    let dir = scratch("collector-binary");
    let out = dir.join("capture");
    let (_coll, listen, metrics) =
        start_collector("127.0.0.1:0", &["--out".as_ref(), out.as_os_str()]);
    let job = format!("bin{}", std::process::id());
    let (records, sent, dropped) = streamed_job(&dir, &format!("stream={listen}"), &job);
    assert_eq!(
        (sent, dropped),
        (records, 0),
        "the process sent every record"
    );
    wait_metrics(&metrics, 30, "every record", |t| {
        metric_value(t, r#"h5prov_stream_messages_total{type="event"}"#)
            .is_some_and(|n| n as u64 == records)
    });
    // A fresh exposition: the one above renders the counters before the message count, so
    // it can hold the count of a frame whose counters it rendered before they were added.
    let text = http_get(&metrics, "/metrics").expect("/metrics answers").1;
    let frames = metric_value(&text, "h5prov_stream_frames_total").unwrap_or(0.0);
    assert!(frames >= 1.0, "no binary frames were taken:\n{text}");
    assert_eq!(job_ops(&text, &job), records, "{text}");
    assert!(!text.contains("h5prov_stream_malformed_total 1"), "{text}");
    let top: serde_json::Value =
        serde_json::from_str(&http_get(&metrics, "/top.json").unwrap().1).unwrap();
    let j = top["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["job_id"] == job.as_str())
        .expect("the job in /top.json");
    let calls: u64 = j["ops"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["count"].as_u64().unwrap())
        .sum();
    assert_eq!(calls, records, "{j}");
    // The capture has every event as a JSON line (flushed each second).
    let t0 = Instant::now();
    while h5prov_tests::captured_events(&out) < records && t0.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(h5prov_tests::captured_events(&out), records);
}

/// Issue 35 item 7, hostile binary peers: a frame over the 1 MiB cap is read past without
/// being kept (`too_long`) and the connection's next frame is taken; a wrong framing
/// version is refused (`version`); a frame cut by the end of the connection and a frame of
/// an unknown kind after a valid handshake are malformed, the latter closing the
/// connection. A traced job streaming at the same time loses nothing.
#[test]
fn hostile_binary_peers_are_refused_and_counted_while_a_job_streams() {
    let dir = scratch("collector-binary-hostile");
    let (coll, listen, metrics) = start_collector("127.0.0.1:0", &[]);
    let job = format!("good{}", std::process::id());
    let hostile = std::thread::spawn({
        let listen = listen.clone();
        move || {
            // An oversized frame (64 MiB announced and sent), then a valid one.
            let (head, records) = binary_conn("big", 3);
            let mut s = TcpStream::connect(&listen).unwrap();
            s.write_all(&head).unwrap();
            s.write_all(&(64u32 << 20).to_le_bytes()).unwrap();
            s.write_all(b"r").unwrap();
            let chunk = vec![0xffu8; 1 << 20];
            for _ in 0..64 {
                s.write_all(&chunk).unwrap();
            }
            s.write_all(&records).unwrap();
            drop(s);
            // A wrong framing version.
            let mut s = TcpStream::connect(&listen).unwrap();
            s.set_read_timeout(Some(Duration::from_millis(200)))
                .unwrap();
            s.write_all(b"H5PROVS\x09").unwrap();
            s.write_all(&records).unwrap();
            assert!(closed_by_peer(&mut s, 10), "a wrong version was not closed");
            // A frame cut short.
            let (head, records) = binary_conn("cut", 3);
            let mut s = TcpStream::connect(&listen).unwrap();
            s.write_all(&head).unwrap();
            s.write_all(&records[..records.len() - 2]).unwrap();
            drop(s);
            // Garbage after a valid handshake.
            let (head, _) = binary_conn("junk", 1);
            let mut s = TcpStream::connect(&listen).unwrap();
            s.set_read_timeout(Some(Duration::from_millis(200)))
                .unwrap();
            s.write_all(&head).unwrap();
            s.write_all(&[4, 0, 0, 0, b'Z', 1, 2, 3, 4]).unwrap();
            assert!(closed_by_peer(&mut s, 10), "garbage was not closed");
        }
    });
    let (records, _, dropped) = streamed_job(&dir, &format!("stream={listen}"), &job);
    hostile.join().unwrap();
    assert_eq!(dropped, 0);
    let text = wait_metrics(&metrics, 30, "the job's records and the valid frame", |t| {
        metric_value(t, r#"h5prov_stream_messages_total{type="event"}"#)
            .is_some_and(|n| n as u64 == records + 3)
            && metric_value(t, "h5prov_stream_malformed_total").is_some_and(|n| n >= 2.0)
    });
    for (reason, n) in [("too_long", 1.0), ("version", 1.0)] {
        assert_eq!(
            metric_value(
                &text,
                &format!("h5prov_stream_dropped_total{{reason=\"{reason}\"}}")
            ),
            Some(n),
            "{text}"
        );
    }
    assert_eq!(
        metric_value(&text, "h5prov_stream_malformed_total"),
        Some(2.0),
        "{text}"
    );
    assert!(
        text.contains(r#"h5prov_ops_total{job_id="big",rank="0",op="dataset.write"} 3"#),
        "{text}"
    );
    assert!(
        !text.contains("job_id=\"cut\",rank=\"0\",op=\"dataset.write\""),
        "{text}"
    );
    assert!(!text.contains("job_id=\"junk\",rank=\"0\",op=\""), "{text}");
    assert_eq!(job_ops(&text, &job), records, "{text}");
    let peak = peak_kib(coll.0.id());
    assert!(
        peak < 40 << 10,
        "the collector's peak memory is {peak} KiB after a 64 MiB frame"
    );
}
