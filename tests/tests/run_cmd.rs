//! `h5prov run -- CMD`: the analyzer of the cargo build (`target/<profile>/h5prov`) finds the
//! `libh5prov.so` next to it, loads it into a real C program and into `h5dump` through
//! `HDF5_PLUGIN_PATH` and `HDF5_VOL_CONNECTOR`, and returns the command's exit status.
//!
//! Every run proves h5prov was loaded: the trace directory holds a metadata record and
//! `h5prov report --json` names the program's dataset. The program's file and h5dump's
//! output are compared with a native run.

use h5prov_tests::*;
use std::path::Path;

/// `h5prov run ARGS` in `cwd`, with the workspace's HDF5 and no HDF5 variable set unless
/// `env` sets it.
fn run(cwd: &Path, args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    let mut r = Run::native(&analyzer(), &[&["run"], args].concat(), cwd);
    for (k, v) in env {
        r = r.env(k, v);
    }
    let desc = r.describe();
    let out = r.output();
    eprintln!("{}", describe_output(&desc, &out));
    out
}

/// `h5prov report --json DIR`, as text.
fn report_json(dir: &Path) -> String {
    String::from_utf8(h5prov_ok(&["report", "--json", &dir.to_string_lossy()])).unwrap()
}

fn native_dump(file: &Path, cwd: &Path) -> String {
    Run::native(&tool("h5dump"), &[&file.to_string_lossy()], cwd).ok()
}

#[test]
fn run_traces_a_c_program_and_returns_its_exit_status() {
    let app = c_program("run_app");
    let app = app.to_str().unwrap();
    let dir = scratch("run-c");
    // A relative --path is made absolute: the traces land in the working directory's
    // `traces`, whatever directory the program itself works in.
    let out = run(
        &dir,
        &["--path", "traces", "--", app, "traced.h5", "0"],
        &[],
    );
    assert!(out.status.success());
    let traces = dir.join("traces");
    assert!(
        !files_with_suffix(&traces, ".meta.json").is_empty(),
        "h5prov was not loaded: no metadata record in {}",
        traces.display()
    );
    let rep = report_json(&traces);
    assert!(rep.contains("/run/temperature"), "report: {rep}");
    assert!(rep.contains("dataset.write"), "report: {rep}");
    // The same file as a native run makes (object times are off in the program).
    Run::native(Path::new(app), &["native.h5", "0"], &dir).ok();
    let (a, b) = (
        native_dump(Path::new("traced.h5"), &dir),
        native_dump(Path::new("native.h5"), &dir),
    );
    assert_eq!(a.replace("traced.h5", "F"), b.replace("native.h5", "F"));

    // The exit status is the command's: a code as it is, a signal as 128 + its number.
    let out = run(&dir, &["--path", "t3", "--", app, "f3.h5", "3"], &[]);
    assert_eq!(out.status.code(), Some(3));
    assert!(!files_with_suffix(&dir.join("t3"), ".meta.json").is_empty());
    let out = run(&dir, &["--path", "t4", "--", app, "f4.h5", "term"], &[]);
    assert_eq!(out.status.code(), Some(128 + 15));
    assert!(report_json(&dir.join("t4")).contains("/run/temperature"));
    // A command that never starts HDF5 runs, with a warning that nothing was traced.
    let out = run(&dir, &["--path", "t6", "--", "true"], &[]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no h5prov trace"));
    // A command that does not exist: 127, as a shell says.
    let out = run(&dir, &["--path", "t5", "--", "./no-such-program"], &[]);
    assert_eq!(out.status.code(), Some(127));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no-such-program"));
}

#[test]
fn run_report_prints_h5dumps_output_then_the_report() {
    let app = c_program("run_app");
    let dir = scratch("run-h5dump");
    Run::native(&app, &["f.h5", "0"], &dir).ok();
    let native = native_dump(Path::new("f.h5"), &dir);
    let h5dump = tool("h5dump");
    let out = run(
        &dir,
        &[
            "--path",
            "traces",
            "--level",
            "element",
            "--format",
            "csv",
            "--report",
            "--",
            h5dump.to_str().unwrap(),
            "f.h5",
        ],
        &[],
    );
    assert!(out.status.success());
    let stdout = String::from_utf8(out.stdout).unwrap();
    // h5dump's output unchanged, then the terminal report naming the dataset h5dump read.
    let rest = stdout
        .strip_prefix(&native)
        .unwrap_or_else(|| panic!("h5dump's output changed:\n{stdout}\nnative:\n{native}"));
    assert!(rest.contains("/run/temperature"), "report: {rest}");
    // --format csv reached the connector.
    let traces = dir.join("traces");
    assert!(!files_with_suffix(&traces, ".trace.csv").is_empty());
    assert!(report_json(&traces).contains("dataset.read"));
}

#[test]
fn run_stacks_a_connector_the_user_selected_and_refuses_h5prov_itself() {
    let app = c_program("run_app");
    let app = app.to_str().unwrap();
    let dir = scratch("run-stack");
    // HDF5's pass_through, selected by the user: stacked under h5prov (by its value).
    let pt = (
        "HDF5_VOL_CONNECTOR",
        "pass_through under_vol=0;under_info={}",
    );
    let out = run(&dir, &["--print-env", "--path", "/t", "--", "x"], &[pt]);
    let env = String::from_utf8(out.stdout).unwrap();
    assert!(
        env.contains(
            "HDF5_VOL_CONNECTOR=h5prov under_vol=1;under_info={under_vol=0;under_info={}};path=/t"
        ),
        "{env}"
    );
    let out = run(&dir, &["--path", "traces", "--", app, "f.h5", "0"], &[pt]);
    assert!(out.status.success());
    assert!(report_json(&dir.join("traces")).contains("/run/temperature"));
    // The user's plugin directories stay, after h5prov's.
    let out = run(
        &dir,
        &["--print-env", "--", "x"],
        &[("HDF5_PLUGIN_PATH", "/opt/filters:/opt/vols")],
    );
    let env = String::from_utf8(out.stdout).unwrap();
    assert!(
        env.lines()
            .any(|l| l.starts_with("HDF5_PLUGIN_PATH=") && l.ends_with(":/opt/filters:/opt/vols")),
        "{env}"
    );
    // h5prov already selected: refused, the command is not run.
    let out = run(
        &dir,
        &["--path", "t2", "--", app, "g.h5", "0"],
        &[("HDF5_VOL_CONNECTOR", "h5prov path=elsewhere")],
    );
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("already selects h5prov"));
    assert!(!dir.join("g.h5").exists() && !dir.join("t2").exists());
}

