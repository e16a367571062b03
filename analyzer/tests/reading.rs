//! The CSV reader's fast path (plain lines split in place) against its fallback (`csv_core`
//! for lines with quotes or CR): the same records as the JSONL reader, the same line
//! numbers in errors, the same truncated-last-line handling.

mod common;
use common::h5prov;
use h5prov_format::TraceRecord;
use std::path::Path;

/// Records whose strings need quoting now and then: commas, quotes, a line break.
fn records(pid: u32) -> Vec<TraceRecord> {
    let paths = [
        "/plain",
        "/with,comma",
        "/with\"quote",
        "/multi\nline",
        "/é ü",
        "",
    ];
    (0..120u64)
        .map(|i| TraceRecord {
            seq: i,
            start_ns: 1_700_000_000_000_000_000 + i * 1_000,
            total_ns: 500 + (i * 37) % 900,
            under_ns: 400,
            rank: 0,
            pid,
            tid: u64::from(pid),
            op: if i % 3 == 0 {
                "dataset.write".into()
            } else {
                "dataset.get:space".into()
            },
            kind: "dataset".into(),
            file: if i % 10 == 0 { "a,b.h5" } else { "f.h5" }.into(),
            path: paths[i as usize % paths.len()].into(),
            status: 0,
            is_async: 0,
            bytes: if i % 3 == 0 { 4096 } else { 0 },
            type_size: 4,
            ndims: 1,
            npoints: 1024,
            sel: "all".into(),
            xfer: String::new(),
            xfer_actual: String::new(),
            batch: 1,
            detail: if i % 7 == 0 {
                "start=0,4;count=1,2".into()
            } else {
                String::new()
            },
            ..TraceRecord::default()
        })
        .collect()
}

fn csv_text(recs: &[TraceRecord]) -> String {
    // The csv crate quotes only when needed, as h5prov's writer does.
    let mut w = csv::Writer::from_writer(Vec::new());
    for r in recs {
        w.serialize(r).unwrap();
    }
    String::from_utf8(w.into_inner().unwrap()).unwrap()
}

fn jsonl_text(recs: &[TraceRecord]) -> String {
    recs.iter()
        .map(|r| serde_json::to_string(r).unwrap() + "\n")
        .collect()
}

fn report_json(input: &Path) -> serde_json::Value {
    let r = h5prov(&["report", "--json", input.to_str().unwrap()]);
    r.expect_code(0);
    let mut v: serde_json::Value = serde_json::from_str(&r.stdout()).unwrap();
    v["run"]["inputs"] = serde_json::Value::Null;
    v
}

#[test]
fn quoted_and_plain_lines_read_like_jsonl() {
    let tmp = common::tempdir("fastpath-quoted");
    let recs = records(7);
    let text = csv_text(&recs);
    assert!(text.contains("\"/with,comma\"") && text.contains("\"/multi\nline\""));
    for (dir, name, body) in [
        ("csv", "h5prov-r0-p7.trace.csv", text.clone()),
        ("crlf", "h5prov-r0-p7.trace.csv", text.replace('\n', "\r\n")),
        ("jsonl", "h5prov-r0-p7.trace.jsonl", jsonl_text(&recs)),
    ] {
        std::fs::create_dir_all(tmp.join(dir)).unwrap();
        std::fs::write(tmp.join(dir).join(name), body).unwrap();
    }
    let want = report_json(&tmp.join("jsonl"));
    assert_eq!(want["run"]["records"], 120);
    assert_eq!(report_json(&tmp.join("csv")), want);
    // CRLF also turns the line break inside the quoted path into "\r\n": that one path
    // differs, everything else (every other record) reads the same.
    let crlf = report_json(&tmp.join("crlf"));
    assert_eq!(crlf["run"]["records"], 120);
    assert_eq!(crlf["ops"], want["ops"]);
}

fn write(dir: &Path, name: &str, body: &str) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join(name), body).unwrap();
}

#[test]
fn truncated_last_lines_plain_and_quoted() {
    let tmp = common::tempdir("fastpath-truncated");
    let text = csv_text(&records(8));
    let lines = text.lines().count();
    for (dir, body, line) in [
        // Cut in the middle of a plain last line.
        ("plain", format!("{}seq,12", &text), lines + 1),
        // Cut inside a quoted field that never closes: csv_core returns it at the end.
        (
            "quote",
            format!("{}1,2,3,4,0,8,8,op,dataset,f.h5,\"/cut", &text),
            lines + 1,
        ),
    ] {
        write(&tmp.join(dir), "h5prov-r0-p8.trace.csv", &body);
        let d = tmp.join(dir);
        let r = h5prov(&["report", d.to_str().unwrap()]);
        r.expect_code(0).expect_stderr(&format!(
            "{}:{line}; that line was skipped",
            d.join("h5prov-r0-p8.trace.csv").display()
        ));
    }
}

#[test]
fn malformed_rows_after_quoted_lines_name_file_and_line() {
    let tmp = common::tempdir("fastpath-malformed");
    let header = h5prov_format::TRACE_COLUMNS.join(",");
    let ok =
        "0,1700000000000000000,10,5,0,9,9,group.open,group,f.h5,/g,0,0,0,0,0,0,,,,1,,,0,0,0,,,0,0,0";
    // Line 3 is a record whose quoted path spans lines 3-4; line 5 is plain and malformed.
    let body = format!(
        "{header}\n{ok}\n1,1700000000000000100,10,5,0,9,9,group.open,group,f.h5,\"/two\nlines\",0,0,0,0,0,0,,,,1,,,0,0,0,,,0,0,0\n2,17000x,10,5,0,9,9,group.open,group,f.h5,/g,0,0,0,0,0,0,,,,1,,,0,0,0,,,0,0,0\n{ok}\n"
    );
    let d = tmp.join("bad");
    write(&d, "h5prov-r0-p9.trace.csv", &body);
    let f = d.join("h5prov-r0-p9.trace.csv");
    h5prov(&["report", d.to_str().unwrap()])
        .expect_code(1)
        .expect_stderr(&format!(
            "error: {}:5: malformed row: column `start_ns`: not a valid number: \"17000x\"",
            f.display()
        ));
    // A quoted malformed row reports its first line too.
    let body = format!(
        "{header}\n{ok}\n{ok}\n3,1700000000000000100,10,5,0,9,9,group.open,group,f.h5,\"/q\",x,0,0,0,0,0,,,,1,,,0,0,0,,,0,0,0\n"
    );
    write(&d, "h5prov-r0-p9.trace.csv", &body);
    h5prov(&["report", d.to_str().unwrap()])
        .expect_code(1)
        .expect_stderr(&format!(
            "error: {}:4: malformed row: column `status`: not a valid number: \"x\"",
            f.display()
        ));
    // Too few fields on a plain line, then --lenient counts it and reads on.
    let body = format!("{header}\n{ok}\n1,2,3\n{ok}\n");
    write(&d, "h5prov-r0-p9.trace.csv", &body);
    h5prov(&["report", d.to_str().unwrap()])
        .expect_code(1)
        .expect_stderr(&format!(
            "error: {}:3: malformed row: 3 fields, the header has 31",
            f.display()
        ));
    let r = h5prov(&["report", "--lenient", "--json", d.to_str().unwrap()]);
    r.expect_code(0).expect_stderr("skipped 1 malformed row(s)");
    let v: serde_json::Value = serde_json::from_str(&r.stdout()).unwrap();
    assert_eq!(v["run"]["records"], 2);
}
