//! `stream=` end to end with real parts: an MPI job (`mpirun -np 4`, the MPI build of
//! `workloads/vpic_write`) traced by h5prov streams to `h5prov collect`, which Debian's
//! Prometheus (started here on a loopback port) scrapes while the job runs; PromQL through
//! Prometheus's HTTP API must agree with the trace files. A second test kills the collector
//! mid-run: the job finishes, the drops are counted in the meta files, the traces are
//! complete.
//!
//! Needs the parallel HDF5 (`hdf5-test-harness build-hdf5 --variant parallel`) and the
//! `prometheus` package (`scripts/test.sh` installs it).

use h5prov_tests::{
    analyzer, captured_events, describe_output, http_get, parallel_hdf5, plugin_dir, prometheus,
    promql, read_metas, read_records, repo, scalar, scratch, start_collector, KillOnDrop,
};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

const RANKS: usize = 4;
/// Seconds under mpirun on 2 cores, even on an idle machine: long enough for several
/// scrapes (every 1 s) during the run.
const VPIC_ARGS: [&str; 6] = ["-d", ".", "-p", "1024", "-t", "1000"];

/// The MPI workloads, built once per test binary.
fn mpi_workload(name: &str) -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    let dir = BUILT.get_or_init(|| {
        let out = scratch("stream-mpi-workloads");
        let st = Command::new("sh")
            .arg(repo().join("workloads/build.sh"))
            .arg("--mpi")
            .arg(&out)
            .env("HDF5_DIR", parallel_hdf5())
            .output()
            .expect("run workloads/build.sh --mpi");
        assert!(
            st.status.success(),
            "{}",
            describe_output("build.sh --mpi", &st)
        );
        out.keep()
    });
    dir.join(format!("{name}-mpi"))
}

/// Starts `h5prov collect` on free loopback ports: (guard, stream address, metrics address).
fn collector(out: Option<&Path>) -> (KillOnDrop, String, String) {
    match out {
        Some(o) => start_collector("127.0.0.1:0", &["--out".as_ref(), o.as_os_str()]),
        None => start_collector("127.0.0.1:0", &[]),
    }
}

/// `mpirun -np 4 exe args` through h5prov, started (not waited for).
fn spawn_mpi(exe: &Path, args: &[&str], dir: &Path, conn: &str) -> Child {
    Command::new("mpirun")
        .args([
            "-np",
            &RANKS.to_string(),
            "--oversubscribe",
            "-x",
            "LD_LIBRARY_PATH",
        ])
        .args(["-x", "HDF5_PLUGIN_PATH", "-x", "HDF5_VOL_CONNECTOR"])
        .current_dir(dir)
        .env("LD_LIBRARY_PATH", parallel_hdf5().join("lib"))
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("HDF5_PLUGIN_PATH", plugin_dir())
        .env("HDF5_VOL_CONNECTOR", conn)
        .arg(exe)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run mpirun")
}

fn finish(child: Child, what: &str) -> Output {
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", describe_output(what, &out));
    out
}

