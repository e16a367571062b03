//! The `h5prov` wheel, used as a Python user would: `scripts/build-wheel.sh` builds it
//! (manylinux2014, checked with `auditwheel show`), a fresh venv gets it with
//! `pip install <wheel> h5py netCDF4 ...` ([`user_python`]), and every command below runs
//! with only that venv's `bin/` and the system's on `PATH`: no Rust toolchain, no
//! workspace HDF5, no HDF5 variable set.
//!
//! - `h5prov run --path T -- python script.py` traces h5py (HDF5 2.0.0 inside) and netCDF4
//!   (2.2.0): the report names every dataset the script created, and the script prints the
//!   same dump (data and file checksum) as a native run;
//! - `import h5prov; h5prov.enable(path=T2); import h5py` traces, and `enable` after
//!   `import h5py` raises `HDF5AlreadyLoaded`;
//! - `h5prov.read(T)` gives per-operation record counts equal to the JSON report's;
//! - a notebook executed headless with nbclient shows the report's HTML.

use h5prov_tests::*;
use std::path::{Path, PathBuf};

/// The venv's `bin/`.
fn venv_bin() -> PathBuf {
    user_python().parent().unwrap().to_path_buf()
}

/// `program args` in `dir` as a user of the venv: its `bin/` first on a `PATH` of system
/// directories only (no cargo, no rustc), no HDF5 or h5prov variable.
fn as_user(program: &Path, args: &[&str], dir: &Path) -> Run {
    let path = format!("{}:/usr/local/bin:/usr/bin:/bin", venv_bin().display());
    let mut r = Run::app(program, args, dir)
        .env("PATH", &path)
        .env("PYTHONNOUSERSITE", "1")
        .env("PYTHONDONTWRITEBYTECODE", "1");
    for k in [
        "PYTHONPATH",
        "PYTHONHOME",
        "HDF5_DIR",
        "H5PROV_PLUGIN",
        "H5PROV_EXE",
        "VIRTUAL_ENV",
    ] {
        r = r.env_remove(k);
    }
    r
}

/// The venv's `h5prov ARGS` (the wheel's binary), as a user; must succeed; stdout.
fn h5prov(args: &[&str], dir: &Path) -> String {
    as_user(&venv_bin().join("h5prov"), args, dir).ok()
}

fn python(args: &[&str], dir: &Path) -> String {
    as_user(&user_python(), args, dir).ok()
}

