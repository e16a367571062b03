//! The binary reader on files cut short and on corrupt lengths: a file cut anywhere inside
//! its last record reads every earlier record and reports the last one as truncated (as a
//! CSV file without its final newline); a corrupt length is an error naming the file and
//! the record's byte offset.

mod common;
use common::h5prov;
use h5prov_analyzer::read::{bin_trace, ReadOptions};
use h5prov_format::{BinEncoder, TraceRecord, TraceRecordRef};
use std::path::Path;

fn records() -> Vec<TraceRecord> {
    (0..20u64)
        .map(|i| TraceRecord {
            seq: i,
            start_ns: 1_700_000_000_000_000_000 + i * 1_000,
            total_ns: 500 + i,
            rank: 0,
            pid: 7,
            tid: 7,
            op: "dataset.write".into(),
            kind: "dataset".into(),
            file: "f,\"x\".h5".into(),
            path: format!("/d{i}\n"),
            bytes: i * 4096,
            batch: 1,
            ..TraceRecord::default()
        })
        .collect()
}

/// The file's bytes and the offset where each record starts.
fn encode(recs: &[TraceRecord]) -> (Vec<u8>, Vec<usize>) {
    let (mut out, mut enc) = (Vec::new(), BinEncoder::default());
    TraceRecordRef::write_bin_header(&mut out);
    let mut starts = Vec::new();
    for r in recs {
        // The first record follows its block's 4-byte start.
        starts.push(out.len() + if starts.is_empty() { 4 } else { 0 });
        r.borrowed().write_bin(&mut out, &mut enc);
    }
    (out, starts)
}

fn read(p: &Path) -> Result<(Vec<TraceRecord>, h5prov_analyzer::read::FileDiag), String> {
    let mut got = Vec::new();
    let d = bin_trace::read_bin_trace(p, &ReadOptions::default(), |r| {
        got.push(r.to_owned_record())
    })
    .map_err(|e| e.to_string())?;
    Ok((got, d))
}

#[test]
fn a_file_cut_inside_its_last_record_keeps_every_earlier_record() {
    let tmp = common::tempdir("bin-truncated");
    let recs = records();
    let (data, starts) = encode(&recs);
    let last = *starts.last().unwrap();
    // The data (what `bytes_written` counts) starts with the block's 4-byte start.
    let data_start = starts[0] - 4;
    let p = tmp.join("h5prov-r0-p7.trace.bin");
    // Whole: no truncation, bytes of the records counted.
    std::fs::write(&p, &data).unwrap();
    let (got, d) = read(&p).unwrap();
    assert_eq!((got, d.truncated_line), (recs.clone(), None));
    assert_eq!(d.data_bytes, (data.len() - data_start) as u64);
    for cut in last + 1..data.len() {
        std::fs::write(&p, &data[..cut]).unwrap();
        let (got, d) = read(&p).unwrap_or_else(|e| panic!("cut at {cut}: {e}"));
        assert_eq!(got, recs[..recs.len() - 1], "cut at {cut}");
        // The line the record would have in the CSV trace: header 1, records from 2.
        assert_eq!(
            d.truncated_line,
            Some(recs.len() as u64 + 1),
            "cut at {cut}"
        );
        assert_eq!(d.rows, recs.len() as u64 - 1);
        assert_eq!(d.data_bytes, (last - data_start) as u64);
    }
    // Cut at a record boundary: nothing truncated.
    std::fs::write(&p, &data[..last]).unwrap();
    assert_eq!(read(&p).unwrap().1.truncated_line, None);
    // Cut inside the header: no records, a truncated first line; empty: nothing at all.
    for cut in [1, 8, 11, 12, starts[0] - 5] {
        std::fs::write(&p, &data[..cut]).unwrap();
        let (got, d) = read(&p).unwrap();
        assert!(got.is_empty());
        assert_eq!(d.truncated_line, Some(1), "cut at {cut}");
    }
    std::fs::write(&p, b"").unwrap();
    assert_eq!(read(&p).unwrap().1, Default::default());
    // The report says so as for CSV.
    std::fs::write(&p, &data[..data.len() - 3]).unwrap();
    h5prov(&["report", tmp.to_str().unwrap()])
        .expect_code(0)
        .expect_stderr(&format!("{}:21; that line was skipped", p.display()));
}

