//! Unit tests of the trace files: blocks, rows and records as encoded, read back.

use super::files::{Zstd, STORE_BELOW};
use super::record::{encode, op_name, TextKeys};
use super::session::count_records;
use super::*;
use crate::config::Format;
use crate::ops::Op;
use crate::subops;
use crate::tree::Kind;
use h5prov_format::ObjectSummary;
use h5prov_format::{BinEncoder, ObjectSummaryRef, TraceRecordRef, OBJECT_COLUMNS, TRACE_COLUMNS};
use std::fmt::Write as _;

/// `r` encoded alone (a fresh encoder, no text keys).
fn encoded(format: Format, r: &TraceRecordRef<'_>) -> Vec<u8> {
    let mut out = Vec::new();
    let keys = TextKeys::default();
    encode(&mut out, &mut BinEncoder::default(), format, r, &keys);
    out
}

/// Short blocks are stored in their frame (a raw block), longer ones compressed, and
/// zstd's own decoder reads both back, alone and concatenated as in a file.
#[test]
fn short_blocks_are_stored_and_every_frame_decodes() {
    let mut z = Zstd::new(Format::Bin).unwrap();
    let mut file = Vec::new();
    let mut want = Vec::new();
    for len in [0, 1, 255, 256, 4095, 4096, 100_000] {
        let data: Vec<u8> = (0..len).map(|i| (i % 7 * 31 + i / 1000) as u8).collect();
        let frame = z.frame(&data).unwrap().to_vec();
        // Block type, bits 1-2 of the first block header: 0 raw, 2 compressed.
        let stored = frame.len() == 4 + 1 + 4 + 3 + len && (frame[9] >> 1) & 3 == 0;
        assert_eq!(stored, len < STORE_BELOW, "{len}");
        assert_eq!(zstd::stream::decode_all(&frame[..]).unwrap(), data, "{len}");
        file.extend_from_slice(&frame);
        want.extend_from_slice(&data);
    }
    assert_eq!(zstd::stream::decode_all(&file[..]).unwrap(), want);
}

#[test]
fn summary_rows_read_back_with_the_csv_crate() {
    let row = ObjectSummaryRef {
        rank: 2,
        pid: 7,
        kind: "dataset",
        file: "x,\"y\".h5",
        path: "/a",
        token: "1:0b30",
        opens: 2,
        accesses: 5,
        reads: 0,
        writes: 3,
        bytes_read: 0,
        bytes_written: 24,
        read_ns: 0,
        write_ns: 7,
        first_ns: 1,
        last_ns: 2,
        dims: "10x20",
        type_size: 8,
        layout: "chunked",
        ind_io: 3,
        coll_io: 0,
        broken_coll_io: 0,
        created: 1,
        dsets_created: 0,
        dsets_opened: 0,
        groups_created: 0,
        groups_opened: 0,
        open_ns: 9,
        chunk: "64x64",
        ftype: "float64le",
        filters: "shuffle+deflate(6)",
        fill_time: "ifset",
        alloc_time: "incr",
        cache: "12421:16777216:0.75",
        file_bytes_read: 0,
        file_bytes_written: 48,
        mpio: 0,
        align: "",
        fs: "",
        fill: "user",
        dev: 0,
        ino: 0,
        open_size: 0,
        open_mtime_ns: 0,
        close_size: 0,
        close_mtime_ns: 0,
        intent: "",
        libver: "",
        stored_bytes: 0,
    };
    let mut out = format!("{}\n", OBJECT_COLUMNS.join(",")).into_bytes();
    row.write_csv(&mut out);
    let back: ObjectSummary = csv::Reader::from_reader(out.as_slice())
        .deserialize()
        .next()
        .unwrap()
        .unwrap();
    assert_eq!(back.file, "x,\"y\".h5");
    assert_eq!((back.opens, back.writes, back.open_ns), (2, 3, 9));
    assert_eq!(back.dims, "10x20");
    assert_eq!(
        (back.chunk.as_str(), back.cache.as_str()),
        ("64x64", "12421:16777216:0.75")
    );
    let json = serde_json::to_string(&row).unwrap();
    let back2: ObjectSummary = serde_json::from_str(&json).unwrap();
    assert_eq!(back2, back, "CSV and JSONL rows carry the same fields");
}

#[test]
fn binary_buffers_count_their_records_by_length() {
    let r = TraceRecordRef {
        op: "file.open",
        path: "/a\nb",
        ..TraceRecordRef::default()
    };
    let (mut b, mut enc) = (Vec::new(), BinEncoder::default());
    for _ in 0..3 {
        encode(&mut b, &mut enc, Format::Bin, &r, &TextKeys::default());
    }
    // A second block: its zero length is no record.
    enc.new_block();
    encode(&mut b, &mut enc, Format::Bin, &r, &TextKeys::default());
    assert_eq!(count_records(Format::Bin, &b), 4);
    assert_eq!(count_records(Format::Bin, &[]), 0);
}

#[test]
fn detail_is_bounded() {
    let mut d = Detail::default();
    for i in 0..1000 {
        if write!(d, "{i},").is_err() {
            break;
        }
    }
    assert!(d.as_str().len() <= 256);
    assert!(d.as_str().ends_with("..."));
}

#[test]
fn op_names_have_sub_operations() {
    assert_eq!(op_name(Op::FileSpecific, 0), "file.specific:flush");
    assert_eq!(op_name(Op::DatasetWrite, subops::NONE), "dataset.write");
    assert_eq!(op_name(Op::DatasetOptional, 40), "dataset.optional:40");
    assert_eq!(op_name(Op::GenericOptional, 5000), "?");
}

#[test]
fn csv_records_have_every_column() {
    let r = TraceRecordRef {
        seq: 7,
        start_ns: 1,
        total_ns: 10,
        under_ns: 5,
        rank: 3,
        pid: 42,
        tid: 99,
        op: op_name(Op::DatasetWrite, subops::NONE),
        kind: Kind::Dataset.name(),
        file: "a,b.h5",
        path: "/g/\"d\"",
        bytes: 800,
        type_size: 8,
        ndims: 1,
        npoints: 100,
        sel: "hyperslab",
        batch: 1,
        detail: "start=5,10;count=3,4",
        ..TraceRecordRef::default()
    };
    let text = String::from_utf8(encoded(Format::Csv, &r)).unwrap();
    let mut rd = csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(text.as_bytes());
    let row = rd.records().next().unwrap().unwrap();
    assert_eq!(row.len(), TRACE_COLUMNS.len());
    let with_header = format!("{}\n{}", TRACE_COLUMNS.join(","), text);
    let mut hdr = csv::Reader::from_reader(with_header.as_bytes())
        .into_deserialize::<h5prov_format::TraceRecord>();
    let rec = hdr.next().unwrap().unwrap();
    assert_eq!(rec.file, "a,b.h5");
    assert_eq!(rec.path, "/g/\"d\"");
    assert_eq!(rec.bytes, 800);
    assert_eq!(rec.op, "dataset.write");
    assert_eq!(rec.seq, 7);
    assert_eq!(rec.detail, "start=5,10;count=3,4", "a quoted last field");

    let line = String::from_utf8(encoded(Format::Jsonl, &r)).unwrap();
    let back: h5prov_format::TraceRecord = serde_json::from_str(line.trim()).unwrap();
    assert_eq!(back, rec, "CSV and JSONL carry the same fields");
}
