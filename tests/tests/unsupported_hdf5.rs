//! HDF5 libraries h5prov does not support are refused clearly, never guessed at: an HDF5
//! older than 1.14 (Debian 12's own 1.10.8, `libhdf5-103-1`) by its version, a library that
//! lacks a symbol by the symbol's name, and a library of the wrong line by what it lacks.

use h5prov_bindings::loader::{self, Line};
use h5prov_tests::{hdf5_dir, in_child_process, plugin_dir, repo};
use libloading::os::unix::{Library, RTLD_LOCAL, RTLD_NOW};
use std::path::{Path, PathBuf};

/// Debian 12's HDF5 1.10.8 runtime.
const HDF5_1_10: &str = "/usr/lib/x86_64-linux-gnu/libhdf5_serial.so.103";

/// Opens a library for the rest of the process: never closed, since a library that
/// registered thread-specific destructors (a thread-safe HDF5 does) must stay mapped until
/// the threads that used it are gone.
fn open(p: &Path) -> &'static Library {
    assert!(
        p.exists(),
        "{} is missing (Debian package libhdf5-103-1 for 1.10.8; `hdf5-test-harness build-hdf5 \
         --variant v2` for 2.2.0)",
        p.display()
    );
    // SAFETY: loading HDF5 libraries; their initialisers have no side effects we rely on.
    let lib = unsafe { Library::open(Some(p), RTLD_NOW | RTLD_LOCAL) }
        .unwrap_or_else(|e| panic!("dlopen {}: {e}", p.display()));
    Box::leak(Box::new(lib))
}

fn v2_lib() -> PathBuf {
    repo().join(".deps/hdf5-2/lib/libhdf5.so")
}

#[test]
fn an_hdf5_older_than_1_14_is_refused_by_its_version() {
    // In a child process: binding is per process.
    if let Some((desc, stderr)) =
        in_child_process("an_hdf5_older_than_1_14_is_refused_by_its_version")
    {
        assert!(
            stderr.contains("h5prov supports HDF5 1.14.x and 2.0-2.2")
                && stderr.contains("this process runs HDF5 1.10.8"),
            "{desc}"
        );
        return;
    }
    // 1.10.8 has no H5E_VOL error class to push with: the reason goes to stderr.
    let _old = open(Path::new(HDF5_1_10));
    let plugin = open(&plugin_dir().join("libh5prov.so"));
    // SAFETY: h5prov's entry point has this C signature.
    let info = unsafe {
        plugin
            .get::<extern "C" fn() -> *const std::ffi::c_void>(b"H5PLget_plugin_info\0")
            .unwrap()
    };
    assert!(info().is_null(), "HDF5 1.10.8 must be refused");
}

#[test]
fn a_missing_symbol_is_named_and_each_line_needs_its_own_symbols() {
    let _old = open(Path::new(HDF5_1_10));
    let _v114 = open(&hdf5_dir().join("lib/libhdf5.so"));
    let _v2 = open(&v2_lib());
    let cands = loader::candidates();
    let find = |p: &Path| {
        let want = std::fs::canonicalize(p).unwrap();
        cands
            .iter()
            .find(|c| std::fs::canonicalize(&c.path).is_ok_and(|cp| cp == want))
            .unwrap_or_else(|| panic!("{} not among {cands:?}", p.display()))
            .clone()
    };
    let old = find(Path::new(HDF5_1_10));
    let v114 = find(&hdf5_dir().join("lib/libhdf5.so"));
    let v2 = find(&v2_lib());
    // 1.10.8 has no VOL pass-through API at all.
    let e = loader::check_symbols(&old, Line::V1_14).unwrap_err();
    assert!(e.starts_with("missing symbol H5"), "{e}");
    // Each supported library has everything its own line needs...
    loader::check_symbols(&v114, Line::V1_14).unwrap();
    loader::check_symbols(&v2, Line::V2).unwrap();
    // ...and lacks what the other line needs.
    assert_eq!(
        loader::check_symbols(&v114, Line::V2).unwrap_err(),
        "missing symbol H5VL_NATIVE_g"
    );
    assert_eq!(
        loader::check_symbols(&v2, Line::V1_14).unwrap_err(),
        "missing symbol H5VL_pass_through_register"
    );
    assert_eq!(Line::of_version((1, 12, 3)), None);
    assert_eq!(Line::of_version((3, 0, 0)), None);
    assert_eq!(Line::of_version((2, 2, 0)), Some(Line::V2));
}
