//! The CSV readers. Records come from `CsvRecords` (a fast path for lines without quotes,
//! `csv_core` for the others) as borrowed `Row`s, and the record table's parser
//! (`h5prov_format`) reads their fields in place (integers by hand, strings as borrowed
//! `&str`): no allocation per row.
//!
//! Columns are found by header name, so a file with extra or reordered columns still
//! reads; `op`, `start_ns` and `total_ns` are required.

use super::csv_records::{too_long, CsvRecords, Fields, RawLine, Record, Row};
use super::swar::parse_at;
use super::{input, Error, FileDiag, ReadOptions};
use crate::read::record::RecordRef;
use h5prov_format::{column_index, CsvHeader, FieldSource, TRACE_COLUMNS};
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
    let mut spans = Vec::with_capacity(32);
    let header = match rdr.next_raw().map_err(io)? {
        None => return Ok(diag), // empty file: nothing written yet
        Some((_, Record::TooLong)) => {
            // Not an h5prov file (a huge file of garbage named like one, say): an error, or
            // with --lenient one malformed line and nothing more read.
            diag.bad_row(path, 1, too_long(), false, opts)?;
            return Ok(diag);
        }
        Some((_, rec)) => rec.row(&mut spans),
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
    while let Some((line, rec)) = rdr.next_raw().map_err(io)? {
        let rec = match rec {
            // Never a truncated last line (that is part of a valid row): malformed, an
            // error before reading the rest of it, or counted with --lenient.
            Record::TooLong => {
                diag.bad_row(path, line, too_long(), false, opts)?;
                continue;
            }
            rec => rec,
        };
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

/// The fields of a plain line of a standard trace file, for [`plain_record`]: a
/// [`FieldSource`] that reads numbers by words ([`parse_at`]) and any doubt as `Err(())`.
struct Plain<'a, 'e> {
    /// The line and bytes after it ([`RawLine::with_tail`]).
    t: &'a [u8],
    /// Field `i` ends at `ends[i]` and starts after `ends[i - 1]` (its comma).
    ends: &'e [usize; TRACE_COLUMNS.len()],
    /// The line from `base` on (or more), as text.
    text: &'a str,
    base: usize,
}

impl Plain<'_, '_> {
    #[inline(always)]
    fn range(&self, i: usize) -> (usize, usize) {
        (if i == 0 { 0 } else { self.ends[i - 1] + 1 }, self.ends[i])
    }
}

impl<'a> FieldSource<'a> for Plain<'a, '_> {
    type Error = ();

    #[inline(always)]
    fn unsigned(&self, col: usize, _: &'static str, empty: u64) -> Result<u64, ()> {
        let (s, e) = self.range(col);
        if s == e {
            return Ok(empty);
        }
        parse_at(self.t, s, e).ok_or(())
    }

    /// As [`parse_i64`] reads it.
    #[inline(always)]
    fn signed(&self, col: usize, _: &'static str, empty: i64) -> Result<i64, ()> {
        let (s, e) = self.range(col);
        match self.t.get(s) {
            _ if s == e => Ok(empty),
            Some(b'-') if e > s + 1 => parse_at(self.t, s + 1, e)
                .and_then(|v| 0i64.checked_sub_unsigned(v))
                .ok_or(()),
            _ => parse_at(self.t, s, e)
                .and_then(|v| i64::try_from(v).ok())
                .ok_or(()),
        }
    }

    /// Text field `col` (at or after `base`; any other is left to the general path).
    #[inline(always)]
    fn text(&self, col: usize, _: &'static str) -> Result<&'a str, ()> {
        let (s, e) = self.range(col);
        if s == e {
            return Ok(""); // most of the optional fields
        }
        self.text
            .get(s.checked_sub(self.base).ok_or(())?..e - self.base)
            .ok_or(())
    }

    fn out_of_range(&self, _: usize, _: &'static str) {}

    fn empty_value(&self, _: usize, _: &'static str) {}
}

/// The first text column: the UTF-8 check starts there.
const OP: usize = column_index(TRACE_COLUMNS, "op");

/// The fast path of a file whose header is the first `width` of [`TRACE_COLUMNS`] (all of
/// them, or those an older h5prov wrote): parses a plain line in place, its comma
/// positions in a local array, with the record table's own builder
/// ([`RecordRef::from_source`]) over [`Plain`]. Columns the header lacks read as empty
/// fields, as the general path reads them. `None` whenever the general path might not give
/// this same record (another number of fields, a number that is not at most 19 digits,
/// text that is not UTF-8, an empty `op`, or the line too close to the end of the buffer
/// to read it by words); the caller then takes the general path, which decides.
#[inline(always)]
fn plain_record<'a>(l: &RawLine<'a>, width: usize) -> Option<RecordRef<'a>> {
    const N: usize = TRACE_COLUMNS.len();
    let mut ends = [0usize; N];
    if width <= OP || width > N || l.commas(&mut ends)? != width - 1 {
        return None;
    }
    // The last field ends with the line; each missing column is an empty range just past
    // it (`range` gives `(len + k, len + k)`), which every reader of `Plain` checks first.
    for (k, e) in ends[width - 1..].iter_mut().enumerate() {
        *e = l.len() + k;
    }
    let t = l.with_tail();
    // Check UTF-8 once, from the first text column to the end of the line (the numbers
    // before it are ASCII digits, or the path refuses them), over a range that `from_utf8`
    // walks by aligned words only: from a word boundary before it, a multiple of 16 bytes
    // long (if the buffer has the bytes; should the extra bytes after the line not be
    // UTF-8, the general path decides).
    let op = ends[OP - 1] + 1;
    if op == ends[OP] {
        return None; // `op` is empty
    }
    let base = op - (t.as_ptr() as usize + op) % 8;
    let stop = base + (l.len() - base).next_multiple_of(16);
    let (base, bytes) = match t.get(base..stop) {
        Some(b) => (base, b),
        None => (op, &t[op..l.len()]),
    };
    let text = std::str::from_utf8(bytes).ok()?;
    RecordRef::from_source(&Plain {
        t,
        ends: &ends,
        text,
        base,
    })
    .ok()
}

/// Streams the records of a CSV trace file to `sink`.
#[inline]
pub fn read_csv_trace(
    path: &Path,
    opts: &ReadOptions,
    mut sink: impl FnMut(&RecordRef<'_>),
) -> Result<FileDiag, Error> {
    read_csv_trace_dyn::<true>(path, opts, &mut |_, r| sink(r))
}

/// [`read_csv_trace`] with each record's (first) line number.
#[inline]
pub fn read_csv_trace_lines(
    path: &Path,
    opts: &ReadOptions,
    mut sink: impl FnMut(u64, &RecordRef<'_>),
) -> Result<FileDiag, Error> {
    read_csv_trace_dyn::<true>(path, opts, &mut sink)
}

/// [`read_csv_trace`] behind one indirect call per record: the parser is compiled once,
/// here, rather than into every caller (where its size changed how the compiler inlined
/// the callers' own code: measured, the aggregation got slower when the parser grew).
/// Rows are parsed by the record table's parser ([`RecordRef::from_csv`]); with `PLAIN`,
/// the plain lines of a standard file try [`plain_record`] first.
fn read_csv_trace_dyn<const PLAIN: bool>(
    path: &Path,
    opts: &ReadOptions,
    sink: &mut dyn FnMut(u64, &RecordRef<'_>),
) -> Result<FileDiag, Error> {
    drive_records(
        path,
        opts,
        |h| RecordRef::csv_header(h.iter()),
        |header, line, rec, spans| {
            sink(line, &row_record::<PLAIN>(header, rec, spans)?);
            Ok(())
        },
    )
}

/// One row's record: the plain path first when `PLAIN` and it applies, else the table's
/// parser (which words the error).
#[inline(always)]
fn row_record<'a, const PLAIN: bool>(
    header: &CsvHeader,
    rec: Record<'a>,
    spans: &'a mut Vec<(usize, usize)>,
) -> Result<RecordRef<'a>, String> {
    if let (true, Some(width), Record::Line(l)) = (PLAIN, header.standard_prefix(), rec) {
        if let Some(r) = plain_record(&l, width) {
            return Ok(r);
        }
    }
    RecordRef::from_csv(header, &Fields::new(rec.row(spans)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use h5prov_format::TraceRecord;

    /// What the general path (split, the table's parser) makes of a row.
    fn general<'a>(r: Row<'a>, h: &CsvHeader) -> Result<RecordRef<'a>, String> {
        RecordRef::from_csv(h, &Fields::new(r))
    }

    fn standard_header() -> CsvHeader {
        header_of(TRACE_COLUMNS.len())
    }

    /// The header of the first `width` trace columns (an older h5prov's).
    fn header_of(width: usize) -> CsvHeader {
        RecordRef::csv_header(TRACE_COLUMNS[..width].iter().map(|c| c.as_bytes())).unwrap()
    }

    /// Feeds `data` (rows without a header) through a reader with buffer `cap` and checks
    /// that every record [`plain_record`] returns is what the general path returns.
    /// Returns how many lines took the plain path.
    fn check(data: &[u8], cap: usize) -> usize {
        let h = standard_header();
        let mut rdr = CsvRecords::with_capacity(cap, data);
        let mut spans = Vec::new();
        let mut plain = 0;
        while let Some((line, rec)) = rdr.next_raw().unwrap() {
            let Record::Line(l) = rec else { continue };
            let Some(p) = plain_record(&l, TRACE_COLUMNS.len()) else {
                continue;
            };
            plain += 1;
            let r = l.split(&mut spans);
            assert_eq!(
                Ok(p),
                general(r, &h),
                "line {line}: {:?}",
                String::from_utf8_lossy(l.line())
            );
        }
        plain
    }

    /// Everything the reader makes of `data` (a standard header, then rows), row by row:
    /// its line and its record or error, with the plain path or without it.
    fn read_all<const PLAIN: bool>(
        data: &[u8],
        cap: usize,
        width: usize,
    ) -> Vec<(u64, Result<TraceRecord, String>)> {
        let h = header_of(width);
        let mut rdr = CsvRecords::with_capacity(cap, data);
        rdr.next_record().unwrap().expect("a header");
        let mut spans = Vec::new();
        let mut out = Vec::new();
        while let Some((line, rec)) = rdr.next_raw().unwrap() {
            let r = row_record::<PLAIN>(&h, rec, &mut spans).map(|r| r.to_owned_record());
            out.push((line, r));
        }
        out
    }

    const TYPICAL: &str = "17,1795353285124615225,117410,108923,0,100000,21182,\
        dataset.create,dataset,/scratch/meta-r0.h5,/data,0,0,4096,4,1,1024,all,,,1,,int32le,0,4096,1,0:1023,,0,0,0";

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
            plain_record(&l, TRACE_COLUMNS.len())
                .expect("plain path")
                .seq
        };
        assert_eq!(rec, 17);
    }

    /// A trace of an older h5prov, whose header is the first columns of today's (the
    /// benchmark's set, written by a plugin from before `exec_ns`), takes the plain path,
    /// which gives what the general path gives; a line of another width never does.
    #[test]
    fn plain_path_reads_files_of_an_older_header() {
        let n = TRACE_COLUMNS.len();
        for width in [n - 1, n - 4, OP + 1] {
            let h = header_of(width);
            assert_eq!(h.standard_prefix(), Some(width));
            let line: Vec<&str> = TYPICAL.split(',').take(width).collect();
            let data = format!("{}\n", line.join(",")).repeat(100);
            let mut rdr = CsvRecords::with_capacity(4096, data.as_bytes());
            let mut spans = Vec::new();
            let mut plain = 0;
            while let Some((_, rec)) = rdr.next_raw().unwrap() {
                let Record::Line(l) = rec else {
                    panic!("a plain line")
                };
                assert!(plain_record(&l, n).is_none());
                assert!(plain_record(&l, width - 1).is_none());
                if let Some(p) = plain_record(&l, width) {
                    plain += 1;
                    assert_eq!(Ok(p), general(l.split(&mut spans), &h));
                    assert_eq!(p.exec_ns, 0);
                }
            }
            // All but the lines too close to the end of the buffer.
            assert!(plain > 90, "width {width}: {plain} plain");
        }
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

    /// The reader with and without the plain path gives the same records and errors, row
    /// by row, on quoted fields, non-UTF-8 text, short and long rows, odd numbers and lines
    /// near the end of the read buffer.
    #[test]
    fn reader_gives_the_same_with_and_without_the_plain_path() {
        let mut next = crate::read::test_rng(0x51_7cc1_b727_220a);
        let typical: Vec<&str> = TYPICAL.split(',').collect();
        let odd: &[&[u8]] = &[
            b"",
            b"-",
            b"-1",
            b"-9223372036854775808",
            b"18446744073709551616",
            b"4294967296",
            b"256",
            b"1a",
            b"\"q,\"\"x\"\"\"",
            b"\"multi\nline\"",
            b"\xc3",
            b"\xff\xfe",
            b"\xc3\xa9",
            b"\"\xc3\",\"\xa9\"",
            b"\r",
            b"\"\"",
        ];
        let n = TRACE_COLUMNS.len();
        for round in 0..30 {
            // Today's header, and those of older writers (the first columns).
            let width = [n, n - 1, n - 5][round % 3];
            let mut data = format!("{}\n", TRACE_COLUMNS[..width].join(",")).into_bytes();
            for _ in 0..(200 + next(400)) {
                let mut fields: Vec<Vec<u8>> = typical[..width]
                    .iter()
                    .map(|f| f.as_bytes().to_vec())
                    .collect();
                for _ in 0..next(3) {
                    let i = next(fields.len());
                    fields[i] = odd[next(odd.len())].to_vec();
                }
                match next(30) {
                    0 => {
                        fields.truncate(next(fields.len()));
                    }
                    1 => fields.push(b"extra".to_vec()),
                    _ => {}
                }
                data.extend_from_slice(&fields.join(&b","[..]));
                data.push(b'\n');
            }
            if round % 2 == 1 {
                data.pop(); // a last line without its newline
            }
            for cap in [64, 300, 4096, 1 << 20] {
                let with = read_all::<true>(&data, cap, width);
                assert!(with.len() > 150, "{}", with.len());
                assert!(with.iter().any(|r| r.1.is_err()) && with.iter().any(|r| r.1.is_ok()));
                assert_eq!(
                    with,
                    read_all::<false>(&data, cap, width),
                    "round {round} cap {cap} width {width}"
                );
            }
        }
    }
}
