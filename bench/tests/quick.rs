//! Runs `h5prov-bench --quick` with native and pass_through and checks that the
//! report files exist and parse. No timing assertions: tests don't time.

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

#[test]
fn quick_native_and_pass_through_write_a_parsable_report() {
    let base = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("bench-quick");
    let _ = std::fs::remove_dir_all(&base);
    let out_dir = base.join("report");
    let work_dir = base.join("work");
    let out = run_bench(&[
        "--quick",
        "--modes",
        "native,pass_through",
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

#[test]
fn analyzer_subcommand_says_not_yet() {
    let out = Command::new(env!("CARGO_BIN_EXE_h5prov-bench"))
        .arg("analyzer")
        .output()
        .expect("start h5prov-bench");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("not implemented yet"));
}
