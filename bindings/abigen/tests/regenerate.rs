//! The committed `bindings/src/abi/` is exactly what `h5prov-abigen` generates from the real
//! headers of HDF5 1.14.5 and 2.2.0 (the installations `hdf5-test-harness build-hdf5`
//! prepares, or `H5PROV_HDF5_1_14_INCLUDE` / `H5PROV_HDF5_2_INCLUDE`), and gcc agrees with
//! its struct layouts.

use std::path::PathBuf;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn lines() -> Vec<h5prov_abigen::Line> {
    let lines = h5prov_abigen::default_lines(&repo());
    for l in &lines {
        assert!(
            l.include.join("H5VLconnector.h").exists(),
            "no HDF5 headers at {} for the {} line: run `cargo run -p hdf5-test-harness -- \
             build-hdf5` (and `--variant v2`), or set H5PROV_HDF5_1_14_INCLUDE / \
             H5PROV_HDF5_2_INCLUDE",
            l.include.display(),
            l.module
        );
    }
    lines
}

#[test]
fn committed_abi_is_what_the_real_headers_generate() {
    let lines = lines();
    let versions: Vec<_> = lines
        .iter()
        .map(|l| h5prov_abigen::header_version(&l.include).unwrap())
        .collect();
    assert_eq!(
        versions[0].0, 1,
        "the 1.14 line's headers are HDF5 {versions:?}"
    );
    assert_eq!(
        versions[1].0, 2,
        "the 2.x line's headers are HDF5 {versions:?}"
    );
    let files = h5prov_abigen::generate(&lines).expect("generate");
    let dir = repo().join("bindings/src/abi");
    let mut stale = Vec::new();
    for (name, text) in &files {
        let old = std::fs::read_to_string(dir.join(name)).unwrap_or_default();
        if old != *text {
            stale.push(name.clone());
        }
    }
    assert!(
        stale.is_empty(),
        "bindings/src/abi differs from what the headers generate ({}): run `cargo run -p \
         h5prov-abigen` and review the diff",
        stale.join(", ")
    );
}

/// Compiles a C probe against each line's headers and compares every probed size and field
/// offset with the committed Rust declarations.
#[test]
fn gcc_agrees_with_the_committed_layouts() {
    use h5prov_bindings::abi::{v1_14, v2};
    let out_dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    for (line, rust) in lines()
        .iter()
        .zip([v1_14::rust_layout(), v2::rust_layout()])
    {
        assert!(rust.len() > 100, "the probe covers {} items", rust.len());
        let src = out_dir.join(format!("probe_{}.c", line.module));
        let exe = out_dir.join(format!("probe_{}", line.module));
        std::fs::write(&src, h5prov_abigen::layout_probe_c(&rust)).unwrap();
        let cc = std::process::Command::new("cc")
            .arg("-I")
            .arg(&line.include)
            .arg(&src)
            .arg("-o")
            .arg(&exe)
            .output()
            .expect("run cc");
        assert!(
            cc.status.success(),
            "cc failed: {}",
            String::from_utf8_lossy(&cc.stderr)
        );
        let run = std::process::Command::new(&exe)
            .output()
            .expect("run probe");
        let text = String::from_utf8(run.stdout).unwrap();
        let c: Vec<(String, usize)> = text
            .lines()
            .map(|l| {
                let (k, v) = l.rsplit_once(' ').unwrap();
                (k.to_string(), v.parse().unwrap())
            })
            .collect();
        assert_eq!(c.len(), rust.len());
        let bad: Vec<_> = rust
            .iter()
            .zip(&c)
            .filter(|((_, rv), (_, cv))| rv != cv)
            .map(|((k, rv), (_, cv))| format!("{k}: rust {rv}, gcc {cv}"))
            .collect();
        assert!(
            bad.is_empty(),
            "{} layout differs from gcc: {bad:#?}",
            line.module
        );
        // The class struct is probed in every line.
        assert!(rust.iter().any(|(k, _)| *k == "H5VL_class_t.cap_flags"));
    }
}
