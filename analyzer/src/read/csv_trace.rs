//! The CSV readers. Records come from `CsvRecords` (a fast path for lines without quotes,
//! `csv_core` for the others) as borrowed `Row`s, and fields are parsed in place
//! (integers by hand, strings as borrowed `&str`): no allocation per row.
//!
//! Columns are found by header name, so a file with extra or reordered columns still
//! reads; `op`, `start_ns` and `total_ns` are required.

use super::csv_records::{CsvRecords, OwnedRow, Record, Row};
use super::{input, parse_i64, parse_u64, Error, FileDiag, ReadOptions};
use crate::record::RecordRef;
use h5prov_format::TRACE_COLUMNS;
use std::path::Path;

/// Drives a CSV file: header callback, then one callback per row with its line number.
/// A row callback returning `Err(reason)` marks the row malformed. A failing row that is
/// the last one of a file not ending with `\n` is a truncated last line.
pub(crate) fn drive_csv<H>(
    path: &Path,
    opts: &ReadOptions,
    on_header: impl FnOnce(&Row<'_>) -> Result<H, String>,
    mut on_row: impl FnMut(&H, &Row<'_>) -> Result<(), String>,
) -> Result<FileDiag, Error> {
    drive_records(path, opts, on_header, |h, rec, spans| {
        on_row(h, &rec.row(spans))
    })
}

/// [`drive_csv`] with the records as they come: a plain line is split only if the
/// callback asks for its fields ([`Record::row`], with the storage passed along).
pub(crate) fn drive_records<H>(
    path: &Path,
    opts: &ReadOptions,
    on_header: impl FnOnce(&Row<'_>) -> Result<H, String>,
    mut on_row: impl FnMut(&H, Record<'_>, &mut Vec<(usize, usize)>) -> Result<(), String>,
) -> Result<FileDiag, Error> {
    let mut rdr = CsvRecords::new(input::open(path)?);
    let io = |e| Error::io(path, e);
    let mut diag = FileDiag::default();
    let Some((_, header)) = rdr.next_record().map_err(io)? else {
        return Ok(diag); // empty file: nothing written yet
    };
    let state = match on_header(&header) {
        Ok(h) => h,
        Err(reason) => {
            if !rdr.has_more().map_err(io)? && !rdr.terminated() {
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
    let mut spans = Vec::with_capacity(32);
    while let Some((line, rec)) = rdr.next_raw().map_err(io)? {
        match on_row(&state, rec, &mut spans) {
            Ok(()) => diag.rows += 1,
            Err(reason) => {
                let last = !rdr.has_more().map_err(io)?;
                diag.bad_row(path, line, reason, last && !rdr.terminated(), opts)?;
            }
        }
    }
    Ok(diag)
}

/// Positions of the trace columns in a file's header (`usize::MAX` when absent).
#[derive(Debug, Clone)]
struct Columns([usize; 22]);

impl Columns {
    fn from_header(h: &Row<'_>) -> Result<Columns, String> {
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
fn field<'a>(r: &Row<'a>, cols: &Columns, c: usize) -> &'a [u8] {
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

fn bad_num(r: &Row<'_>, cols: &Columns, c: usize) -> String {
    format!(
        "column `{}`: not a valid number: {:?}",
        TRACE_COLUMNS[c],
        String::from_utf8_lossy(field(r, cols, c))
    )
}

/// The string value of column `c`, sliced from the record's text (validated once per row).
#[inline(always)]
fn text<'a>(all: &'a str, r: &Row<'_>, cols: &Columns, c: usize) -> &'a str {
    let i = cols.0[c];
    if i == usize::MAX {
        return "";
    }
    // The ranges index `r.bytes()` and `all` is that slice as UTF-8. In the concatenated
    // form, a field boundary inside a character (two invalid halves that happen to
    // concatenate into valid UTF-8) reads as empty rather than panicking.
    r.range(i).and_then(|rg| all.get(rg)).unwrap_or("")
}

/// Why a row did not parse.
enum RowError {
    /// Malformed, with the reason.
    Bad(String),
    /// A raw line that is not UTF-8: decide on the concatenated fields, as the `csv`
    /// crate's `ByteRecord` did (commas between fields can change the verdict).
    LineNotUtf8,
}

impl From<String> for RowError {
    fn from(s: String) -> Self {
        RowError::Bad(s)
    }
}

/// Field `c` of `r` (empty when the column is absent), for [`fast_row`].
#[inline(always)]
fn fast_field<'a>(r: &Row<'a>, cols: &Columns, c: usize) -> &'a [u8] {
    r.get(cols.0[c]).unwrap_or(b"")
}

#[inline(always)]
fn fast_u64(r: &Row<'_>, cols: &Columns, c: usize) -> Option<u64> {
    parse_u64(fast_field(r, cols, c))
}

#[inline(always)]
fn fast_num<T: TryFrom<u64>>(r: &Row<'_>, cols: &Columns, c: usize) -> Option<T> {
    T::try_from(fast_u64(r, cols, c)?).ok()
}

/// The common case, optimistically: the row has the header's width, every number parses
/// and the row is UTF-8 (then [`parse_row`] would return the same record). `None` sends
/// the row to [`parse_row`], which decides exactly and words the error.
#[inline]
fn fast_row<'a>(r: &Row<'a>, cols: &Columns, width: usize) -> Option<RecordRef<'a>> {
    if r.len() != width {
        return None;
    }
    let all = std::str::from_utf8(r.bytes()).ok()?;
    let op = text(all, r, cols, 7);
    if op.is_empty() {
        return None;
    }
    Some(RecordRef {
        seq: fast_u64(r, cols, 0)?,
        start_ns: fast_u64(r, cols, 1)?,
        total_ns: fast_u64(r, cols, 2)?,
        under_ns: fast_u64(r, cols, 3)?,
        rank: parse_i64(fast_field(r, cols, 4), -1)?,
        pid: fast_num(r, cols, 5)?,
        tid: fast_u64(r, cols, 6)?,
        op,
        kind: text(all, r, cols, 8),
        file: text(all, r, cols, 9),
        path: text(all, r, cols, 10),
        status: i32::try_from(parse_i64(fast_field(r, cols, 11), 0)?).ok()?,
        is_async: fast_num(r, cols, 12)?,
        bytes: fast_u64(r, cols, 13)?,
        type_size: fast_u64(r, cols, 14)?,
        ndims: fast_num(r, cols, 15)?,
        npoints: fast_u64(r, cols, 16)?,
        sel: text(all, r, cols, 17),
        xfer: text(all, r, cols, 18),
        xfer_actual: text(all, r, cols, 19),
        batch: fast_num::<u32>(r, cols, 20)?.max(1),
        detail: text(all, r, cols, 21),
    })
}

/// Parses a row exactly as the reader always did, with the first problem as the error.
fn parse_row<'a>(r: &Row<'a>, cols: &Columns, width: usize) -> Result<RecordRef<'a>, RowError> {
    if r.len() != width {
        return Err(format!("{} fields, the header has {}", r.len(), width).into());
    }
    let rank = parse_i64(field(r, cols, 4), -1).ok_or_else(|| bad_num(r, cols, 4))?;
    let status = parse_i64(field(r, cols, 11), 0)
        .and_then(|v| i32::try_from(v).ok())
        .ok_or_else(|| bad_num(r, cols, 11))?;
    if r.is_raw_line() && std::str::from_utf8(r.bytes()).is_err() {
        return Err(RowError::LineNotUtf8);
    }
    let all = std::str::from_utf8(r.bytes()).map_err(|e| {
        let bad =
            (0..r.len()).find(|&i| r.range(i).is_some_and(|rg| rg.contains(&e.valid_up_to())));
        let name = bad
            .and_then(|i| cols.0.iter().position(|&x| x == i))
            .map_or("?", |c| TRACE_COLUMNS[c]);
        format!("column `{name}`: not valid UTF-8")
    })?;
    let op = text(all, r, cols, 7);
    if op.is_empty() {
        return Err(RowError::Bad("column `op` is empty".into()));
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
            if let Some(rec) = fast_row(r, cols, *width) {
                sink(&rec);
                return Ok(());
            }
            match parse_row(r, cols, *width) {
                Ok(rec) => sink(&rec),
                Err(RowError::Bad(reason)) => return Err(reason),
                Err(RowError::LineNotUtf8) => {
                    let o = OwnedRow::concatenated(r);
                    match parse_row(&o.row(), cols, *width) {
                        Ok(rec) => sink(&rec),
                        Err(RowError::Bad(reason)) => return Err(reason),
                        Err(RowError::LineNotUtf8) => unreachable!("not a raw line"),
                    }
                }
            }
            Ok(())
        },
    )
}
