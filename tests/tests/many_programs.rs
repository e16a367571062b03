//! A directory of many unrelated programs' traces, as a test suite leaves (issue 33, item
//! 4): distinct C programs and h5py processes, some run several times, next to two runs
//! of one MPI program under `mpirun -np 4`. The report compares processes only within one run of one program
//! (the MPI job's ranks are still compared), names the group in each rank finding, and
//! keeps its header bounded.

use h5prov_tests::{
    analyzer, c_program, describe_output, files_with_suffix, mpirun, parallel_hdf5, repo, scratch,
    workload, Run, JOB_VARS,
};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

/// The codes of findings that compare processes with each other.
const RANK_CODES: &[&str] = &[
    "straggler_ranks",
    "rank_imbalance_bytes",
    "rank_imbalance_time",
    "collective_late_arrival",
];

/// A serial run with h5prov into `traces`, in its own working directory, with no
/// launcher job id from the environment the suite runs in.
fn serial(exe: &Path, args: &[&str], dir: &Path, label: &str, traces: &Path) {
    let work = dir.join(label);
    std::fs::create_dir_all(&work).unwrap();
    let mut run = Run::with_h5prov(exe, args, &work, traces, "level=dataset");
    for v in JOB_VARS {
        run = run.env_remove(v);
    }
    run.ok();
}

