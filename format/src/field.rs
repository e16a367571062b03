//! The field writers behind the generated `write_csv` and `write_jsonl`, the connector's
//! hot path.
//!
//! An encoder grows its output once per record, by the record's room (the longest its
//! fields can be, with their commas, or JSON keys) and [`PAD`] bytes, writes the fields
//! into that zeroed space, then cuts off what is left. A writer writes its field at a
//! position inside the room and returns where the field ends; it may store whole 8-byte
//! words past that end, into bytes the next field or the final cut overwrites. So a field
//! costs a few word stores: no capacity checks, no `memcpy` calls, no formatting buffers.
//!
//! Every writer takes the position as `at & mask`. The encoder passes `mask` all ones, or,
//! when the record's room fits its window (a power of two), a fixed-size array of the
//! window and [`PAD`] bytes and the window less one: the mask then changes nothing (every
//! field starts inside the room), but the compiler knows that each number's stores fit
//! and drops their bounds checks.
//!
//! Numbers are the same digits in both encodings; text is copied a word at a time while a
//! bit test finds the words that may need quoting (CSV) or escaping (JSON).

/// Bytes a `u64` or `i64` writer touches: 20 digits, or `-` and 19.
pub(crate) const SPAN_64: usize = 20;
/// Bytes a `u32` writer touches: 10 digits (a head's 8-byte store, then 8 digits).
pub(crate) const SPAN_U32: usize = 10;
/// Bytes an `i32` writer touches: `-` and [`SPAN_U32`].
pub(crate) const SPAN_I32: usize = 11;
/// Bytes a `u8` writer touches: one 8-byte store, for at most 3 digits.
pub(crate) const SPAN_U8: usize = 8;

/// Scratch after a record's room: a writer touches at most a comma and [`SPAN_64`] bytes,
/// or a JSON key, from where its field starts, which is inside the room.
pub(crate) const PAD: usize = 32;

/// The text a record may hold and still take the encoders' fast path: a table's window is
/// the room of its numbers and empty texts plus this, rounded up to a power of two.
pub(crate) const TEXT_BUDGET: usize = 200;

const ONES: u64 = 0x0101_0101_0101_0101;
const ASCII_0: u64 = ONES * b'0' as u64;

#[inline(always)]
fn store8(buf: &mut [u8], w: u64) {
    buf[..8].copy_from_slice(&w.to_le_bytes());
}

#[inline(always)]
fn load8(s: &[u8]) -> u64 {
    let mut w = [0; 8];
    w.copy_from_slice(&s[..8]);
    u64::from_le_bytes(w)
}

/// The 8 decimal digits of `x < 10^8` (leading zeros included) as digit values 0..=9, the
/// most significant in the lowest byte: `x` split in two 4-digit halves, then each half in
/// two pairs, then each pair in two digits, all lanes at once. A lane `v` split by `d` in
/// `q = v / d` (the low, more significant part) and `v - q * d` is
/// `(v << bits) - q * ((d << bits) - 1)`; the multiply-shifts divide exactly in these
/// ranges (`* 5243 >> 19` is `/ 100` below 43699, `* 103 >> 10` is `/ 10` below 179).
#[inline(always)]
fn digits8(x: u32) -> u64 {
    let x = u64::from(x);
    let q = x / 10_000;
    let v = (x << 32) - q * ((10_000 << 32) - 1);
    let q = ((v * 5243) >> 19) & 0x0000_007f_0000_007f;
    let v = (v << 16) - q * ((100 << 16) - 1);
    let q = ((v * 103) >> 10) & 0x000f_000f_000f_000f;
    (v << 8) - q * ((10 << 8) - 1)
}

/// Writes `1 <= x < 10^8` without leading zeros (one 8-byte store); returns its length.
#[inline(always)]
fn put_head(buf: &mut [u8], x: u32) -> usize {
    let d = digits8(x);
    // The leading zero digits are the low zero bytes (`x >= 1`: not all of them).
    let z = d.trailing_zeros() & !7;
    store8(buf, (d >> z) | ASCII_0);
    8 - (z as usize >> 3)
}

/// Writes `x < 10^8` as exactly 8 digits.
#[inline(always)]
fn put_8(buf: &mut [u8], x: u32) {
    store8(buf, digits8(x) | ASCII_0);
}

