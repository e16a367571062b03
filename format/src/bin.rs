//! The binary encoding (`format=bin`, `*.trace.bin`, `*.objects.bin`): the helpers the
//! record tables' generated `write_bin`/`from_bin` use, and the file header.
//!
//! Layout (`docs/TRACE-FORMAT.md` has it byte by byte):
//!
//! ```text
//! file    = "H5PROVB1" u32le(H) header[H] record*
//! header  = varint(version) varint(len) what[len] varint(ncols) column*ncols
//! column  = type:u8 ('u' unsigned, 'i' signed, 's' text) varint(len) name[len]
//! record  = u32le(L) body[L]
//! body    = one value per header column, in header order:
//!           'u' LEB128 varint, 'i' zigzag LEB128 varint, 's' varint(len) UTF-8[len]
//! ```
//!
//! Every record is length-prefixed, so a reader tells a record cut short by the end of the
//! file (a process killed while writing) from a corrupt length: the fields of a truncated
//! record run out of bytes, those after a corrupt length do not.

use crate::table::FieldSource;

/// The first eight bytes of a binary trace or objects file.
pub const BIN_MAGIC: &[u8; 8] = b"H5PROVB1";

/// The version of the binary layout, in every binary file's header.
pub const BIN_VERSION: u64 = 1;

/// The largest record body a reader accepts (a larger length is corrupt).
pub const BIN_MAX_RECORD: u32 = 1 << 24;

/// The largest header a reader accepts.
pub const BIN_MAX_HEADER: u32 = 1 << 20;

/// Type code of an unsigned column (LEB128 varint).
pub const BIN_UNSIGNED: u8 = b'u';
/// Type code of a signed column (zigzag LEB128 varint).
pub const BIN_SIGNED: u8 = b'i';
/// Type code of a text column (varint length, then UTF-8 bytes).
pub const BIN_TEXT: u8 = b's';

/// Appends `v` as an LEB128 varint (7 bits a byte, low bits first, high bit = more).
#[inline(always)]
pub fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    if v < 0x80 {
        out.push(v as u8);
        return;
    }
    let mut b = [0u8; 10];
    let mut n = 0;
    while v >= 0x80 {
        b[n] = v as u8 | 0x80;
        v >>= 7;
        n += 1;
    }
    b[n] = v as u8;
    out.extend_from_slice(&b[..=n]);
}

/// Zigzag: small magnitudes of either sign become small unsigned numbers.
#[inline(always)]
pub fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

/// The inverse of [`zigzag`].
#[inline(always)]
pub fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

/// Starts a record: reserves its length prefix and returns where it is.
#[inline(always)]
pub fn bin_begin(out: &mut Vec<u8>) -> usize {
    let at = out.len();
    out.extend_from_slice(&[0; 4]);
    at
}

/// Ends the record started at `at`: writes its length.
#[inline(always)]
pub fn bin_end(out: &mut [u8], at: usize) {
    let len = (out.len() - at - 4) as u32;
    out[at..at + 4].copy_from_slice(&len.to_le_bytes());
}

/// How many whole records a run of records holds (the buffered, not yet written records of
/// a binary file): it follows their length prefixes.
pub fn bin_records(mut bytes: &[u8]) -> u64 {
    let mut n = 0;
    while let Some((len, rest)) = bytes.split_first_chunk::<4>() {
        bytes = rest.get(u32::from_le_bytes(*len) as usize..).unwrap_or(&[]);
        n += 1;
    }
    n
}

/// Appends a binary file header for a table: `what` (`trace`/`objects`), its column names
/// and type codes.
pub fn write_bin_header(out: &mut Vec<u8>, what: &str, columns: &[&str], types: &[u8]) {
    let mut h = Vec::with_capacity(512);
    put_varint(&mut h, BIN_VERSION);
    put_varint(&mut h, what.len() as u64);
    h.extend_from_slice(what.as_bytes());
    put_varint(&mut h, columns.len() as u64);
    for (c, t) in columns.iter().zip(types) {
        h.push(*t);
        put_varint(&mut h, c.len() as u64);
        h.extend_from_slice(c.as_bytes());
    }
    out.extend_from_slice(BIN_MAGIC);
    out.extend_from_slice(&(h.len() as u32).to_le_bytes());
    out.extend_from_slice(&h);
}

