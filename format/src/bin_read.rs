//! The reader of the binary framing (`*.trace.bin`, `*.objects.bin`, the layout in
//! [`bin`](crate::bin)): the one place that finds the header and the length-prefixed
//! records, beside the writer. Used by the analyzer, the benchmarks and the tests.
//!
//! Two layers over any [`Read`]:
//! - [`BinReader`]: the framing only. [`BinReader::header`] gives the header body,
//!   [`BinReader::next_frame`] one block start or record body at a time, decoded in place
//!   from one read buffer (no allocation per record).
//! - [`BinRecords`]: a [`BinReader`] and the file's [`BinDecoder`]: each record's values,
//!   and what is wrong with a bad record or a file cut short.
//!
//! Records are numbered as CSV lines would be (the header is line 1, the first record
//! line 2), so messages agree with the CSV trace of the same run; a bad record's reason
//! also gives its byte offset in the (decompressed) file. A file that ends inside a record
//! whose fields run out of bytes has a truncated last record (the process was killed while
//! writing); one whose fields end before its length does has a corrupt length.
//!
//! [`open_bin_file`] and [`read_bin_file`] read a file by path (decompressing `*.zst`),
//! for callers that want a whole, well-formed file and no diagnostics.

use crate::bin::{BinDecoder, BinError, BinValue, BIN_MAGIC, BIN_MAX_HEADER, BIN_MAX_RECORD};
use std::fmt;
use std::io::{self, Read};
use std::path::Path;

/// A binary file's header could not be read.
#[derive(Debug)]
pub enum BinReadError {
    /// Reading the stream failed.
    Io(io::Error),
    /// The header is not a valid binary header (line 1): why.
    Malformed(String),
}

impl fmt::Display for BinReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BinReadError::Io(e) => e.fmt(f),
            BinReadError::Malformed(s) => f.write_str(s),
        }
    }
}

impl std::error::Error for BinReadError {}

/// What [`BinReader::header`] found at the start of a file.
#[derive(Debug, PartialEq, Eq)]
pub enum BinHeader<'a> {
    /// The file is empty (nothing written yet).
    Empty,
    /// The file ends inside its header (killed while writing it).
    Truncated,
    /// The header body: the bytes after the magic and the header length.
    Body(&'a [u8]),
}

/// One step of the framing after the header.
#[derive(Debug, PartialEq, Eq)]
pub enum BinFrame<'a> {
    /// A zero length: a block starts (no record).
    Block,
    /// A whole record: its line (header = 1), the byte offset of its length, its body.
    Record {
        /// Its line number.
        line: u64,
        /// The byte offset of its length prefix.
        offset: u64,
        /// Its body (after the length).
        body: &'a [u8],
    },
    /// The file ends inside a record's length (line: the record's).
    CutLength {
        /// Its line number.
        line: u64,
    },
    /// The file ends inside a record: what is there of its body.
    CutRecord {
        /// Its line number.
        line: u64,
        /// The byte offset of its length prefix.
        offset: u64,
        /// The length it announces.
        len: u32,
        /// The bytes there are of its body.
        body: &'a [u8],
    },
    /// A length beyond [`BIN_MAX_RECORD`] (corrupt): the records after it cannot be found.
    TooLong {
        /// Its line number.
        line: u64,
        /// The byte offset of its length prefix.
        offset: u64,
        /// The length it announces.
        len: u32,
    },
}

/// The framing of a binary file over a stream: `buf[lo..hi]` holds the bytes not yet
/// consumed, at byte offset `offset` of the (decompressed) file.
pub struct BinReader<R> {
    r: R,
    buf: Vec<u8>,
    lo: usize,
    hi: usize,
    eof: bool,
    /// The stream ended inside a compressed frame (a `.zst` file cut short: the process
    /// was killed while writing its last block). The bytes before the cut are read.
    cut: bool,
    /// The file offset of `buf[lo]`.
    offset: u64,
    /// The line of the last record found (the header's: 1).
    line: u64,
    /// A cut or corrupt record ended the framing.
    done: bool,
}

