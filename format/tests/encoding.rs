//! The generated encoders against the bytes the connector wrote before the record tables
//! existed, and encoder/parser round trips on awkward values.

use h5prov_format::{
    CsvFields, ObjectSummary, ObjectSummaryJson, ObjectSummaryRef, TraceRecord, TraceRecordJson,
    TraceRecordRef, OBJECT_COLUMNS, TRACE_COLUMNS,
};

/// Records with every awkward value: separators, quotes, line breaks, non-ASCII, control
/// characters, the largest and smallest integers, a negative rank.
fn awkward_traces() -> Vec<TraceRecord> {
    let base = TraceRecord {
        seq: u64::MAX,
        start_ns: u64::MAX,
        total_ns: u64::MAX,
        under_ns: 0,
        rank: -1,
        pid: u32::MAX,
        tid: 99,
        op: "dataset.write".into(),
        kind: "dataset".into(),
        file: "a,b\"c\".h5".into(),
        path: "/g/\n\r\u{e9}\u{1F600}\t\u{1}\\/x".into(),
        status: -1,
        is_async: 1,
        bytes: u64::MAX,
        type_size: 8,
        ndims: u32::MAX,
        npoints: 3,
        sel: "hyperslab".into(),
        xfer: "collective".into(),
        xfer_actual: "independent".into(),
        batch: u32::MAX,
        detail: "start=5,10;count=\"3\"".into(),
    };
    vec![
        base.clone(),
        TraceRecord {
            seq: u64::MAX - 1,
            start_ns: 1,
            total_ns: 2,
            under_ns: 3,
            rank: i64::MIN,
            pid: 0,
            op: "file.specific:flush".into(),
            kind: String::new(),
            file: String::new(),
            path: String::new(),
            status: i32::MIN,
            is_async: 0,
            bytes: 0,
            type_size: 0,
            ndims: 0,
            npoints: 0,
            sel: String::new(),
            xfer: String::new(),
            xfer_actual: String::new(),
            batch: 1,
            detail: String::new(),
            ..base.clone()
        },
        TraceRecord {
            seq: u64::MAX - 2,
            start_ns: 1,
            total_ns: 2,
            under_ns: 3,
            rank: i64::MAX,
            pid: 7,
            op: "group.open".into(),
            kind: "group".into(),
            file: "plain.h5".into(),
            path: "\"".into(),
            status: i32::MAX,
            is_async: 0,
            bytes: 0,
            type_size: 0,
            ndims: 0,
            npoints: 0,
            sel: String::new(),
            xfer: String::new(),
            xfer_actual: String::new(),
            batch: 0,
            detail: ",".into(),
            ..base
        },
    ]
}

fn awkward_summary() -> ObjectSummary {
    ObjectSummary {
        rank: -1,
        pid: u32::MAX,
        kind: "dataset".into(),
        file: "x,\"y\".h5\n".into(),
        path: "/a\u{e9}".into(),
        token: "1:0b30".into(),
        opens: u64::MAX,
        accesses: 5,
        writes: 3,
        bytes_written: 24,
        write_ns: 7,
        first_ns: 1,
        last_ns: 2,
        dims: "10x20".into(),
        type_size: 8,
        layout: "chunked".into(),
        ind_io: 3,
        created: 255,
        open_ns: u64::MAX,
        ..ObjectSummary::default()
    }
}

/// `fixtures/encoded-v1.bin` was written by the connector's hand-written encoders (before
/// the record tables): CSV then JSONL of each awkward trace record (the JSONL ones with
/// `tid` u64::MAX), then the awkward summary as CSV and as JSONL.
#[test]
fn encoders_write_the_bytes_of_format_v1() {
    let mut out = Vec::new();
    for r in awkward_traces() {
        r.borrowed().write_csv(&mut out);
        TraceRecordRef {
            tid: u64::MAX,
            ..r.borrowed()
        }
        .write_jsonl(&mut out);
    }
    let s = awkward_summary();
    s.borrowed().write_csv(&mut out);
    s.borrowed().write_jsonl(&mut out);
    let want = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/encoded-v1.bin"
    ))
    .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out),
        String::from_utf8_lossy(&want)
    );
    assert_eq!(out, want);
}

/// A `csv` crate record as the parser's input.
struct Fields<'a>(&'a csv::ByteRecord);

impl<'a> CsvFields<'a> for Fields<'a> {
    fn len(&self) -> usize {
        self.0.len()
    }
    fn get(&self, i: usize) -> Option<&'a [u8]> {
        self.0.get(i)
    }
}

fn csv_rows(text: &[u8]) -> (csv::ByteRecord, Vec<csv::ByteRecord>) {
    let mut rdr = csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(text);
    let mut rows: Vec<csv::ByteRecord> = rdr.byte_records().map(Result::unwrap).collect();
    let header = rows.remove(0);
    (header, rows)
}

/// What reading gives back for a record: `batch` reads as at least 1.
fn normalized(mut r: TraceRecord) -> TraceRecord {
    r.batch = r.batch.max(1);
    r
}