#[test]
fn prometheus_scrapes_the_collector_while_an_mpi_job_streams() {
    let dir = scratch("stream-prometheus");
    let data = dir.join("data");
    let traces = dir.join("traces");
    std::fs::create_dir_all(&data).unwrap();
    let (_coll, listen, metrics) = collector(Some(&dir.join("collected")));
    let (_prom, prom) = prometheus(&dir, &metrics);
    let conn = format!(
        "h5prov under_vol=0;under_info={{}};path={};stream={listen}",
        traces.display()
    );
    let job = spawn_mpi(&mpi_workload("vpic_write"), &VPIC_ARGS, &data, &conn);
    // Prometheus sees the job's writes while it runs.
    let mut seen_running = 0.0;
    let mut job = Some(job);
    let t0 = Instant::now();
    while let Some(j) = job.as_mut() {
        if j.try_wait().unwrap().is_some() {
            break;
        }
        let w = scalar(&prom, r#"sum(h5prov_ops_total{op="dataset.write"})"#);
        if w > 0.0 {
            seen_running = w;
        }
        assert!(t0.elapsed() < Duration::from_secs(300), "job hangs");
        std::thread::sleep(Duration::from_millis(300));
    }
    let out = finish(job.take().unwrap(), "mpirun vpic_write with stream=");
    std::fs::remove_dir_all(&data).ok();

    // h5prov was loaded: every rank left complete traces, and sent every message.
    let metas = read_metas(&traces);
    assert_eq!(metas.len(), RANKS, "{}", describe_output("vpic", &out));
    let records = read_records(&traces);
    for m in &metas {
        assert!(m.end_ns.is_some() && m.dropped == 0, "{m:?}");
        assert_eq!(m.stream_dropped, Some(0), "{m:?}");
        assert_eq!(m.stream_sent, Some(m.records), "{m:?}");
    }
    let job_id = metas[0].job_id.clone();
    assert!(metas.iter().all(|m| m.job_id == job_id));
    assert!(
        seen_running > 0.0,
        "Prometheus saw no writes while the job ran"
    );

    // What the traces say, per operation.
    let mut count: BTreeMap<String, u64> = BTreeMap::new();
    let mut write_bytes = 0u64;
    for r in &records {
        *count.entry(r.op.clone()).or_default() += 1;
        if r.op == "dataset.write" {
            write_bytes += r.bytes;
        }
    }
    let total: u64 = count.values().sum();
    // Wait for a scrape after the last messages arrived.
    let sel = format!("job_id=\"{job_id}\"");
    let t0 = Instant::now();
    while scalar(&prom, &format!("sum(h5prov_ops_total{{{sel}}})")) as u64 != total {
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "Prometheus has {} ops, the traces {total}",
            scalar(&prom, &format!("sum(h5prov_ops_total{{{sel}}})"))
        );
        std::thread::sleep(Duration::from_millis(300));
    }
    let by_op: BTreeMap<String, u64> =
        promql(&prom, &format!("sum by (op) (h5prov_ops_total{{{sel}}})"))
            .into_iter()
            .map(|(l, v)| (l["op"].clone(), v as u64))
            .collect();
    assert_eq!(by_op, count, "op counts: Prometheus vs traces");
    let by_rank = promql(
        &prom,
        &format!("sum by (rank) (h5prov_ops_total{{{sel},op=\"dataset.write\"}})"),
    );
    assert_eq!(by_rank.len(), RANKS, "{by_rank:?}");
    let bytes = scalar(
        &prom,
        &format!("sum(h5prov_bytes_total{{{sel},op=\"dataset.write\"}})"),
    );
    assert_eq!(bytes as u64, write_bytes, "written bytes");
    // The write rate over the run: positive, and at most the bytes over the one-second
    // scrape interval (a rate over a 1 m window averages them over at least 1 s).
    let rate = scalar(
        &prom,
        &format!("sum(rate(h5prov_bytes_total{{{sel},op=\"dataset.write\"}}[1m]))"),
    );
    assert!(
        rate > 0.0 && rate <= write_bytes as f64,
        "write rate {rate} B/s for {write_bytes} B"
    );
    let hist = scalar(
        &prom,
        &format!("sum(h5prov_op_duration_seconds_count{{{sel},op=\"dataset.write\"}})"),
    );
    assert_eq!(hist as u64, count["dataset.write"]);
    assert_eq!(scalar(&prom, "h5prov_stream_malformed_total"), 0.0);
    // The collector's files hold every event: it writes each one after counting it, and
    // flushes when a sender's connection ends (and every second).
    let collected = || captured_events(&dir.join("collected"));
    let t0 = Instant::now();
    while collected() != total && t0.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(200));
    }
    assert_eq!(collected(), total, "events in the collector's --out files");
}

#[test]
fn a_collector_killed_mid_run_harms_neither_the_job_nor_its_traces() {
    let dir = scratch("stream-kill");
    let data = dir.join("data");
    let traces = dir.join("traces");
    std::fs::create_dir_all(&data).unwrap();
    let (mut coll, listen, metrics) = collector(None);
    let conn = format!(
        "h5prov under_vol=0;under_info={{}};path={};stream={listen};stream_interval=100",
        traces.display()
    );
    let job = spawn_mpi(&mpi_workload("vpic_write"), &VPIC_ARGS, &data, &conn);
    // Kill it once it has received writes.
    let t0 = Instant::now();
    loop {
        let m = http_get(&metrics, "/metrics")
            .map(|r| r.1)
            .unwrap_or_default();
        if m.contains("op=\"dataset.write\"") {
            break;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(120),
            "no writes reached the collector"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    coll.0.kill().unwrap();
    coll.0.wait().unwrap();
    let out = finish(job, "mpirun vpic_write, collector killed");
    std::fs::remove_dir_all(&data).ok();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        stdout.lines().filter(|l| l.starts_with("ns=")).count(),
        RANKS,
        "{stdout}"
    );

    let metas = read_metas(&traces);
    assert_eq!(metas.len(), RANKS);
    let records = read_records(&traces);
    assert_eq!(
        records.len() as u64,
        metas.iter().map(|m| m.records).sum::<u64>(),
        "every record is in the traces"
    );
    let mut dropped = 0;
    for m in &metas {
        assert!(m.end_ns.is_some() && m.dropped == 0, "{m:?}");
        let (sent, d) = (m.stream_sent.unwrap(), m.stream_dropped.unwrap());
        assert_eq!(sent + d, m.records, "{m:?}");
        dropped += d;
    }
    assert!(dropped > 0, "the drops are counted: {metas:?}");
    // The report says so.
    let rep = Command::new(analyzer())
        .arg("report")
        .arg(&traces)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&rep.stdout);
    assert!(text.contains("The live stream lost"), "{text}");
}
