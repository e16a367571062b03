//! `h5prov collect` run as a facility service, facing hostile peers (issue 35): each test
//! has a real program traced by the real `libh5prov.so` stream to the collector as the
//! well-behaved job, and raw sockets play the hostile or broken peers. What the collector
//! then serves must stay correct for the well-behaved job, and every refusal or drop must
//! be counted in its own metrics.
//!
//! Needs Debian's `prometheus` (`scripts/test.sh` installs it) for the exposition test.

use h5prov_tests::{
    prometheus, promql, read_records, scalar, scratch, start_collector, workload, Run,
};
use std::io::Write;
use std::net::TcpStream;
use std::path::Path;
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
    let (data, traces) = (dir.join("data"), dir.join("traces"));
    std::fs::create_dir_all(&data).unwrap();
    Run::with_h5prov(
        &workload("sample"),
        &["-d", "."],
        &data,
        &traces,
        &format!("stream={listen}"),
    )
    .env("SLURM_JOB_ID", job_id)
    .ok();
    let n = read_records(&traces).len() as u64;
    assert!(n > 0, "no trace records: h5prov was not loaded");
    n
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
