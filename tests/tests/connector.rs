//! The connector in real programs: proof of loading, the API route (H5Pset_vol), the FFI
//! guard, malformed connector strings, and no leaked state at H5close.

use h5prov_tests::*;

#[test]
fn environment_and_api_routes_both_load_h5prov() {
    let dir = scratch("route");
    let traces = dir.join("t");
    let out = Run::with_h5prov(&c_program("vol_name"), &["f.h5"], &dir, &traces, "").ok();
    assert!(out.contains("file=h5prov"), "{out}");
    // Natively the same program says native: the check is not vacuous.
    let out = Run::native(&c_program("vol_name"), &["g.h5"], &dir).ok();
    assert!(out.contains("file=native"), "{out}");

    let info = format!(
        "under_vol=0;under_info={{}};path={}",
        dir.join("api").display()
    );
    let out = Run::native(&c_program("setvol"), &[&info, "h.h5"], &dir)
        .env("HDF5_PLUGIN_PATH", plugin_dir().to_str().unwrap())
        .ok();
    assert!(out.contains("file=h5prov"), "{out}");
    assert_eq!(read_metas(&dir.join("api")).len(), 1);
}

#[test]
fn malformed_connector_string_fails_registration_and_names_the_key() {
    let dir = scratch("badinfo");
    for (info, key) in [
        ("under_vol=0;under_info={};level=verbose", "level"),
        ("under_vol=0;under_info={;path=x", "under_info"),
        ("under_vol=zero;under_info={}", "under_vol"),
        ("under_vol=0;under_info={};colour=blue", "colour"),
    ] {
        let out = Run::native(&c_program("setvol"), &[info, "x.h5"], &dir)
            .env("HDF5_PLUGIN_PATH", plugin_dir().to_str().unwrap())
            .output();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(1),
            "{info}: must be rejected\n{err}"
        );
        assert!(
            err.contains(&format!("'{key}'")),
            "{info}: error stack must name '{key}':\n{err}"
        );
    }
    // Through the environment: HDF5 reports the error; no trace is written, and the
    // program cannot silently believe it is traced (it says native).
    let traces = dir.join("t");
    let out = Run::with_connector(
        &c_program("vol_name"),
        &["y.h5"],
        &dir,
        &format!(
            "h5prov under_vol=0;under_info={{}};path={};level=verbose",
            traces.display()
        ),
    )
    .output();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("'level'"),
        "HDF5 must print the bad key:\n{err}"
    );
    assert!(!traces.exists(), "nothing traced with a rejected string");
}

#[test]
fn a_panic_inside_a_callback_becomes_an_hdf5_error_not_an_abort() {
    let dir = scratch("panic");
    let traces = dir.join("t");
    let out = Run::with_h5prov(&c_program("panic_probe"), &["p.h5"], &dir, &traces, "")
        .env("H5PROV_TEST_PANIC", "dataset.write")
        .output();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the application must survive: {stdout}\n{stderr}"
    );
    assert!(stdout.contains("write=-1"), "H5Dwrite must fail: {stdout}");
    assert!(
        stdout.contains("closed"),
        "and the program goes on: {stdout}"
    );
    assert!(
        stderr.contains("h5prov") && stderr.contains("dataset.write") && stderr.contains("panic"),
        "the HDF5 error stack carries h5prov's record:\n{stderr}"
    );
}

#[test]
fn no_state_node_outlives_h5close() {
    // write_multi (multi-dataset I/O) and two_opens (one dataset opened twice, one state
    // node shared by two handles): every node freed, every one through the close path.
    for (prog, args) in [("write_multi", &["m.h5"][..]), ("two_opens", &["o.h5"][..])] {
        let dir = scratch(&format!("leaks-{prog}"));
        let traces = dir.join("t");
        let out = Run::with_h5prov(&c_program(prog), args, &dir, &traces, "")
            .env("H5PROV_CHECK_LEAKS", "1")
            .output();
        assert!(out.status.success(), "{prog}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("live state nodes at terminate: 0;"),
            "{prog}: {err}"
        );
        assert!(
            err.contains("released outside the close path: 0"),
            "{prog}: every summary row went through the explicit close path: {err}"
        );
    }
}

/// A panic in any part of a callback never crosses into C: before the under call it becomes
/// an HDF5 error of that call (which fails); in the work h5prov does after it (the trace
/// flush after a file close, the extent update after a set-extent) it leaves the call's own
/// status standing, since the file is closed and the extent set. The application goes on and
/// exits normally either way.
#[test]
fn a_panic_in_file_close_or_set_extent_never_crosses_into_c() {
    for (hook, step) in [
        ("file.close", "fclose=-1"),
        ("dataset.specific", "extend=-1"),
        ("file.close:after", "fclose=0"),
        ("dataset.specific:after", "extend=0"),
    ] {
        let dir = scratch("panic-ops");
        let traces = dir.join("t");
        let out = Run::with_h5prov(&c_program("panic_ops"), &["p.h5"], &dir, &traces, "")
            .env("H5PROV_TEST_PANIC", hook)
            .output();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success(),
            "{hook}: the application must survive: {stdout}\n{stderr}"
        );
        assert!(stdout.contains(step), "{hook}: {stdout}\n{stderr}");
        assert!(
            stdout.contains("done"),
            "{hook}: the program goes on: {stdout}"
        );
        if !hook.ends_with(":after") {
            let op = hook;
            assert!(
                stderr.contains("h5prov") && stderr.contains(op) && stderr.contains("panic"),
                "{op}: the HDF5 error stack carries h5prov's record:\n{stderr}"
            );
        }
    }
}

/// Copying a FAPL that carries h5prov shares h5prov's info instead of copying the under
/// connector's: HDF5 copies the connector info with every FAPL copy (`H5Pcopy`, and
/// `H5Pset_vol`, `H5Pget_vol_info`: three to four times in each file create or open
/// through h5prov), and a deep copy cost two HDF5 API calls and, freed, the under
/// connector's info free (under vol-async an error-stack save and restore and an
/// `H5Idec_ref`): about a quarter of what h5prov added to an `H5Fcreate_async`'s issue
/// (docs/ASYNC.md). Under HDF5's pass_through, every live copy of its info holds a reference
/// to the native connector's id, so the reference count shows the copies. The copies still
/// work (a file through them reads back) and nothing is left behind when they are closed.
#[test]
fn copying_a_fapl_does_not_copy_the_under_connectors_info() {
    let dir = scratch("info-copies");
    let traces = dir.join("t");
    let conn = format!(
        "h5prov under_vol=1;under_info={{under_vol=0;under_info={{}}}};path={}",
        traces.display()
    );
    let out = Run::with_connector(&c_program("info_copies"), &["f.h5", "10"], &dir, &conn).ok();
    // Loaded: the trace session wrote its metadata record (and the file's rows).
    assert_eq!(read_metas(&traces).len(), 1, "{out}");
    let refs = |key: &str| -> i64 {
        let v = out
            .split_whitespace()
            .find_map(|w| w.strip_prefix(&format!("{key}=")))
            .unwrap_or_else(|| panic!("no {key} in {out}"));
        v.parse().unwrap()
    };
    assert!(out.contains("read_back=ok"), "{out}");
    assert_eq!(
        refs("refs_copies"),
        refs("refs_before"),
        "10 FAPL copies made 10 copies of pass_through's info: {out}"
    );
    assert_eq!(refs("refs_after"), refs("refs_before"), "{out}");
}