/// Writes `v` in decimal at the start of `buf`; returns its length. Touches [`SPAN_64`]
/// bytes (a `v` below 2^32: [`SPAN_U32`]; below 2^8: [`SPAN_U8`]).
#[inline(always)]
fn put_u64(buf: &mut [u8], v: u64) -> usize {
    const E8: u64 = 100_000_000;
    if v < 10 {
        buf[0] = b'0' + v as u8;
        1
    } else if v < E8 {
        put_head(buf, v as u32)
    } else if v < E8 * E8 {
        let hi = v / E8;
        let n = put_head(buf, hi as u32);
        put_8(&mut buf[n..], (v - hi * E8) as u32);
        n + 8
    } else {
        let top = v / (E8 * E8);
        let rest = v - top * (E8 * E8);
        let hi = rest / E8;
        let n = put_head(buf, top as u32);
        put_8(&mut buf[n..], hi as u32);
        put_8(&mut buf[n + 8..], (rest - hi * E8) as u32);
        n + 16
    }
}

/// Writes a comma when `comma`, then unsigned `v`, whose writer touches `SPAN` bytes, at
/// `at & mask`; returns where the field ends. It first takes the field's `SPAN + 1` bytes:
/// a constant length, so the stores within need no bounds checks of their own.
#[inline(always)]
pub(crate) fn put_unsigned<const SPAN: usize>(
    buf: &mut [u8],
    at: usize,
    mask: usize,
    comma: bool,
    v: u64,
) -> usize {
    let i = at & mask;
    let b = &mut buf[i..i + SPAN + 1];
    at + if comma {
        b[0] = b',';
        1 + put_u64(&mut b[1..], v)
    } else {
        put_u64(&mut b[..SPAN], v)
    }
}

/// [`put_unsigned`] for signed `v`.
#[inline(always)]
pub(crate) fn put_signed<const SPAN: usize>(
    buf: &mut [u8],
    at: usize,
    mask: usize,
    comma: bool,
    v: i64,
) -> usize {
    if v >= 0 {
        return put_unsigned::<SPAN>(buf, at, mask, comma, v as u64);
    }
    let i = at & mask;
    let b = &mut buf[i..i + SPAN + 1];
    let c = usize::from(comma);
    b[0] = b',';
    b[c] = b'-';
    at + c + 1 + put_u64(&mut b[c + 1..], v.unsigned_abs())
}

/// Whether some byte of `w` is below `-` (0x2d), exactly (the `hasless` bit trick): the
/// bytes CSV must quote (`"` `,` LF CR) all are; few others are (space, `!`..`+`, control
/// characters), so a word without any needs no closer look.
#[inline(always)]
fn maybe_special(w: u64) -> u64 {
    w.wrapping_sub(ONES * 0x2d) & !w & (ONES * 0x80)
}

/// Writes a comma when `comma`, then one text field at `at & mask`, quoted per RFC 4180
/// only when it must be (it holds a comma, a quote or a line break); returns where the
/// field ends. Takes at most `2 * len + 3` bytes, and touches 9 past `at` at least. The
/// text is copied and checked a word at a time.
#[inline(always)]
pub(crate) fn put_text(buf: &mut [u8], at: usize, mask: usize, comma: bool, s: &[u8]) -> usize {
    let b = &mut buf[at & mask..];
    let c = usize::from(comma);
    if comma {
        b[0] = b',';
    }
    at + c + put_text_at(&mut b[c..], s)
}

#[inline(always)]
fn put_text_at(buf: &mut [u8], s: &[u8]) -> usize {
    let n = s.len();
    if n == 0 {
        return 0;
    }
    if copy_words(buf, s, maybe_special) == 0
        || !s.iter().any(|&b| matches!(b, b',' | b'"' | b'\n' | b'\r'))
    {
        return n;
    }
    put_quoted(buf, s)
}