#[test]
fn a_corrupt_length_is_an_error_naming_file_and_offset() {
    let tmp = common::tempdir("bin-corrupt");
    let recs = records();
    let (data, starts) = encode(&recs);
    let p = tmp.join("h5prov-r0-p7.trace.bin");
    let at = starts[5];
    let len = u32::from_le_bytes(data[at..at + 4].try_into().unwrap());
    for bad in [len - 1, len + 1, len + 1000, 1 << 30, u32::MAX] {
        let mut d = data.clone();
        d[at..at + 4].copy_from_slice(&bad.to_le_bytes());
        std::fs::write(&p, &d).unwrap();
        let e = read(&p).unwrap_err();
        let want = format!(
            "{}:7: malformed row: record at byte offset {at}: ",
            p.display()
        );
        assert!(e.starts_with(&want), "length {bad}: {e}");
        assert!(e.contains("corrupt length"), "length {bad}: {e}");
    }
    // A length reaching past the end of the file whose fields end before it: corrupt,
    // not a truncated last record.
    let mut d = data[..starts[19]].to_vec();
    let l = starts[19] - starts[18] - 4;
    d[starts[18]..starts[18] + 4].copy_from_slice(&(l as u32 + 50).to_le_bytes());
    std::fs::write(&p, &d).unwrap();
    let e = read(&p).unwrap_err();
    assert!(
        e.contains(&format!(
            ":20: malformed row: record at byte offset {}: length",
            starts[18]
        )) && e.contains("runs past the end of the file"),
        "{e}"
    );
    // Non-UTF-8 text: the column is named, as in CSV. (Each record's path is new text in
    // its block; its op, given an id in the first record, is not written again.)
    let mut d = data.clone();
    let path = starts[2]
        + d[starts[2]..]
            .windows(4)
            .position(|w| w == b"/d2\n")
            .unwrap();
    d[path] = 0xff;
    std::fs::write(&p, &d).unwrap();
    let e = read(&p).unwrap_err();
    assert!(
        e.ends_with(&format!(
            ":4: malformed row: record at byte offset {}: column `path`: not valid UTF-8 \
             (rerun with --lenient to count and skip malformed rows)",
            starts[2]
        )),
        "{e}"
    );
    // --lenient skips it and reads the rest.
    let mut got = 0;
    let diag = bin_trace::read_bin_trace(&p, &ReadOptions { lenient: true }, |_| got += 1).unwrap();
    assert_eq!((got, diag.malformed), (19, 1));
    // Not a binary file at all.
    std::fs::write(&p, b"seq,op\n1,x\n").unwrap();
    assert!(read(&p).unwrap_err().contains("not an h5prov binary file"));
}

/// The connector's default: `*.trace.bin.zst`, the header and each block one zstd frame.
/// A file cut inside its last frame (the process was killed while writing it) reads every
/// record of the frames before and reports the cut, even when what was decoded ends on a
/// record boundary: the cut frame's records are lost, and the report must say so.
#[test]
fn a_compressed_file_cut_inside_its_last_frame_keeps_the_frames_before() {
    let tmp = common::tempdir("bin-zst-cut");
    let recs = records();
    let (mut header, mut enc) = (Vec::new(), BinEncoder::default());
    TraceRecordRef::write_bin_header(&mut header);
    let mut file = zstd::bulk::compress(&header, 1).unwrap();
    let mut frame_ends = Vec::new();
    for chunk in recs.chunks(5) {
        let mut block = Vec::new();
        enc.new_block();
        for r in chunk {
            r.borrowed().write_bin(&mut block, &mut enc);
        }
        file.extend(zstd::bulk::compress(&block, 1).unwrap());
        frame_ends.push(file.len());
    }
    let p = tmp.join("h5prov-r0-p7.trace.bin.zst");
    std::fs::write(&p, &file).unwrap();
    let (got, d) = read(&p).unwrap();
    assert_eq!((got, d.truncated_line), (recs.clone(), None));
    // Cut inside the fourth frame: the first three frames' 15 records, and a truncation.
    let cut = frame_ends[2] + (frame_ends[3] - frame_ends[2]) / 2;
    std::fs::write(&p, &file[..cut]).unwrap();
    let (got, d) = read(&p).unwrap();
    assert_eq!(got, recs[..15]);
    assert!(d.truncated_line.is_some(), "{d:?}");
}
