//! The binary readers (`*.trace.bin`, `*.objects.bin`): a header naming the columns, then
//! length-prefixed records. The framing is the format crate's reader
//! ([`h5prov_format::BinRecords`], beside the writer), which decodes records in place from
//! one read buffer; each is parsed by the record table's own parser (`from_bin`, the same
//! `from_source` as CSV): no allocation per record.
//!
//! Records are numbered as CSV lines would be (the header is line 1, the first record line
//! 2), so messages and diagnostics agree with the CSV trace of the same run; a malformed
//! record's reason also gives its byte offset in the (decompressed) file. A file that ends
//! inside a record whose fields run out of bytes has a truncated last record (the process
//! was killed while writing); one whose fields end before its length does has a corrupt
//! length, an error.

use super::{input, Error, FileDiag, ReadOptions};
use crate::read::record::RecordRef;
use h5prov_format::{
    BinDecoder, BinHeader, BinItem, BinReadError, BinReader, BinRecords, BinValue,
};
use std::path::Path;

/// Drives a binary file through the format crate's reader ([`BinRecords`]): `on_header`
/// gets the header body (after the magic and its length) and gives the file's decoder,
/// then `on_row` one record at a time with its line number (header = 1), its values
/// decoded into the slice it is given. Bad and truncated records become the file's
/// diagnostics.
pub(crate) fn drive_bin<H>(
    path: &Path,
    opts: &ReadOptions,
    on_header: impl FnOnce(&[u8]) -> Result<(H, BinDecoder), String>,
    mut on_row: impl FnMut(&H, &BinDecoder, u64, &[BinValue]) -> Result<(), String>,
) -> Result<FileDiag, Error> {
    let io = |e| Error::io(path, e);
    let malformed = |reason: String| Error::Malformed {
        path: path.to_path_buf(),
        line: 1,
        reason,
    };
    let mut frames = BinReader::new(input::open(path)?);
    let mut diag = FileDiag::default();
    let (state, decoder) = match frames.header() {
        Ok(BinHeader::Empty) => return Ok(diag), // empty file: nothing written yet
        Ok(BinHeader::Truncated) => {
            diag.truncated_line = Some(1); // killed while writing the header
            return Ok(diag);
        }
        Ok(BinHeader::Body(h)) => on_header(h).map_err(malformed)?,
        Err(BinReadError::Io(e)) => return Err(io(e)),
        Err(BinReadError::Malformed(r)) => return Err(malformed(r)),
    };
    let mut records = BinRecords::new(frames, decoder);
    while let Some(item) = records.next_item().map_err(io)? {
        match item {
            BinItem::Block => diag.data_bytes += 4,
            BinItem::Record {
                line,
                offset,
                bytes,
                decoder,
                vals,
            } => {
                match on_row(&state, decoder, line, vals) {
                    Ok(()) => diag.rows += 1,
                    Err(reason) => {
                        let reason = format!("record at byte offset {offset}: {reason}");
                        diag.bad_row(path, line, reason, false, opts)?;
                    }
                }
                diag.data_bytes += bytes;
            }
            BinItem::Bad {
                line,
                reason,
                bytes,
            } => {
                diag.bad_row(path, line, reason, false, opts)?;
                diag.data_bytes += bytes;
            }
            BinItem::Truncated { line } => diag.truncated_line = Some(line),
        }
    }
    Ok(diag)
}

/// Streams the records of a binary trace file to `sink`, with each record's line number
/// (as in the CSV trace of the same run).
pub fn read_bin_trace_lines(
    path: &Path,
    opts: &ReadOptions,
    sink: &mut dyn FnMut(u64, &RecordRef<'_>),
) -> Result<FileDiag, Error> {
    drive_bin(
        path,
        opts,
        |h| Ok(((), RecordRef::bin_decoder(h)?)),
        |_, header, line, vals| {
            sink(line, &RecordRef::from_bin(header, vals)?);
            Ok(())
        },
    )
}

/// Streams the records of a binary trace file to `sink`.
pub fn read_bin_trace(
    path: &Path,
    opts: &ReadOptions,
    mut sink: impl FnMut(&RecordRef<'_>),
) -> Result<FileDiag, Error> {
    read_bin_trace_lines(path, opts, &mut |_, r| sink(r))
}
