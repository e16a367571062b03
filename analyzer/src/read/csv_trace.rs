//! The CSV readers. Records come from `CsvRecords` (a fast path for lines without quotes,
//! `csv_core` for the others) as borrowed `Row`s, and fields are parsed in place
//! (integers by hand, strings as borrowed `&str`): no allocation per row.
//!
//! Columns are found by header name, so a file with extra or reordered columns still
//! reads; `op`, `start_ns` and `total_ns` are required.

use super::csv_records::{CsvRecords, OwnedRow, RawLine, Record, Row};
use super::swar::parse_at;
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
    drive_records(path, opts, on_header, |h, _, rec, spans| {
        on_row(h, &rec.row(spans))
    })
}

/// [`drive_csv`] with the records as they come, each with its line number: a plain line is
/// split only if the callback asks for its fields ([`Record::row`], with the storage
/// passed along).
pub(crate) fn drive_records<H>(
    path: &Path,
    opts: &ReadOptions,
    on_header: impl FnOnce(&Row<'_>) -> Result<H, String>,
    mut on_row: impl FnMut(&H, u64, Record<'_>, &mut Vec<(usize, usize)>) -> Result<(), String>,
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
    let header_bytes = rdr.consumed();
    let mut spans = Vec::with_capacity(32);
    while let Some((line, rec)) = rdr.next_raw().map_err(io)? {
        match on_row(&state, line, rec, &mut spans) {
            Ok(()) => diag.rows += 1,
            Err(reason) => {
                let last = !rdr.has_more().map_err(io)?;
                diag.bad_row(path, line, reason, last && !rdr.terminated(), opts)?;
            }
        }
    }
    diag.data_bytes = rdr.complete_bytes().saturating_sub(header_bytes);
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

/// `v` as a `T`, if it fits.
#[inline(always)]
fn fit<T: TryFrom<u64>>(v: Option<u64>) -> Option<T> {
    T::try_from(v?).ok()
}

/// The fields of a plain line of a standard trace file, for [`plain_row`].
struct Plain<'a, 'e> {
    /// The line and bytes after it ([`RawLine::with_tail`]).
    t: &'a [u8],
    /// Field `i` ends at `ends[i]` and starts after `ends[i - 1]` (its comma).
    ends: &'e [usize; TRACE_COLUMNS.len()],
    /// The line from `base` on (or more), as text.
    text: &'a str,
    base: usize,
}

impl<'a> Plain<'a, '_> {
    #[inline(always)]
    fn range(&self, i: usize) -> (usize, usize) {
        (if i == 0 { 0 } else { self.ends[i - 1] + 1 }, self.ends[i])
    }

    /// Unsigned field `i` (see [`parse_at`]).
    #[inline(always)]
    fn num(&self, i: usize) -> Option<u64> {
        let (s, e) = self.range(i);
        parse_at(self.t, s, e)
    }

    /// Signed field `i`, as [`parse_i64`] reads it (empty reads as `empty`).
    #[inline(always)]
    fn int(&self, i: usize, empty: i64) -> Option<i64> {
        let (s, e) = self.range(i);
        match self.t.get(s) {
            _ if s == e => Some(empty),
            Some(b'-') if e > s + 1 => parse_at(self.t, s + 1, e)
                .and_then(|v| i64::try_from(v).ok())
                .map(|v| -v),
            _ => parse_at(self.t, s, e).and_then(|v| i64::try_from(v).ok()),
        }
    }

    /// Text field `i` (at or after `base`).
    #[inline(always)]
    fn text(&self, i: usize) -> Option<&'a str> {
        let (s, e) = self.range(i);
        if s == e {
            return Some(""); // most of the optional fields
        }
        self.text.get(s.checked_sub(self.base)?..e - self.base)
    }
}

/// The fast path of a file whose header is exactly [`TRACE_COLUMNS`]: parses a plain line
/// in place, its comma positions in a local array, and hands the record to `sink`. False
/// (and no call) whenever [`fast_row`] might not give this same record (another number
/// of fields, a number that is not at most 19 digits, text that is not UTF-8, an empty
/// `op`, or the line too close to the end of the buffer to read it by words); the caller
/// then takes the general path, which decides.
#[inline]
fn plain_row(l: &RawLine<'_>, line: u64, sink: &mut dyn FnMut(u64, &RecordRef<'_>)) -> bool {
    plain_record(l).map(|r| sink(line, &r)).is_some()
}

