//! Two HDF5 libraries in one process (h5py and netCDF4 in one Python process each bring
//! their own, loaded `RTLD_LOCAL`): h5prov binds each to the HDF5 that loaded it, or refuses
//! clearly when it cannot tell which one is calling. Nothing crashes.
//!
//! Uses HDF5 1.14.5 (`.deps/hdf5`) and 2.2.0 (`.deps/hdf5-2`, `hdf5-test-harness build-hdf5
//! --variant v2`).

use h5prov_tests::{
    compile_c, hdf5_dir, in_child_process, plugin_dir, read_metas, repo, scratch, Run,
};
use std::path::PathBuf;

/// The two libraries: (1.14.5, 2.2.0).
fn libs() -> (PathBuf, PathBuf) {
    let v2 = std::env::var_os("H5PROV_HDF5_2_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join(".deps/hdf5-2"));
    let v2 = std::fs::canonicalize(&v2).unwrap_or_else(|e| {
        panic!(
            "HDF5 2.2.0 not found at {} ({e}): run `cargo run -p hdf5-test-harness -- \
             build-hdf5 --variant v2`",
            v2.display()
        )
    });
    (hdf5_dir().join("lib/libhdf5.so"), v2.join("lib/libhdf5.so"))
}

/// `tests/c/two_hdf5.c`, linked against no HDF5 (a library in the global scope would
/// interpose the other one's internal calls, and such a process crashes without h5prov).
fn program() -> PathBuf {
    compile_c("cc", "two_hdf5", None, &["-ldl"])
}

#[test]
fn each_of_two_hdf5s_is_traced_by_an_h5prov_bound_to_it() {
    let (v114, v2) = libs();
    let exe = program();
    for (first, second) in [(&v114, &v2), (&v2, &v114)] {
        let dir = scratch("two-hdf5");
        let traces = dir.join("traces");
        let args = [
            first.to_str().unwrap(),
            second.to_str().unwrap(),
            "a.h5",
            "b.h5",
        ];
        let native = Run::app(&exe, &args, &dir).ok();
        let traced = Run::app(&exe, &args, &dir).h5prov(&traces, "").ok();
        assert_eq!(native, traced, "same results with and without h5prov");
        assert_eq!(
            traced.lines().filter(|l| l.ends_with("create ok")).count(),
            2,
            "{traced}"
        );
        // One process, two h5prov instances: one meta each, naming its own library.
        let mut metas: Vec<(String, String)> = read_metas(&traces)
            .into_iter()
            .map(|m| (m.hdf5_version, m.hdf5_library))
            .collect();
        metas.sort();
        assert_eq!(metas.len(), 2, "{metas:?}");
        assert_eq!(metas[0].0, "1.14.5");
        assert_eq!(metas[1].0, "2.2.0");
        for ((_, lib), want) in metas.iter().zip([&v114, &v2]) {
            assert_eq!(
                std::fs::canonicalize(lib).unwrap(),
                std::fs::canonicalize(want).unwrap()
            );
        }
    }
}

/// Called from a frame that belongs to neither HDF5, with two loaded, h5prov cannot tell
/// which one loaded it: it returns NULL and says why.
#[test]
fn with_two_hdf5s_and_no_caller_on_the_stack_h5prov_refuses() {
    let (v114, v2) = libs();
    // In a child process: binding is per process.
    if let Some((desc, stderr)) =
        in_child_process("with_two_hdf5s_and_no_caller_on_the_stack_h5prov_refuses")
    {
        assert!(
            stderr.contains("2 HDF5 libraries are loaded")
                && stderr.contains("cannot tell which one loaded it"),
            "{desc}"
        );
        return;
    }
    let open = |p: &PathBuf, flags| {
        // SAFETY: loading shared libraries whose initialisers have no side effects we rely on.
        let lib = unsafe { libloading::os::unix::Library::open(Some(p), flags) }
            .unwrap_or_else(|e| panic!("dlopen {}: {e}", p.display()));
        // Never closed: a library with thread-specific destructors must stay mapped.
        &*Box::leak(Box::new(lib))
    };
    let local = libloading::os::unix::RTLD_NOW | libloading::os::unix::RTLD_LOCAL;
    let _a = open(&v114, local);
    let _b = open(&v2, local);
    let plugin = open(&plugin_dir().join("libh5prov.so"), local);
    // SAFETY: h5prov's entry point has this C signature.
    let info = unsafe {
        plugin
            .get::<extern "C" fn() -> *const std::ffi::c_void>(b"H5PLget_plugin_info\0")
            .unwrap()
    };
    assert!(info().is_null(), "h5prov must refuse rather than guess");
}
