//! `libh5prov.so` as HDF5 sees it: the two plugin entry points and the class they return.

use h5prov_tests::{describe_output, hdf5_dir, plugin_dir};
use std::ffi::{c_char, c_int, c_uint, c_void, CStr};

/// The leading fields of `H5VL_class_t` (HDF5 1.14 and 2.x, VOL version 3).
#[repr(C)]
struct ClassHead {
    version: c_uint,
    value: c_int,
    name: *const c_char,
    conn_version: c_uint,
    cap_flags: u64,
}

#[test]
fn plugin_entry_points_describe_the_h5prov_vol_connector() {
    let so = plugin_dir().join("libh5prov.so");
    // Like a Python extension module: the host loads HDF5 with RTLD_LOCAL first. h5prov,
    // which links no libhdf5, must find that copy among the loaded objects and bind to it
    // (the only HDF5 in this process, so it binds even though no HDF5 frame calls it).
    let hdf5 = hdf5_dir().join("lib/libhdf5.so");
    // SAFETY: loading HDF5 and our plugin; their initialisers have no side effects we
    // depend on.
    let _hdf5 = unsafe {
        libloading::os::unix::Library::open(
            Some(&hdf5),
            libloading::os::unix::RTLD_NOW | libloading::os::unix::RTLD_LOCAL,
        )
    }
    .expect("dlopen libhdf5.so");
    // SAFETY: as above.
    let lib = unsafe { libloading::Library::new(&so) }.expect("dlopen libh5prov.so");
    // SAFETY: the symbols have these C signatures (H5PLextern.h).
    unsafe {
        let ty: libloading::Symbol<extern "C" fn() -> c_int> =
            lib.get(b"H5PLget_plugin_type").unwrap();
        assert_eq!(ty(), 1, "H5PL_TYPE_VOL");
        let info: libloading::Symbol<extern "C" fn() -> *const c_void> =
            lib.get(b"H5PLget_plugin_info").unwrap();
        let cls = &*(info().cast::<ClassHead>());
        assert_eq!(cls.version, 3, "H5VL_VERSION of HDF5 1.14");
        assert_eq!(cls.value, 416, "h5prov's connector value");
        assert_eq!(CStr::from_ptr(cls.name).to_str().unwrap(), "h5prov");
        assert_eq!(
            cls.cap_flags, 0,
            "own flags are ORed into the under connector's"
        );
        let _ = cls.conn_version;
        // Calling them twice gives the same class (a static, stable address).
        assert_eq!(info(), info());
    }
}

#[test]
fn plugin_needs_no_libhdf5() {
    let so = plugin_dir().join("libh5prov.so");
    let out = std::process::Command::new("readelf")
        .args(["-d", "--dyn-syms"])
        .arg(&so)
        .output()
        .expect("readelf");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("(NEEDED)"),
        "readelf printed no dynamic section:\n{text}"
    );
    let needed: Vec<&str> = text.lines().filter(|l| l.contains("(NEEDED)")).collect();
    assert!(
        !needed.iter().any(|l| l.contains("libhdf5")),
        "libh5prov.so must not need any libhdf5 (it binds to the HDF5 that loads it): {needed:#?}"
    );
    // No undefined HDF5 symbol either: every one is resolved at run time.
    let undefined_h5: Vec<&str> = text
        .lines()
        .filter(|l| {
            l.contains(" UND ")
                && l.split_whitespace()
                    .last()
                    .is_some_and(|n| n.starts_with("H5"))
        })
        .collect();
    assert!(
        undefined_h5.is_empty(),
        "undefined HDF5 symbols: {undefined_h5:#?}"
    );
}

/// libh5prov.so links libzstd statically (it compresses binary trace blocks): none of its
/// symbols may be exported, or a host application that brings its own zstd (PyTables'
/// blosc, netCDF's filter plugins) could bind to ours. Only the plugin entry points are.
#[test]
fn no_zstd_symbol_is_exported() {
    let so = plugin_dir().join("libh5prov.so");
    let out = std::process::Command::new("nm")
        .args(["-D", "--defined-only"])
        .arg(&so)
        .output()
        .expect("run nm");
    assert!(out.status.success(), "{}", describe_output("nm -D", &out));
    let text = String::from_utf8_lossy(&out.stdout);
    let names: Vec<&str> = text
        .lines()
        .filter_map(|l| l.split_whitespace().last())
        .collect();
    assert!(names.contains(&"H5PLget_plugin_info"), "{names:?}");
    let zstd: Vec<&&str> = names
        .iter()
        .filter(|n| {
            ["ZSTD_", "ZDICT_", "HUF_", "FSE_", "HIST_"]
                .iter()
                .any(|p| n.starts_with(p))
        })
        .collect();
    assert!(zstd.is_empty(), "exported from {}: {zstd:?}", so.display());
}
