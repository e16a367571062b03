//! Applications cannot tell h5prov is there: the installed tools and C programs give
//! byte-identical output and files with and without it (times are pinned with faketime,
//! because HDF5 stores object modification times).

use h5prov_tests::*;
use std::path::{Path, PathBuf};

fn testfiles() -> Vec<PathBuf> {
    let dir = repo().join(".deps/hdf5-build/tools/test/h5dump/testfiles/std");
    let mut v: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e} (the HDF5 build tree is needed)", dir.display()))
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "h5"))
        // tbigdims*.h5 declare huge extents: dumping them takes minutes and gigabytes
        // whichever connector is loaded.
        .filter(|p| {
            !p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("tbigdims")
        })
        .collect();
    v.sort();
    assert!(v.len() > 50, "expected HDF5's h5dump test files");
    v
}

fn same_output(tool_name: &str, args: &[&str], file: &Path, dir: &Path, n: usize) {
    let mut a: Vec<&str> = args.to_vec();
    let f = file.to_str().unwrap();
    a.push(f);
    let native = Run::native(&tool(tool_name), &a, dir).output();
    let traces = dir.join(format!("t{n}"));
    let traced = Run::with_h5prov(&tool(tool_name), &a, dir, &traces, "level=element").output();
    assert_eq!(
        native.status.code(),
        traced.status.code(),
        "{tool_name} {f}: exit status"
    );
    assert!(
        native.stdout == traced.stdout,
        "{tool_name} {f}: stdout differs"
    );
    assert!(
        native.stderr == traced.stderr,
        "{tool_name} {f}: stderr differs"
    );
}

#[test]
fn h5dump_and_h5ls_output_is_identical_on_hdf5s_test_files() {
    let dir = scratch("dump");
    for (i, f) in testfiles().iter().enumerate() {
        same_output("h5dump", &[], f, &dir, 2 * i);
        // `h5ls -r -v` on tlonglinks.h5 runs for minutes natively too.
        if !f.ends_with("tlonglinks.h5") {
            same_output("h5ls", &["-r", "-v"], f, &dir, 2 * i + 1);
        }
    }
}

fn faketime(program: &Path) -> (PathBuf, Vec<String>) {
    let ft = PathBuf::from("/usr/bin/faketime");
    assert!(ft.exists(), "faketime is needed (apt-get install faketime)");
    (
        ft,
        vec![
            "-f".into(),
            "2020-01-01 00:00:00".into(),
            program.display().to_string(),
        ],
    )
}

fn pinned(program: &Path, args: &[&str]) -> (PathBuf, Vec<String>) {
    let (ft, mut a) = faketime(program);
    a.extend(args.iter().map(|s| s.to_string()));
    (ft, a)
}

#[test]
fn h5repack_h5diff_and_multi_dataset_writes_make_identical_files() {
    let dir = scratch("repack");
    let src = repo().join(".deps/hdf5-build/tools/test/h5dump/testfiles/std/tgroup.h5");
    let src = src.to_str().unwrap();
    let cases: Vec<(PathBuf, Vec<String>, &str)> = vec![
        {
            let (p, a) = pinned(&tool("h5repack"), &["-f", "GZIP=1", src, "OUT"]);
            (p, a, "repack")
        },
        {
            let (p, a) = pinned(&c_program("write_multi"), &["OUT"]);
            (p, a, "multi")
        },
        {
            let (p, a) = pinned(&c_program("two_opens"), &["OUT"]);
            (p, a, "twoopens")
        },
    ];
    for (prog, args, label) in cases {
        let nat = dir.join(format!("{label}-native.h5"));
        let trc = dir.join(format!("{label}-h5prov.h5"));
        let subst = |out: &Path| -> Vec<String> {
            args.iter()
                .map(|a| {
                    if a == "OUT" {
                        out.display().to_string()
                    } else {
                        a.clone()
                    }
                })
                .collect()
        };
        let a1 = subst(&nat);
        let a2 = subst(&trc);
        let a1: Vec<&str> = a1.iter().map(String::as_str).collect();
        let a2: Vec<&str> = a2.iter().map(String::as_str).collect();
        let o1 = Run::native(&prog, &a1, &dir).ok();
        let traces = dir.join(format!("t-{label}"));
        let o2 = Run::with_h5prov(&prog, &a2, &dir, &traces, "").ok();
        assert_eq!(o1, o2, "{label}: stdout");
        let b1 = std::fs::read(&nat).unwrap();
        let b2 = std::fs::read(&trc).unwrap();
        assert!(
            b1 == b2,
            "{label}: written files differ ({} vs {} bytes)",
            b1.len(),
            b2.len()
        );
        // And h5diff, itself run through h5prov, agrees they are equal.
        let tr = dir.join(format!("t-diff-{label}"));
        let nat_s = nat.display().to_string();
        let trc_s = trc.display().to_string();
        Run::with_h5prov(&tool("h5diff"), &[&nat_s, &trc_s], &dir, &tr, "").ok();
    }
}
