//! The CSV record splitter behind every CSV reader.
//!
//! h5prov's writer quotes a field only when it contains a comma, a quote or a line break,
//! so nearly every line is plain: the fast path finds the line with `memchr`, checks (once
//! per buffer, not per line) that it holds no `"` and no `\r`, and splits it on `,` in
//! place. Any other record (quoted fields, which may span lines; a `\r` anywhere) is parsed
//! by `csv_core`, the parser inside the `csv` crate, configured as the `csv` crate
//! configures it. Both paths therefore give the same fields, and the line numbers are the
//! ones `csv::Reader` reports (`Position::line` of a record: 1 + the `\n`s consumed before
//! it, blank lines included). Like `csv::Reader`, blank lines are skipped and a UTF-8 BOM
//! at the start is dropped.
//!
//! Rows are borrowed from the reader's buffer (fast path) or its `csv_core` output buffer:
//! no allocation per row.

use super::swar::{eq_mask, pack};
use memchr::{memchr, memchr2, memchr_iter, memrchr};
use std::io::{self, Read};

/// Default read buffer: large enough that a refill (and its memmove of a partial line)
/// happens once per thousands of lines.
pub(crate) const BUFFER: usize = 256 * 1024;

/// The longest line a reader holds: far longer than any valid record (whose longest
/// fields are paths). A longer line is skipped, without holding it, as
/// [`Record::TooLong`], so memory does not follow the input's longest line.
pub(crate) const MAX_LINE: usize = 1 << 20;

/// The reason given for a line longer than [`MAX_LINE`].
pub(crate) fn too_long() -> String {
    format!(
        "a line longer than any valid record (over {} MiB)",
        MAX_LINE >> 20
    )
}

/// One CSV record: its fields as spans of `bytes`.
///
/// On the fast path `bytes` is the line itself (commas included); after `csv_core` it is
/// the concatenation of the unquoted fields, as in `csv::ByteRecord::as_slice`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Row<'a> {
    bytes: &'a [u8],
    spans: &'a [(usize, usize)],
}

impl<'a> Row<'a> {
    /// Number of fields.
    #[inline]
    pub fn len(&self) -> usize {
        self.spans.len()
    }

    /// Field `i`, if there is one.
    #[inline(always)]
    pub fn get(&self, i: usize) -> Option<&'a [u8]> {
        let &(a, b) = self.spans.get(i)?;
        Some(&self.bytes[a..b])
    }

    /// The byte range of field `i` within [`Row::bytes`].
    #[inline(always)]
    pub fn range(&self, i: usize) -> Option<std::ops::Range<usize>> {
        self.spans.get(i).map(|&(a, b)| a..b)
    }

    /// The bytes the field ranges index.
    #[inline]
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// All fields in order.
    pub fn iter(&self) -> impl Iterator<Item = &'a [u8]> + '_ {
        self.spans.iter().map(|&(a, b)| &self.bytes[a..b])
    }
}

/// A row as the record tables' parser reads it ([`h5prov_format::CsvFields`]): its text
/// checked for UTF-8 once, not once per field.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Fields<'a> {
    row: Row<'a>,
    /// The row's bytes as text, when they all are UTF-8.
    all: Option<&'a str>,
}

impl<'a> Fields<'a> {
    /// Wraps a row.
    #[inline]
    pub fn new(row: Row<'a>) -> Fields<'a> {
        Fields {
            row,
            all: std::str::from_utf8(row.bytes()).ok(),
        }
    }
}

impl<'a> h5prov_format::CsvFields<'a> for Fields<'a> {
    #[inline(always)]
    fn len(&self) -> usize {
        self.row.len()
    }

    #[inline(always)]
    fn get(&self, i: usize) -> Option<&'a [u8]> {
        self.row.get(i)
    }

    /// A field is text when its bytes are UTF-8 by themselves (in a row of concatenated
    /// fields, a character split between two fields is not).
    #[inline(always)]
    fn text(&self, i: usize) -> Option<&'a str> {
        match self.all {
            Some(all) => all.get(self.row.range(i)?),
            None => std::str::from_utf8(self.row.get(i)?).ok(),
        }
    }
}

