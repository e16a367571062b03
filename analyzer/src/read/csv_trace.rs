//! The CSV readers. Rows are read as `csv::ByteRecord`s into one reused buffer and fields
//! are parsed in place (integers by hand, strings as borrowed `&str`): no allocation per row.
//!
//! Columns are found by header name, so a file with extra or reordered columns still
//! reads; `op`, `start_ns` and `total_ns` are required.

use super::{ends_with_newline, parse_i64, parse_u64, Error, FileDiag, ReadOptions};
use crate::record::RecordRef;
use h5prov_format::TRACE_COLUMNS;
use std::fs::File;
use std::path::Path;

/// Drives a CSV file: header callback, then one callback per row with its line number.
/// A row callback returning `Err(reason)` marks the row malformed.
pub(crate) fn drive_csv<H>(
    path: &Path,
    opts: &ReadOptions,
    on_header: impl FnOnce(&csv::ByteRecord) -> Result<H, String>,
    mut on_row: impl FnMut(&H, &csv::ByteRecord) -> Result<(), String>,
) -> Result<FileDiag, Error> {
    let terminated = ends_with_newline(path)?;
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    let mut rdr = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .buffer_capacity(256 * 1024)
        .from_reader(file);
    let mut diag = FileDiag::default();
    let mut cur = csv::ByteRecord::new();
    let mut next = csv::ByteRecord::new();
    let csv_err = |e: csv::Error| -> Error {
        match e.into_kind() {
            csv::ErrorKind::Io(io) => Error::io(path, io),
            other => Error::Other(format!("{}: CSV error: {:?}", path.display(), other)),
        }
    };
    if !rdr.read_byte_record(&mut cur).map_err(csv_err)? {
        return Ok(diag); // empty file: nothing written yet
    }
    let state = match on_header(&cur) {
        Ok(h) => h,
        Err(reason) => {
            let unterminated = !terminated && !rdr.read_byte_record(&mut next).map_err(csv_err)?;
            if unterminated {
                // Killed while writing the header: no rows.
                diag.truncated_line = Some(1);
                return Ok(diag);
            }
            return Err(Error::Malformed {
                path: path.to_path_buf(),
                line: 1,
                reason,
            });
        }
    };
    let mut have = rdr.read_byte_record(&mut cur).map_err(csv_err)?;
    while have {
        let line = cur.position().map_or(0, |p| p.line());
        match on_row(&state, &cur) {
            Ok(()) => {
                diag.rows += 1;
                have = rdr.read_byte_record(&mut cur).map_err(csv_err)?;
            }
            Err(reason) => {
                let more = rdr.read_byte_record(&mut next).map_err(csv_err)?;
                diag.bad_row(path, line, reason, !more && !terminated, opts)?;
                std::mem::swap(&mut cur, &mut next);
                have = more;
            }
        }
    }
    Ok(diag)
}

/// Positions of the trace columns in a file's header (`usize::MAX` when absent).
#[derive(Debug, Clone)]
struct Columns([usize; 22]);

impl Columns {
    fn from_header(h: &csv::ByteRecord) -> Result<Columns, String> {
        let mut idx = [usize::MAX; 22];
        for (i, name) in h.iter().enumerate() {
            if let Some(c) = TRACE_COLUMNS.iter().position(|c| c.as_bytes() == name) {
                idx[c] = i;
            }
        }
        for req in ["op", "start_ns", "total_ns"] {
            let c = TRACE_COLUMNS
                .iter()
                .position(|c| *c == req)
                .expect("known column");
            if idx[c] == usize::MAX {
                return Err(format!(
                    "header has no `{req}` column (expected the h5prov trace header: {})",
                    TRACE_COLUMNS.join(",")
                ));
            }
        }
        Ok(Columns(idx))
    }
}

#[inline]
fn field<'a>(r: &'a csv::ByteRecord, cols: &Columns, c: usize) -> &'a [u8] {
    let i = cols.0[c];
    if i == usize::MAX {
        b""
    } else {
        r.get(i).unwrap_or(b"")
    }
}