#[test]
fn trace_records_round_trip_through_csv_and_jsonl() {
    let recs = awkward_traces();
    let mut csv_text = format!("{}\n", TRACE_COLUMNS.join(",")).into_bytes();
    let mut jsonl = Vec::new();
    for r in &recs {
        r.borrowed().write_csv(&mut csv_text);
        r.borrowed().write_jsonl(&mut jsonl);
    }
    let (header, rows) = csv_rows(&csv_text);
    let h = TraceRecordRef::csv_header(header.iter()).unwrap();
    assert!(h.is_standard());
    assert_eq!(rows.len(), recs.len());
    for (row, want) in rows.iter().zip(&recs) {
        let got = TraceRecordRef::from_csv(&h, &Fields(row)).unwrap();
        assert_eq!(got.to_owned_record(), normalized(want.clone()), "CSV");
    }
    let lines: Vec<&[u8]> = jsonl
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .collect();
    assert_eq!(lines.len(), recs.len());
    for (line, want) in lines.iter().zip(&recs) {
        let j: TraceRecordJson<'_> = serde_json::from_slice(line).unwrap();
        assert_eq!(
            j.record().unwrap().to_owned_record(),
            normalized(want.clone()),
            "JSONL"
        );
        // The owned type's serde agrees with the encoder.
        let owned: TraceRecord = serde_json::from_slice(line).unwrap();
        assert_eq!(owned, *want);
    }
}

#[test]
fn object_summaries_round_trip_through_csv_and_jsonl() {
    let s = awkward_summary();
    let mut csv_text = format!("{}\n", OBJECT_COLUMNS.join(",")).into_bytes();
    s.borrowed().write_csv(&mut csv_text);
    let (header, rows) = csv_rows(&csv_text);
    let h = ObjectSummaryRef::csv_header(header.iter()).unwrap();
    let got = ObjectSummaryRef::from_csv(&h, &Fields(&rows[0])).unwrap();
    assert_eq!(got.to_owned_record(), s);
    let mut jsonl = Vec::new();
    s.borrowed().write_jsonl(&mut jsonl);
    let j: ObjectSummaryJson<'_> = serde_json::from_slice(&jsonl).unwrap();
    assert_eq!(j.record().unwrap().to_owned_record(), s);
    let mut reused = ObjectSummary::default();
    reused.set_from(&j.record().unwrap());
    assert_eq!(reused, s);
}

#[test]
fn parser_reads_by_name_with_defaults_and_names_the_bad_column() {
    // Reordered, one extra column, most columns absent.
    let text = b"extra,total_ns,op,start_ns,batch,rank,status\n\
                 x,5,dataset.read,7,,,\n\
                 x,5,dataset.read,7,0,-3,-1\n\
                 x,5x,dataset.read,7,,,\n\
                 x,5,,7,,,\n\
                 x,5,a\n\
                 x,5,a,7,4294967296,,\n";
    let (header, rows) = csv_rows_flexible(text);
    let h = TraceRecordRef::csv_header(header.iter()).unwrap();
    assert!(!h.is_standard());
    let parse = |i: usize| TraceRecordRef::from_csv(&h, &Fields(&rows[i]));
    let r = parse(0).unwrap();
    assert_eq!((r.rank, r.status, r.batch, r.seq), (-1, 0, 1, 0));
    assert_eq!((r.start_ns, r.total_ns, r.op), (7, 5, "dataset.read"));
    let r = parse(1).unwrap();
    assert_eq!((r.rank, r.status, r.batch), (-3, -1, 1));
    assert_eq!(
        parse(2).unwrap_err(),
        "column `total_ns`: not a valid number: \"5x\""
    );
    assert_eq!(parse(3).unwrap_err(), "column `op` is empty");
    assert_eq!(parse(4).unwrap_err(), "3 fields, the header has 7");
    assert_eq!(
        parse(5).unwrap_err(),
        "column `batch`: not a valid number: \"4294967296\""
    );
    let missing = TraceRecordRef::csv_header([&b"op"[..], b"start_ns"]).unwrap_err();
    assert!(
        missing
            .starts_with("header has no `total_ns` column (expected the h5prov trace header: seq,"),
        "{missing}"
    );
    let j: TraceRecordJson<'_> = serde_json::from_str(r#"{"op":"","seq":1}"#).unwrap();
    assert_eq!(j.record().unwrap_err(), "missing or empty `op`");
    let j: TraceRecordJson<'_> = serde_json::from_str(r#"{"op":"x","rank":null}"#).unwrap();
    assert_eq!(
        (j.record().unwrap().rank, j.record().unwrap().batch),
        (-1, 1)
    );
}

fn csv_rows_flexible(text: &[u8]) -> (csv::ByteRecord, Vec<csv::ByteRecord>) {
    let mut rdr = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(text);
    let mut rows: Vec<csv::ByteRecord> = rdr.byte_records().map(Result::unwrap).collect();
    let header = rows.remove(0);
    (header, rows)
}

#[test]
fn jsonl_writer_matches_serde_json_for_every_character() {
    // Every ASCII character (all control characters included), non-ASCII text, and the
    // awkward records: the generated writer must give serde_json's bytes exactly.
    let all_ascii: String = (0u8..=0x7f).map(char::from).collect();
    let mut records = awkward_traces();
    records.push(TraceRecord {
        op: all_ascii.clone(),
        path: "/é/日本/\u{2028}/\u{7f}".into(),
        detail: all_ascii,
        ..TraceRecord::default()
    });
    for r in &records {
        let mut ours = Vec::new();
        r.borrowed().write_jsonl(&mut ours);
        let mut want = serde_json::to_vec(r).unwrap();
        want.push(b'\n');
        assert_eq!(
            String::from_utf8_lossy(&ours),
            String::from_utf8_lossy(&want)
        );
    }
    let s = awkward_summary();
    let mut ours = Vec::new();
    s.borrowed().write_jsonl(&mut ours);
    let mut want = serde_json::to_vec(&s).unwrap();
    want.push(b'\n');
    assert_eq!(ours, want);
}