/// `h5prov report ARGS traces`, which must succeed; its stdout.
fn report(traces: &Path, args: &[&str]) -> String {
    let out = Command::new(analyzer())
        .arg("report")
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

#[test]
fn a_suites_programs_are_not_one_parallel_job() {
    let dir = scratch("many-programs");
    let traces = dir.join("traces");
    std::fs::create_dir_all(&traces).unwrap();

    // Distinct C programs, run once.
    for name in ["control", "small_io", "attrs", "conversion"] {
        serial(
            &c_program(&format!("insights/{name}")),
            &[],
            &dir,
            name,
            &traces,
        );
    }
    for (name, args) in [
        ("metadata_heavy", &["-n", "200"][..]),
        ("sample", &[][..]),
        ("known_sequence", &[][..]),
    ] {
        let work = dir.join(name);
        let mut a = vec!["-d", work.to_str().unwrap()];
        a.extend_from_slice(args);
        serial(&workload(name), &a, &dir, name, &traces);
    }
    // One program run three times, one after the other: the third run moves 64 times the
    // data of the others. Three runs, not three peers: none is a straggler of the others.
    for (i, p) in ["4096", "4096", "262144"].into_iter().enumerate() {
        let label = format!("vpic-{i}");
        let work = dir.join(&label);
        let d = work.to_str().unwrap().to_string();
        serial(
            &workload("vpic_write"),
            &["-d", &d, "-p", p, "-t", "1"],
            &dir,
            &label,
            &traces,
        );
    }
    // Two h5py processes (the wheel's own HDF5), one after the other.
    let script = repo().join("tests/python/h5py_reopen.py");
    for i in 0..2 {
        let work = dir.join(format!("h5py-{i}"));
        std::fs::create_dir_all(&work).unwrap();
        let mut run = Run::python(&script, &[work.to_str().unwrap(), "20"], &work)
            .h5prov(&traces, "level=dataset");
        for v in JOB_VARS {
            run = run.env_remove(v);
        }
        run.ok();
    }
    // Two runs of one MPI program, each in its own directory but on the same file name:
    // in the first, rank 0 writes four times the data of each other rank; the second
    // (`--fixed`) is balanced.
    let imbalance = h5prov_tests::compile_c(
        "mpicc",
        "insights/imbalance",
        Some(&parallel_hdf5()),
        &["-DFIXTURE_MPI"],
    );
    let conn = format!(
        "h5prov under_vol=0;under_info={{}};path={};level=dataset",
        traces.display()
    );
    for (i, args) in [&[][..], &["--fixed"][..]].into_iter().enumerate() {
        let work = dir.join(format!("mpi-{i}"));
        std::fs::create_dir_all(&work).unwrap();
        let out = mpirun(&imbalance, 4, args, &work, Some(&conn));
        assert!(out.status.success(), "{}", describe_output("mpirun", &out));
    }
    // 7 + 3 + 2 serial processes and 2 × 4 ranks, each with its metadata: h5prov was
    // loaded into every one.
    assert_eq!(files_with_suffix(&traces, ".meta.json").len(), 20);

    let v: serde_json::Value = serde_json::from_str(&report(&traces, &["--json"])).unwrap();
    // The groups: every serial program once (vpic_write and python three and two runs),
    // each mpirun's four ranks one run.
    let mut groups: BTreeMap<String, Vec<(i64, u64)>> = BTreeMap::new();
    for r in v["ranks"].as_array().unwrap() {
        groups
            .entry(r["group"].as_str().unwrap().to_string())
            .or_default()
            .push((r["rank"].as_i64().unwrap(), r["pid"].as_u64().unwrap()));
    }
    let group_of: BTreeMap<(i64, u64), String> = groups
        .iter()
        .flat_map(|(g, ps)| ps.iter().map(move |p| (*p, g.clone())))
        .collect();
    let names: BTreeSet<&str> = groups.keys().map(String::as_str).collect();
    for g in [
        "vpic_write run 1 of 3",
        "vpic_write run 2 of 3",
        "vpic_write run 3 of 3",
        "control",
    ] {
        assert!(names.contains(g), "no group {g}: {names:?}");
    }
    // The MPI build is named `imbalance.mpicc.PID` (tests/src/lib.rs compile_c).
    let mpi: Vec<String> = names
        .iter()
        .filter(|g| g.starts_with("imbalance"))
        .map(|g| g.to_string())
        .collect();
    assert_eq!(mpi.len(), 2, "two MPI jobs: {names:?}");
    let (heavy_run, balanced_run) = (&mpi[0], &mpi[1]);
    assert!(heavy_run.ends_with(" run 1 of 2"), "{heavy_run}");
    for g in &mpi {
        assert_eq!(groups[g].len(), 4, "{groups:?}");
    }
    let pythons: Vec<&&str> = names.iter().filter(|g| g.starts_with("python")).collect();
    assert_eq!(pythons.len(), 2, "two h5py runs: {names:?}");
    assert_eq!(v["run"]["runs"].as_u64(), Some(groups.len() as u64));

    // Per-operation rank comparisons stay within one group; only the first MPI job has a
    // process with more data.
    for s in v["straggler_ranks"].as_array().unwrap() {
        let g = s["group"].as_str().unwrap();
        for o in s["outliers"].as_array().unwrap() {
            let p = (o["rank"].as_i64().unwrap(), o["pid"].as_u64().unwrap());
            assert_eq!(group_of[&p], g, "{s:#}");
            if o["bytes_x_median"].as_f64().unwrap() >= 2.0 {
                assert_eq!(g, heavy_run, "{s:#}");
            }
        }
        assert!(mpi.iter().any(|m| m == g), "serial runs compared: {s:#}");
    }
    // Collective calls are matched within one mpirun: the two jobs' calls on
    // `imbalance.h5` are not one collective of eight ranks.
    for c in v["collective_skew"].as_array().unwrap() {
        assert!(c["ranks"].as_u64().unwrap() <= 4, "{c:#}");
    }
    // Every rank finding, among insights or timing notes, is about the MPI jobs, and names
    // whose processes it compared.
    let mut rank_findings = Vec::new();
    for section in ["insights", "timing_notes"] {
        for i in v[section].as_array().unwrap() {
            if RANK_CODES.contains(&i["code"].as_str().unwrap()) {
                let title = i["title"].as_str().unwrap();
                assert!(
                    mpi.iter().any(|m| title.contains(&format!(" of {m} ")))
                        || title.contains(" in 2 runs "),
                    "{section}: {i:#}"
                );
                rank_findings.push(i.clone());
            }
        }
    }
    // Only the MPI jobs used MPI-IO, and MPI advice is judged on their calls: they write
    // 16 MiB pieces and make a few metadata calls.
    assert_eq!(
        v["run"]["mpi_io_processes"].as_u64(),
        Some(8),
        "{:#}",
        v["run"]
    );
    for i in v["insights"].as_array().unwrap() {
        let code = i["code"].as_str().unwrap();
        assert!(
            !["independent_small_io", "collective_metadata_off"].contains(&code),
            "other programs' calls judged as the MPI job's: {i:#}"
        );
    }
    // The first MPI job's ranks are still compared: rank 0's extra data is found, and
    // nothing of the balanced job is a finding at WARN or HIGH.
    let strong: Vec<&serde_json::Value> = v["insights"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| {
            RANK_CODES.contains(&i["code"].as_str().unwrap())
                && ["WARN", "HIGH"].contains(&i["level"].as_str().unwrap())
        })
        .collect();
    let heavy = strong
        .iter()
        .find(|i| i["code"] == "straggler_ranks")
        .unwrap_or_else(|| panic!("rank 0 of the MPI job not found: {rank_findings:#?}"));
    assert!(
        heavy["title"]
            .as_str()
            .unwrap()
            .contains(&format!(" of {heavy_run} ")),
        "{heavy:#}"
    );
    assert!(
        heavy["detail"].as_str().unwrap().contains("rank 0 moves"),
        "{heavy:#}"
    );
    for i in &strong {
        assert!(
            !i["title"].as_str().unwrap().contains(balanced_run.as_str()),
            "{i:#}"
        );
    }

    // The header: bounded, three programs named and the rest counted.
    let text = report(&traces, &["--no-progress"]);
    let header: Vec<&str> = text.lines().take_while(|l| l != &"INSIGHTS").collect();
    for l in &header {
        assert!(
            l.chars().count() <= 400,
            "a header line of {} chars: {l}",
            l.len()
        );
    }
    let programs = names
        .iter()
        .map(|g| g.split(" run ").next().unwrap())
        .collect::<BTreeSet<_>>()
        .len();
    assert_eq!(v["run"]["programs"].as_array().unwrap().len(), programs);
    let line = header
        .iter()
        .find(|l| l.contains(&format!("{programs} programs, {} runs", groups.len())))
        .unwrap_or_else(|| panic!("no programs line in the header:\n{}", header.join("\n")));
    assert!(
        line.ends_with(&format!(", and {} more", programs - 3)),
        "{line}"
    );
    let html = dir.join("report.html");
    report(
        &traces,
        &["--no-progress", "--html", html.to_str().unwrap()],
    );
    let html = std::fs::read_to_string(&html).unwrap();
    assert!(
        html.contains(&format!("{programs} programs, ")),
        "no programs in the HTML header"
    );
}