macro_rules! num {
    ($r:expr, $cols:expr, $c:expr, u64) => {
        parse_u64(field($r, $cols, $c)).ok_or_else(|| bad_num($r, $cols, $c))?
    };
    ($r:expr, $cols:expr, $c:expr, $t:ty) => {
        parse_u64(field($r, $cols, $c))
            .and_then(|v| <$t>::try_from(v).ok())
            .ok_or_else(|| bad_num($r, $cols, $c))?
    };
}

fn bad_num(r: &csv::ByteRecord, cols: &Columns, c: usize) -> String {
    format!(
        "column `{}`: not a valid number: {:?}",
        TRACE_COLUMNS[c],
        String::from_utf8_lossy(field(r, cols, c))
    )
}

/// The string value of column `c`, sliced from the record's text (validated once per row).
#[inline]
fn text<'a>(all: &'a str, r: &csv::ByteRecord, cols: &Columns, c: usize) -> &'a str {
    let i = cols.0[c];
    if i == usize::MAX {
        return "";
    }
    // The ranges of a ByteRecord index its concatenated fields and `all` is that slice as
    // UTF-8. A field boundary inside a character (two invalid halves that happen to
    // concatenate into valid UTF-8) reads as empty rather than panicking.
    r.range(i).and_then(|rg| all.get(rg)).unwrap_or("")
}

fn parse_row<'a>(
    r: &'a csv::ByteRecord,
    cols: &Columns,
    width: usize,
) -> Result<RecordRef<'a>, String> {
    if r.len() != width {
        return Err(format!("{} fields, the header has {}", r.len(), width));
    }
    let rank = parse_i64(field(r, cols, 4), -1).ok_or_else(|| bad_num(r, cols, 4))?;
    let status = parse_i64(field(r, cols, 11), 0)
        .and_then(|v| i32::try_from(v).ok())
        .ok_or_else(|| bad_num(r, cols, 11))?;
    let all = std::str::from_utf8(r.as_slice()).map_err(|e| {
        let bad =
            (0..r.len()).find(|&i| r.range(i).is_some_and(|rg| rg.contains(&e.valid_up_to())));
        let name = bad
            .and_then(|i| cols.0.iter().position(|&x| x == i))
            .map_or("?", |c| TRACE_COLUMNS[c]);
        format!("column `{name}`: not valid UTF-8")
    })?;
    let op = text(all, r, cols, 7);
    if op.is_empty() {
        return Err("column `op` is empty".into());
    }
    let batch = num!(r, cols, 20, u32);
    Ok(RecordRef {
        seq: num!(r, cols, 0, u64),
        start_ns: num!(r, cols, 1, u64),
        total_ns: num!(r, cols, 2, u64),
        under_ns: num!(r, cols, 3, u64),
        rank,
        pid: num!(r, cols, 5, u32),
        tid: num!(r, cols, 6, u64),
        op,
        kind: text(all, r, cols, 8),
        file: text(all, r, cols, 9),
        path: text(all, r, cols, 10),
        status,
        is_async: num!(r, cols, 12, u8),
        bytes: num!(r, cols, 13, u64),
        type_size: num!(r, cols, 14, u64),
        ndims: num!(r, cols, 15, u32),
        npoints: num!(r, cols, 16, u64),
        sel: text(all, r, cols, 17),
        xfer: text(all, r, cols, 18),
        xfer_actual: text(all, r, cols, 19),
        batch: batch.max(1),
        detail: text(all, r, cols, 21),
    })
}

/// Streams the records of a CSV trace file to `sink`.
pub fn read_csv_trace(
    path: &Path,
    opts: &ReadOptions,
    mut sink: impl FnMut(&RecordRef<'_>),
) -> Result<FileDiag, Error> {
    drive_csv(
        path,
        opts,
        |h| Ok((Columns::from_header(h)?, h.len())),
        |(cols, width), r| {
            let rec = parse_row(r, cols, *width)?;
            sink(&rec);
            Ok(())
        },
    )
}
