//! The connector's encoders (generated from the format's record tables) against the
//! analyzer's readers: a record written as CSV, JSONL or binary must read back as itself. A field
//! added to one side only, or encoded differently from how it is parsed, fails here.

mod common;
use h5prov_analyzer::read::{bin_trace, csv_trace, jsonl_trace, objects, ReadOptions};
use h5prov_format::{Encoding, ObjectSummary, TraceRecord, OBJECT_COLUMNS, TRACE_COLUMNS};
use std::path::Path;

/// Awkward values in every field: separators, quotes, CR and LF, non-ASCII, control and
/// escape characters, the largest and smallest integers, a negative rank.
fn awkward_traces() -> Vec<TraceRecord> {
    let texts = [
        "",
        "plain",
        "a,b",
        "\"quoted\"",
        "line\nbreak",
        "cr\rlf\r\n",
        "lone\rcr",
        "é ü 😀",
        "tab\tnul\u{0}bell\u{7}",
        "back\\slash/",
        ",",
        "\"",
    ];
    let t = |i: usize| texts[i % texts.len()].to_string();
    (0..40usize)
        .map(|i| TraceRecord {
            seq: if i % 2 == 0 {
                u64::MAX - i as u64
            } else {
                i as u64
            },
            start_ns: if i % 3 == 0 {
                u64::MAX
            } else {
                1_700_000_000_000_000_000
            },
            total_ns: [0, 1, u64::MAX][i % 3],
            under_ns: [u64::MAX, 7, 0][i % 3],
            rank: [-1, 0, i64::MAX, i64::MIN, 5][i % 5],
            pid: [0, 1, u32::MAX][i % 3],
            tid: [u64::MAX, 0, 12345][i % 3],
            op: ["dataset.write", "file.specific:flush", "a,\"b\"\n", "é"][i % 4].into(),
            kind: t(i + 1),
            file: t(i + 2),
            path: t(i + 3),
            status: [0, -1, i32::MIN, i32::MAX][i % 4],
            is_async: [0, 1, u8::MAX][i % 3],
            bytes: [0, u64::MAX][i % 2],
            type_size: [8, u64::MAX][i % 2],
            ndims: [0, u32::MAX][i % 2],
            npoints: [u64::MAX, 3][i % 2],
            sel: t(i + 4),
            xfer: t(i + 5),
            xfer_actual: t(i + 6),
            batch: [1, u32::MAX, 2][i % 3],
            detail: t(i + 7),
            mem_type: t(i + 8),
            conv: [0, 1, u8::MAX][i % 3],
            file_bytes: [u64::MAX, 0, 7][i % 3],
            blocks: [0, u64::MAX][i % 2],
            bbox: t(i + 9),
            anon: t(i + 10),
            req: [u64::MAX, 0, 3][i % 3],
            req_done: [0, 1, u8::MAX][i % 3],
            exec_ns: [0, u64::MAX, 5][i % 3],
        })
        .collect()
}

fn write(dir: &Path, name: &str, body: &[u8]) -> std::path::PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, body).unwrap();
    p
}

#[test]
fn trace_records_round_trip_through_the_encoders_and_the_readers() {
    let tmp = common::tempdir("roundtrip-trace");
    let recs = awkward_traces();
    let mut csv = format!("{}\n", TRACE_COLUMNS.join(",")).into_bytes();
    let mut jsonl = Vec::new();
    let mut bin = Vec::new();
    h5prov_format::TraceRecordRef::write_bin_header(&mut bin);
    let mut enc = h5prov_format::BinEncoder::default();
    for (i, r) in recs.iter().enumerate() {
        r.borrowed().write_csv(&mut csv);
        r.borrowed().write_jsonl(&mut jsonl);
        r.borrowed().write_bin(&mut bin, &mut enc);
        if i % 3 == 2 {
            enc.new_block(); // as the connector's buffer is written out
        }
    }
    let opts = ReadOptions::default();
    let mut got = Vec::new();
    let p = write(&tmp, "h5prov-r0-p1.trace.csv", &csv);
    let d = csv_trace::read_csv_trace(&p, &opts, |r| got.push(r.to_owned_record())).unwrap();
    assert_eq!(d.rows, recs.len() as u64);
    assert_eq!(got, recs, "CSV");
    got.clear();
    let p = write(&tmp, "h5prov-r0-p1.trace.jsonl", &jsonl);
    jsonl_trace::read_jsonl_trace(&p, &opts, |r| got.push(r.to_owned_record())).unwrap();
    assert_eq!(got, recs, "JSONL");
    got.clear();
    let p = write(&tmp, "h5prov-r0-p1.trace.bin", &bin);
    let d = bin_trace::read_bin_trace(&p, &opts, |r| got.push(r.to_owned_record())).unwrap();
    assert_eq!(got, recs, "bin");
    assert_eq!(d.rows, recs.len() as u64);
    assert_eq!(d.truncated_line, None);
    // Compressed binary traces read too.
    got.clear();
    let p = write(
        &tmp,
        "h5prov-r0-p2.trace.bin.zst",
        &zstd::bulk::compress(&bin, 3).unwrap(),
    );
    bin_trace::read_bin_trace(&p, &opts, |r| got.push(r.to_owned_record())).unwrap();
    assert_eq!(got, recs, "bin.zst");
}

