//! The Perfetto export is valid Chrome trace-event JSON.

mod common;
use common::h5prov;
use serde_json::Value;

#[test]
fn export_validates_as_trace_event_json() {
    let dir = common::tempdir("perfetto");
    let out = dir.join("t.json");
    let r = h5prov(&[
        "export",
        "--perfetto",
        out.to_str().unwrap(),
        "tests/fixtures/mpi4",
    ]);
    r.expect_code(0)
        .expect_stderr("wrote 1375 events for 4 process(es), 4 thread(s)");
    let v: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).expect("valid JSON");
    let evs = v["traceEvents"].as_array().expect("traceEvents array");
    let mut complete = 0;
    let mut names = std::collections::BTreeSet::new();
    for e in evs {
        let o = e.as_object().expect("event object");
        let ph = o["ph"].as_str().expect("ph string");
        assert!(o["name"].is_string(), "{e}");
        assert!(o["pid"].is_i64(), "{e}");
        assert!(o["tid"].is_u64(), "{e}");
        match ph {
            "X" => {
                complete += 1;
                assert!(o["ts"].as_f64().unwrap() >= 0.0, "{e}");
                assert!(o["dur"].as_f64().unwrap() >= 0.0, "{e}");
                assert!(o["cat"].is_string() && o["args"].is_object(), "{e}");
                let pid = o["pid"].as_i64().unwrap();
                assert!((0..4).contains(&pid), "pid is the rank: {e}");
            }
            "M" => {
                names.insert(o["name"].as_str().unwrap().to_string());
                assert!(o["args"].is_object(), "{e}");
            }
            other => panic!("unexpected phase {other}"),
        }
    }
    assert_eq!(complete, 1375);
    for n in ["process_name", "thread_name", "process_sort_index"] {
        assert!(names.contains(n), "missing {n} metadata events");
    }
    // ts is µs since the earliest process start: the first call of rank 0 starts 1 µs in.
    let first = evs
        .iter()
        .find(|e| e["ph"] == "X" && e["pid"] == 0 && e["args"]["seq"] == 0)
        .unwrap();
    assert_eq!(first["ts"].as_f64().unwrap(), 1.0);
    assert_eq!(first["name"], "file.create");
    assert_eq!(first["dur"].as_f64().unwrap(), 1960.0);
}

#[test]
fn export_of_non_mpi_uses_pid_tracks() {
    let dir = common::tempdir("perfetto-serial");
    let out = dir.join("t.json");
    h5prov(&[
        "export",
        "--perfetto",
        out.to_str().unwrap(),
        "tests/fixtures/serial",
    ])
    .expect_code(0);
    let v: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    let evs = v["traceEvents"].as_array().unwrap();
    assert!(evs
        .iter()
        .filter(|e| e["ph"] == "X")
        .all(|e| e["pid"] == 4242));
    let pn = evs
        .iter()
        .find(|e| e["name"] == "process_name" && e["pid"] == 4242)
        .unwrap();
    assert_eq!(pn["args"]["name"], "pid 4242@node0");
}