#[inline(always)]
fn plain_record<'a>(l: &RawLine<'a>) -> Option<RecordRef<'a>> {
    const N: usize = TRACE_COLUMNS.len();
    let mut ends = [0usize; N];
    if l.commas(&mut ends)? != N - 1 {
        return None;
    }
    ends[N - 1] = l.len();
    let t = l.with_tail();
    // The text fields are `op` (7) and later ones. Check UTF-8 once, from `op` to the end
    // of the line (numbers are ASCII digits, so the line is UTF-8 exactly when this part
    // is), over a range that `from_utf8` walks by aligned words only: from a word
    // boundary before `op`, a multiple of 16 bytes long (if the buffer has the bytes;
    // should the extra bytes after the line not be UTF-8, the general path decides).
    let op = ends[6] + 1;
    if op == ends[7] {
        return None; // `op` is empty
    }
    let base = op - (t.as_ptr() as usize + op) % 8;
    let stop = base + (l.len() - base).next_multiple_of(16);
    let (base, bytes) = match t.get(base..stop) {
        Some(b) => (base, b),
        None => (op, &t[op..l.len()]),
    };
    let text = std::str::from_utf8(bytes).ok()?;
    let f = Plain {
        t,
        ends: &ends,
        text,
        base,
    };
    Some(RecordRef {
        seq: f.num(0)?,
        start_ns: f.num(1)?,
        total_ns: f.num(2)?,
        under_ns: f.num(3)?,
        rank: f.int(4, -1)?,
        pid: fit(f.num(5))?,
        tid: f.num(6)?,
        op: f.text(7)?,
        kind: f.text(8)?,
        file: f.text(9)?,
        path: f.text(10)?,
        status: i32::try_from(f.int(11, 0)?).ok()?,
        is_async: fit(f.num(12))?,
        bytes: f.num(13)?,
        type_size: f.num(14)?,
        ndims: fit(f.num(15))?,
        npoints: f.num(16)?,
        sel: f.text(17)?,
        xfer: f.text(18)?,
        xfer_actual: f.text(19)?,
        batch: fit::<u32>(f.num(20))?.max(1),
        detail: f.text(21)?,
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
#[inline]
pub fn read_csv_trace(
    path: &Path,
    opts: &ReadOptions,
    mut sink: impl FnMut(&RecordRef<'_>),
) -> Result<FileDiag, Error> {
    read_csv_trace_dyn(path, opts, &mut |_, r| sink(r))
}

/// [`read_csv_trace`] with each record's (first) line number.
#[inline]
pub fn read_csv_trace_lines(
    path: &Path,
    opts: &ReadOptions,
    mut sink: impl FnMut(u64, &RecordRef<'_>),
) -> Result<FileDiag, Error> {
    read_csv_trace_dyn(path, opts, &mut sink)
}

/// [`read_csv_trace`] behind one indirect call per record: the parser is compiled once,
/// here, rather than into every caller (where its size changed how the compiler inlined
/// the callers' own code: measured, the aggregation got slower when the parser grew).
fn read_csv_trace_dyn(
    path: &Path,
    opts: &ReadOptions,
    sink: &mut dyn FnMut(u64, &RecordRef<'_>),
) -> Result<FileDiag, Error> {
    drive_records(
        path,
        opts,
        |h| {
            let standard = h.len() == TRACE_COLUMNS.len()
                && h.iter().zip(TRACE_COLUMNS).all(|(a, b)| a == b.as_bytes());
            Ok((Columns::from_header(h)?, h.len(), standard))
        },
        |(cols, width, standard), line, rec, spans| {
            if let (true, Record::Line(l)) = (*standard, rec) {
                if plain_row(&l, line, sink) {
                    return Ok(());
                }
            }
            let r = &rec.row(spans);
            if let Some(rec) = fast_row(r, cols, *width) {
                sink(line, &rec);
                return Ok(());
            }
            match parse_row(r, cols, *width) {
                Ok(rec) => sink(line, &rec),
                Err(RowError::Bad(reason)) => return Err(reason),
                Err(RowError::LineNotUtf8) => {
                    let o = OwnedRow::concatenated(r);
                    match parse_row(&o.row(), cols, *width) {
                        Ok(rec) => sink(line, &rec),
                        Err(RowError::Bad(reason)) => return Err(reason),
                        Err(RowError::LineNotUtf8) => unreachable!("not a raw line"),
                    }
                }
            }
            Ok(())
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the general path (split, [`fast_row`], [`parse_row`]) makes of a row.
    fn general<'a>(r: &Row<'a>, cols: &Columns) -> Result<RecordRef<'a>, String> {
        if let Some(rec) = fast_row(r, cols, TRACE_COLUMNS.len()) {
            return Ok(rec);
        }
        match parse_row(r, cols, TRACE_COLUMNS.len()) {
            Ok(rec) => Ok(rec),
            Err(RowError::Bad(reason)) => Err(reason),
            Err(RowError::LineNotUtf8) => Err("not UTF-8".into()), // never equals a record
        }
    }

    /// Feeds `data` (rows without a header) through a reader with buffer `cap` and checks
    /// that every record [`plain_record`] returns is what the general path returns.
    /// Returns how many lines took the plain path.
    fn check(data: &[u8], cap: usize) -> usize {
        let header = TRACE_COLUMNS.join(",");
        let mut h = CsvRecords::new(header.as_bytes());
        let cols = Columns::from_header(&h.next_record().unwrap().unwrap().1).unwrap();
        let mut rdr = CsvRecords::with_capacity(cap, data);
        let mut spans = Vec::new();
        let mut plain = 0;
        while let Some((line, rec)) = rdr.next_raw().unwrap() {
            let Record::Line(l) = rec else { continue };
            let Some(p) = plain_record(&l) else { continue };
            plain += 1;
            let r = l.split(&mut spans);
            assert_eq!(
                Ok(p),
                general(&r, &cols),
                "line {line}: {:?}",
                String::from_utf8_lossy(l.line())
            );
        }
        plain
    }

    const TYPICAL: &str = "17,1795353285124615225,117410,108923,0,100000,21182,\
        dataset.create,dataset,/scratch/meta-r0.h5,/data,0,0,4096,4,1,1024,all,,,1,";

    #[test]
    fn plain_path_reads_typical_lines() {
        let mut data = String::new();
        for _ in 0..100 {
            data.push_str(TYPICAL);
            data.push('\n');
        }
        // All but the lines too close to the end of the buffer.
        assert!(check(data.as_bytes(), 4096) > 90);
        let rec = {
            let mut rdr = CsvRecords::new(data.as_bytes());
            let Some((_, Record::Line(l))) = rdr.next_raw().unwrap() else {
                panic!("a plain line")
            };
            plain_record(&l).expect("plain path").seq
        };
        assert_eq!(rec, 17);
    }

    #[test]
    fn plain_path_agrees_with_general_path_on_random_lines() {
        let mut next = crate::read::test_rng(0x2545_f491_4f6c_dd1d);
        let typical: Vec<&str> = TYPICAL.split(',').collect();
        let odd = [
            "",
            "0",
            "-",
            "-1",
            "-0",
            "--1",
            "+1",
            "1a",
            "a",
            " 1",
            "007",
            "4294967295",
            "4294967296",
            "255",
            "256",
            "2147483647",
            "2147483648",
            "-2147483648",
            "-2147483649",
            "9223372036854775807",
            "9223372036854775808",
            "-9223372036854775808",
            "9999999999999999999",
            "18446744073709551615",
            "18446744073709551616",
            "00000000000000000000001",
            "é",
            "\u{1F600}",
            "x,y",
            "\u{0}",
            "1\u{7f}",
            "\u{80}",
        ];
        let mut plain = 0;
        let mut data = Vec::new();
        for _ in 0..3000 {
            let mut fields: Vec<Vec<u8>> = typical.iter().map(|f| f.as_bytes().to_vec()).collect();
            for _ in 0..next(4) {
                let i = next(fields.len());
                fields[i] = match next(4) {
                    0 => odd[next(odd.len())].as_bytes().to_vec(),
                    1 => (0..next(23)).map(|_| b'0' + next(10) as u8).collect(),
                    2 => vec![[0xc3, 0xa9, 0xff, b'z', 0xe2][next(5)]; next(3) + 1],
                    _ => Vec::new(),
                };
            }
            if next(20) == 0 {
                fields.remove(next(fields.len()));
            } else if next(20) == 0 {
                fields.push(b"extra".to_vec());
            }
            data.extend_from_slice(&fields.join(&b","[..]));
            data.push(b'\n');
            if data.len() > 8192 {
                for cap in [64, 200, 1000, 8192] {
                    plain += check(&data, cap);
                }
                data.clear();
            }
        }
        assert!(plain > 1000, "{plain}");
    }
}