impl<R: Read> BinReader<R> {
    /// A reader at the start of `r`. A stream whose read fails with
    /// [`io::ErrorKind::UnexpectedEof`] was cut short (a truncated compressed frame): it
    /// ends there, and [`BinReader::cut`] says so.
    pub fn new(r: R) -> Self {
        BinReader {
            r,
            buf: Vec::new(),
            lo: 0,
            hi: 0,
            eof: false,
            cut: false,
            offset: 0,
            line: 1,
            done: false,
        }
    }

    /// Makes at least `n` unconsumed bytes available, unless the stream ends first.
    /// Returns how many are available (up to at least `n`).
    fn fill(&mut self, n: usize) -> io::Result<usize> {
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
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
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

    fn consume(&mut self, n: usize) {
        self.lo += n;
        self.offset += n as u64;
    }

    /// Reads the magic and the header: call it once, first.
    pub fn header(&mut self) -> Result<BinHeader<'_>, BinReadError> {
        let n = self.fill(12).map_err(BinReadError::Io)?;
        if n == 0 {
            return Ok(BinHeader::Empty);
        }
        let got = &self.buf[self.lo..self.hi];
        if got[..n.min(8)] != BIN_MAGIC[..n.min(8)] {
            return Err(BinReadError::Malformed(
                "not an h5prov binary file (it does not start with H5PROVB1)".into(),
            ));
        }
        if n < 12 {
            return Ok(BinHeader::Truncated);
        }
        let hlen = u32::from_le_bytes([got[8], got[9], got[10], got[11]]);
        if hlen > BIN_MAX_HEADER {
            return Err(BinReadError::Malformed(format!(
                "header length {hlen} is beyond {BIN_MAX_HEADER} (corrupt file?)"
            )));
        }
        let need = 12 + hlen as usize;
        if self.fill(need).map_err(BinReadError::Io)? < need {
            return Ok(BinHeader::Truncated);
        }
        let start = self.lo + 12;
        self.consume(need);
        Ok(BinHeader::Body(&self.buf[start..self.lo]))
    }

    /// The next block start or record, or `None` at the end of the file. After a
    /// [`BinFrame::CutLength`], [`BinFrame::CutRecord`] or [`BinFrame::TooLong`] there
    /// is nothing more.
    pub fn next_frame(&mut self) -> io::Result<Option<BinFrame<'_>>> {
        if self.done {
            return Ok(None);
        }
        let n = self.fill(4)?;
        if n == 0 {
            return Ok(None);
        }
        if n < 4 {
            self.done = true;
            return Ok(Some(BinFrame::CutLength {
                line: self.line + 1,
            }));
        }
        let a = &self.buf[self.lo..self.hi];
        let len = u32::from_le_bytes([a[0], a[1], a[2], a[3]]);
        if len == 0 {
            self.consume(4);
            return Ok(Some(BinFrame::Block));
        }
        self.line += 1;
        let (line, offset) = (self.line, self.offset);
        if len > BIN_MAX_RECORD {
            self.done = true;
            return Ok(Some(BinFrame::TooLong { line, offset, len }));
        }
        let total = 4 + len as usize;
        let n = self.fill(total)?;
        let start = self.lo + 4;
        if n < total {
            self.done = true;
            return Ok(Some(BinFrame::CutRecord {
                line,
                offset,
                len,
                body: &self.buf[start..self.lo + n],
            }));
        }
        self.consume(total);
        Ok(Some(BinFrame::Record {
            line,
            offset,
            body: &self.buf[start..self.lo],
        }))
    }

    /// The stream was cut short inside a compressed frame (known once it was read to its
    /// end): the records of that frame are lost even if the bytes before it end on a
    /// record.
    pub fn cut(&self) -> bool {
        self.cut
    }

    /// The line of the last record found (1 before the first).
    pub fn line(&self) -> u64 {
        self.line
    }
}