fn script(name: &str) -> String {
    repo()
        .join("tests/python")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

#[test]
fn wheel_is_manylinux_small_and_installs_without_a_rust_toolchain() {
    let wheel = h5prov_wheel();
    let name = wheel.file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        name.contains("manylinux_2_17_x86_64") || name.contains("manylinux2014_x86_64"),
        "{name}"
    );
    let size = wheel.metadata().unwrap().len();
    assert!(size < 15 << 20, "{name}: {size} bytes, more than 15 MiB");
    let dir = scratch("wheel-user-install");
    // Nothing of Rust's is reachable from the user's PATH.
    let out = as_user(
        Path::new("/bin/sh"),
        &["-c", "command -v cargo || command -v rustc"],
        &dir,
    )
    .output();
    assert!(
        !out.status.success(),
        "a Rust toolchain is on the user's PATH: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    // The version is the workspace's; the plugin is inside the package.
    let v = h5prov(&["--version"], &dir);
    assert_eq!(v.trim(), format!("h5prov {}", env!("CARGO_PKG_VERSION")));
    let env = h5prov(&["run", "--print-env", "--", "true"], &dir);
    assert!(
        env.contains("/site-packages/h5prov/plugin\n"),
        "the wheel's h5prov did not find the plugin in its package: {env}"
    );
}

/// `h5prov run --path traces -- python SCRIPT DIR` against a native run of the script:
/// the same dump, and a report naming every dataset the script created.
fn run_traces(script_name: &str, label: &str) {
    let native_dir = scratch(&format!("wheel-user-{label}-native"));
    let native = python(
        &[&script(script_name), native_dir.to_str().unwrap()],
        &native_dir,
    );
    let dir = scratch(&format!("wheel-user-{label}"));
    let py = user_python();
    let traced = h5prov(
        &[
            "run",
            "--path",
            "traces",
            "--",
            py.to_str().unwrap(),
            &script(script_name),
            dir.to_str().unwrap(),
        ],
        &dir,
    );
    let (a, b): (serde_json::Value, serde_json::Value) = (
        serde_json::from_str(&native).expect("native dump"),
        serde_json::from_str(&traced).expect("traced dump"),
    );
    assert_eq!(a, b, "{label}: the dump through h5prov differs from native");
    let traces = dir.join("traces");
    assert!(
        !files_with_suffix(&traces, ".meta.json").is_empty(),
        "h5prov was not loaded"
    );
    let rep: serde_json::Value = serde_json::from_str(&h5prov(
        &[
            "report",
            "--json",
            "--no-progress",
            traces.to_str().unwrap(),
        ],
        &dir,
    ))
    .unwrap();
    let reported: Vec<&str> = rep["datasets"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|d| d["path"].as_str())
        .collect();
    for d in a["datasets"].as_array().unwrap() {
        let d = d.as_str().unwrap();
        assert!(
            reported.contains(&d),
            "{label}: the report does not name {d}: {reported:?}"
        );
    }
}

#[test]
fn h5prov_run_traces_h5py_and_netcdf4_from_the_wheel() {
    run_traces("h5py_roundtrip.py", "h5py");
    run_traces("netcdf4_roundtrip.py", "netcdf4");
}

#[test]
fn python_api_enable_read_report_and_a_notebook() {
    let dir = scratch("wheel-user-api");
    let checks = script("user_checks.py");
    // enable() before h5py: traced, with the package's plugin.
    let out = python(&[&checks, "enable", "traces", dir.to_str().unwrap()], &dir);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(
        v["plugin_path"]
            .as_str()
            .unwrap()
            .ends_with("/site-packages/h5prov/plugin"),
        "{v}"
    );
    let traces = dir.join("traces");
    assert!(!files_with_suffix(&traces, ".meta.json").is_empty());
    let rep = h5prov(&["report", "--json", "--no-progress", "traces"], &dir);
    assert!(rep.contains("/enabled/values"), "{rep}");
    // enable() once an HDF5 library is mapped, or after h5py: a clear error, nothing traced.
    let msg = python(&[&checks, "late", "late-traces"], &dir);
    let lines: Vec<&str> = msg.lines().collect();
    assert_eq!(lines.len(), 2, "{msg}");
    assert!(
        lines[0].contains("libhdf5-") && lines[0].contains("already loaded"),
        "{msg}"
    );
    assert!(
        lines[1].contains("h5py already imported") && lines[1].contains("h5prov run"),
        "{msg}"
    );
    assert!(!dir.join("late-traces").exists());
    // read(): the records' per-operation counts are the report's, of the traces and of
    // their Parquet export.
    let out = python(&[&checks, "read", "traces"], &dir);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["read"], v["report"], "{v}");
    assert_eq!(v["read_export"], v["report"], "{v}");
    assert!(v["read"]["dataset.write"].as_u64() >= Some(1), "{v}");
    assert_eq!(v["processes"], 1, "{v}");
    assert!(v["objects"].as_u64() >= Some(2), "{v}");
    // A notebook run headless shows the HTML report, which names the dataset.
    let nb = dir.join("report.ipynb");
    let html = python(&[&checks, "notebook", "traces", nb.to_str().unwrap()], &dir);
    assert!(
        html.contains("<svg") && html.contains("/enabled/values"),
        "{}",
        &html[..html.len().min(2000)]
    );
}
