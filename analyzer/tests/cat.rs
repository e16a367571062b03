//! `h5prov cat`: a binary (or compressed) trace or objects file printed as the CSV the
//! connector would have written for the same records, byte for byte.

mod common;
use common::h5prov;
use h5prov_format::{ObjectSummary, TraceRecord, OBJECT_COLUMNS, TRACE_COLUMNS};

fn records() -> Vec<TraceRecord> {
    (0..50u64)
        .map(|i| TraceRecord {
            seq: i,
            start_ns: 1_700_000_000_000_000_000 + i * 1_000,
            total_ns: 500 + i,
            rank: if i % 2 == 0 { -1 } else { 3 },
            pid: 7,
            tid: 7,
            op: "dataset.write".into(),
            kind: "dataset".into(),
            file: "f,\"x\".h5".into(),
            path: format!("/d{i}\né"),
            bytes: i * 4096,
            batch: 1,
            ..TraceRecord::default()
        })
        .collect()
}

#[test]
fn a_binary_trace_prints_as_the_csv_of_the_same_records() {
    let dir = common::tempdir("cat-trace");
    let (mut bin, mut csv) = (
        Vec::new(),
        format!("{}\n", TRACE_COLUMNS.join(",")).into_bytes(),
    );
    h5prov_format::TraceRecordRef::write_bin_header(&mut bin);
    let mut enc = h5prov_format::BinEncoder::default();
    for r in records() {
        r.borrowed().write_bin(&mut bin, &mut enc);
        r.borrowed().write_csv(&mut csv);
    }
    let path = dir.join("h5prov-r0-p7.trace.bin");
    std::fs::write(&path, &bin).unwrap();
    let run = h5prov(&["cat", path.to_str().unwrap()]);
    run.expect_code(0);
    assert_eq!(run.out.stdout, csv, "{}", run.explain());

    // Two files, one header; JSONL on request.
    let run = h5prov(&["cat", path.to_str().unwrap(), path.to_str().unwrap()]);
    let text = run.stdout();
    assert_eq!(text.matches("seq,start_ns").count(), 1);
    assert_eq!(
        text.lines().count(),
        1 + 2 * 50 * 2,
        "each path holds one newline"
    );
    let run = h5prov(&["cat", "--format", "jsonl", path.to_str().unwrap()]);
    assert_eq!(run.stdout().lines().count(), 50);
}

#[test]
fn objects_files_print_too_and_roles_are_not_mixed() {
    let dir = common::tempdir("cat-objects");
    let o = ObjectSummary {
        rank: 1,
        pid: 9,
        kind: "dataset".into(),
        file: "a.h5".into(),
        path: "/x".into(),
        opens: 2,
        dims: "10x20".into(),
        layout: "chunked".into(),
        ..ObjectSummary::default()
    };
    let (mut bin, mut csv) = (
        Vec::new(),
        format!("{}\n", OBJECT_COLUMNS.join(",")).into_bytes(),
    );
    h5prov_format::ObjectSummaryRef::write_bin_header(&mut bin);
    o.borrowed()
        .write_bin(&mut bin, &mut h5prov_format::BinEncoder::default());
    o.borrowed().write_csv(&mut csv);
    let objects = dir.join("h5prov-r1-p9.objects.bin");
    std::fs::write(&objects, &bin).unwrap();
    let run = h5prov(&["cat", objects.to_str().unwrap()]);
    assert_eq!(run.out.stdout, csv, "{}", run.explain());

    let trace = dir.join("h5prov-r1-p9.trace.bin");
    let mut t = Vec::new();
    h5prov_format::TraceRecordRef::write_bin_header(&mut t);
    std::fs::write(&trace, &t).unwrap();
    h5prov(&["cat", trace.to_str().unwrap(), objects.to_str().unwrap()])
        .expect_code(1)
        .expect_stderr("not both");
    h5prov(&["cat", dir.join("notes.txt").to_str().unwrap()])
        .expect_code(1)
        .expect_stderr("notes.txt: not an h5prov trace or objects file");
}

/// Traces written by the connector in binary layout version 3, committed as written:
/// `fixtures/bin-v3/` (zstd blocks, the default of issue 31: `metadata_heavy -n 3`) and
/// `fixtures/bin-v3-plain/` (its trace decompressed, as uncompressed `bin` wrote it). A
/// later layout must go on reading them: each prints as the CSV `h5prov cat` printed when
/// they were written (`expected/bin-v3.*.csv`), and the report reads the process whole.
#[test]
fn committed_layout_v3_traces_still_print_as_their_csv() {
    let expected = |name: &str| std::fs::read(format!("tests/expected/{name}")).unwrap();
    for (file, want) in [
        (
            "tests/fixtures/bin-v3/h5prov-rx-p27311.trace.bin.zst",
            "bin-v3.trace.csv",
        ),
        (
            "tests/fixtures/bin-v3-plain/h5prov-rx-p27311.trace.bin",
            "bin-v3.trace.csv",
        ),
        (
            "tests/fixtures/bin-v3/h5prov-rx-p27311.objects.bin.zst",
            "bin-v3.objects.csv",
        ),
    ] {
        let run = h5prov(&["cat", file]);
        run.expect_code(0);
        assert_eq!(run.out.stdout, expected(want), "{file}: {}", run.explain());
    }
    // 47 records (the header and 47 lines), 8 object summaries.
    assert_eq!(
        expected("bin-v3.trace.csv").split(|&b| b == b'\n').count(),
        49
    );
    let run = h5prov(&["report", "tests/fixtures/bin-v3"]);
    run.expect_code(0);
    assert!(
        run.stdout()
            .contains("47 records from 1 process(es) in 1 trace / 1 objects / 1 meta file(s)"),
        "{}",
        run.explain()
    );
    assert!(
        !run.out.stderr.windows(9).any(|w| w == b"incomplet"),
        "{}",
        run.explain()
    );
}