/// One step of [`BinRecords`].
#[derive(Debug)]
pub enum BinItem<'a> {
    /// A block starts (4 bytes of the file, no record).
    Block,
    /// A record whose fields decoded.
    Record {
        /// Its line number (header = 1).
        line: u64,
        /// The byte offset of its length prefix.
        offset: u64,
        /// Its bytes in the file, its length included.
        bytes: u64,
        /// The file's decoder ([`BinDecoder::source`] of `vals`, or a table's `from_bin`).
        decoder: &'a BinDecoder,
        /// One value per file column.
        vals: &'a [BinValue],
    },
    /// A corrupt record: nothing after it is read.
    Bad {
        /// Its line number.
        line: u64,
        /// What is wrong, with its byte offset.
        reason: String,
        /// Its bytes in the file, its length included (0 when its length is what is
        /// wrong or it is cut short).
        bytes: u64,
    },
    /// The file ends inside a record, or its last compressed frame is cut short: the
    /// process was killed while writing. Nothing after it is read.
    Truncated {
        /// The cut record's line.
        line: u64,
    },
}

/// The records of a binary file: a [`BinReader`] past its header, and the file's decoder.
pub struct BinRecords<R> {
    frames: BinReader<R>,
    decoder: BinDecoder,
    vals: Vec<BinValue>,
    /// Nothing more: the framing ended, and a cut stream was reported.
    done: bool,
}

impl<R: Read> BinRecords<R> {
    /// The records of `frames`, whose [`BinReader::header`] body made `decoder`.
    pub fn new(frames: BinReader<R>, decoder: BinDecoder) -> Self {
        BinRecords {
            frames,
            decoder,
            vals: Vec::with_capacity(32),
            done: false,
        }
    }

    /// The next block start, record, bad record or truncation, or `None` at the end.
    pub fn next_item(&mut self) -> io::Result<Option<BinItem<'_>>> {
        if self.done {
            return Ok(None);
        }
        let at = |offset: u64, what: String| format!("record at byte offset {offset}: {what}");
        let Some(frame) = self.frames.next_frame()? else {
            self.done = true;
            return Ok(self.frames.cut.then(|| BinItem::Truncated {
                line: self.frames.line + 1,
            }));
        };
        let item = match frame {
            BinFrame::Block => {
                self.decoder.new_block();
                BinItem::Block
            }
            BinFrame::CutLength { line } => {
                self.done = true;
                BinItem::Truncated { line }
            }
            BinFrame::TooLong { line, offset, len } => BinItem::Bad {
                line,
                reason: at(
                    offset,
                    format!("length {len} is beyond {BIN_MAX_RECORD} (corrupt length)"),
                ),
                bytes: 0,
            },
            BinFrame::CutRecord {
                line,
                offset,
                len,
                body,
            } => match self.decoder.decode(body, &mut self.vals) {
                // Its fields run out of bytes: truncated.
                Err(BinError::Short) => {
                    self.done = true;
                    BinItem::Truncated { line }
                }
                _ => BinItem::Bad {
                    line,
                    reason: at(
                        offset,
                        format!(
                            "length {len} runs past the end of the file, but its fields do \
                             not (corrupt length)"
                        ),
                    ),
                    bytes: 0,
                },
            },
            BinFrame::Record { line, offset, body } => {
                let bytes = 4 + body.len() as u64;
                match self.decoder.decode(body, &mut self.vals) {
                    Ok(()) => BinItem::Record {
                        line,
                        offset,
                        bytes,
                        decoder: &self.decoder,
                        vals: &self.vals,
                    },
                    Err(e) => {
                        let what = match e {
                            BinError::Short => format!(
                                "its fields run past its length {} (corrupt length)",
                                body.len()
                            ),
                            BinError::Bad(s) => format!("{s} (corrupt length)"),
                        };
                        // The next record's position is not known.
                        self.frames.done = true;
                        BinItem::Bad {
                            line,
                            reason: at(offset, what),
                            bytes,
                        }
                    }
                }
            }
        };
        Ok(Some(item))
    }
}

/// The bytes of a binary file by path, decompressed when its name ends with `.zst` (the
/// default binary traces: one zstd frame a block).
pub fn open_bin_stream(path: &Path) -> io::Result<Box<dyn Read + Send>> {
    let f = std::fs::File::open(path)?;
    Ok(if path.to_string_lossy().ends_with(".zst") {
        Box::new(zstd::stream::read::Decoder::new(f)?)
    } else {
        Box::new(io::BufReader::new(f))
    })
}

/// A [`BinReader`] over a binary file by path ([`open_bin_stream`]).
pub fn open_bin_file(path: &Path) -> io::Result<BinReader<Box<dyn Read + Send>>> {
    Ok(BinReader::new(open_bin_stream(path)?))
}

