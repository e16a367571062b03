//! End-to-end tests of the `hdf5-test-harness` binary that need no HDF5: `diff` on saved
//! fixture results, argument errors, and help text.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

struct Run {
    cmd: String,
    out: Output,
}

impl Run {
    fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.out.stdout).into_owned()
    }
    fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.out.stderr).into_owned()
    }
    /// Asserts the exit code; on failure prints everything needed to reproduce.
    fn expect_code(&self, code: i32) -> &Self {
        assert_eq!(
            self.out.status.code(),
            Some(code),
            "command: {}\nstatus: {}\nstdout:\n{}\nstderr:\n{}",
            self.cmd,
            self.out.status,
            self.stdout(),
            self.stderr()
        );
        self
    }
}

fn harness(args: &[&str]) -> Run {
    let exe = env!("CARGO_BIN_EXE_hdf5-test-harness");
    let out = Command::new(exe)
        .args(args)
        .output()
        .expect("start hdf5-test-harness");
    Run {
        cmd: format!("{exe} {}", args.join(" ")),
        out,
    }
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn write_result(out: &Path, mode: &str, tests: &[(&str, &str)]) {
    let tests: Vec<String> = tests
        .iter()
        .map(|(n, o)| format!(r#"{{"name": "{n}", "outcome": "{o}"}}"#))
        .collect();
    let json = format!(
        r#"{{"format_version": 1, "mode": "{mode}", "connector": null, "suite": "tools",
            "build_id": "b", "build_dir": "/b", "started_unix": 0, "seconds": 1.0,
            "probe": {{"expected": "native", "fapl_connector": "native", "file_connector": "native", "output": ""}},
            "tests": [{}], "errors": []}}"#,
        tests.join(",")
    );
    std::fs::create_dir_all(out.join(mode)).unwrap();
    std::fs::write(out.join(mode).join("tools.json"), json).unwrap();
}

#[test]
fn diff_reports_regressions_and_honours_expected_differences() {
    let dir = scratch("diff");
    let out = dir.join("out");
    write_result(
        &out,
        "native",
        &[("A", "passed"), ("B", "passed"), ("C", "failed")],
    );
    write_result(
        &out,
        "pass_through",
        &[("A", "passed"), ("B", "failed"), ("C", "passed")],
    );
    let empty = dir.join("empty.txt");
    std::fs::write(&empty, "# nothing expected\n").unwrap();
    let out_s = out.to_str().unwrap();

    let r = harness(&[
        "diff",
        "--mode",
        "pass_through",
        "--out",
        out_s,
        "--expected",
        empty.to_str().unwrap(),
    ]);
    r.expect_code(1);
    let s = r.stdout();
    assert!(
        s.contains("native/tools: 2 passed, 1 failed, 0 skipped\n"),
        "{s}"
    );
    assert!(
        s.contains("pass_through/tools: 2 passed, 1 failed, 0 skipped\n"),
        "{s}"
    );
    assert!(
        s.contains("    B  (native: passed, pass_through: failed)"),
        "{s}"
    );
    assert!(
        s.contains("informational: fail natively, pass through the connector: 1"),
        "{s}"
    );
    assert!(s.contains("RESULT: FAILED"), "{s}");

    let listed = dir.join("listed.txt");
    std::fs::write(&listed, "pass_* tools B  # same with HDF5's pass_through\n").unwrap();
    let r = harness(&[
        "diff",
        "--mode",
        "pass_through",
        "--out",
        out_s,
        "--expected",
        listed.to_str().unwrap(),
    ]);
    r.expect_code(0);
    assert!(
        r.stdout()
            .contains("expected differences (listed in expected-differences.txt): 1"),
        "{}",
        r.stdout()
    );
}

#[test]
fn errors_name_what_failed() {
    let dir = scratch("errors");
    let bad = dir.join("bad.txt");
    std::fs::write(&bad, "* tools X\n").unwrap();
    write_result(&dir, "native", &[]);
    write_result(&dir, "m", &[]);
    let r = harness(&[
        "diff",
        "--mode",
        "m",
        "--out",
        dir.to_str().unwrap(),
        "--expected",
        bad.to_str().unwrap(),
    ]);
    r.expect_code(2);
    assert!(r.stderr().contains("bad.txt:1:"), "{}", r.stderr());

    let r = harness(&[
        "diff",
        "--mode",
        "nothing-saved",
        "--out",
        dir.to_str().unwrap(),
    ]);
    r.expect_code(2);
    assert!(
        r.stderr()
            .contains("no saved results for mode 'nothing-saved'"),
        "{}",
        r.stderr()
    );

    let r = harness(&[
        "run",
        "--mode",
        "bogus",
        "--build-dir",
        dir.to_str().unwrap(),
    ]);
    r.expect_code(2);
    assert!(
        r.stderr().contains("unknown mode \"bogus\""),
        "{}",
        r.stderr()
    );

    let r = harness(&["run", "--build-dir", dir.join("missing").to_str().unwrap()]);
    r.expect_code(2);
    assert!(r.stderr().contains("build-hdf5"), "{}", r.stderr());
}

#[test]
fn help_lists_subcommands_and_modes() {
    let r = harness(&["--help"]);
    r.expect_code(0);
    for sub in ["build-hdf5", "env", "run", "diff"] {
        assert!(r.stdout().contains(sub), "{}", r.stdout());
    }
    let r = harness(&["run", "--help"]);
    r.expect_code(0);
    for m in [
        "pass_through",
        "h5prov-over-pt",
        "pt-over-h5prov",
        "LABEL=STRING",
    ] {
        assert!(r.stdout().contains(m), "{}", r.stdout());
    }
}

#[test]
fn v2_variant_runs_only_the_api_suite_and_says_why() {
    let dir = scratch("v2");
    for suite in ["vol", "tools", "testpar"] {
        let r = harness(&[
            "run",
            "--variant",
            "v2",
            "--suite",
            suite,
            "--build-dir",
            dir.join("missing").to_str().unwrap(),
        ]);
        r.expect_code(2);
        let e = r.stderr();
        assert!(
            e.contains(&format!("suite '{suite}' cannot run on HDF5 2.x")),
            "{e}"
        );
        assert!(e.contains("no test/, testpar/ or tools/"), "{e}");
        assert!(e.contains("--suite api"), "{e}");
    }
    let r = harness(&["build-hdf5", "--variant", "v3"]);
    r.expect_code(2);
    assert!(
        r.stderr().contains("serial, parallel, threadsafe or v2"),
        "{}",
        r.stderr()
    );
    let r = harness(&["build-hdf5", "--help"]);
    r.expect_code(0);
    assert!(
        r.stdout().contains("hdf5-metno-src 0.10.4"),
        "{}",
        r.stdout()
    );
}

#[test]
fn threadsafe_variant_refuses_a_build_tree_that_is_not_thread_safe() {
    let dir = scratch("threadsafe");
    // A minimal build tree: what BuildTree::open reads, and the library file it requires.
    let tree = |name: &str, threadsafe: &str| -> PathBuf {
        let b = dir.join(name);
        std::fs::create_dir_all(b.join("bin")).unwrap();
        std::fs::write(b.join("bin/libhdf5.so"), "").unwrap();
        std::fs::write(
            b.join("CMakeCache.txt"),
            format!(
                "CMAKE_HOME_DIRECTORY:INTERNAL={0}/src\nCMAKE_INSTALL_PREFIX:PATH={0}/install\n\
                 CMAKE_C_COMPILER:FILEPATH=/usr/bin/cc\nHDF5_ENABLE_PARALLEL:BOOL=OFF\n\
                 HDF5_ENABLE_THREADSAFE:BOOL={threadsafe}\n",
                b.display()
            ),
        )
        .unwrap();
        b
    };
    let serial = tree("serial", "OFF");
    let r = harness(&[
        "run",
        "--variant",
        "threadsafe",
        "--suite",
        "api",
        "--build-dir",
        serial.to_str().unwrap(),
    ]);
    r.expect_code(2);
    let e = r.stderr();
    assert!(e.contains("is not thread-safe"), "{e}");
    assert!(e.contains("build-hdf5 --variant threadsafe"), "{e}");
    // The aliases parse; help names the variant.
    for v in ["threadsafe", "thread-safe", "ts"] {
        let r = harness(&[
            "run",
            "--variant",
            v,
            "--build-dir",
            serial.to_str().unwrap(),
        ]);
        r.expect_code(2);
        assert!(r.stderr().contains("is not thread-safe"), "{}", r.stderr());
    }
    let r = harness(&["build-hdf5", "--help"]);
    r.expect_code(0);
    assert!(
        r.stdout().contains("HDF5_ENABLE_THREADSAFE=ON"),
        "{}",
        r.stdout()
    );
}