/// One bit per byte of `text[base..base + 64]`, set at commas, cleared from `len` on;
/// `None` if `text` ends before `base + 64`.
#[inline(always)]
fn comma_block(text: &[u8], base: usize, len: usize) -> Option<u64> {
    let block: &[u8; 64] = text.get(base..base.checked_add(64)?)?.try_into().ok()?;
    // Shifted in word by word: a serial chain that the compiler keeps in scalar registers
    // (vectorised, its 64-bit multiplies cost more than they save).
    let mut m = 0u64;
    for w in block.chunks_exact(8) {
        let w = u64::from_le_bytes(w.try_into().expect("8 bytes"));
        m = (m >> 8) | (pack(eq_mask(w, b',')) << 56);
    }
    let rest = len.saturating_sub(base);
    if rest < 64 {
        m &= (1u64 << rest) - 1;
    }
    Some(m)
}

/// A line of the fast path (no quotes, no `\r`), not split yet.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RawLine<'a> {
    /// The line followed by the rest of the reader's buffer (its `\n`, later lines), so
    /// that word-at-a-time parsers may read a little past the line's end.
    text: &'a [u8],
    /// Length of the line.
    len: usize,
}

impl<'a> RawLine<'a> {
    /// The line without its `\n`.
    #[inline]
    pub fn line(&self) -> &'a [u8] {
        &self.text[..self.len]
    }

    /// The line followed by whatever the buffer holds after it (`[..len()]` is the line).
    #[inline]
    pub fn with_tail(&self) -> &'a [u8] {
        self.text
    }

    /// Length of the line.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// The positions of the line's commas, in order, in `out`; returns how many. `None`
    /// when there are more than `out` holds, or when the buffer ends less than 64 bytes
    /// after the start of the line's last 64-byte block (then [`RawLine::split`] it).
    ///
    /// The line is read 64 bytes at a time into a bit mask, and the positions come from
    /// its set bits: one loop exit per 64 bytes rather than one per 8 or per comma.
    #[inline(always)]
    pub fn commas(&self, out: &mut [usize]) -> Option<usize> {
        let mut n = 0;
        let mut base = 0;
        while base < self.len {
            let mut m = comma_block(self.text, base, self.len)?;
            let c = m.count_ones() as usize;
            for o in out.get_mut(n..n + c)? {
                *o = base + m.trailing_zeros() as usize;
                m &= m - 1;
            }
            n += c;
            base += 64;
        }
        Some(n)
    }

    /// Splits the line on commas into a [`Row`], with `spans` as its field storage.
    pub fn split<'s>(&self, spans: &'s mut Vec<(usize, usize)>) -> Row<'s>
    where
        'a: 's,
    {
        spans.clear();
        let mut a = 0;
        let mut base = 0;
        while base < self.len {
            if let Some(mut m) = comma_block(self.text, base, self.len) {
                spans.reserve(m.count_ones() as usize + 1);
                while m != 0 {
                    let c = base + m.trailing_zeros() as usize;
                    spans.push((a, c));
                    a = c + 1;
                    m &= m - 1;
                }
                base += 64;
            } else {
                // The end of the buffer is near: byte by byte.
                for (j, &b) in self.text[base..self.len].iter().enumerate() {
                    if b == b',' {
                        spans.push((a, base + j));
                        a = base + j + 1;
                    }
                }
                break;
            }
        }
        spans.push((a, self.len));
        Row {
            bytes: self.line(),
            spans,
        }
    }
}

/// A record as [`CsvRecords::next_raw`] hands it out.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Record<'a> {
    /// A plain line (the common case), to split or parse in place.
    Line(RawLine<'a>),
    /// A record that `csv_core` parsed (quoted fields, `\r`).
    Parsed(Row<'a>),
    /// A line longer than [`MAX_LINE`]: no row. Its rest is skipped, unread, when the
    /// next record is asked for (or [`CsvRecords::has_more`]).
    TooLong,
}

impl<'a> Record<'a> {
    /// The record's fields, splitting a plain line with `spans` as storage.
    pub fn row<'s>(&self, spans: &'s mut Vec<(usize, usize)>) -> Row<'s>
    where
        'a: 's,
    {
        match *self {
            Record::Line(l) => l.split(spans),
            Record::Parsed(r) => r,
            Record::TooLong => Row {
                bytes: &[],
                spans: &[],
            },
        }
    }
}

/// Where [`CsvRecords::advance`] found the next record.
enum Found {
    /// The end of the stream.
    End,
    /// A plain line at `buf[start..start + len]`.
    Line { start: usize, len: usize },
    /// A record for `csv_core` at `pos`.
    Slow,
    /// A line longer than [`MAX_LINE`], to skip.
    TooLong,
}

