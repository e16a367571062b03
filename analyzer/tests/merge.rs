//! `h5prov merge` and compressed inputs: a merged file (or a directory of `.zst`/`.gz`
//! files) reads exactly like the directory; damaged merged files fail with messages that
//! name the file (and member).

mod common;
use common::h5prov;
use h5prov_analyzer::read::merged::Archive;
use std::io::Write;
use std::path::{Path, PathBuf};

const FIX: &str = "tests/fixtures";

fn merge(dir: &str, out: &Path) {
    h5prov(&["merge", dir, "-o", out.to_str().unwrap()])
        .expect_code(0)
        .expect_stderr("merged ");
}

/// `report` output (stdout and stderr) with the input name replaced, so that two inputs
/// holding the same files compare equal.
fn report(args: &[&str], input: &str) -> (String, String) {
    let mut a = vec!["report"];
    a.extend_from_slice(args);
    a.push(input);
    let r = h5prov(&a);
    r.expect_code(0);
    (
        r.stdout().replace(input, "<INPUT>"),
        r.stderr().replace(input, "<INPUT>"),
    )
}

#[test]
fn merged_file_reports_like_the_directory() {
    let tmp = common::tempdir("merge-roundtrip");
    for fixture in ["mpi4", "serial", "malformed"] {
        let dir = format!("{FIX}/{fixture}");
        let out = tmp.join(format!("{fixture}.h5prov"));
        merge(&dir, &out);
        let m = out.to_str().unwrap();
        for args in [
            &["--json", "--lenient"][..],
            &["--lenient"][..],
            &["--json"][..],
        ] {
            if fixture == "malformed" && !args.contains(&"--lenient") {
                continue;
            }
            assert_eq!(report(args, &dir), report(args, m), "{fixture} {args:?}");
        }
    }
    // The truncated last line of rank 3 is still one, named through the merged file.
    let m = tmp.join("mpi4.h5prov");
    h5prov(&["report", m.to_str().unwrap()])
        .expect_code(0)
        .expect_stderr(&format!(
            "{}/d0001/h5prov-r3-p1003.trace.csv:345",
            m.display()
        ));
}

#[test]
fn merged_file_keeps_errors_and_lenient_behaviour() {
    let tmp = common::tempdir("merge-malformed");
    let out = tmp.join("bad.h5prov");
    merge(&format!("{FIX}/malformed"), &out);
    let m = out.to_str().unwrap();
    h5prov(&["report", m])
        .expect_code(1)
        .expect_stderr(&format!(
            "error: {m}/h5prov-r1-p2001.trace.csv:5: malformed row: column `total_ns`"
        ))
        .expect_stderr("--lenient");
    h5prov(&["report", "--lenient", m])
        .expect_code(0)
        .expect_stderr(&format!(
            "(--lenient); first at {m}/h5prov-r1-p2001.trace.csv:5"
        ));
}

#[test]
fn export_and_compare_read_merged_files() {
    let tmp = common::tempdir("merge-export");
    let out = tmp.join("mpi4.h5prov");
    merge(&format!("{FIX}/mpi4"), &out);
    let (a, b) = (tmp.join("dir.json"), tmp.join("merged.json"));
    for (input, json) in [(format!("{FIX}/mpi4"), &a), (out.display().to_string(), &b)] {
        h5prov(&["export", "--perfetto", json.to_str().unwrap(), &input]).expect_code(0);
    }
    assert!(std::fs::read(&a).unwrap() == std::fs::read(&b).unwrap());
    let r = h5prov(&[
        "compare",
        "--json",
        &format!("{FIX}/mpi4"),
        out.to_str().unwrap(),
    ]);
    r.expect_code(0);
    let v: serde_json::Value = serde_json::from_str(&r.stdout()).unwrap();
    for op in v["ops"].as_array().unwrap() {
        assert_eq!(op["count_a"], op["count_b"], "{op}");
        assert_eq!(op["total_ratio"], 1.0, "{op}");
    }
}