#[test]
fn run_finds_the_plugin_named_by_h5prov_plugin_or_says_where_it_looked() {
    let dir = scratch("run-plugin");
    let out = run(
        &dir,
        &["--print-env", "--", "x"],
        &[("H5PROV_PLUGIN", &plugin_dir().to_string_lossy())],
    );
    let env = String::from_utf8(out.stdout).unwrap();
    assert!(
        env.contains(&format!("HDF5_PLUGIN_PATH={}\n", plugin_dir().display())),
        "{env}"
    );
    let out = run(
        &dir,
        &["--print-env", "--", "x"],
        &[("H5PROV_PLUGIN", "/nonexistent/libh5prov.so")],
    );
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("H5PROV_PLUGIN=/nonexistent/libh5prov.so"),
        "{err}"
    );
}

/// `h5prov run -- mpirun -np 2 ./app`: the variables `h5prov run` sets reach every local
/// rank through `mpirun` (as the README says), so each rank writes a trace of its own and
/// the report counts both ranks. The program's stderr and exit status are the native run's.
#[test]
fn run_traces_every_rank_of_an_mpirun_launch() {
    let exe = compile_c("mpicc", "mpi_attrs", Some(&parallel_hdf5()), &[]);
    let exe = exe.to_str().unwrap();
    let dir = scratch("run-mpi");
    let lib = parallel_hdf5().join("lib");
    let mpi = [
        "mpirun",
        "-np",
        "2",
        "--oversubscribe",
        "-x",
        "LD_LIBRARY_PATH",
        exe,
    ];
    let native = h5prov_tests::mpirun(Path::new(exe), 2, &["n.h5", "50"], &dir, None);
    assert!(
        native.status.success(),
        "{}",
        describe_output("native", &native)
    );
    let args: Vec<&str> = ["--path", "traces", "--"]
        .iter()
        .copied()
        .chain(mpi)
        .chain(["t.h5", "50"])
        .collect();
    let out = run(
        &dir,
        &args,
        &[
            ("LD_LIBRARY_PATH", &lib.to_string_lossy()),
            ("OMPI_ALLOW_RUN_AS_ROOT", "1"),
            ("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1"),
        ],
    );
    assert!(out.status.success());
    let metas = read_metas(&dir.join("traces"));
    let mut ranks: Vec<i64> = metas.iter().map(|m| m.rank).collect();
    ranks.sort();
    assert_eq!(
        ranks,
        [0, 1],
        "one trace per rank, from the launcher's rank variables"
    );
    let rep = report_json(&dir.join("traces"));
    assert!(rep.contains("attr"), "report: {rep}");
    // h5prov prints nothing into the application's stderr under MPI (mpirun's own lines
    // and h5prov run's are on the analyzer's stderr only when something went wrong).
    assert_eq!(
        String::from_utf8_lossy(&out.stderr)
            .matches("HDF5-DIAG")
            .count(),
        String::from_utf8_lossy(&native.stderr)
            .matches("HDF5-DIAG")
            .count()
    );
}