#[test]
fn object_summaries_round_trip_through_the_encoders_and_the_readers() {
    let tmp = common::tempdir("roundtrip-objects");
    let rows: Vec<ObjectSummary> = awkward_traces()
        .iter()
        .enumerate()
        .map(|(i, r)| ObjectSummary {
            rank: r.rank,
            pid: r.pid,
            kind: r.kind.clone(),
            file: r.file.clone(),
            path: r.path.clone(),
            token: r.detail.clone(),
            opens: r.seq,
            accesses: r.start_ns,
            reads: r.total_ns,
            writes: r.under_ns,
            bytes_read: r.tid,
            bytes_written: r.bytes,
            read_ns: r.type_size,
            write_ns: r.npoints,
            first_ns: u64::MAX,
            last_ns: i as u64,
            dims: r.sel.clone(),
            type_size: r.bytes,
            layout: r.xfer.clone(),
            ind_io: r.seq,
            coll_io: r.npoints,
            broken_coll_io: r.tid,
            created: r.is_async,
            dsets_created: r.bytes,
            dsets_opened: r.type_size,
            groups_created: r.start_ns,
            groups_opened: r.under_ns,
            open_ns: r.total_ns,
            chunk: r.bbox.clone(),
            ftype: r.mem_type.clone(),
            filters: r.op.clone(),
            fill_time: r.xfer_actual.clone(),
            alloc_time: r.kind.clone(),
            cache: r.file.clone(),
            file_bytes_read: r.file_bytes,
            file_bytes_written: r.blocks,
            mpio: r.conv,
            align: r.path.clone(),
            fs: r.detail.clone(),
            fill: r.op.clone(),
            dev: r.tid,
            ino: u64::MAX,
            open_size: r.bytes,
            open_mtime_ns: r.start_ns,
            close_size: r.npoints,
            close_mtime_ns: r.total_ns,
            intent: r.sel.clone(),
            libver: r.xfer.clone(),
            stored_bytes: r.bytes,
        })
        .collect();
    let mut csv = format!("{}\n", OBJECT_COLUMNS.join(",")).into_bytes();
    let mut jsonl = Vec::new();
    let mut bin = Vec::new();
    h5prov_format::ObjectSummaryRef::write_bin_header(&mut bin);
    let mut enc = h5prov_format::BinEncoder::default();
    for (i, o) in rows.iter().enumerate() {
        o.borrowed().write_csv(&mut csv);
        o.borrowed().write_jsonl(&mut jsonl);
        o.borrowed().write_bin(&mut bin, &mut enc);
        if i % 3 == 2 {
            enc.new_block();
        }
    }
    let opts = ReadOptions::default();
    for (name, body, enc) in [
        ("h5prov-r0-p1.objects.csv", &csv, Encoding::Csv),
        ("h5prov-r0-p1.objects.jsonl", &jsonl, Encoding::Jsonl),
        ("h5prov-r0-p1.objects.bin", &bin, Encoding::Bin),
    ] {
        let p = write(&tmp, name, body);
        let mut got = Vec::new();
        objects::read_objects(&p, enc, &opts, |o| got.push(o.to_owned_record())).unwrap();
        assert_eq!(got, rows, "{name}");
    }
}
