//! The JSONL readers: one JSON object per line, read into one reused line buffer. String
//! values borrow from the line unless they contain escapes. Missing keys read as "not
//! known" (empty string or 0), as the format allows. A line longer than
//! `MAX_LINE` is a malformed line, skipped without being held.

use super::csv_records::{too_long, MAX_LINE};
use super::{input, Error, FileDiag, ReadOptions};
use crate::read::record::RecordRef;
use h5prov_format::TraceRecordJson;
use std::io::{self, BufRead, BufReader};
use std::path::Path;

/// One line read by [`read_line`].
struct Line {
    /// Bytes consumed (0: the end of the stream).
    consumed: usize,
    /// It ends with `\n`.
    has_nl: bool,
    /// It is longer than [`MAX_LINE`]: not in the buffer.
    too_long: bool,
}

/// Reads one line into `buf` (with its `\n`, if it has one), like `read_until`, but
/// holds no more than [`MAX_LINE`] bytes of it: a longer line is dropped, and read to its
/// end if `skip_long` (else left where the limit was found).
fn read_line(r: &mut impl BufRead, buf: &mut Vec<u8>, skip_long: bool) -> io::Result<Line> {
    let mut l = Line {
        consumed: 0,
        has_nl: false,
        too_long: false,
    };
    loop {
        let avail = match r.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if avail.is_empty() {
            return Ok(l);
        }
        let (take, done) = match memchr::memchr(b'\n', avail) {
            Some(i) => (i + 1, true),
            None => (avail.len(), false),
        };
        if !l.too_long {
            if buf.len() + take > MAX_LINE + 1 {
                l.too_long = true;
                *buf = Vec::new();
                if !skip_long {
                    return Ok(l);
                }
            } else {
                buf.extend_from_slice(&avail[..take]);
            }
        }
        r.consume(take);
        l.consumed += take;
        if done {
            l.has_nl = true;
            return Ok(l);
        }
    }
}

/// Drives a JSONL file: one callback per non-blank line with its line number and bytes. A
/// failing line without a final `\n` is the file's truncated last line.
pub(crate) fn drive_jsonl(
    path: &Path,
    opts: &ReadOptions,
    mut on_row: impl FnMut(u64, &[u8]) -> Result<(), String>,
) -> Result<FileDiag, Error> {
    let mut rdr = BufReader::with_capacity(256 * 1024, input::open(path)?);
    let mut diag = FileDiag::default();
    let mut buf = Vec::with_capacity(1024);
    let mut line = 0u64;
    loop {
        buf.clear();
        // A first line that long: not an h5prov file (a huge file named like one, say),
        // not to be read through.
        let skip_long = opts.lenient && line > 0;
        let l = read_line(&mut rdr, &mut buf, skip_long).map_err(|e| Error::io(path, e))?;
        if l.consumed == 0 && !l.too_long {
            break;
        }
        line += 1;
        let has_nl = l.has_nl;
        if has_nl {
            diag.data_bytes += l.consumed as u64;
        }
        if l.too_long {
            // Never a truncated last line (that is part of a valid row): malformed. An
            // error, or with --lenient counted (and the file left if it is the first line).
            diag.bad_row(path, line, too_long(), false, opts)?;
            if !skip_long {
                return Ok(diag);
            }
            continue;
        }
        let body = buf.strip_suffix(b"\n").unwrap_or(&buf);
        let body = body.strip_suffix(b"\r").unwrap_or(body);
        if body.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match on_row(line, body) {
            Ok(()) => diag.rows += 1,
            // Only the last line of a file can lack its `\n`.
            Err(reason) => diag.bad_row(path, line, reason, !has_nl, opts)?,
        }
    }
    Ok(diag)
}

/// Streams the records of a JSONL trace file to `sink`.
pub fn read_jsonl_trace(
    path: &Path,
    opts: &ReadOptions,
    mut sink: impl FnMut(&RecordRef<'_>),
) -> Result<FileDiag, Error> {
    read_jsonl_trace_lines(path, opts, |_, r| sink(r))
}

/// [`read_jsonl_trace`] with each record's line number.
pub fn read_jsonl_trace_lines(
    path: &Path,
    opts: &ReadOptions,
    mut sink: impl FnMut(u64, &RecordRef<'_>),
) -> Result<FileDiag, Error> {
    drive_jsonl(path, opts, |line, body| {
        // The record table's JSONL twin: missing keys read as "not known".
        let j: TraceRecordJson<'_> = serde_json::from_slice(body).map_err(|e| e.to_string())?;
        let rec = j.record()?;
        sink(line, &rec);
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_longer_than_any_record_is_dropped_while_read() {
        let big = vec![b'{'; 8 * MAX_LINE];
        let data = [&b"{}\n"[..], &big, b"\n{\"a\":1}\n", &big].concat();
        let mut r = BufReader::with_capacity(64 << 10, &data[..]);
        let mut buf = Vec::new();
        let mut got = Vec::new();
        loop {
            buf.clear();
            let l = read_line(&mut r, &mut buf, true).unwrap();
            if l.consumed == 0 {
                break;
            }
            assert!(buf.capacity() <= 2 * MAX_LINE + 2, "{}", buf.capacity());
            got.push((l.consumed, l.has_nl, l.too_long, buf.len()));
        }
        assert_eq!(
            got,
            [
                (3, true, false, 3),
                (big.len() + 1, true, true, 0),
                (8, true, false, 8),
                (big.len(), false, true, 0),
            ]
        );
        // Not asked to skip: it stops at the limit.
        let mut r = BufReader::with_capacity(64 << 10, &big[..]);
        let l = read_line(&mut r, &mut buf, false).unwrap();
        assert!(l.too_long && !l.has_nl && l.consumed <= MAX_LINE + (64 << 10));
    }
}
