//! `h5prov collect` as a facility runs it: TLS on the stream and HTTP ports (a CA and the
//! collector's certificate made by `rcgen` at test time, no key committed) and a token. Two
//! jobs of the real `sample` workload, traced by the real `libh5prov.so`, stream to it: one
//! as this test's uid, one as `nobody` (uid 65534) from copies of the program, HDF5 and the
//! plugin that uid can read, with its own token file (mode 600, its own). A TLS client
//! without the token is refused; a traced job that does not
//! trust the collector's CA sends nothing and counts its drops. `h5prov top` (in tmux) and
//! Debian's Prometheus (`tls_config`, `authorization`) both see both jobs.
//!
//! Needs `tmux` and Debian's `prometheus` (`scripts/test.sh` installs both).

use h5prov_format::tls::{client_config, rustls, server_name};
use h5prov_tests::{
    analyzer, h5prov_cmd, hdf5_dir, http_get, metric_value, plugin_dir, prometheus_with_auth,
    promql, read_metas, read_records, scratch, shell_quote, start_collector, streamed_job,
    workload, Run,
};
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A CA (`name`-ca.pem) and, when `server`, a certificate it signs for 127.0.0.1 and
/// localhost (`name`-cert.pem, `name`-key.pem, mode 600): their paths.
fn make_certs(dir: &Path, name: &str) -> (PathBuf, PathBuf, PathBuf) {
    let ca_key = KeyPair::generate().unwrap();
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(DnType::CommonName, format!("h5prov test CA {name}"));
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let key = KeyPair::generate().unwrap();
    let params =
        CertificateParams::new(vec!["127.0.0.1".to_string(), "localhost".to_string()]).unwrap();
    let cert = params.signed_by(&key, &ca, &ca_key).unwrap();
    let paths = (
        dir.join(format!("{name}-ca.pem")),
        dir.join(format!("{name}-cert.pem")),
        dir.join(format!("{name}-key.pem")),
    );
    std::fs::write(&paths.0, ca.pem()).unwrap();
    std::fs::write(&paths.1, cert.pem()).unwrap();
    std::fs::write(&paths.2, key.serialize_pem()).unwrap();
    std::fs::set_permissions(&paths.2, std::fs::Permissions::from_mode(0o600)).unwrap();
    paths
}

/// A TLS connection to `addr` trusting `ca`.
fn tls_connect(addr: &str, ca: &Path) -> rustls::StreamOwned<rustls::ClientConnection, TcpStream> {
    let cfg: Arc<rustls::ClientConfig> = client_config(ca).unwrap();
    let conn = rustls::ClientConnection::new(cfg, server_name(addr).unwrap()).unwrap();
    let s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    rustls::StreamOwned::new(conn, s)
}

/// `GET path` over TLS with the bearer `token`: (status line, body).
fn get_tls(addr: &str, ca: &Path, path: &str, token: &str) -> (String, String) {
    let mut s = tls_connect(addr, ca);
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    s.flush().unwrap();
    let mut resp = String::new();
    s.read_to_string(&mut resp).unwrap();
    let (head, body) = resp.split_once("\r\n\r\n").unwrap();
    (head.lines().next().unwrap().to_string(), body.to_string())
}

/// The uid of the second job.
const NOBODY: u32 = 65534;

