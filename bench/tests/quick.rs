//! Runs `h5prov-bench --quick` with native and pass_through, `h5prov-bench analyzer
//! --quick` (200k real trace records in 4 files; pandas when importable) and its
//! many-objects line alone (`--objects-only`), and checks that
//! the report files exist and parse, the trace set is made of real rows and the analyzer and
//! pandas agree. No timing assertions: tests don't time.

use h5prov_tests::Scratch;
use std::path::PathBuf;
use std::process::{Command, Output};

/// Runs the benchmark binary; on failure, panics with the command, working
/// directory, status, stdout and stderr.
fn run_bench(args: &[&str]) -> Output {
    let exe = env!("CARGO_BIN_EXE_h5prov-bench");
    let out = Command::new(exe)
        .args(args)
        .output()
        .expect("start h5prov-bench");
    if !out.status.success() {
        panic!(
            "command failed: {exe} {}\ncwd: {}\nstatus: {}\n--- stdout\n{}\n--- stderr\n{}",
            args.join(" "),
            std::env::current_dir().unwrap().display(),
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    out
}

/// A fresh directory under Cargo's test scratch space, removed when a passing test ends
/// (a failing one keeps it as evidence): the four runs' sets and traces are ~1 GB.
fn fresh_dir(name: &str) -> Scratch {
    Scratch::fresh(PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name))
}

#[test]
fn quick_native_and_pass_through_write_a_parsable_report() {
    let base = fresh_dir("bench-quick");
    let out_dir = base.join("report");
    let work_dir = base.join("work");
    let out = run_bench(&[
        "--quick",
        "--modes",
        "native,pass_through",
        "--pin",
        "0",
        "--out",
        out_dir.to_str().unwrap(),
        "--work-dir",
        work_dir.to_str().unwrap(),
    ]);

    let md = std::fs::read_to_string(out_dir.join("report.md")).expect("report.md");
    assert!(md.starts_with("# h5prov benchmark report"), "{md}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("# h5prov benchmark report"));
    for w in ["metadata-heavy", "vpic-write", "bdcats-read"] {
        assert!(
            md.contains(&format!("## {w}, 1 process")),
            "{w} missing:\n{md}"
        );
        assert!(
            md.contains(&format!("## {w}, 4 processes")),
            "{w} np=4 missing:\n{md}"
        );
    }

    let text = std::fs::read_to_string(out_dir.join("report.json")).expect("report.json");
    let v: serde_json::Value = serde_json::from_str(&text).expect("report.json parses");
    assert_eq!(v["report_version"], 1);
    assert_eq!(v["quick"], true);
    assert_eq!(v["pin"], "0");
    assert!(md.contains("pinned to CPU 0 (`taskset -c 0`)"), "{md}");
    let cases = v["cases"].as_array().expect("cases");
    assert_eq!(cases.len(), 6);
    for c in cases {
        let modes: Vec<&str> = c["modes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["mode"].as_str().unwrap())
            .collect();
        assert_eq!(modes, ["native", "pass_through"], "{c}");
        let rounds = v["rounds"].as_u64().unwrap() as usize;
        assert_eq!(c["raw"].as_array().unwrap().len(), 2 * rounds);
        for m in c["modes"].as_array().unwrap() {
            assert!(m["kernel_ms"]["median"].as_f64().unwrap() > 0.0, "{m}");
            assert!(m["peak_rss_mib"]["median"].as_f64().unwrap() > 0.0, "{m}");
            assert!(m["ratio_native"]["median"].is_number(), "{m}");
            assert!(m["ratio_pass_through"]["median"].is_number(), "{m}");
        }
        if c["workload"] == "metadata-heavy" {
            let pt = &c["modes"][1];
            assert!(
                pt["added_ns_per_call_vs_native"]["median"].is_number(),
                "{pt}"
            );
            assert!(c["raw"][0]["calls"].as_u64().unwrap() > 0);
        }
    }
    // No trace directories were needed, and the run cleaned up after itself.
    assert!(!work_dir.join("runs/vpic-write-np1/native-r0").exists());
}

/// The analyzer binary of the test's own profile (`target/<profile>/h5prov`), built with
/// cargo when it is missing.
fn h5prov_binary() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let profile_dir = exe.parent().unwrap().parent().unwrap();
    let p = profile_dir.join("h5prov");
    if p.is_file() {
        return p;
    }
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    h5prov_bench::analyzer::build_h5prov(&repo, !cfg!(debug_assertions))
        .expect("build h5prov (cargo build -p h5prov-analyzer)")
}

#[test]
fn quick_analyzer_benchmark_writes_reports_that_agree() {
    let base = fresh_dir("bench-analyzer-quick");
    let out_dir = base.join("report");
    let work_dir = base.join("work");
    let h5prov = h5prov_binary();
    let pandas = h5prov_bench::analyzer::pandas_version("python3");
    let mut args = vec![
        "analyzer",
        "--quick",
        "--rounds",
        "1",
        "--h5prov",
        h5prov.to_str().unwrap(),
        "--out",
        out_dir.to_str().unwrap(),
        "--work-dir",
        work_dir.to_str().unwrap(),
    ];
    if let Err(e) = &pandas {
        eprintln!("pandas not importable, timing the analyzer only: {e}");
        args.push("--no-pandas");
    }
    let out = run_bench(&args);

    let md = std::fs::read_to_string(out_dir.join("analyzer.md")).expect("analyzer.md");
    assert!(md.starts_with("# h5prov analyzer benchmark"), "{md}");
    assert!(md.contains("200000 records in 4 process files"), "{md}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("# h5prov analyzer benchmark"));

    let text = std::fs::read_to_string(out_dir.join("analyzer.json")).expect("analyzer.json");
    let v: serde_json::Value = serde_json::from_str(&text).expect("analyzer.json parses");
    assert_eq!(
        v["report_version"],
        h5prov_bench::analyzer::ANALYZER_REPORT_VERSION
    );
    assert_eq!(v["quick"], true);
    assert_eq!(v["records"], 200_000);
    assert_eq!(v["files"], 4);
    let a = &v["agreement"];
    assert_eq!(a["analyzer_records"], 200_000, "{a}");
    assert_eq!(a["analyzer_ranks"], 4, "{a}");
    assert_eq!(a["ok"], true, "{a}");
    let tools: Vec<&str> = v["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["tool"].as_str().unwrap())
        .collect();
    assert_eq!(&tools[..2], ["h5prov report", "h5prov report --json"]);
    for t in v["tools"].as_array().unwrap() {
        assert!(t["seconds"]["median"].as_f64().unwrap() > 0.0, "{t}");
        assert!(t["peak_rss_mb"]["median"].as_f64().unwrap() > 0.0, "{t}");
    }
    assert_eq!(v["targets"].as_array().unwrap().len(), 3);
    // The many-objects line at its --quick sizes, one row each, in the Markdown too.
    let rows = v["objects"]["rows"].as_array().expect("objects rows");
    assert_eq!(
        rows.iter()
            .map(|r| r["objects"].as_u64().unwrap())
            .collect::<Vec<_>>(),
        h5prov_bench::objects::QUICK_OBJECTS
    );
    assert!(md.contains("## Many objects (PyTables-like)"), "{md}");
    if pandas.is_ok() {
        assert_eq!(tools.len(), 3);
        assert_eq!(a["pandas_records"], 200_000, "{a}");
        assert!(a["ops"].as_u64().unwrap() >= 5, "{a}");
        assert!(a["rank_ops"].as_u64().unwrap() >= 20, "{a}");
        assert!(v["ratio_pandas_over_analyzer"]["median"].is_number());
        assert!(md.contains("**agree**"), "{md}");
    }

    // The set: 4 ranks of real rows, identical to their source but for rank and pid.
    let set = PathBuf::from(v["set_dir"].as_str().unwrap());
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(set.join("manifest.json")).unwrap()).unwrap();
    let source_dir = work_dir.join("source");
    for (i, f) in manifest["per_file"].as_array().unwrap().iter().enumerate() {
        let pid = 100_000 + i;
        let stem = f["stem"].as_str().unwrap();
        assert_eq!(stem, format!("h5prov-r{i}-p{pid}"));
        let copy = std::fs::read_to_string(set.join(format!("{stem}.trace.csv"))).unwrap();
        let src = std::fs::read_to_string(
            source_dir.join(format!("{}.trace.csv", f["source"].as_str().unwrap())),
        )
        .unwrap();
        let mut n = 0;
        for (k, (c, s)) in copy.lines().zip(src.lines()).enumerate() {
            if k == 0 {
                assert_eq!(c, s, "header");
                continue;
            }
            let (cf, sf): (Vec<&str>, Vec<&str>) = (c.split(',').collect(), s.split(',').collect());
            assert_eq!(cf.len(), sf.len());
            assert_eq!(
                (cf[4], cf[5]),
                (i.to_string().as_str(), pid.to_string().as_str())
            );
            for j in (0..cf.len()).filter(|&j| j != 4 && j != 5) {
                assert_eq!(cf[j], sf[j], "{stem} row {k} field {j}");
            }
            n += 1;
        }
        assert_eq!(n, 50_000, "{stem}");
        assert_eq!(copy.lines().count(), 50_001, "{stem}");
        let meta: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(set.join(format!("{stem}.meta.json"))).unwrap(),
        )
        .unwrap();
        assert_eq!(
            (meta["rank"].as_u64(), meta["pid"].as_u64()),
            (Some(i as u64), Some(pid as u64))
        );
        assert!(set.join(format!("{stem}.objects.csv")).is_file());
    }

    // A second run reuses the cached set.
    let out = run_bench(&[
        "analyzer",
        "--quick",
        "--rounds",
        "1",
        "--no-pandas",
        "--h5prov",
        h5prov.to_str().unwrap(),
        "--out",
        out_dir.to_str().unwrap(),
        "--work-dir",
        work_dir.to_str().unwrap(),
    ]);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("trace set cached"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("analyzer.json")).unwrap())
            .unwrap();
    assert_eq!(v["set_cached"], true);
    assert_eq!(v["agreement"]["analyzer_records"], 200_000);
}

/// `target/<profile>/libh5prov.so`, the connector of the test's own profile.
fn connector_so() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let so = exe.parent().unwrap().parent().unwrap().join("libh5prov.so");
    assert!(
        so.is_file(),
        "{} is missing: build the connector first (cargo build -p h5prov)",
        so.display()
    );
    so
}