/// Streams the records of a CSV byte stream.
pub(crate) struct CsvRecords<R> {
    src: R,
    buf: Vec<u8>,
    /// Next unread byte of `buf`.
    pos: usize,
    /// End of the valid data in `buf`.
    end: usize,
    eof: bool,
    /// The last byte read from the stream so far (its last byte once `eof`).
    last_byte: Option<u8>,
    /// Bytes read from the stream so far.
    total: u64,
    /// Stream offset just after the last `\n` read so far (0: none yet).
    after_nl: u64,
    /// 1 + the number of `\n` consumed.
    line: u64,
    /// The line number of the next record, when `has_more` already skipped blank lines.
    pending_line: Option<u64>,
    /// `buf[..scanned]` was searched for `"` and `\r`...
    scanned: usize,
    /// ...and this is the first one found at or after `pos`, if any.
    special: Option<usize>,
    started: bool,
    /// The rest of a line longer than [`MAX_LINE`] is to be skipped.
    skipping: bool,
    spans: Vec<(usize, usize)>,
    core: csv_core::Reader,
    out: Vec<u8>,
    ends: Vec<usize>,
}

impl<R: Read> CsvRecords<R> {
    /// A reader with the default buffer.
    pub fn new(src: R) -> Self {
        Self::with_capacity(BUFFER, src)
    }

    /// A reader with a buffer of `cap` bytes (it grows for longer lines).
    pub fn with_capacity(cap: usize, src: R) -> Self {
        // The `csv` crate's reader: `,`, `"`, doubled quotes, CRLF terminator (any of `\r`,
        // `\n`, `\r\n` ends a record), no comments, no escape.
        let mut core = csv_core::ReaderBuilder::new()
            .delimiter(b',')
            .quote(b'"')
            .double_quote(true)
            .terminator(csv_core::Terminator::CRLF)
            .build();
        // Mark the core reader as started so that it never strips a BOM in the middle of
        // a file (the start of the stream is handled here): a blank line is a no-op.
        let _ = core.read_record(b"\n", &mut [0u8; 1], &mut [0usize; 1]);
        CsvRecords {
            src,
            buf: vec![0; cap.max(1)],
            pos: 0,
            end: 0,
            eof: false,
            last_byte: None,
            total: 0,
            after_nl: 0,
            line: 1,
            pending_line: None,
            scanned: 0,
            special: None,
            started: false,
            skipping: false,
            spans: Vec::with_capacity(32),
            core,
            out: vec![0; 1024],
            ends: vec![0; 32],
        }
    }

    /// Whether the stream is empty or ends with `\n` (meaningful once the last record was
    /// read or [`CsvRecords::has_more`] returned false).
    pub fn terminated(&self) -> bool {
        self.last_byte.is_none_or(|b| b == b'\n')
    }

    /// Bytes of the stream consumed so far (read and handed out as records or skipped).
    pub fn consumed(&self) -> u64 {
        self.total - (self.end - self.pos) as u64
    }

    /// Bytes of the stream up to and including its last `\n` (meaningful at the end, like
    /// [`CsvRecords::terminated`]): the complete lines.
    pub fn complete_bytes(&self) -> u64 {
        self.after_nl
    }

