//! INFO that means something (issue 33, item 5): on quiet, clean programs (the insight
//! control, serial and under `mpirun -np 4`, and the workloads) the insights hold nothing
//! but `no_problem`, in each of three runs on this loaded machine; timing observations
//! (a dominant operation, heavy tails, isolated slow calls, slower or late ranks with the
//! same data) go to the report's timing notes, which every render shows.

use h5prov_tests::{
    analyzer, c_program, describe_output, mpirun, parallel_hdf5, scratch, workload, Run,
};
use std::path::Path;
use std::process::Command;

/// `h5prov report ARGS traces`, which must succeed; its stdout.
fn report(traces: &Path, args: &[&str]) -> String {
    let out = Command::new(analyzer())
        .arg("report")
        .arg("--no-progress")
        .args(args)
        .arg(traces)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        describe_output("h5prov report", &out)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The insights of the traces are `no_problem` alone, and each timing note is in the
/// text, HTML and JSON reports. Returns the timing notes' codes.
fn quiet(what: &str, traces: &Path) -> Vec<String> {
    let v: serde_json::Value = serde_json::from_str(&report(traces, &["--json"])).unwrap();
    let codes: Vec<(&str, &str)> = v["insights"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| (i["code"].as_str().unwrap(), i["level"].as_str().unwrap()))
        .collect();
    assert_eq!(codes, [("no_problem", "OK")], "{what}: {:#}", v["insights"]);
    let notes = v["timing_notes"]
        .as_array()
        .expect("timing_notes in the JSON");
    let text = report(traces, &[]);
    let html_path = traces.with_extension("html");
    report(traces, &["--html", html_path.to_str().unwrap()]);
    let html = std::fs::read_to_string(&html_path).unwrap();
    // The text: the insights section holds the OK line alone.
    let section: Vec<&str> = text
        .lines()
        .skip_while(|l| *l != "INSIGHTS")
        .skip(1)
        .take_while(|l| !l.is_empty())
        .filter(|l| l.starts_with("  ["))
        .collect();
    assert_eq!(section.len(), 1, "{what}:\n{text}");
    assert!(section[0].contains("[OK]"), "{what}:\n{text}");
    for n in notes {
        let code = n["code"].as_str().unwrap();
        assert_eq!(n["level"], "INFO", "{what}: {n:#}");
        let title = n["title"].as_str().unwrap();
        let after =
            |doc: &str, heading: &str| doc.find(heading).is_some_and(|h| doc[h..].contains(code));
        assert!(
            after(&text, "TIMING NOTES"),
            "{what}: {code} not in the text:\n{text}"
        );
        assert!(text.contains(title), "{what}: {title}");
        assert!(
            after(&html, "<h2>Timing notes</h2>"),
            "{what}: {code} not in the HTML"
        );
    }
    notes
        .iter()
        .map(|n| n["code"].as_str().unwrap().to_string())
        .collect()
}

/// A serial run with h5prov in a fresh directory of `dir`; returns its traces.
fn traced(dir: &Path, label: &str, exe: &Path, args: &[&str]) -> std::path::PathBuf {
    let (work, traces) = (dir.join(label), dir.join(format!("{label}-traces")));
    std::fs::create_dir_all(&work).unwrap();
    std::fs::create_dir_all(&traces).unwrap();
    let w = work.to_str().unwrap().to_string();
    let args: Vec<&str> = args
        .iter()
        .map(|a| if *a == "WORK" { w.as_str() } else { a })
        .collect();
    Run::with_h5prov(exe, &args, &work, &traces, "level=dataset").ok();
    traces
}

#[test]
fn quiet_programs_get_no_insight_and_their_timing_in_notes() {
    let dir = scratch("timing-notes");
    let mut notes = Vec::new();
    for run in 0..3 {
        let t = traced(
            &dir,
            &format!("control-{run}"),
            &c_program("insights/control"),
            &[],
        );
        notes.extend(quiet(&format!("control run {run}"), &t));
        for (name, args) in [
            ("vpic_write", &["-d", "WORK", "-p", "262144", "-t", "2"][..]),
            ("sample", &["-d", "WORK"][..]),
            ("known_sequence", &["-d", "WORK"][..]),
        ] {
            let t = traced(&dir, &format!("{name}-{run}"), &workload(name), args);
            notes.extend(quiet(&format!("{name} run {run}"), &t));
        }
    }
    // Timing is still reported: the control spends most of its time in one operation.
    assert!(
        notes.iter().any(|c| c == "hot_function"),
        "no timing note in 12 runs: {notes:?}"
    );
}

#[test]
fn the_mpi_control_gets_no_insight() {
    let exe = h5prov_tests::compile_c(
        "mpicc",
        "insights/control",
        Some(&parallel_hdf5()),
        &["-DFIXTURE_MPI"],
    );
    let dir = scratch("timing-notes-mpi");
    for run in 0..3 {
        let (work, traces) = (dir.join(format!("w{run}")), dir.join(format!("t{run}")));
        std::fs::create_dir_all(&work).unwrap();
        std::fs::create_dir_all(&traces).unwrap();
        let conn = format!(
            "h5prov under_vol=0;under_info={{}};path={};level=dataset",
            traces.display()
        );
        let out = mpirun(&exe, 4, &[], &work, Some(&conn));
        assert!(out.status.success(), "{}", describe_output("mpirun", &out));
        assert_eq!(
            h5prov_tests::read_metas(&traces).len(),
            4,
            "h5prov loaded in 4 ranks"
        );
        quiet(&format!("MPI control run {run}"), &traces);
    }
}
