//! The binary readers (`*.trace.bin`, `*.objects.bin`): a header naming the columns, then
//! length-prefixed records, decoded in place from one read buffer and parsed by the record
//! table's own parser (`from_bin`, the same `from_source` as CSV): no allocation per record.
//!
//! Records are numbered as CSV lines would be (the header is line 1, the first record line
//! 2), so messages and diagnostics agree with the CSV trace of the same run; a malformed
//! record's reason also gives its byte offset in the (decompressed) file. A file that ends
//! inside a record whose fields run out of bytes has a truncated last record (the process
//! was killed while writing); one whose fields end before its length does has a corrupt
//! length, an error.

use super::{input, Error, FileDiag, ReadOptions};
use crate::record::RecordRef;
use h5prov_format::{BinDecoder, BinError, BinValue, BIN_MAGIC, BIN_MAX_HEADER, BIN_MAX_RECORD};
use std::io::Read;
use std::path::Path;

/// A read buffer over a stream: `buf[lo..hi]` holds the bytes not yet consumed.
struct Buf {
    r: Box<dyn Read + Send>,
    buf: Vec<u8>,
    lo: usize,
    hi: usize,
    eof: bool,
    /// The stream ended inside a compressed frame (a `.zst` file cut short: the process
    /// was killed while writing its last block). The bytes before the cut are read.
    cut: bool,
}

impl Buf {
    /// Makes at least `n` unconsumed bytes available, unless the stream ends first.
    /// Returns how many are available (up to at least `n`).
    fn fill(&mut self, n: usize) -> std::io::Result<usize> {
        if self.hi - self.lo >= n || self.eof {
            return Ok(self.hi - self.lo);
        }
        self.buf.copy_within(self.lo..self.hi, 0);
        self.hi -= self.lo;
        self.lo = 0;
        if self.buf.len() < n {
            self.buf.resize(n.next_power_of_two().max(256 << 10), 0);
        }
        while self.hi < n {
            let k = match self.r.read(&mut self.buf[self.hi..]) {
                Ok(k) => k,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                    self.cut = true;
                    0
                }
                Err(e) => return Err(e),
            };
            if k == 0 {
                self.eof = true;
                break;
            }
            self.hi += k;
        }
        Ok(self.hi - self.lo)
    }

    fn avail(&self) -> &[u8] {
        &self.buf[self.lo..self.hi]
    }
}

/// Drives a binary file: `on_header` gets the header body (after the magic and its
/// length) and gives the file's decoder, then `on_row` one record at a time with its line
/// number (header = 1), its values decoded into the slice it is given. A block's
/// zero length resets the decoder and is no record.
pub(crate) fn drive_bin<H>(
    path: &Path,
    opts: &ReadOptions,
    on_header: impl FnOnce(&[u8]) -> Result<(H, BinDecoder), String>,
    mut on_row: impl FnMut(&H, &BinDecoder, u64, &[BinValue]) -> Result<(), String>,
) -> Result<FileDiag, Error> {
    let io = |e| Error::io(path, e);
    let malformed = |line: u64, reason: String| Error::Malformed {
        path: path.to_path_buf(),
        line,
        reason,
    };
    let mut b = Buf {
        r: input::open(path)?,
        buf: Vec::new(),
        lo: 0,
        hi: 0,
        eof: false,
        cut: false,
    };
    let mut diag = FileDiag::default();
    let n = b.fill(12).map_err(io)?;
    if n == 0 {
        return Ok(diag); // empty file: nothing written yet
    }
    let got = b.avail();
    if got[..n.min(8)] != BIN_MAGIC[..n.min(8)] {
        return Err(malformed(
            1,
            "not an h5prov binary file (it does not start with H5PROVB1)".into(),
        ));
    }
    if n < 12 {
        diag.truncated_line = Some(1); // killed while writing the header
        return Ok(diag);
    }
    let hlen = u32::from_le_bytes([got[8], got[9], got[10], got[11]]);
    if hlen > BIN_MAX_HEADER {
        return Err(malformed(
            1,
            format!("header length {hlen} is beyond {BIN_MAX_HEADER} (corrupt file?)"),
        ));
    }
    let need = 12 + hlen as usize;
    if b.fill(need).map_err(io)? < need {
        diag.truncated_line = Some(1);
        return Ok(diag);
    }
    let (state, mut header) = on_header(&b.avail()[12..need]).map_err(|r| malformed(1, r))?;
    b.lo += need;
    let mut offset = need as u64;
    let mut line = 1u64;
    let mut vals = Vec::with_capacity(32);
    loop {
        let n = b.fill(4).map_err(io)?;
        if n == 0 {
            break;
        }
        if n < 4 {
            diag.truncated_line = Some(line + 1); // killed while writing a length
            break;
        }
        let a = b.avail();
        let len = u32::from_le_bytes([a[0], a[1], a[2], a[3]]);
        if len == 0 {
            header.new_block();
            diag.data_bytes += 4;
            b.lo += 4;
            offset += 4;
            continue;
        }
        line += 1;
        let at = |what: String| format!("record at byte offset {offset}: {what}");
        if len > BIN_MAX_RECORD {
            let reason = at(format!(
                "length {len} is beyond {BIN_MAX_RECORD} (corrupt length)"
            ));
            // The records after a corrupt length cannot be found.
            diag.bad_row(path, line, reason, false, opts)?;
            break;
        }
        let total = 4 + len as usize;
        let n = b.fill(total).map_err(io)?;
        let body = &b.avail()[4..n.min(total)];
        if n < total {
            // The file ends inside this record: truncated if its fields run out of bytes.
            match header.decode(body, &mut vals) {
                Err(BinError::Short) => diag.truncated_line = Some(line),
                _ => {
                    let reason = at(format!(
                        "length {len} runs past the end of the file, but its fields do not \
                         (corrupt length)"
                    ));
                    diag.bad_row(path, line, reason, false, opts)?;
                }
            }
            break;
        }
        match header.decode(body, &mut vals) {
            Ok(()) => match on_row(&state, &header, line, &vals) {
                Ok(()) => diag.rows += 1,
                Err(reason) => diag.bad_row(path, line, at(reason), false, opts)?,
            },
            Err(e) => {
                let what = match e {
                    BinError::Short => {
                        format!("its fields run past its length {len} (corrupt length)")
                    }
                    BinError::Bad(s) => format!("{s} (corrupt length)"),
                };
                diag.bad_row(path, line, at(what), false, opts)?;
                // The next record's position is not known.
                diag.data_bytes += total as u64;
                break;
            }
        }
        diag.data_bytes += total as u64;
        b.lo += total;
        offset += total as u64;
    }
    if b.cut && diag.truncated_line.is_none() {
        // The cut frame's records are lost even if the bytes before it end on a record.
        diag.truncated_line = Some(line + 1);
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
