//! `h5prov-abigen`: regenerates `bindings/src/abi/` from real HDF5 headers.
//!
//! Usage: `cargo run -p h5prov-abigen [-- --check]`. The include directories come from
//! `H5PROV_HDF5_1_14_INCLUDE` and `H5PROV_HDF5_2_INCLUDE`, defaulting to the installations
//! `hdf5-test-harness build-hdf5` prepares (`.deps/hdf5/include`, `.deps/hdf5-2/include`).
//! With `--check` nothing is written: it fails when a committed file differs.
#![forbid(unsafe_code)]

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let check = std::env::args().any(|a| a == "--check");
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = repo.join("bindings/src/abi");
    let lines = h5prov_abigen::default_lines(&repo);
    let files = match h5prov_abigen::generate(&lines) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("h5prov-abigen: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut stale = Vec::new();
    for (name, text) in &files {
        let path = out.join(name);
        let old = std::fs::read_to_string(&path).unwrap_or_default();
        if old != *text {
            stale.push(name.clone());
            if !check {
                if let Err(e) = std::fs::write(&path, text) {
                    eprintln!("h5prov-abigen: writing {}: {e}", path.display());
                    return ExitCode::FAILURE;
                }
            }
        }
    }
    match (check, stale.is_empty()) {
        (_, true) => println!("h5prov-abigen: bindings/src/abi is up to date"),
        (true, false) => {
            eprintln!("h5prov-abigen: stale: {}", stale.join(", "));
            return ExitCode::FAILURE;
        }
        (false, false) => println!("h5prov-abigen: wrote {}", stale.join(", ")),
    }
    ExitCode::SUCCESS
}