/// Copies non-empty `s` to the start of `buf` as whole 8-byte words, overlapping when its
/// length is not a multiple of 8 (a text shorter than 8 fills its word past its end, with
/// a byte no `test` flags); returns the OR of `test` of every word.
#[inline(always)]
fn copy_words(buf: &mut [u8], s: &[u8], test: impl Fn(u64) -> u64) -> u64 {
    const FILL: u64 = ONES * b'A' as u64;
    let n = s.len();
    if n < 4 {
        let w = u64::from(s[0])
            | (u64::from(s[n / 2]) << (n / 2 * 8))
            | (u64::from(s[n - 1]) << ((n - 1) * 8))
            | (FILL << (n * 8));
        store8(buf, w);
        test(w)
    } else if n < 8 {
        let lo = u32::from_le_bytes([s[0], s[1], s[2], s[3]]);
        let hi = u32::from_le_bytes([s[n - 4], s[n - 3], s[n - 2], s[n - 1]]);
        let w = u64::from(lo) | (u64::from(hi) << ((n - 4) * 8)) | (FILL << (n * 8));
        store8(buf, w);
        test(w)
    } else if n <= 16 {
        let (a, b) = (load8(s), load8(&s[n - 8..]));
        store8(buf, a);
        store8(&mut buf[n - 8..], b);
        test(a) | test(b)
    } else if n <= 32 {
        let w = [
            load8(s),
            load8(&s[8..]),
            load8(&s[n - 16..]),
            load8(&s[n - 8..]),
        ];
        let d = &mut buf[..n];
        store8(d, w[0]);
        store8(&mut d[8..], w[1]);
        store8(&mut d[n - 16..], w[2]);
        store8(&mut d[n - 8..], w[3]);
        test(w[0]) | test(w[1]) | test(w[2]) | test(w[3])
    } else {
        let d = &mut buf[..n];
        let mut f = 0;
        // An index loop: zipping two `chunks_exact` iterators was an out-of-line call
        // with two 64-bit divisions (its length) per text, ~0.4-0.9% of a traced run.
        let mut i = 0;
        while i + 8 <= n {
            let w = load8(&s[i..]);
            f |= test(w);
            store8(&mut d[i..], w);
            i += 8;
        }
        let w = load8(&s[n - 8..]);
        store8(&mut d[n - 8..], w);
        f | test(w)
    }
}

/// Writes `s` quoted, its quotes doubled.
#[cold]
fn put_quoted(buf: &mut [u8], s: &[u8]) -> usize {
    buf[0] = b'"';
    let mut n = 1;
    for &b in s {
        if b == b'"' {
            buf[n] = b'"';
            n += 1;
        }
        buf[n] = b;
        n += 1;
    }
    buf[n] = b'"';
    n + 1
}

// The JSON writers write a field with its key (`{"name":` or `,"name":`) in front, at
// `at.min(lim)`: a JSON window is not a power of two, as the keys make the objects table's
// room before any text 940 bytes, and a 2 KiB window costs more to zero than a clamp.

/// Writes `key` then unsigned `v`, whose writer touches `SPAN` bytes, at `at.min(lim)`;
/// returns where the value ends.
#[inline(always)]
pub(crate) fn put_json_unsigned<const SPAN: usize>(
    buf: &mut [u8],
    at: usize,
    lim: usize,
    key: &[u8],
    v: u64,
) -> usize {
    let i = at.min(lim);
    let k = key.len();
    let b = &mut buf[i..i + k + SPAN];
    b[..k].copy_from_slice(key);
    at + k + put_u64(&mut b[k..], v)
}

/// [`put_json_unsigned`] for signed `v`.
#[inline(always)]
pub(crate) fn put_json_signed<const SPAN: usize>(
    buf: &mut [u8],
    at: usize,
    lim: usize,
    key: &[u8],
    v: i64,
) -> usize {
    if v >= 0 {
        return put_json_unsigned::<SPAN>(buf, at, lim, key, v as u64);
    }
    let i = at.min(lim);
    let k = key.len();
    let b = &mut buf[i..i + k + SPAN];
    b[..k].copy_from_slice(key);
    b[k] = b'-';
    at + k + 1 + put_u64(&mut b[k + 1..], v.unsigned_abs())
}