/// Why bytes did not decode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BinError {
    /// They end before the value does.
    Short,
    /// They are not a valid value: what is wrong.
    Bad(String),
}

/// Reads a varint at `*p`, advancing it.
#[inline(always)]
pub fn get_varint(b: &[u8], p: &mut usize) -> Result<u64, BinError> {
    let mut v = 0u64;
    let mut shift = 0;
    loop {
        let Some(&x) = b.get(*p) else {
            return Err(BinError::Short);
        };
        *p += 1;
        if shift == 63 && x > 1 {
            return Err(BinError::Bad("a varint beyond 64 bits".into()));
        }
        v |= u64::from(x & 0x7f) << shift;
        if x < 0x80 {
            return Ok(v);
        }
        shift += 7;
    }
}

/// One decoded value of a binary record: a number (a signed one as its `i64` bits) or
/// the byte range of a text within the record body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinValue {
    /// A number.
    Num(u64),
    /// Text at `body[start..end]`.
    Text(usize, usize),
}

/// The columns of one binary file, mapped to a table by name (extra columns are decoded
/// and skipped, absent ones read as empty).
#[derive(Debug, Clone)]
pub struct BinHeader {
    /// Per file column, its type code.
    types: Vec<u8>,
    /// Per table column, its position in the file (`usize::MAX` when absent).
    pos: Vec<usize>,
}

fn header_err(what: &str, e: BinError) -> String {
    match e {
        BinError::Short => format!("the binary {what} header ends early"),
        BinError::Bad(s) => format!("the binary {what} header: {s}"),
    }
}

impl BinHeader {
    /// Parses a header body (the `H` bytes after the magic and the length) for a table:
    /// its `columns`, their type codes and `required` flags; `what` names the file kind.
    pub fn new(
        body: &[u8],
        columns: &'static [&'static str],
        types: &[u8],
        required: &[bool],
        what: &str,
    ) -> Result<BinHeader, String> {
        let e = |e| header_err(what, e);
        let mut p = 0;
        let version = get_varint(body, &mut p).map_err(e)?;
        if version != BIN_VERSION {
            return Err(format!(
                "binary layout version {version}, this reader knows version {BIN_VERSION}"
            ));
        }
        let text = |p: &mut usize| -> Result<&[u8], String> {
            let n = get_varint(body, p).map_err(e)? as usize;
            let s = body
                .get(*p..p.saturating_add(n))
                .ok_or_else(|| e(BinError::Short))?;
            *p += n;
            Ok(s)
        };
        let kind = text(&mut p)?;
        if kind != what.as_bytes() {
            return Err(format!(
                "a binary {} file, expected {what}",
                String::from_utf8_lossy(kind)
            ));
        }
        let n = get_varint(body, &mut p).map_err(e)?;
        let mut pos = vec![usize::MAX; columns.len()];
        let mut ftypes = Vec::new();
        for i in 0..n as usize {
            let t = *body.get(p).ok_or_else(|| e(BinError::Short))?;
            p += 1;
            if ![BIN_UNSIGNED, BIN_SIGNED, BIN_TEXT].contains(&t) {
                return Err(format!(
                    "the binary {what} header: column {} has the unknown type code {t}",
                    i + 1
                ));
            }
            let name = text(&mut p)?;
            ftypes.push(t);
            if let Some(c) = columns.iter().position(|c| c.as_bytes() == name) {
                if types[c] != t {
                    return Err(format!(
                        "column `{}` has type `{}` in the file, the h5prov {what} table has `{}`",
                        columns[c], t as char, types[c] as char
                    ));
                }
                pos[c] = i;
            }
        }
        for (c, name) in columns.iter().enumerate() {
            if required[c] && pos[c] == usize::MAX {
                return Err(format!(
                    "header has no `{name}` column (expected the h5prov {what} columns: {})",
                    columns.join(",")
                ));
            }
        }
        Ok(BinHeader { types: ftypes, pos })
    }

    /// Decodes a record body into `vals` (one value per file column). `Short` when the
    /// fields need more bytes than `body` has; `Bad` when they are invalid or end before it.
    #[inline]
    pub fn decode(&self, body: &[u8], vals: &mut Vec<BinValue>) -> Result<(), BinError> {
        vals.clear();
        let mut p = 0;
        for &t in &self.types {
            let v = get_varint(body, &mut p)?;
            vals.push(match t {
                BIN_TEXT => {
                    let end = usize::try_from(v)
                        .ok()
                        .and_then(|n| p.checked_add(n))
                        .ok_or(BinError::Short)?;
                    if end > body.len() {
                        return Err(BinError::Short);
                    }
                    let r = BinValue::Text(p, end);
                    p = end;
                    r
                }
                _ => BinValue::Num(v),
            });
        }
        if p != body.len() {
            return Err(BinError::Bad(format!(
                "its fields end after {p} of its {} bytes",
                body.len()
            )));
        }
        Ok(())
    }

    /// The decoded record `vals` of `body` as a [`FieldSource`].
    #[inline]
    pub fn source<'h, 'a>(&'h self, body: &'a [u8], vals: &'h [BinValue]) -> BinSource<'h, 'a> {
        BinSource {
            pos: &self.pos,
            body,
            vals,
        }
    }
}