#[test]
fn merged_file_is_private_and_merges_again() {
    let tmp = common::tempdir("merge-again");
    let one = tmp.join("one.h5prov");
    merge(&format!("{FIX}/mpi4"), &one);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&one).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    // A merged file is an input like a directory, so it can be re-merged (another level).
    let two = tmp.join("two.h5prov");
    h5prov(&[
        "merge",
        "--level",
        "19",
        one.to_str().unwrap(),
        "-o",
        two.to_str().unwrap(),
    ])
    .expect_code(0);
    let (o, t) = (one.to_str().unwrap(), two.to_str().unwrap());
    assert_eq!(report(&["--json"], o), report(&["--json"], t));
    // No temporary file is left behind.
    let left: Vec<_> = std::fs::read_dir(&tmp)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.contains("tmp"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

fn damaged(tmp: &Path, name: &str, f: impl FnOnce(&mut Vec<u8>)) -> PathBuf {
    let good = tmp.join("good.h5prov");
    if !good.exists() {
        merge(&format!("{FIX}/mpi4"), &good);
    }
    let mut bytes = std::fs::read(&good).unwrap();
    f(&mut bytes);
    let p = tmp.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

#[test]
fn damaged_merged_files_fail_naming_the_file() {
    let tmp = common::tempdir("merge-damaged");
    let cases: Vec<(PathBuf, String)> = vec![
        (
            damaged(&tmp, "half.h5prov", |b| b.truncate(b.len() / 2)),
            "truncated: no index at its end".into(),
        ),
        (
            damaged(&tmp, "tiny.h5prov", |b| b.truncate(20)),
            "truncated: 20 bytes".into(),
        ),
        (
            damaged(&tmp, "text.h5prov", |b| *b = b"seq,op\n1,x\n".to_vec()),
            "not an h5prov merged file".into(),
        ),
        (
            damaged(&tmp, "empty.h5prov", Vec::clear),
            "not an h5prov merged file".into(),
        ),
        (
            damaged(&tmp, "v2.h5prov", |b| b[8] = 2),
            "format version 2; this h5prov reads version 1".into(),
        ),
        (
            damaged(&tmp, "index.h5prov", |b| {
                let n = b.len();
                b[n - 40] ^= 0xff;
            }),
            "corrupt h5prov merged file: index".into(),
        ),
    ];
    for (p, msg) in &cases {
        let ps = p.to_str().unwrap();
        for cmd in [&["report", ps][..], &["report", "--lenient", ps][..]] {
            let r = h5prov(cmd);
            r.expect_code(1)
                .expect_stderr(&format!("error: {ps}: "))
                .expect_stderr(msg);
            assert!(!r.stderr().contains("panicked"), "{}", r.explain());
        }
    }
    // A flipped byte inside a member: the zstd checksum (or frame) fails, naming the member.
    let a = Archive::read(&tmp.join("good.h5prov")).unwrap();
    let m = a
        .members()
        .iter()
        .find(|m| m.name == "d0000/h5prov-r0-p1000.trace.csv")
        .unwrap();
    let at = (m.offset + m.length / 2) as usize;
    let flipped = damaged(&tmp, "member.h5prov", |b| b[at] ^= 0x55);
    let r = h5prov(&["report", flipped.to_str().unwrap()]);
    r.expect_code(1).expect_stderr(&format!(
        "error: {}/d0000/h5prov-r0-p1000.trace.csv: corrupt member of h5prov merged file",
        flipped.display()
    ));
    // A damaged meta member is reported and skipped, as an unreadable meta.json file is.
    let m = a
        .members()
        .iter()
        .find(|m| m.name.ends_with(".meta.json"))
        .unwrap();
    let at = (m.offset + m.length / 2) as usize;
    let flipped = damaged(&tmp, "meta.h5prov", |b| b[at] ^= 0x55);
    h5prov(&["report", flipped.to_str().unwrap()])
        .expect_code(0)
        .expect_stderr(&format!(
            "unreadable meta.json file(s), e.g. {}/{}: corrupt member",
            flipped.display(),
            m.name
        ));
    // A file that is neither a merged file nor an h5prov file by name.
    let other = tmp.join("notes.txt");
    std::fs::write(&other, "hello").unwrap();
    h5prov(&["report", other.to_str().unwrap()])
        .expect_code(1)
        .expect_stderr(&format!("error: {}: not an h5prov file", other.display()));
}

#[test]
fn merge_flag_errors() {
    let tmp = common::tempdir("merge-flags");
    let out = tmp.join("x.h5prov");
    h5prov(&[
        "merge",
        "--level",
        "0",
        "tests/fixtures/mpi4",
        "-o",
        out.to_str().unwrap(),
    ])
    .expect_code(1)
    .expect_stderr("--level 0");
    h5prov(&["merge", "tests/fixtures/mpi4"]).expect_code(2);
    h5prov(&[
        "merge",
        "tests/fixtures/mpi4",
        "-o",
        "/nonexistent-dir/x.h5prov",
    ])
    .expect_code(1)
    .expect_stderr("/nonexistent-dir/");
    let empty = common::tempdir("merge-empty");
    h5prov(&[
        "merge",
        empty.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ])
    .expect_code(1)
    .expect_stderr("no h5prov files found");
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let p = e.path();
        if p.is_dir() {
            copy_dir(&p, &to.join(e.file_name()));
        } else {
            std::fs::copy(&p, to.join(e.file_name())).unwrap();
        }
    }
}

/// Replaces `path` by `path.zst` or `path.gz`.
fn compress(path: &Path, gz: bool) {
    let data = std::fs::read(path).unwrap();
    let mut name = path.as_os_str().to_owned();
    let packed = if gz {
        name.push(".gz");
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(&data).unwrap();
        e.finish().unwrap()
    } else {
        name.push(".zst");
        zstd::bulk::compress(&data, 3).unwrap()
    };
    std::fs::write(name, packed).unwrap();
    std::fs::remove_file(path).unwrap();
}

#[test]
fn compressed_files_in_a_directory_read_transparently() {
    let tmp = common::tempdir("compressed");
    let dir = tmp.join("mpi4");
    copy_dir(&common::pkg_dir().join(FIX).join("mpi4"), &dir);
    // Ranks 1 and 3 gzip, ranks 0 and 2 zstd, one file left plain.
    for e in ["d0000", "d0001"]
        .iter()
        .flat_map(|d| std::fs::read_dir(dir.join(d)).unwrap())
    {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_str().unwrap().to_string();
        if name != "h5prov-r0-p1000.meta.json" {
            compress(&p, name.contains("-r1-") || name.contains("-r3-"));
        }
    }
    let d = dir.to_str().unwrap();
    let plain = format!("{FIX}/mpi4");
    let (out_plain, err_plain) = report(&["--json"], &plain);
    let (out_z, err_z) = report(&["--json"], d);
    // Only the name of the truncated file differs: it is now `.gz`.
    let gz = |s: &str| {
        s.replace(
            "h5prov-r3-p1003.trace.csv:345",
            "h5prov-r3-p1003.trace.csv.gz:345",
        )
    };
    assert_eq!(gz(&out_plain), out_z);
    assert_eq!(gz(&err_plain), err_z);
    assert!(
        err_z.contains("<INPUT>/d0001/h5prov-r3-p1003.trace.csv.gz:345"),
        "{err_z}"
    );
    // A merged file keeps the compressed files as they are and reads the same.
    let m = tmp.join("z.h5prov");
    merge(d, &m);
    assert_eq!(report(&["--json"], m.to_str().unwrap()), (out_z, err_z));
    // A damaged compressed file is an error naming it.
    let bad = dir.join("d0000/h5prov-r0-p1000.trace.csv.zst");
    let mut b = std::fs::read(&bad).unwrap();
    let n = b.len();
    b.truncate(n - 10);
    std::fs::write(&bad, b).unwrap();
    h5prov(&["report", d])
        .expect_code(1)
        .expect_stderr(&format!(
            "error: {}: zstd decompression failed",
            bad.display()
        ));
}