/// Nonzero when some byte of `w` is one JSON escapes (a control character, `"` or `\\`),
/// exactly: `hasless(w ^ 0x02, 0x21)` (the bytes of `w ^ 0x02` below 0x21 are the control
/// characters and `"`) or `haszero(w ^ b'\\')`, sharing the `& !x` of both, whose high
/// bits are those of `!w`. The high-bit mask is left to the caller.
#[inline(always)]
fn json_special(w: u64) -> u64 {
    let a = w ^ (ONES * 0x02);
    let b = w ^ (ONES * u64::from(b'\\'));
    (a.wrapping_sub(ONES * 0x21) | b.wrapping_sub(ONES)) & !w
}

/// Writes `key` then text `s` as a JSON string, unescaped, at `at.min(lim)`; returns where
/// it ends. ORs into `special` a nonzero value when `s` needs escaping: then these bytes
/// are not the JSON string, and the caller writes the record again (see `write_jsonl`).
/// Takes `len + 2` bytes after the key and touches 9 at least.
#[inline(always)]
pub(crate) fn put_json_text(
    buf: &mut [u8],
    at: usize,
    lim: usize,
    key: &[u8],
    s: &[u8],
    special: &mut u64,
) -> usize {
    let i = at.min(lim);
    let k = key.len();
    let b = &mut buf[i..];
    b[..k].copy_from_slice(key);
    let b = &mut b[k..];
    let n = s.len();
    b[0] = b'"';
    if n != 0 {
        *special |= copy_words(&mut b[1..], s, json_special) & (ONES * 0x80);
    }
    b[n + 1] = b'"';
    at + k + n + 2
}

/// Writes `end` (the line's `}\n`) at `at.min(lim)`; returns where it ends.
#[inline(always)]
pub(crate) fn put_json_end(buf: &mut [u8], at: usize, lim: usize, end: &[u8]) -> usize {
    let i = at.min(lim);
    buf[i..i + end.len()].copy_from_slice(end);
    at + end.len()
}

/// A value of a JSON object written by [`write_json_fields`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JsonValue<'a> {
    /// A number.
    Unsigned(u64),
    /// A signed number.
    Signed(i64),
    /// A string, escaped as `serde_json` escapes it.
    Text(&'a str),
}

/// Appends `head` (JSON text, as is), then each field as `key` (its punctuation included:
/// `,"name":`) and its value, then `tail` (as is): the record tables' JSONL writer for
/// objects that are not a table's records (the connector's stream messages). Text is
/// written by the same word-at-a-time writer, and a text that needs escapes (rare) makes
/// it write the fields again through `serde_json`, so the bytes are `serde_json`'s.
/// Allocates nothing beyond growing `out`, once.
#[inline]
pub fn write_json_fields(
    out: &mut Vec<u8>,
    head: &[u8],
    fields: &[(&[u8], JsonValue<'_>)],
    tail: &[u8],
) {
    let start = out.len();
    let mut room = head.len() + tail.len();
    for (k, v) in fields {
        room += k.len()
            + match v {
                JsonValue::Unsigned(_) | JsonValue::Signed(_) => SPAN_64,
                JsonValue::Text(s) => s.len() + 2,
            };
    }
    out.resize(start + room + PAD, 0);
    let buf = &mut out[start..];
    buf[..head.len()].copy_from_slice(head);
    let mut n = head.len();
    let mut special = 0;
    for (k, v) in fields {
        n = match *v {
            JsonValue::Unsigned(x) => put_json_unsigned::<SPAN_64>(buf, n, !0, k, x),
            JsonValue::Signed(x) => put_json_signed::<SPAN_64>(buf, n, !0, k, x),
            JsonValue::Text(s) => put_json_text(buf, n, !0, k, s.as_bytes(), &mut special),
        };
    }
    n = put_json_end(buf, n, !0, tail);
    if special == 0 {
        out.truncate(start + n);
    } else {
        out.truncate(start);
        write_json_fields_escaped(out, head, fields, tail);
    }
}

macro_rules! json_value_from {
    ($($t:ty => $v:ident),*) => {$(
        impl From<$t> for JsonValue<'_> {
            fn from(x: $t) -> Self {
                JsonValue::$v(x.into())
            }
        }
    )*};
}
json_value_from!(u64 => Unsigned, u32 => Unsigned, u8 => Unsigned, i64 => Signed, i32 => Signed);

impl<'a> From<&'a str> for JsonValue<'a> {
    fn from(s: &'a str) -> Self {
        JsonValue::Text(s)
    }
}