/// Reads a whole binary file by path (`*.zst` decompressed): `make_decoder` gets the
/// header body, `on_record` each record's decoder and values. Returns the number of
/// records. Any flaw is an error naming the file, and the line and byte offset when in a
/// record: a bad or truncated header or record, a cut stream, or `on_record`'s error.
pub fn read_bin_file(
    path: &Path,
    make_decoder: impl FnOnce(&[u8]) -> Result<BinDecoder, String>,
    mut on_record: impl FnMut(&BinDecoder, &[BinValue]) -> Result<(), String>,
) -> Result<u64, String> {
    let p = path.display();
    let io = |e: io::Error| format!("{p}: {e}");
    let mut frames = open_bin_file(path).map_err(io)?;
    let empty = match frames.header() {
        Ok(BinHeader::Body(h)) => Ok(make_decoder(h).map_err(|e| format!("{p}: line 1: {e}"))?),
        Ok(BinHeader::Empty) => Err(()),
        Ok(BinHeader::Truncated) => return Err(format!("{p}: line 1: the header is cut short")),
        Err(e) => return Err(format!("{p}: line 1: {e}")),
    };
    let decoder = match empty {
        Ok(d) => d,
        // A compressed frame cut before its first bytes came out.
        Err(()) if frames.cut() => return Err(format!("{p}: line 1: the file is cut short")),
        Err(()) => return Err(format!("{p}: the file is empty")),
    };
    let mut records = BinRecords::new(frames, decoder);
    let mut n = 0;
    while let Some(item) = records.next_item().map_err(io)? {
        match item {
            BinItem::Block => {}
            BinItem::Record {
                line,
                offset,
                decoder,
                vals,
                ..
            } => {
                on_record(decoder, vals).map_err(|e| {
                    format!("{p}: line {line}: record at byte offset {offset}: {e}")
                })?;
                n += 1;
            }
            BinItem::Bad { line, reason, .. } => return Err(format!("{p}: line {line}: {reason}")),
            BinItem::Truncated { line } => {
                return Err(format!("{p}: line {line}: the file is cut short"))
            }
        }
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A frame's kind and line, to compare.
    fn frames(data: &[u8]) -> (Option<Vec<u8>>, Vec<String>) {
        let mut r = BinReader::new(data);
        let h = match r.header().unwrap() {
            BinHeader::Body(b) => Some(b.to_vec()),
            _ => None,
        };
        let mut out = Vec::new();
        while let Some(f) = r.next_frame().unwrap() {
            out.push(match f {
                BinFrame::Block => "block".to_string(),
                BinFrame::Record { line, offset, body } => format!("{line}@{offset}:{body:?}"),
                BinFrame::CutLength { line } => format!("cut length {line}"),
                BinFrame::CutRecord {
                    line, len, body, ..
                } => format!("cut {line} {len} {body:?}"),
                BinFrame::TooLong { line, len, .. } => format!("too long {line} {len}"),
            });
        }
        (h, out)
    }

    #[test]
    fn frames_and_cuts() {
        let bin = b"H5PROVB1\x02\0\0\0hh\x01\0\0\0\n\0\0\0\0\x09\0\0\0\n";
        let (h, f) = frames(bin);
        assert_eq!(h.as_deref(), Some(&b"hh"[..]));
        assert_eq!(f, ["2@14:[10]", "block", "cut 3 9 [10]"]);
        let (_, f) = frames(&bin[..bin.len() - 3]);
        assert_eq!(f, ["2@14:[10]", "block", "cut length 3"]);
        let (_, f) = frames(b"H5PROVB1\0\0\0\0\xff\xff\xff\xff");
        assert_eq!(f, [format!("too long 2 {}", u32::MAX)]);
        assert_eq!(BinReader::new(&b""[..]).header().unwrap(), BinHeader::Empty);
        assert_eq!(
            BinReader::new(&b"H5PROVB1\x05\0\0\0hh"[..])
                .header()
                .unwrap(),
            BinHeader::Truncated
        );
        let e = BinReader::new(&b"H5PROVX"[..]).header().unwrap_err();
        assert!(
            e.to_string().contains("does not start with H5PROVB1"),
            "{e}"
        );
    }
}