/// A decoded binary record as a [`FieldSource`].
pub struct BinSource<'h, 'a> {
    pos: &'h [usize],
    body: &'a [u8],
    vals: &'h [BinValue],
}

impl BinSource<'_, '_> {
    #[inline(always)]
    fn num(&self, col: usize) -> Option<u64> {
        match self.vals.get(self.pos[col]) {
            Some(BinValue::Num(v)) => Some(*v),
            _ => None,
        }
    }
}

impl<'a> FieldSource<'a> for BinSource<'_, 'a> {
    type Error = String;

    #[inline(always)]
    fn unsigned(&self, col: usize, _name: &'static str, empty: u64) -> Result<u64, String> {
        Ok(self.num(col).unwrap_or(empty))
    }

    #[inline(always)]
    fn signed(&self, col: usize, _name: &'static str, empty: i64) -> Result<i64, String> {
        Ok(self.num(col).map_or(empty, unzigzag))
    }

    #[inline(always)]
    fn text(&self, col: usize, name: &'static str) -> Result<&'a str, String> {
        match self.vals.get(self.pos[col]) {
            Some(&BinValue::Text(s, e)) => std::str::from_utf8(&self.body[s..e])
                .map_err(|_| format!("column `{name}`: not valid UTF-8")),
            _ => Ok(""),
        }
    }

    #[cold]
    fn out_of_range(&self, col: usize, name: &'static str) -> String {
        format!(
            "column `{name}`: {} is out of range",
            self.num(col).unwrap_or(0)
        )
    }

    #[cold]
    fn empty_value(&self, _col: usize, name: &'static str) -> String {
        format!("column `{name}` is empty")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints() {
        for v in [0, 1, 127, 128, 300, 1 << 35, u64::MAX - 1, u64::MAX] {
            let mut b = Vec::new();
            put_varint(&mut b, v);
            let mut p = 0;
            assert_eq!(get_varint(&b, &mut p), Ok(v));
            assert_eq!(p, b.len());
            assert_eq!(get_varint(&b[..b.len() - 1], &mut 0), Err(BinError::Short));
        }
        for v in [0, 1, -1, 63, -64, i64::MIN, i64::MAX] {
            assert_eq!(unzigzag(zigzag(v)), v);
        }
        assert_eq!(zigzag(-1), 1);
        assert!(matches!(
            get_varint(&[0xff; 10], &mut 0),
            Err(BinError::Bad(_))
        ));
        assert!(matches!(
            get_varint(&[0xff; 11], &mut 0),
            Err(BinError::Bad(_))
        ));
    }
}