/// [`write_json_fields`] as straight-line code, for a hot path: after `head`, each
/// `name = value` as `,"name":value` (each value evaluated once), then `tail`. The keys are
/// constants and every field is written in place, as the record tables' generated
/// `write_jsonl` writes its fields; a text that needs escapes makes it write the line
/// again through [`write_json_fields`], so the bytes are `serde_json`'s.
#[macro_export]
macro_rules! write_json_line {
    ($out:expr, $head:expr, { $($name:ident = $v:expr),+ $(,)? }, $tail:expr) => {{
        let out: &mut Vec<u8> = $out;
        let head: &[u8] = $head;
        let tail: &[u8] = $tail;
        $( let $name = $v; )+
        let room = head.len() + tail.len() $(
            + concat!(",\"", stringify!($name), "\":").len()
            + $crate::Column::json_room($name)
        )+;
        let start = out.len();
        out.resize(start + room + $crate::JSON_PAD, 0);
        let buf = &mut out[start..];
        buf[..head.len()].copy_from_slice(head);
        let mut n = head.len();
        let mut special = 0u64;
        $(
            n = $crate::Column::put_json(
                $name,
                buf,
                n,
                !0,
                concat!(",\"", stringify!($name), "\":").as_bytes(),
                &mut special,
            );
        )+
        buf[n..n + tail.len()].copy_from_slice(tail);
        if special == 0 {
            out.truncate(start + n + tail.len());
        } else {
            out.truncate(start);
            $crate::write_json_fields(
                out,
                head,
                &[$( (
                    concat!(",\"", stringify!($name), "\":").as_bytes(),
                    $crate::JsonValue::from($name),
                ) ),+],
                tail,
            );
        }
    }};
}

/// Scratch after a line's room that [`write_json_line!`] leaves to the field writers.
#[doc(hidden)]
pub const JSON_PAD: usize = PAD;