    /// Reads more data into `buf`, keeping `buf[pos..end]` (moved to the front) and growing
    /// the buffer when it is full. Returns false at the end of the stream.
    fn fill(&mut self) -> io::Result<bool> {
        if self.eof {
            return Ok(false);
        }
        if self.pos > 0 {
            let shift = self.pos;
            self.buf.copy_within(shift..self.end, 0);
            self.end -= shift;
            self.pos = 0;
            self.special = match self.special {
                Some(s) if s >= shift => Some(s - shift),
                _ => None,
            };
            self.scanned = self.scanned.saturating_sub(shift);
        }
        if self.end == self.buf.len() {
            let n = self.buf.len() * 2;
            self.buf.resize(n, 0);
        }
        loop {
            match self.src.read(&mut self.buf[self.end..]) {
                Ok(0) => {
                    self.eof = true;
                    return Ok(false);
                }
                Ok(n) => {
                    // One search from the end of each read (not of each line).
                    if let Some(i) = memrchr(b'\n', &self.buf[self.end..self.end + n]) {
                        self.after_nl = self.total + i as u64 + 1;
                    }
                    self.total += n as u64;
                    self.end += n;
                    self.last_byte = Some(self.buf[self.end - 1]);
                    return Ok(true);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// Drops a UTF-8 BOM at the start of the stream, as `csv_core` does.
    fn start(&mut self) -> io::Result<()> {
        self.started = true;
        while self.end - self.pos < 3 && self.fill()? {}
        if self.buf[self.pos..self.end].starts_with(b"\xef\xbb\xbf") {
            self.pos += 3;
        }
        Ok(())
    }

    /// Skips blank lines (any run of `\r` and `\n` where a record would start, as
    /// `csv_core` does). Returns whether a record follows.
    fn skip_blanks(&mut self) -> io::Result<bool> {
        if !self.started {
            self.start()?;
        }
        loop {
            while self.pos < self.end {
                match self.buf[self.pos] {
                    b'\n' => self.line += 1,
                    b'\r' => {}
                    _ => return Ok(true),
                }
                self.pos += 1;
            }
            if !self.fill()? {
                return Ok(false);
            }
        }
    }

    /// Whether another record follows, without consuming it (the end of the stream is
    /// known afterwards when it returns false).
    pub fn has_more(&mut self) -> io::Result<bool> {
        if self.skipping {
            self.skip_line()?;
        }
        if self.pending_line.is_none() {
            self.pending_line = Some(self.line);
        }
        self.skip_blanks()
    }

    /// Whether `buf[start..stop]` holds no `"` and no `\r`. Searches each byte of the
    /// buffer once: `special` is the first such byte at or after `start` when known, else
    /// `buf[..scanned]` holds none after `start`.
    #[inline]
    fn clean(&mut self, start: usize, stop: usize) -> bool {
        if let Some(s) = self.special {
            if s >= start {
                return s >= stop;
            }
            self.special = None;
        }
        let from = self.scanned.max(start);
        if from < stop {
            match memchr2(b'"', b'\r', &self.buf[from..self.end]) {
                Some(i) => {
                    self.special = Some(from + i);
                    self.scanned = from + i + 1;
                }
                None => self.scanned = self.end,
            }
        }
        self.special.is_none_or(|s| s >= stop)
    }

    /// Finds the next record: skips blank lines, then finds the line's `\n` (reading more
    /// data as needed) and consumes the line when it is plain.
    #[inline]
    fn advance(&mut self) -> io::Result<(u64, Found)> {
        if self.skipping {
            self.skip_line()?;
        }
        let line = self.pending_line.take().unwrap_or(self.line);
        if !self.skip_blanks()? {
            return Ok((line, Found::End));
        }
        let mut from = self.pos;
        let nl = loop {
            if let Some(n) = memchr(b'\n', &self.buf[from..self.end]) {
                break Some(from + n);
            }
            if self.end - self.pos > MAX_LINE {
                // Drop what was read of it (no `\n` in there) and skip the rest later.
                self.pos = self.end;
                self.skipping = true;
                return Ok((line, Found::TooLong));
            }
            let (pos, end) = (self.pos, self.end);
            if !self.fill()? {
                break None;
            }
            from = end - (pos - self.pos);
        };
        let start = self.pos;
        let stop = nl.unwrap_or(self.end);
        if !self.clean(start, stop) {
            return Ok((line, Found::Slow));
        }
        match nl {
            Some(n) => {
                self.pos = n + 1;
                self.line += 1;
            }
            None => self.pos = self.end,
        }
        Ok((
            line,
            Found::Line {
                start,
                len: stop - start,
            },
        ))
    }

    /// Skips the rest of a line longer than [`MAX_LINE`] (from `pos`), reading it in
    /// pieces no bigger than the buffer; the next record starts after its `\n`.
    #[cold]
    fn skip_line(&mut self) -> io::Result<()> {
        self.skipping = false;
        loop {
            if let Some(n) = memchr(b'\n', &self.buf[self.pos..self.end]) {
                self.pos += n + 1;
                self.line += 1;
                return Ok(());
            }
            self.pos = self.end;
            if !self.fill()? {
                return Ok(());
            }
        }
    }

    /// The next record and its line number, or `None` at the end; plain lines unsplit.
    #[inline]
    pub fn next_raw(&mut self) -> io::Result<Option<(u64, Record<'_>)>> {
        match self.advance()? {
            (_, Found::End) => Ok(None),
            (line, Found::Line { start, len }) => Ok(Some((
                line,
                Record::Line(RawLine {
                    text: &self.buf[start..self.end],
                    len,
                }),
            ))),
            (line, Found::TooLong) => Ok(Some((line, Record::TooLong))),
            (line, Found::Slow) => self.slow_record(line),
        }
    }

    /// The next record and its line number, or `None` at the end. A line longer than
    /// [`MAX_LINE`] is an error (of kind `InvalidData`). (The readers take
    /// [`CsvRecords::next_raw`]; the tests compare this with `csv::Reader`.)
    #[cfg(test)]
    pub fn next_record(&mut self) -> io::Result<Option<(u64, Row<'_>)>> {
        match self.advance()? {
            (_, Found::End) => Ok(None),
            (line, Found::Line { start, len }) => {
                let l = RawLine {
                    text: &self.buf[start..self.end],
                    len,
                };
                Ok(Some((line, l.split(&mut self.spans))))
            }
            (line, Found::TooLong) => Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("line {line}: {}", too_long()),
            )),
            (line, Found::Slow) => match self.slow_record(line)? {
                None => Ok(None),
                Some((line, Record::Parsed(r))) => Ok(Some((line, r))),
                Some((line, _)) => Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("line {line}: {}", too_long()),
                )),
            },
        }
    }

