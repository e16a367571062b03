//! The generated encoders against the bytes the connector wrote before the record tables
//! existed, and encoder/parser round trips on awkward values.

use h5prov_format::{
    read_bin_file, BinEncoder, BinError, BinFrame, BinHeader, BinReader, CsvFields, ObjectSummary,
    ObjectSummaryJson, ObjectSummaryRef, TraceRecord, TraceRecordJson, TraceRecordRef,
    OBJECT_COLUMNS, TRACE_COLUMNS,
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
        mem_type: "float32,\"le\"\n\u{e9}".into(),
        conv: u8::MAX,
        file_bytes: u64::MAX,
        blocks: u64::MAX,
        bbox: "0:99x\r\n0:9,\u{1}".into(),
        anon: "(anonymous #1, pid \"2\"),\n".into(),
        req: u64::MAX,
        req_done: u8::MAX,
        exec_ns: u64::MAX,
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
            mem_type: String::new(),
            conv: 0,
            file_bytes: 0,
            blocks: 0,
            bbox: String::new(),
            anon: String::new(),
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
        chunk: "64x64".into(),
        ftype: "compound24".into(),
        filters: "shuffle+deflate(6)+\"32015\",\n".into(),
        fill_time: "ifset".into(),
        alloc_time: "incr".into(),
        cache: "12421:16777216:0.75\t".into(),
        file_bytes_read: u64::MAX,
        file_bytes_written: 1,
        ..ObjectSummary::default()
    }
}