#[test]
fn quick_baseline_plugin_runs_as_twin_modes_in_the_same_rounds() {
    let base = fresh_dir("bench-baseline-quick");
    let (new, old, empty) = (base.join("new"), base.join("old"), base.join("empty"));
    for d in [&new, &old, &empty] {
        std::fs::create_dir_all(d).unwrap();
    }
    for d in [&new, &old] {
        std::fs::copy(connector_so(), d.join("libh5prov.so")).unwrap();
    }
    let out_dir = base.join("report");
    let work_dir = base.join("work");
    let modes_of = |v: &serde_json::Value| -> Vec<String> {
        v["cases"][0]["modes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["mode"].as_str().unwrap().to_string())
            .collect()
    };
    let common = |plugin: &PathBuf| {
        vec![
            "--quick".to_string(),
            "--modes".into(),
            "native,pass_through,h5prov-dataset-bin".into(),
            "--workloads".into(),
            "metadata-heavy".into(),
            "--procs".into(),
            "1".into(),
            "--plugin-path".into(),
            plugin.display().to_string(),
            "--baseline-plugin-path".into(),
            old.display().to_string(),
            "--out".into(),
            out_dir.display().to_string(),
            "--work-dir".into(),
            work_dir.display().to_string(),
        ]
    };

    // Both plugins: each h5prov mode gets its twin, right after it, in every round.
    let mut args = common(&new);
    args.extend(["--callgrind", "--callgrind-iters", "2", "4"].map(String::from));
    run_bench(&args.iter().map(String::as_str).collect::<Vec<_>>());
    let md = std::fs::read_to_string(out_dir.join("report.md")).unwrap();
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("report.json")).unwrap())
            .unwrap();
    assert_eq!(
        modes_of(&v),
        [
            "native",
            "pass_through",
            "h5prov-dataset-bin",
            "baseline-h5prov-dataset-bin"
        ]
    );
    let modes = v["cases"][0]["modes"].as_array().unwrap();
    let twin = &modes[3];
    assert!(twin["ratio_native"]["median"].is_number(), "{twin}");
    assert!(twin["ratio_pass_through"]["median"].is_number(), "{twin}");
    assert!(
        twin["trace_records"]["median"].as_f64().unwrap() > 0.0,
        "{twin}"
    );
    assert_eq!(modes[2]["baseline"], "baseline-h5prov-dataset-bin");
    assert!(
        modes[2]["ratio_baseline"]["median"].is_number(),
        "{}",
        modes[2]
    );
    let rounds = v["rounds"].as_u64().unwrap() as usize;
    assert_eq!(v["cases"][0]["raw"].as_array().unwrap().len(), 4 * rounds);
    assert!(
        v["baseline_plugin_path"]
            .as_str()
            .is_some_and(|p| p.ends_with("old")),
        "{}",
        v["baseline_plugin_path"]
    );
    assert!(
        md.contains("| h5prov-dataset-bin | baseline-h5prov-dataset-bin |"),
        "{md}"
    );
    let cg = v["callgrind"].as_array().unwrap();
    let names: Vec<&str> = cg.iter().map(|r| r["mode"].as_str().unwrap()).collect();
    assert_eq!(names[3], "baseline-h5prov-dataset-bin");
    assert!(cg[2]["added_vs_baseline"].is_number(), "{}", cg[2]);
    assert!(cg[3]["added_vs_baseline"].is_null(), "{}", cg[3]);

    // The measured plugin missing: its mode is skipped, and the twin still runs, so it
    // loaded the baseline's libh5prov.so (the run fails when a trace directory is empty).
    run_bench(
        &common(&empty)
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("report.json")).unwrap())
            .unwrap();
    assert_eq!(
        modes_of(&v),
        ["native", "pass_through", "baseline-h5prov-dataset-bin"]
    );
    assert!(v["skipped"][0]
        .as_str()
        .unwrap()
        .contains("h5prov-dataset-bin"));

    // A baseline mode by name without a baseline plugin is refused, naming the option.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_h5prov-bench"))
        .args(["--quick", "--modes", "baseline-h5prov-dataset-bin"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--baseline-plugin-path"), "{err}");
}

#[test]
fn quick_objects_line_has_a_row_per_size() {
    let base = fresh_dir("bench-objects-quick");
    let out_dir = base.join("report");
    let work_dir = base.join("work");
    let h5prov = h5prov_binary();
    run_bench(&[
        "analyzer",
        "--quick",
        "--objects-only",
        "--objects",
        "1000,3000,500",
        "--h5prov",
        h5prov.to_str().unwrap(),
        "--out",
        out_dir.to_str().unwrap(),
        "--work-dir",
        work_dir.to_str().unwrap(),
    ]);
    let md = std::fs::read_to_string(out_dir.join("analyzer-objects.md")).expect("md");
    assert!(md.contains("## Many objects (PyTables-like)"), "{md}");
    let text = std::fs::read_to_string(out_dir.join("analyzer-objects.json")).expect("json");
    let v: serde_json::Value = serde_json::from_str(&text).expect("analyzer-objects.json parses");
    let rows = v["objects"]["rows"].as_array().expect("rows");
    // One row per size, smallest first, each in the Markdown table.
    let objects: Vec<u64> = rows
        .iter()
        .map(|r| r["objects"].as_u64().unwrap())
        .collect();
    assert_eq!(objects, [500, 1000, 3000], "{text}");
    let mut last = 0;
    for r in rows {
        let records = r["records"].as_u64().unwrap();
        assert!(records > last, "records grow with the objects: {text}");
        last = records;
        assert!(r["wall_s"].as_f64().unwrap() > 0.0, "{r}");
        assert!(r["cpu_s"].as_f64().unwrap() > 0.0, "{r}");
        assert!(r["peak_rss_mb"].as_f64().unwrap() > 0.0, "{r}");
        let line = format!("| {} | {} | {records} |", r["objects"], r["processes"]);
        assert!(md.contains(&line), "{line} not in {md}");
    }
    // The sets are removed once measured; the source stays cached.
    let left: Vec<_> = std::fs::read_dir(&work_dir)
        .unwrap()
        .filter_map(|e| {
            let n = e.ok()?.file_name().to_string_lossy().into_owned();
            n.starts_with("objects-").then_some(n)
        })
        .collect();
    assert!(left.is_empty(), "{left:?}");
}