/// The `sample` workload traced by h5prov and streaming to `listen` as job `job_id`, run as
/// uid and gid `uid` (`setpriv`): the program, HDF5's libraries and `libh5prov.so` are
/// copied to a directory that uid can read, and `token` and `ca` to files of its own (the
/// token mode 600, owned by it, as the connector requires). Returns (trace records, stream
/// messages sent, dropped) and checks that the process ran as `uid`.
fn streamed_job_as(
    uid: u32,
    listen: &str,
    token: &Path,
    ca: &Path,
    job_id: &str,
) -> (u64, u64, u64) {
    let base = std::env::temp_dir().join(format!("h5prov-facility-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    let (lib, plugin, run) = (base.join("lib"), base.join("plugin"), base.join("run"));
    for d in [&base, &lib, &plugin, &run] {
        std::fs::create_dir_all(d).unwrap();
        std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    for e in std::fs::read_dir(hdf5_dir().join("lib")).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        if name.starts_with("lib") && name.contains(".so") {
            std::fs::copy(&p, lib.join(&name)).unwrap();
        }
    }
    std::fs::copy(
        plugin_dir().join("libh5prov.so"),
        plugin.join("libh5prov.so"),
    )
    .unwrap();
    let program = base.join("sample");
    std::fs::copy(workload("sample"), &program).unwrap();
    let (data, traces) = (run.join("data"), run.join("traces"));
    std::fs::create_dir_all(&data).unwrap();
    let (own_token, own_ca) = (run.join("token"), base.join("ca.pem"));
    std::fs::copy(token, &own_token).unwrap();
    std::fs::copy(ca, &own_ca).unwrap();
    for p in [&run, &data, &own_token] {
        std::os::unix::fs::chown(p, Some(uid), Some(uid)).unwrap();
    }
    let conn = format!(
        "h5prov under_vol=0;under_info={{}};path={};stream={listen};stream_token_file={};stream_tls_ca={}",
        traces.display(),
        own_token.display(),
        own_ca.display()
    );
    let out = Command::new("setpriv")
        .args([
            &format!("--reuid={uid}"),
            &format!("--regid={uid}"),
            "--clear-groups",
        ])
        .arg(&program)
        .args(["-d", "."])
        .current_dir(&data)
        .env("LD_LIBRARY_PATH", &lib)
        .env("HDF5_PLUGIN_PATH", &plugin)
        .env("HDF5_VOL_CONNECTOR", conn)
        .env("SLURM_JOB_ID", job_id)
        .env("HOME", &run)
        .output()
        .expect("setpriv (util-linux)");
    assert!(
        out.status.success(),
        "the job as uid {uid}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let n = read_records(&traces).len() as u64;
    assert!(
        n > 0,
        "no trace records as uid {uid}: h5prov was not loaded"
    );
    let metas = read_metas(&traces);
    assert!(
        metas.iter().all(|m| m.uid == uid),
        "the job did not run as uid {uid}"
    );
    let sent = metas.iter().map(|m| m.stream_sent.unwrap_or(0)).sum();
    let dropped = metas.iter().map(|m| m.stream_dropped.unwrap_or(0)).sum();
    let _ = std::fs::remove_dir_all(&base);
    (n, sent, dropped)
}

fn tmux(server: &str, args: &[&str]) -> Output {
    Command::new("tmux")
        .args(["-u", "-L", server])
        .args(args)
        .env("LC_ALL", "C.UTF-8")
        .output()
        .expect("tmux is not installed (apt-get install tmux; scripts/test.sh does)")
}

/// Kills the tmux server when dropped.
struct TmuxServer(String);

impl Drop for TmuxServer {
    fn drop(&mut self) {
        let _ = tmux(&self.0, &["kill-server"]);
    }
}

#[test]
fn a_collector_with_tls_and_a_token_serves_two_jobs_to_top_and_prometheus_only() {
    let dir = scratch("facility");
    let (ca, cert, key) = make_certs(&dir, "site");
    let (other_ca, _, _) = make_certs(&dir, "other");
    let token = dir.join("token");
    let secret = "9c1e7a53b2d84f60a1b2c3d4e5f60718";
    std::fs::write(&token, format!("{secret}\n")).unwrap();
    std::fs::set_permissions(&token, std::fs::Permissions::from_mode(0o600)).unwrap();

    // A certificate file that is not PEM: refused, naming the file.
    let junk = dir.join("junk.pem");
    std::fs::write(&junk, "not a certificate\n").unwrap();
    let out = h5prov_cmd(&[
        "collect",
        "--listen",
        "127.0.0.1:0",
        "--metrics",
        "127.0.0.1:0",
        "--tls-cert",
        &junk.to_string_lossy(),
        "--tls-key",
        &key.to_string_lossy(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains(&*junk.to_string_lossy()),
        "{err}"
    );

    let (_coll, listen, metrics) = start_collector(
        "127.0.0.1:0",
        &[
            "--token-file".as_ref(),
            token.as_os_str(),
            "--tls-cert".as_ref(),
            cert.as_os_str(),
            "--tls-key".as_ref(),
            key.as_os_str(),
        ],
    );
    let opts = format!(
        "stream={listen};stream_token_file={};stream_tls_ca={}",
        token.display(),
        ca.display()
    );
    let (a, sent_a, _) = streamed_job(&dir, &opts, "jobA");
    assert!(read_metas(&dir.join("jobA/traces"))
        .iter()
        .all(|m| m.uid != NOBODY));
    let (b, sent_b, _) = streamed_job_as(NOBODY, &listen, &token, &ca, "jobB");
    assert_eq!(
        (sent_a, sent_b),
        (a, b),
        "every message of both jobs was sent"
    );

    // A job that does not trust the collector's certificate sends nothing: all dropped.
    let opts_other = format!(
        "stream={listen};stream_token_file={};stream_tls_ca={}",
        token.display(),
        other_ca.display()
    );
    let (c, sent_c, dropped_c) = streamed_job(&dir, &opts_other, "jobC");
    assert_eq!(
        (sent_c, dropped_c),
        (0, c),
        "nothing sent to an untrusted collector"
    );

    let refused = || {
        let (_, text) = get_tls(&metrics, &ca, "/metrics", secret);
        metric_value(&text, r#"h5prov_stream_refused_total{reason="auth"}"#).unwrap_or(0.0)
    };
    let before = refused();
    // A CA file that is not PEM: the job runs, traced, with a warning naming the file.
    let (data, traces) = (dir.join("jobJ/data"), dir.join("jobJ/traces"));
    std::fs::create_dir_all(&data).unwrap();
    let out = Run::with_h5prov(
        &workload("sample"),
        &["-d", "."],
        &data,
        &traces,
        &format!("stream={listen};stream_tls_ca={}", junk.display()),
    )
    .output();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && err.contains(&*junk.to_string_lossy()),
        "{err}"
    );
    assert!(!read_records(&traces).is_empty(), "h5prov was not loaded");

    // A TLS client without the token: its line is never read, the connection closed, the
    // refusal counted.
    let mut intruder = tls_connect(&listen, &ca);
    let _ = intruder.write_all(
        b"{\"v\":1,\"type\":\"hello\",\"job_id\":\"intruder\",\"rank\":0,\"host\":\"h\"}\n",
    );
    let _ = intruder.flush();
    let mut rest = Vec::new();
    let _ = intruder.read_to_end(&mut rest);
    assert_eq!(refused(), before + 1.0, "the intruder was not refused");

    // Plain HTTP to the TLS metrics port gets no answer.
    assert!(
        !http_get(&metrics, "/metrics").is_some_and(|(st, _)| st.contains(" 200")),
        "/metrics answered in plain HTTP"
    );
    let (st, top) = get_tls(&metrics, &ca, "/top.json", secret);
    assert!(st.contains(" 200"), "{st}");
    let top: serde_json::Value = serde_json::from_str(&top).unwrap();
    let jobs: Vec<&str> = top["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["job_id"].as_str().unwrap())
        .collect();
    assert_eq!(jobs, ["jobA", "jobB"], "/top.json has exactly the two jobs");

    // Prometheus over TLS, with the token.
    let (_prom, prom) = prometheus_with_auth(&dir, &metrics, Some(&token), Some(&ca));
    let scalar = |q: &str| promql(&prom, q).first().map_or(0.0, |(_, v)| *v);
    let t0 = Instant::now();
    loop {
        let n = |j: &str| scalar(&format!("sum(h5prov_ops_total{{job_id=\"{j}\"}})")) as u64;
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
        scalar(r#"count(h5prov_ops_total{job_id=~"intruder|jobC"})"#),
        0.0
    );

    // `h5prov top` over TLS, with the token, in a real terminal.
    let server = TmuxServer(format!("h5prov-facility-{}", std::process::id()));
    let script = format!(
        "{} top --collector {} --interval 300 --token-file {} --tls-ca {}; echo \"top exited $?\"; exec sleep 600",
        shell_quote(&analyzer().to_string_lossy()),
        shell_quote(&metrics),
        shell_quote(&token.to_string_lossy()),
        shell_quote(&ca.to_string_lossy()),
    );
    let out = tmux(
        &server.0,
        &["new-session", "-d", "-x", "150", "-y", "50", &script],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let t0 = Instant::now();
    loop {
        let s =
            String::from_utf8_lossy(&tmux(&server.0, &["capture-pane", "-p"]).stdout).into_owned();
        if s.contains("jobA") && s.contains("jobB") {
            assert!(!s.contains("jobC") && !s.contains("intruder"), "{s}");
            break;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "top never showed both jobs:\n{s}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    tmux(&server.0, &["send-keys", "q"]);
}