/// [`write_json_fields`] when some text needs escapes.
#[cold]
#[inline(never)]
fn write_json_fields_escaped(
    out: &mut Vec<u8>,
    head: &[u8],
    fields: &[(&[u8], JsonValue<'_>)],
    tail: &[u8],
) {
    out.extend_from_slice(head);
    for (k, v) in fields {
        out.extend_from_slice(k);
        let r = match *v {
            JsonValue::Unsigned(x) => serde_json::to_writer(&mut *out, &x),
            JsonValue::Signed(x) => serde_json::to_writer(&mut *out, &x),
            JsonValue::Text(s) => serde_json::to_writer(&mut *out, s),
        };
        r.expect("writing to a Vec cannot fail");
    }
    out.extend_from_slice(tail);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digits8_is_exact() {
        // The lanes are independent: this gives every lane every value.
        for k in 0..10_000 {
            for x in [k * 10_001, k * 10_000 + 9_999 - k] {
                let want = format!("{x:08}");
                assert_eq!((digits8(x) | ASCII_0).to_le_bytes(), want.as_bytes());
            }
        }
    }

    /// What a writer wrote, after filler it must overwrite or leave alone.
    fn written(span: usize, comma: bool, put: impl Fn(&mut [u8], usize, bool) -> usize) -> String {
        // Two positions, the first masked to the second's.
        let mut buf = vec![b'?'; 3 + span + 1 + PAD];
        let end = put(&mut buf, 3, comma);
        let end2 = put(&mut buf[..], 3 | 64, comma);
        assert_eq!(end2 - 64, end);
        assert!(
            buf[..3].iter().all(|&b| b == b'?'),
            "wrote before its field"
        );
        String::from_utf8(buf[3..end].to_vec()).unwrap()
    }

    #[test]
    fn numbers() {
        let mut vals = vec![0, 1, 9, 10, 11, 99, 100, 255, 256, u64::MAX - 1, u64::MAX];
        let mut p = 1u64;
        while let Some(q) = p.checked_mul(10) {
            vals.extend([p - 1, p, p + 1, q / 2, q / 3]);
            p = q;
        }
        vals.extend([p - 1, p, p + 1]);
        let signed = |v: u64| [v as i64, (v as i64).wrapping_neg(), i64::MIN, i64::MAX];
        for v in vals {
            for comma in [false, true] {
                let c = if comma { "," } else { "" };
                let m = 63;
                let got = written(SPAN_64, comma, |b, at, c| {
                    put_unsigned::<SPAN_64>(b, at, m, c, v)
                });
                assert_eq!(got, format!("{c}{v}"));
                for s in signed(v) {
                    let got = written(SPAN_64, comma, |b, at, c| {
                        put_signed::<SPAN_64>(b, at, m, c, s)
                    });
                    assert_eq!(got, format!("{c}{s}"));
                }
                if let Ok(v) = u32::try_from(v) {
                    let got = written(SPAN_U32, comma, |b, at, c| {
                        put_unsigned::<SPAN_U32>(b, at, m, c, v.into())
                    });
                    assert_eq!(got, format!("{c}{v}"));
                }
                for s in signed(v).map(|s| s as i32) {
                    let got = written(SPAN_I32, comma, |b, at, c| {
                        put_signed::<SPAN_I32>(b, at, m, c, s.into())
                    });
                    assert_eq!(got, format!("{c}{s}"));
                }
                if let Ok(v) = u8::try_from(v) {
                    let got = written(SPAN_U8, comma, |b, at, c| {
                        put_unsigned::<SPAN_U8>(b, at, m, c, v.into())
                    });
                    assert_eq!(got, format!("{c}{v}"));
                }
            }
        }
    }

    #[test]
    fn texts() {
        let quoted = |s: &str| {
            if s.contains([',', '"', '\n', '\r']) {
                format!("\"{}\"", s.replace('"', "\"\""))
            } else {
                s.to_string()
            }
        };
        // Every length up to past the longest straight-line case, with each awkward byte
        // (and a few that only look so to `maybe_special`) at each position.
        for n in 0..50 {
            for at in 0..=n {
                for b in [",", "\"", "\n", "\r", " ", "+", "-", "\t", "\0", "é"] {
                    let s: String = (0..n).map(|i| if i == at { b } else { "x" }).collect();
                    for comma in [false, true] {
                        let c = if comma { "," } else { "" };
                        let got = written(2 * s.len() + 9, comma, |buf, at, c| {
                            put_text(buf, at, 63, c, s.as_bytes())
                        });
                        assert_eq!(got, format!("{c}{}", quoted(&s)));
                    }
                }
            }
        }
    }

    /// What a JSON writer wrote with `key` in front, after filler it must overwrite or
    /// leave alone, at a position and at one clamped to it.
    fn json_written(span: usize, mut put: impl FnMut(&mut [u8], usize, usize) -> usize) -> String {
        let mut buf = vec![b'?'; 3 + span + PAD];
        let end = put(&mut buf, 3, !0);
        assert_eq!(put(&mut buf, 64, 3) - 64, end - 3);
        assert!(
            buf[..3].iter().all(|&b| b == b'?'),
            "wrote before its field"
        );
        String::from_utf8(buf[3..end].to_vec()).unwrap()
    }

    #[test]
    fn json_numbers() {
        let key = b",\"key\":";
        let mut vals = vec![0, 1, 9, 10, 99, 100, 255, 256, u64::MAX];
        let mut p = 1u64;
        while let Some(q) = p.checked_mul(10) {
            vals.extend([p - 1, p, p + 1]);
            p = q;
        }
        for v in vals {
            let got = json_written(key.len() + SPAN_64, |b, at, lim| {
                put_json_unsigned::<SPAN_64>(b, at, lim, key, v)
            });
            assert_eq!(got, format!(",\"key\":{v}"));
            for s in [v as i64, (v as i64).wrapping_neg(), i64::MIN, i64::MAX] {
                let got = json_written(key.len() + SPAN_64, |b, at, lim| {
                    put_json_signed::<SPAN_64>(b, at, lim, key, s)
                });
                assert_eq!(got, format!(",\"key\":{s}"));
                let s = s as i32;
                let got = json_written(key.len() + SPAN_I32, |b, at, lim| {
                    put_json_signed::<SPAN_I32>(b, at, lim, key, s.into())
                });
                assert_eq!(got, format!(",\"key\":{s}"));
            }
        }
    }

    #[test]
    fn json_texts() {
        let key = b"{\"k\":";
        // Every length up to past the longest straight-line case, with each byte JSON
        // escapes, and its neighbours, at each position: plain text is written as is,
        // and text JSON escapes is flagged.
        let mut bytes: Vec<u8> = (0..0x20).collect();
        bytes.extend([b' ', b'!', b'"', b'#', b'[', b'\\', b']', b'A', 0x7f]);
        for n in 0..50 {
            for at in 0..=n {
                for &b in &bytes {
                    let s: Vec<u8> = (0..n).map(|i| if i == at { b } else { b'x' }).collect();
                    let mut special = 0;
                    let got = json_written(key.len() + n + 9, |buf, at, lim| {
                        put_json_text(buf, at, lim, key, &s, &mut special)
                    });
                    let s = String::from_utf8(s).unwrap();
                    let escaped = serde_json::to_string(&s).unwrap();
                    assert_eq!(special != 0, escaped.len() != s.len() + 2, "{s:?}");
                    assert_eq!(got, format!("{{\"k\":\"{s}\""));
                }
            }
        }
        for s in ["é ü 日本 😀 \u{2028}", "\u{7f}\u{80}\u{ff}"] {
            let mut special = 0;
            let got = json_written(key.len() + s.len() + 9, |buf, at, lim| {
                put_json_text(buf, at, lim, key, s.as_bytes(), &mut special)
            });
            assert_eq!((special, got), (0, format!("{{\"k\":\"{s}\"")));
        }
    }
}

#[cfg(test)]
mod json_fields_tests {
    use super::*;
    use serde::Serialize;

    #[derive(Serialize)]
    struct Msg<'a> {
        v: u32,
        seq: u64,
        rank: i64,
        op: &'a str,
        path: &'a str,
        status: i32,
    }

    fn ours(m: &Msg<'_>) -> String {
        let mut out = b"junk".to_vec();
        write_json_fields(
            &mut out,
            b"{\"v\":1",
            &[
                (b",\"seq\":", JsonValue::Unsigned(m.seq)),
                (b",\"rank\":", JsonValue::Signed(m.rank)),
                (b",\"op\":", JsonValue::Text(m.op)),
                (b",\"path\":", JsonValue::Text(m.path)),
                (b",\"status\":", JsonValue::Signed(m.status.into())),
            ],
            b"}\n",
        );
        assert_eq!(&out[..4], b"junk");
        let line = String::from_utf8(out[4..].to_vec()).unwrap();
        // The macro writes the same bytes.
        let mut out = b"junk".to_vec();
        crate::write_json_line!(&mut out, b"{\"v\":1", {
            seq = m.seq,
            rank = m.rank,
            op = m.op,
            path = m.path,
            status = m.status,
        }, b"}\n");
        assert_eq!(String::from_utf8(out[4..].to_vec()).unwrap(), line);
        line
    }

    #[test]
    fn byte_for_byte_serde_json() {
        let long = "x".repeat(300);
        let long_esc = format!("{}\"{}", "y".repeat(150), "z".repeat(150));
        let mut texts: Vec<String> = vec![
            "".into(),
            "dataset.write".into(),
            "a\"b\\c\n.h5".into(),
            "/g/\u{1}d".into(),
            "\u{8}\u{c}\t\r\u{1f}\u{7f}".into(),
            "é ü 日本 😀 \u{2028}\u{2029}".into(),
            "</script>&'".into(),
            long,
            long_esc,
        ];
        // Each control character, quote and backslash alone and amid text.
        for b in (0u8..0x20).chain([b'"', b'\\']) {
            let c = char::from(b);
            texts.push(c.to_string());
            texts.push(format!("abcdefgh{c}ijklmnopq"));
        }
        for op in &texts {
            for path in ["/plain", op.as_str()] {
                for (seq, rank, status) in [(0, -1, 0), (u64::MAX, i64::MIN, -1), (7, 3, i32::MAX)]
                {
                    let m = Msg {
                        v: 1,
                        seq,
                        rank,
                        op,
                        path,
                        status,
                    };
                    let want = serde_json::to_string(&m).unwrap() + "\n";
                    assert_eq!(ours(&m), want);
                }
            }
        }
    }
}
