//! File-name collisions: processes whose `name=` template expands to the same stem (the
//! same rank, e.g. several jobs' rank 7 writing to one directory) each get a `.N` suffix,
//! chosen once for all of a process's files, so that its trace, objects and meta files
//! share one stem and the analyzer pairs each meta with its own trace.

use h5prov_tests::*;
use std::collections::BTreeMap;

#[test]
fn sixteen_processes_of_one_rank_pair_their_own_files() {
    let exe = c_program("exit_paths");
    let dir = scratch("collisions");
    let traces = dir.join("traces");
    // A stale objects file of an earlier run (the same rank, the same template): the first
    // process's objects file collides and its trace and meta do not, every time.
    std::fs::create_dir_all(&traces).unwrap();
    std::fs::write(
        traces.join("run-r7.objects.csv"),
        format!("{}\n", h5prov_format::OBJECT_COLUMNS.join(",")),
    )
    .unwrap();
    // All 16 of a round started before any is waited for: they create their files at
    // once. Three rounds into one directory: more collisions.
    for round in 0..3 {
        let children: Vec<_> = (0..16)
            .map(|i| {
                let file = format!("f{round}-{i}.h5");
                Run::with_h5prov(
                    &exe,
                    &[&file, "20", "close"],
                    &dir,
                    &traces,
                    "name=run-r%r;format=csv",
                )
                .env("OMPI_COMM_WORLD_RANK", "7")
                .spawn_piped()
            })
            .collect();
        for mut c in children {
            assert!(c.wait().unwrap().success());
        }
    }
    let metas = files_with_suffix(&traces, ".meta.json");
    assert_eq!(metas.len(), 48, "{metas:?}");
    let mut stems = BTreeMap::new();
    for m in &metas {
        let meta: h5prov_format::ProcessMeta =
            serde_json::from_slice(&std::fs::read(m).unwrap()).unwrap();
        let stem = m
            .to_str()
            .unwrap()
            .strip_suffix(".meta.json")
            .unwrap()
            .to_string();
        // The trace with the meta's stem is the same process's.
        let trace = format!("{stem}.trace.csv");
        let text = std::fs::read_to_string(&trace)
            .unwrap_or_else(|e| panic!("{trace}: no trace next to {}: {e}", m.display()));
        let mut rows = csv::Reader::from_reader(text.as_bytes());
        let pids: std::collections::BTreeSet<u32> = rows
            .deserialize::<h5prov_format::TraceRecord>()
            .map(|r| r.unwrap().pid)
            .collect();
        assert_eq!(
            pids.into_iter().collect::<Vec<_>>(),
            vec![meta.pid],
            "{trace} holds another process's records than its meta {}",
            m.display()
        );
        let objects = format!("{stem}.objects.csv");
        let text = std::fs::read_to_string(&objects).unwrap();
        let mut rows = csv::Reader::from_reader(text.as_bytes());
        for r in rows.deserialize::<h5prov_format::ObjectSummary>() {
            assert_eq!(r.unwrap().pid, meta.pid, "{objects}");
        }
        stems.insert(stem, meta.pid);
    }
    assert_eq!(stems.len(), 48);
    let out = h5prov_ok(&[
        "report",
        "--json",
        "--no-progress",
        traces.to_str().unwrap(),
    ]);
    let rep: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(
        rep["warnings"].as_array().map_or(0, |w| w.len()),
        0,
        "{:#}",
        rep["warnings"]
    );
}