/// `fixtures/encoded-v1.bin` was written by the connector's hand-written encoders (before
/// the record tables): CSV then JSONL of each awkward trace record (the JSONL ones with
/// `tid` u64::MAX), then the awkward summary as CSV and as JSONL. The columns added since
/// (issue 17: `mem_type` ... `bbox`, `chunk` ... `file_bytes_written`, `mpio`, `align`, `fs`;
/// issue 33: `fill`; issue 31: `anon`; issue 32: `req`, `req_done`, `exec_ns`; issue 34:
/// `dev` ... `intent`; issue 33: `libver`, `stored_bytes`) come last: with
/// their empty values, each line is the old one plus exactly those columns.
#[test]
fn encoders_write_the_bytes_of_format_v1() {
    const TRACE_NEW_CSV: &[u8] = b",,0,0,0,,,0,0,0\n";
    const TRACE_NEW_JSON: &[u8] =
        b",\"mem_type\":\"\",\"conv\":0,\"file_bytes\":0,\"blocks\":0,\"bbox\":\"\",\"anon\":\"\",\
        \"req\":0,\"req_done\":0,\"exec_ns\":0}\n";
    const OBJECT_NEW_CSV: &[u8] = b",,,,,,,0,0,0,,,,0,0,0,0,0,0,,,0\n";
    const OBJECT_NEW_JSON: &[u8] =
        b",\"chunk\":\"\",\"ftype\":\"\",\"filters\":\"\",\"fill_time\":\"\",\
        \"alloc_time\":\"\",\"cache\":\"\",\"file_bytes_read\":0,\"file_bytes_written\":0,\
        \"mpio\":0,\"align\":\"\",\"fs\":\"\",\"fill\":\"\",\"dev\":0,\"ino\":0,\"open_size\":0,\
        \"open_mtime_ns\":0,\"close_size\":0,\"close_mtime_ns\":0,\"intent\":\"\",\
        \"libver\":\"\",\"stored_bytes\":0}\n";
    // Encodes with `enc`, then puts back the old line end in place of the new columns.
    fn old(enc: impl FnOnce(&mut Vec<u8>), new: &[u8], end: &[u8], out: &mut Vec<u8>) {
        let mut line = Vec::new();
        enc(&mut line);
        assert!(
            line.ends_with(new),
            "{:?} ends with the new columns",
            String::from_utf8_lossy(&line)
        );
        line.truncate(line.len() - new.len());
        line.extend_from_slice(end);
        out.extend_from_slice(&line);
    }
    let mut out = Vec::new();
    for r in awkward_traces() {
        let r = TraceRecord {
            mem_type: String::new(),
            conv: 0,
            file_bytes: 0,
            blocks: 0,
            bbox: String::new(),
            anon: String::new(),
            req: 0,
            req_done: 0,
            exec_ns: 0,
            ..r
        };
        old(
            |o| r.borrowed().write_csv(o),
            TRACE_NEW_CSV,
            b"\n",
            &mut out,
        );
        let j = TraceRecordRef {
            tid: u64::MAX,
            ..r.borrowed()
        };
        old(|o| j.write_jsonl(o), TRACE_NEW_JSON, b"}\n", &mut out);
    }
    let s = ObjectSummary {
        chunk: String::new(),
        ftype: String::new(),
        filters: String::new(),
        fill_time: String::new(),
        alloc_time: String::new(),
        cache: String::new(),
        file_bytes_read: 0,
        file_bytes_written: 0,
        ..awkward_summary()
    };
    old(
        |o| s.borrowed().write_csv(o),
        OBJECT_NEW_CSV,
        b"\n",
        &mut out,
    );
    old(
        |o| s.borrowed().write_jsonl(o),
        OBJECT_NEW_JSON,
        b"}\n",
        &mut out,
    );
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
    assert_eq!(h.standard_prefix(), Some(TRACE_COLUMNS.len()));
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
    assert_eq!(h.standard_prefix(), None);
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

/// Splits a binary file into its header body and its record bodies (a block's start: an
/// empty body), found by the crate's reader ([`BinReader`]); the file must be whole.
fn bin_split(data: &[u8]) -> (&[u8], Vec<&[u8]>) {
    let mut r = BinReader::new(data);
    let h = match r.header().unwrap() {
        BinHeader::Body(b) => b.len(),
        other => panic!("no header: {other:?}"),
    };
    let mut bodies = Vec::new();
    while let Some(f) = r.next_frame().unwrap() {
        match f {
            BinFrame::Block => bodies.push(&data[..0]),
            BinFrame::Record { offset, body, .. } => {
                let at = offset as usize + 4;
                bodies.push(&data[at..at + body.len()]);
            }
            other => panic!("not whole records: {other:?}"),
        }
    }
    (&data[12..12 + h], bodies)
}

/// Decodes a binary trace's record bodies (a block's start: an empty body), in order.
fn bin_traces(header: &[u8], bodies: &[&[u8]]) -> Vec<TraceRecord> {
    let (mut h, mut vals) = (TraceRecordRef::bin_decoder(header).unwrap(), Vec::new());
    let mut got = Vec::new();
    for body in bodies {
        if body.is_empty() {
            h.new_block();
            continue;
        }
        h.decode(body, &mut vals).unwrap();
        got.push(
            TraceRecordRef::from_bin(&h, &vals)
                .unwrap()
                .to_owned_record(),
        );
    }
    got
}

#[test]
fn trace_records_round_trip_through_bin() {
    let recs = awkward_traces();
    let mut data = Vec::new();
    TraceRecordRef::write_bin_header(&mut data);
    let mut enc = BinEncoder::default();
    for r in &recs {
        r.borrowed().write_bin(&mut data, &mut enc);
    }
    let (header, bodies) = bin_split(&data);
    let mut h = TraceRecordRef::bin_decoder(header).unwrap();
    assert!(bodies[0].is_empty(), "a block's start");
    assert_eq!(bodies.len(), recs.len() + 1);
    let mut vals = Vec::new();
    for (body, want) in bodies[1..].iter().zip(&recs) {
        h.decode(body, &mut vals).unwrap();
        let got = TraceRecordRef::from_bin(&h, &vals).unwrap();
        assert_eq!(got.to_owned_record(), normalized(want.clone()));
    }
    // Objects headers do not read as trace headers, and the other way round.
    let mut oh = Vec::new();
    ObjectSummaryRef::write_bin_header(&mut oh);
    let (oh, _) = bin_split(&oh);
    assert_eq!(
        TraceRecordRef::bin_decoder(oh).unwrap_err(),
        "a binary objects file, expected trace"
    );
}

#[test]
fn object_summaries_round_trip_through_bin() {
    let s = awkward_summary();
    let mut data = Vec::new();
    ObjectSummaryRef::write_bin_header(&mut data);
    let mut enc = BinEncoder::default();
    s.borrowed().write_bin(&mut data, &mut enc);
    s.borrowed().write_bin(&mut data, &mut enc);
    let (header, bodies) = bin_split(&data);
    let mut h = ObjectSummaryRef::bin_decoder(header).unwrap();
    let mut vals = Vec::new();
    let mut reused = ObjectSummary::default();
    for body in bodies.into_iter().skip(1) {
        h.decode(body, &mut vals).unwrap();
        reused.set_from(&ObjectSummaryRef::from_bin(&h, &vals).unwrap());
        assert_eq!(reused, s);
    }
}

/// The layout of `docs/TRACE-FORMAT.md`, byte by byte, on a block of two small records.
#[test]
fn bin_layout_is_the_documented_one() {
    let r = TraceRecord {
        seq: 300,
        start_ns: 5,
        rank: -1,
        op: "file.open".into(),
        file: "é".into(),
        batch: 1,
        ..TraceRecord::default()
    };
    let next = TraceRecord {
        seq: 301,
        start_ns: 3,
        ..r.clone()
    };
    let (mut out, mut enc) = (Vec::new(), BinEncoder::default());
    r.borrowed().write_bin(&mut out, &mut enc);
    next.borrowed().write_bin(&mut out, &mut enc);
    // The columns with a value: seq 0, start_ns 1, rank 4, op 7, file 9, batch 20 (the
    // others are as at a block's start: 0 or empty).
    let mut first = vec![0u8; 4];
    first.extend_from_slice(&0x0010_0293u32.to_le_bytes()); // the bitmap
    first.extend_from_slice(&[0xd8, 0x04]); // seq 300, zigzag
    first.push(10); // start_ns 5
    first.push(1); // rank -1, zigzag
    first.extend_from_slice(&[1, 9]); // op: new text (id 0), 9 bytes
    first.extend_from_slice(b"file.open");
    first.extend_from_slice(&[1, 2, 0xc3, 0xa9]); // file: new text (id 1)
    first.push(2); // batch 1, zigzag
    let n = (first.len() - 4) as u32;
    first[..4].copy_from_slice(&n.to_le_bytes());
    // Only seq and start_ns changed.
    let mut second = vec![0u8; 4];
    second.extend_from_slice(&[0b11, 0, 0, 0]);
    second.extend_from_slice(&[2, 3]); // seq +1, start_ns -2
    let n = (second.len() - 4) as u32;
    second[..4].copy_from_slice(&n.to_le_bytes());
    let mut want = vec![0u8; 4]; // the block's start
    want.extend_from_slice(&first);
    want.extend_from_slice(&second);
    assert_eq!(out, want);
    // The header: magic, length, version 3, "trace", 31 columns, each type + name.
    let mut h = Vec::new();
    TraceRecordRef::write_bin_header(&mut h);
    assert_eq!(&h[..8], b"H5PROVB1");
    assert_eq!(&h[12..20], b"\x03\x05trace\x1f");
    assert_eq!(&h[20..25], b"u\x03seq");
    assert_eq!(
        u32::from_le_bytes(h[8..12].try_into().unwrap()) as usize,
        h.len() - 12
    );
}

/// Blocks decode on their own: the records of two writers' blocks, interleaved as threads'
/// buffers are in a file, read back in file order; an id from another block is an error.
#[test]
fn bin_blocks_interleave_and_decode_on_their_own() {
    let recs = awkward_traces();
    let (mut a, mut b) = (BinEncoder::default(), BinEncoder::default());
    let (mut file, mut want) = (Vec::new(), Vec::new());
    TraceRecordRef::write_bin_header(&mut file);
    let (mut buf_a, mut buf_b) = (Vec::new(), Vec::new());
    let (mut pend_a, mut pend_b) = (Vec::new(), Vec::new());
    for (i, r) in recs.iter().cycle().take(6 * recs.len()).enumerate() {
        let (buf, enc, pend) = if i % 3 == 0 {
            (&mut buf_a, &mut a, &mut pend_a)
        } else {
            (&mut buf_b, &mut b, &mut pend_b)
        };
        r.borrowed().write_bin(buf, enc);
        pend.push(normalized(r.clone()));
        if i % 4 == 3 {
            // This writer's buffer goes out: one block.
            file.append(buf);
            want.append(pend);
            enc.new_block();
        }
    }
    for (buf, pend) in [(&mut buf_a, &mut pend_a), (&mut buf_b, &mut pend_b)] {
        file.append(buf);
        want.append(pend);
    }
    let (header, bodies) = bin_split(&file);
    assert_eq!(bin_traces(header, &bodies), want);
    // A record that names a text by id, decoded at the start of another block.
    let (mut h, mut vals) = (TraceRecordRef::bin_decoder(header).unwrap(), Vec::new());
    let undefined = bodies
        .iter()
        .filter(|b| !b.is_empty())
        .filter(|b| {
            h.new_block();
            matches!(h.decode(b, &mut vals),
                Err(BinError::Bad(e)) if e.contains("is not defined in its block"))
        })
        .count();
    assert!(undefined > 0);
}

/// Texts given by key decode as the texts: more keys than the encoder remembers (texts
/// written again), keys mixed with unkeyed texts of the same content in other records and
/// columns, a text that goes empty and comes back, blocks that start afresh.
#[test]
fn keyed_texts_round_trip_through_bin() {
    use h5prov_format::column_index;
    const OP: usize = column_index(TRACE_COLUMNS, "op");
    const PATH: usize = column_index(TRACE_COLUMNS, "path");
    const FILE: usize = column_index(TRACE_COLUMNS, "file");
    let ops = ["attr.close", "dataset.write", "link.specific:exists"];
    let paths = [
        "/g1",
        "/a/much/longer/path/than/sixteen/bytes",
        "",
        "/g2",
        "/g1",
    ];
    let (mut data, mut enc) = (Vec::new(), BinEncoder::default());
    TraceRecordRef::write_bin_header(&mut data);
    let mut want = Vec::new();
    let many: Vec<String> = (0..1500).map(|i| format!("/g{i}")).collect();
    for i in 0..3000usize {
        let (o, p) = (i * 7 % ops.len(), i * 3 % paths.len());
        // From record 200 on, a new path every other record, each with its own key.
        let (path, path_key) = match i {
            0..200 => (paths[p], (p as u64 + 1) << 8),
            _ => (
                many[i / 2 % many.len()].as_str(),
                1000 + (i / 2 % many.len()) as u64,
            ),
        };
        let r = TraceRecord {
            seq: i as u64,
            op: ops[o].into(),
            path: path.into(),
            file: if i % 11 == 0 { "" } else { "f.h5" }.into(),
            mem_type: paths[(p + 1) % paths.len()].into(), // the paths again, unkeyed
            batch: 1,
            ..TraceRecord::default()
        };
        let mut keys = [0u64; TRACE_COLUMNS.len()];
        keys[OP] = o as u64 + 1;
        // Every fourth record gives its path no key.
        keys[PATH] = if i % 4 == 3 { 0 } else { path_key };
        keys[FILE] = if r.file.is_empty() { 0 } else { 7 };
        r.borrowed()
            .write_bin_keyed(&mut data, &mut enc, |c| keys[c]);
        want.push(r);
        if i % 37 == 36 {
            enc.new_block();
        }
    }
    let (header, bodies) = bin_split(&data);
    assert_eq!(bin_traces(header, &bodies), want);
    // Unchanged columns are left out: less than the length and a byte per column each.
    assert!(
        data.len() < 3000 * (4 + TRACE_COLUMNS.len()),
        "{} bytes",
        data.len()
    );
}

/// Damaged records never panic the decoder: every record of a block of awkward records,
/// with bytes flipped, cut short or grown, decodes to a value or an error (and a decoded
/// one parses to a record or an error).
#[test]
fn damaged_bin_records_are_errors_not_panics() {
    let recs = awkward_traces();
    let (mut data, mut enc) = (Vec::new(), BinEncoder::default());
    TraceRecordRef::write_bin_header(&mut data);
    for r in recs.iter().cycle().take(40) {
        r.borrowed().write_bin(&mut data, &mut enc);
    }
    let (header, bodies) = bin_split(&data);
    let mut h = TraceRecordRef::bin_decoder(header).unwrap();
    let mut vals = Vec::new();
    let mut rng = 0x2545_f491_4f6c_dd1d_u64;
    let mut next = |n: usize| {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        (rng % n as u64) as usize
    };
    let (mut ok, mut bad) = (0, 0);
    for _ in 0..20_000 {
        // Decode the block up to a damaged record, so that it refers to earlier ones.
        let at = 1 + next(bodies.len() - 1);
        h.new_block();
        for b in &bodies[1..at] {
            h.decode(b, &mut vals).unwrap();
        }
        let mut body = bodies[at].to_vec();
        match next(3) {
            0 => {
                let i = next(body.len());
                body[i] ^= 1 << next(8);
            }
            1 => body.truncate(next(body.len())),
            _ => body.push(next(256) as u8),
        }
        match h.decode(&body, &mut vals) {
            Ok(()) => {
                ok += 1;
                let _ = TraceRecordRef::from_bin(&h, &vals);
            }
            Err(_) => bad += 1,
        }
    }
    assert!(ok > 0 && bad > 0, "{ok} decoded, {bad} errors");
}

/// Builds a binary header body by hand: `(type, name)` columns, layout version 2 (every
/// column has a value in every record: no bitmap), which readers still read.
fn bin_header_body(what: &str, cols: &[(u8, &str)]) -> Vec<u8> {
    use h5prov_format::put_varint;
    let mut h = Vec::new();
    put_varint(&mut h, 2);
    put_varint(&mut h, what.len() as u64);
    h.extend_from_slice(what.as_bytes());
    put_varint(&mut h, cols.len() as u64);
    for (t, n) in cols {
        h.push(*t);
        put_varint(&mut h, n.len() as u64);
        h.extend_from_slice(n.as_bytes());
    }
    h
}

#[test]
fn bin_parser_reads_by_name_with_defaults_and_names_the_bad_column() {
    use h5prov_format::put_varint;
    // Reordered, one extra column, most columns absent.
    let h = bin_header_body(
        "trace",
        &[
            (b's', "extra"),
            (b'u', "total_ns"),
            (b's', "op"),
            (b'u', "start_ns"),
            (b'u', "batch"),
            (b'i', "rank"),
            (b'i', "status"),
        ],
    );
    let mut h = TraceRecordRef::bin_decoder(&h).unwrap();
    // Each row the first of its block: numbers are the zigzag values, text new or empty.
    let text = |b: &mut Vec<u8>, s: &[u8]| {
        if s.is_empty() {
            b.push(0);
        } else {
            b.push(1);
            put_varint(b, s.len() as u64);
            b.extend_from_slice(s);
        }
    };
    let zz = |v: i64| ((v << 1) ^ (v >> 63)) as u64;
    let row = |extra: &[u8], op: &[u8], batch: u64, status: i64| {
        let mut b = Vec::new();
        text(&mut b, extra);
        put_varint(&mut b, zz(5));
        text(&mut b, op);
        put_varint(&mut b, zz(7));
        put_varint(&mut b, zz(batch as i64));
        put_varint(&mut b, zz(-3)); // rank
        put_varint(&mut b, zz(status));
        b
    };
    let mut vals = Vec::new();
    let mut parse = |b: &[u8]| -> Result<TraceRecord, String> {
        h.new_block();
        h.decode(b, &mut vals).map_err(|e| format!("{e:?}"))?;
        TraceRecordRef::from_bin(&h, &vals).map(|r| r.to_owned_record())
    };
    let r = parse(&row(b"\xff", b"dataset.read", 0, -1)).unwrap();
    assert_eq!((r.rank, r.status, r.batch, r.seq), (-3, -1, 1, 0));
    assert_eq!(
        (r.start_ns, r.total_ns, r.op.as_str()),
        (7, 5, "dataset.read")
    );
    assert_eq!(
        parse(&row(b"", b"", 1, 0)).unwrap_err(),
        "column `op` is empty"
    );
    assert_eq!(
        parse(&row(b"", b"a\xc3", 1, 0)).unwrap_err(),
        "column `op`: not valid UTF-8"
    );
    assert_eq!(
        parse(&row(b"", b"a", 1 << 32, 0)).unwrap_err(),
        "column `batch`: 4294967296 is out of range"
    );
    assert_eq!(
        parse(&row(b"", b"a", 1, 1 << 40)).unwrap_err(),
        "column `status`: 1099511627776 is out of range"
    );
    assert_eq!(
        parse(&row(b"", b"a", 1, -(1 << 40))).unwrap_err(),
        "column `status`: -1099511627776 is out of range"
    );
    // Bytes after the last field, or fields running past the body.
    let mut long = row(b"", b"a", 1, 0);
    long.push(0);
    assert!(parse(&long).unwrap_err().contains("fields end after"));
    let short = row(b"", b"a", 1, 0);
    assert_eq!(parse(&short[..short.len() - 1]).unwrap_err(), "Short");
    // A text id the block has not given.
    let mut unknown = row(b"", b"a", 1, 0);
    unknown[0] = 9;
    assert_eq!(
        parse(&unknown).unwrap_err(),
        "Bad(\"text id 7 is not defined in its block (0 are)\")"
    );

    let missing = TraceRecordRef::bin_decoder(&bin_header_body(
        "trace",
        &[(b's', "op"), (b'u', "start_ns")],
    ))
    .unwrap_err();
    assert!(
        missing.starts_with("header has no `total_ns` column"),
        "{missing}"
    );
    assert_eq!(
        TraceRecordRef::bin_decoder(&bin_header_body("trace", &[(b's', "seq")])).unwrap_err(),
        "column `seq` has type `s` in the file, the h5prov trace table has `u`"
    );
    let mut newer = bin_header_body("trace", &[]);
    newer[0] = 4;
    assert_eq!(
        TraceRecordRef::bin_decoder(&newer).unwrap_err(),
        "binary layout version 4, this reader knows versions 2 and 3"
    );
    // Version 1 (plain varints and text, no blocks) is not read by this version.
    let mut older = bin_header_body("trace", &[]);
    older[0] = 1;
    assert!(TraceRecordRef::bin_decoder(&older)
        .unwrap_err()
        .starts_with("binary layout version 1, this reader knows versions 2 and 3"));
}

/// The whole-file reader the tests and benchmarks use: every record of a whole file
/// (plain or `.zst`), and an error naming the file, the line and the byte offset of a
/// cut or corrupt one.
#[test]
fn read_bin_file_reads_whole_files_and_names_flaws() {
    let recs = awkward_traces();
    let mut data = Vec::new();
    TraceRecordRef::write_bin_header(&mut data);
    let mut enc = BinEncoder::default();
    for r in &recs {
        r.borrowed().write_bin(&mut data, &mut enc);
    }
    let dir = std::env::temp_dir().join(format!("h5prov-format-read-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let read = |name: &str, bytes: &[u8]| {
        let p = dir.join(name);
        std::fs::write(&p, bytes).unwrap();
        let mut got = Vec::new();
        read_bin_file(&p, TraceRecordRef::bin_decoder, |h, v| {
            got.push(TraceRecordRef::from_bin(h, v)?.to_owned_record());
            Ok(())
        })
        .map(|n| {
            assert_eq!(n as usize, got.len());
            got
        })
    };
    let want: Vec<TraceRecord> = recs.iter().cloned().map(normalized).collect();
    assert_eq!(read("a.trace.bin", &data).unwrap(), want);
    let zst = zstd_frame(&data);
    assert_eq!(read("a.trace.bin.zst", &zst).unwrap(), want);
    // Cut inside the last record: its line (header 1, records from 2) is named.
    let e = read("cut.trace.bin", &data[..data.len() - 1]).unwrap_err();
    let want = format!(
        "cut.trace.bin: line {}: the file is cut short",
        recs.len() + 1
    );
    assert!(e.ends_with(&want), "{e}");
    // A compressed frame cut short.
    let e = read("cut.trace.bin.zst", &zst[..zst.len() - 3]).unwrap_err();
    assert!(e.contains("cut.trace.bin.zst: line "), "{e}");
    // A corrupt length: the line and byte offset of its record.
    let (header, _) = bin_split(&data);
    let first = 12 + header.len() + 4; // after the block's start
    let mut bad = data.clone();
    bad[first..first + 4].copy_from_slice(&u32::MAX.to_le_bytes());
    let e = read("bad.trace.bin", &bad).unwrap_err();
    let want = format!("bad.trace.bin: line 2: record at byte offset {first}: length");
    assert!(e.contains(&want), "{e}");
    let e = read("x.trace.bin", b"H5PROVX1").unwrap_err();
    assert!(
        e.ends_with(
            "x.trace.bin: line 1: not an h5prov binary file (it does not start with H5PROVB1)"
        ),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `data` as one zstd frame, as the connector writes a block.
fn zstd_frame(data: &[u8]) -> Vec<u8> {
    zstd::stream::encode_all(data, 1).unwrap()
}

/// A header of the table's first columns (an older writer's) is a standard prefix, not
/// the standard header.
#[test]
fn header_of_the_first_columns_is_a_standard_prefix() {
    let n = TRACE_COLUMNS.len();
    let h =
        TraceRecordRef::csv_header(TRACE_COLUMNS[..n - 1].iter().map(|c| c.as_bytes())).unwrap();
    assert!(!h.is_standard());
    assert_eq!(h.standard_prefix(), Some(n - 1));
    let mut more: Vec<&[u8]> = TRACE_COLUMNS.iter().map(|c| c.as_bytes()).collect();
    more.push(b"extra");
    let h = TraceRecordRef::csv_header(more).unwrap();
    assert!(!h.is_standard());
    assert_eq!(h.standard_prefix(), None);
}