    /// Parses one record with `csv_core` (quoted fields, `\r`). A record that runs over
    /// more than [`MAX_LINE`] bytes (an unclosed quote, say) is given up: the parser starts
    /// afresh after the next `\n`, and the record is [`Record::TooLong`].
    #[cold]
    fn slow_record(&mut self, line: u64) -> io::Result<Option<(u64, Record<'_>)>> {
        use csv_core::ReadRecordResult as R;
        let (mut nout, mut nend) = (0usize, 0usize);
        let mut read = 0u64;
        loop {
            let input = &self.buf[self.pos..self.end];
            let (res, nin, o, e) =
                self.core
                    .read_record(input, &mut self.out[nout..], &mut self.ends[nend..]);
            self.line += memchr_iter(b'\n', &input[..nin]).count() as u64;
            self.pos += nin;
            nout += o;
            nend += e;
            read += nin as u64;
            if read > MAX_LINE as u64 && !matches!(res, R::Record | R::End) {
                // Started afresh (and never to strip a BOM, as in `with_capacity`)...
                self.core.reset();
                let _ = self
                    .core
                    .read_record(b"\n", &mut [0u8; 1], &mut [0usize; 1]);
                // ...after the next `\n`.
                self.skipping = true;
                return Ok(Some((line, Record::TooLong)));
            }
            match res {
                R::InputEmpty => {
                    // At the end of the stream, the next call (with empty input) finishes
                    // the record.
                    self.fill()?;
                }
                R::OutputFull => {
                    let n = self.out.len() * 2;
                    self.out.resize(n, 0);
                }
                R::OutputEndsFull => {
                    let n = self.ends.len() * 2;
                    self.ends.resize(n, 0);
                }
                R::Record => break,
                R::End => return Ok(None),
            }
        }
        self.spans.clear();
        let mut a = 0;
        for &e in &self.ends[..nend] {
            self.spans.push((a, e));
            a = e;
        }
        Ok(Some((
            line,
            Record::Parsed(Row {
                bytes: &self.out[..nout],
                spans: &self.spans,
            }),
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `csv::Reader` (as the analyzer configured it before the fast path, with a
    /// smaller buffer) makes of `data`: line and fields of every record.
    fn reference(data: &[u8]) -> Vec<(u64, Vec<Vec<u8>>)> {
        let mut rdr = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .buffer_capacity(4096)
            .from_reader(data);
        let mut out = Vec::new();
        let mut r = csv::ByteRecord::new();
        while rdr.read_byte_record(&mut r).unwrap() {
            let line = r.position().map_or(0, |p| p.line());
            out.push((line, r.iter().map(<[u8]>::to_vec).collect()));
        }
        out
    }

    /// A reader that returns at most `n` bytes per call.
    struct Dribble<'a>(&'a [u8], usize);

    impl Read for Dribble<'_> {
        fn read(&mut self, b: &mut [u8]) -> io::Result<usize> {
            let n = self.0.len().min(self.1).min(b.len());
            b[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    fn ours(data: &[u8], cap: usize, chunk: usize) -> Vec<(u64, Vec<Vec<u8>>)> {
        let mut rdr = CsvRecords::with_capacity(cap, Dribble(data, chunk));
        let mut out = Vec::new();
        while let Some((line, r)) = rdr.next_record().unwrap() {
            out.push((line, r.iter().map(<[u8]>::to_vec).collect()));
        }
        assert_eq!(
            rdr.terminated(),
            data.last().is_none_or(|&b| b == b'\n'),
            "{data:?}"
        );
        out
    }

    fn check(data: &[u8]) {
        let want = reference(data);
        for (cap, chunk) in [(4096, usize::MAX), (1, 1), (4, 3), (7, 64), (64, 5)] {
            assert_eq!(
                ours(data, cap, chunk),
                want,
                "input {:?} cap {cap} chunk {chunk}",
                String::from_utf8_lossy(data)
            );
        }
    }

    #[test]
    fn same_as_csv_crate_on_crafted_inputs() {
        for s in [
            "",
            "\n",
            "a",
            "a\n",
            "a,b,c\n1,2,3\n",
            "a,b,c\n1,2,3",
            "a,b\n\n\n1,2\n\n",
            "seq,op\n1,\"x,y\"\n2,plain\n3,\"multi\nline\"\n4,after\n",
            "a,\"b\"\"c\",d\n",
            "a,\"unterminated\n1,2\n",
            "a,b\r\n1,2\r\n3,4\r\n",
            "a,b\r1,2\r3,4",
            "a,b\r\n\r\n1,2\n",
            "\u{feff}seq,op\n1,x\n",
            "x,\u{feff}y\n\u{feff}1,\"2\"\n",
            ",\n,,\n,\"\",\n",
            "a,b\n1,2\n3,\"tru",
            "h\n\"q\"x,y\n",
            " \n\t\n",
            "é,ü\n\"é\",ü\r",
        ] {
            check(s.as_bytes());
        }
    }

    #[test]
    fn same_as_csv_crate_on_random_inputs() {
        // A small LCG: deterministic, no extra crate.
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = move || {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (x >> 33) as usize
        };
        let alphabet: &[u8] = b"ab1,,,\"\n\n\r\xef\xbb\xbf\xc3";
        // More cases: H5PROV_CSV_CASES=300000 cargo test --release ... random_inputs
        let cases = std::env::var("H5PROV_CSV_CASES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(1200);
        for _ in 0..cases {
            let len = next() % if cases > 1200 { 90 } else { 40 };
            let data: Vec<u8> = (0..len)
                .map(|_| alphabet[next() % alphabet.len()])
                .collect();
            check(&data);
        }
    }

    #[test]
    fn comma_positions_of_plain_lines() {
        let mut next = crate::read::test_rng(0x9e37_79b9_7f4a_7c15);
        let mut data = Vec::new();
        for _ in 0..400 {
            let len = next(200);
            data.extend((0..len).map(|_| b"a,,1\xff,"[next(6)]));
            data.push(b'\n');
        }
        let mut rdr = CsvRecords::with_capacity(1024, &data[..]);
        let (mut full, mut short) = (0, 0);
        while let Some((_, rec)) = rdr.next_raw().unwrap() {
            let Record::Line(l) = rec else {
                panic!("plain data")
            };
            let want: Vec<usize> = (0..l.len()).filter(|&i| l.line()[i] == b',').collect();
            // Every 64-byte block from the start of the line must be in the buffer.
            let readable = l.with_tail().len() >= l.len().next_multiple_of(64);
            let mut out = [0usize; 256];
            match l.commas(&mut out) {
                Some(n) => {
                    assert_eq!(&out[..n], &want[..]);
                    full += 1;
                }
                None => {
                    assert!(!readable);
                    short += 1;
                }
            }
            let mut few = [0usize; 3];
            assert_eq!(l.commas(&mut few).is_some(), readable && want.len() <= 3);
        }
        assert!(full > 300 && short > 0, "{full} {short}");
    }

    #[test]
    fn counts_header_and_complete_bytes_across_refills() {
        // (input, bytes consumed by the header record, bytes up to the last `\n`)
        for (data, header, complete) in [
            ("h,x\n1,2\n3,4\n", 4, 12),
            ("h,x\n1,2\n3,", 4, 8),
            ("h,x\n\n\n1,2\n", 4, 10),
            ("\u{feff}h\n1\n", 5, 7),
            ("h,\"q\nq\"\n1,2\n", 8, 12),
            ("h", 1, 0),
            ("", 0, 0),
        ] {
            for (cap, chunk) in [(4096, usize::MAX), (1, 1), (4, 3), (7, 2)] {
                let mut r = CsvRecords::with_capacity(cap, Dribble(data.as_bytes(), chunk));
                let got_header = r.next_record().unwrap().map(|_| ());
                let consumed = r.consumed();
                while r.next_record().unwrap().is_some() {}
                assert_eq!(
                    (got_header.is_some(), consumed, r.complete_bytes()),
                    (!data.is_empty(), header, complete),
                    "{data:?} cap {cap} chunk {chunk}"
                );
            }
        }
    }

    #[test]
    fn has_more_keeps_the_next_line_number() {
        let data = b"h\n1\n\n\n2\n\n";
        let mut r = CsvRecords::new(&data[..]);
        assert_eq!(r.next_record().unwrap().unwrap().0, 1);
        assert_eq!(r.next_record().unwrap().unwrap().0, 2);
        assert!(r.has_more().unwrap());
        assert!(r.has_more().unwrap());
        let (line, row) = r.next_record().unwrap().unwrap();
        assert_eq!((line, row.get(0)), (3, Some(&b"2"[..])));
        assert!(!r.has_more().unwrap());
        assert!(r.terminated());
        assert!(r.next_record().unwrap().is_none());
    }

    #[test]
    fn rows_expose_raw_line_or_concatenation() {
        let data = b"a,bc,d\n\"x\",y\n";
        let mut r = CsvRecords::new(&data[..]);
        let (_, row) = r.next_record().unwrap().unwrap();
        assert_eq!(row.bytes(), b"a,bc,d");
        assert_eq!(row.range(1), Some(2..4));
        let (_, row) = r.next_record().unwrap().unwrap();
        assert_eq!(row.bytes(), b"xy");
        assert_eq!(row.len(), 2);
    }

    /// A stream of `n` bytes of `b` (a huge line without holding it).
    struct Repeat(u8, u64);

    impl Read for Repeat {
        fn read(&mut self, b: &mut [u8]) -> io::Result<usize> {
            let n = (b.len() as u64).min(self.1) as usize;
            b[..n].fill(self.0);
            self.1 -= n as u64;
            Ok(n)
        }
    }

    #[test]
    fn lines_longer_than_any_record_are_skipped_in_bounded_memory() {
        // A line of 64 MiB (no `\n` within the limit), and a quote that never closes over
        // 64 MiB of short lines (the `csv_core` path), between good rows.
        for (open, filler) in [(&b""[..], b'x'), (&b"\""[..], b'\n')] {
            let data = Read::chain(
                Read::chain(
                    Read::chain(&b"a,b\n1,2\n"[..], open),
                    Repeat(filler, 64 << 20),
                ),
                &b"\n3,4\n"[..],
            );
            let mut r = CsvRecords::new(data);
            let mut got = Vec::new();
            while let Some((line, rec)) = r.next_raw().unwrap() {
                got.push(match rec {
                    Record::TooLong => (line, None),
                    rec => (line, Some(rec.row(&mut Vec::new()).iter().count())),
                });
            }
            assert_eq!(got.len(), 4, "{got:?}");
            assert_eq!(got[..3], [(1, Some(2)), (2, Some(2)), (3, None)]);
            assert_eq!(got[3].1, Some(2));
            assert!(
                r.buf.len() <= 4 * MAX_LINE && r.out.len() <= 4 * MAX_LINE,
                "buffers grew to {} and {} bytes",
                r.buf.len(),
                r.out.len()
            );
        }
        // Unterminated at the end: still one skipped line, and the stream known to end
        // without `\n`.
        let mut r = CsvRecords::new(Read::chain(&b"a\n"[..], Repeat(b'y', 8 << 20)));
        assert!(matches!(r.next_raw().unwrap(), Some((1, Record::Line(_)))));
        assert!(matches!(r.next_raw().unwrap(), Some((2, Record::TooLong))));
        assert!(!r.has_more().unwrap());
        assert!(!r.terminated());
    }
}
