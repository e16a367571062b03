//! The JSONL readers: one JSON object per line, read into one reused line buffer. String
//! values borrow from the line unless they contain escapes. Missing keys read as "not
//! known" (empty string or 0), as the format allows.

use super::{input, Error, FileDiag, ReadOptions};
use crate::record::RecordRef;
use h5prov_format::TraceRecordJson;
use std::io::{BufRead, BufReader};
use std::path::Path;

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
        let n = rdr
            .read_until(b'\n', &mut buf)
            .map_err(|e| Error::io(path, e))?;
        if n == 0 {
            break;
        }
        line += 1;
        let has_nl = buf.last() == Some(&b'\n');
        if has_nl {
            diag.data_bytes += n as u64;
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
