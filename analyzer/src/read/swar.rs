//! Word-at-a-time (SWAR: SIMD within a register) helpers for the CSV fast path: finding
//! bytes and parsing decimal numbers 8 bytes per step, with no branch per byte. The fast
//! path reads lines in place from a buffer that has bytes to spare after each line, so
//! it may read whole words past a field's end.

const LOW: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x8080_8080_8080_8080;

/// `t[at..at + 8]` as a little-endian word (first byte lowest), if `t` has 8 bytes there.
#[inline(always)]
fn word(t: &[u8], at: usize) -> Option<u64> {
    let b: [u8; 8] = t.get(at..at.checked_add(8)?)?.try_into().ok()?;
    Some(u64::from_le_bytes(b))
}

/// The high bit of each byte of `w` that is not an ASCII digit. Exact for the lowest such
/// byte (a carry or borrow only moves towards higher bytes, and a digit makes none), which
/// is all the callers use.
#[inline(always)]
fn non_digits(w: u64) -> u64 {
    // A byte above `9` carries into its high bit when 0x46 is added, one below `0` borrows
    // into it when 0x30 is subtracted, and one of 0x80 or more has it already.
    (w.wrapping_add(LOW * 0x46) | w.wrapping_sub(LOW * 0x30) | w) & HIGH
}

/// The value of 8 ASCII digits, first byte most significant. Bytes that are 0 count as
/// leading zeros (only the low 4 bits of each byte are used).
#[inline(always)]
fn eight(w: u64) -> u64 {
    let w = ((w & (LOW * 0x0f)).wrapping_mul(10 << 8 | 1)) >> 8;
    let w = ((w & 0x00ff_00ff_00ff_00ff).wrapping_mul(100 << 16 | 1)) >> 16;
    ((w & 0x0000_ffff_0000_ffff).wrapping_mul(10_000 << 32 | 1)) >> 32
}

/// The high bit of every byte of `w` that equals `b` (exact: no carries between bytes).
#[inline(always)]
pub(crate) fn eq_mask(w: u64, b: u8) -> u64 {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    let x = w ^ (LOW * u64::from(b));
    !(((x & LOW7).wrapping_add(LOW7)) | x | LOW7)
}

/// Packs the high bits of the bytes of `m` (nothing else may be set) into bits 0..8:
/// bit `k` is the high bit of byte `k`.
#[inline(always)]
pub(crate) fn pack(m: u64) -> u64 {
    m.wrapping_mul(0x0002_0408_1020_4081) >> 56
}

/// The value of `n` (1..=8) ASCII digits starting at `t[at]`, `None` if one is not a digit
/// or `t` has not 8 bytes from `at`.
#[inline(always)]
fn up_to_eight(t: &[u8], at: usize, n: usize) -> Option<u64> {
    let w = word(t, at)?;
    let shift = 64 - 8 * n;
    // Only the first `n` bytes count: the lowest non-digit is flagged exactly, so a
    // non-digit among them shows here.
    if non_digits(w) & (u64::MAX >> shift) != 0 {
        return None;
    }
    // The digits moved to the top bytes, zeros (leading zeros) below them.
    Some(eight(w << shift))
}

/// The value of 8 ASCII digits at `t[at]`, `None` if one is not a digit.
#[inline(always)]
fn eight_at(t: &[u8], at: usize) -> Option<u64> {
    let w = word(t, at)?;
    (non_digits(w) == 0).then(|| eight(w))
}

/// Parses `t[s..e]` as an unsigned decimal number (empty reads as 0), like
/// [`h5prov_format::parse_u64`], reading `t` by 8-byte words: `None` when it is not all digits, when
/// it has 20 digits or more (the value may not fit: let the exact parser decide), or when
/// `t` has not 8 bytes from `s` (it must have bytes to spare after the field).
#[inline(always)]
pub(crate) fn parse_at(t: &[u8], s: usize, e: usize) -> Option<u64> {
    let n = e.checked_sub(s)?;
    match n {
        0 => Some(0),
        // Most fields of a trace are one digit.
        1 => {
            let d = t.get(s)?.wrapping_sub(b'0');
            (d <= 9).then_some(u64::from(d))
        }
        2..=8 => up_to_eight(t, s, n),
        9..=16 => Some(up_to_eight(t, s, n - 8)? * 100_000_000 + eight_at(t, e - 8)?),
        // At most 19 digits: below 10^19 < 2^64.
        17..=19 => Some(
            (up_to_eight(t, s, n - 16)? * 100_000_000 + eight_at(t, e - 16)?) * 100_000_000
                + eight_at(t, e - 8)?,
        ),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `h5prov_format::parse_u64` makes of `t[s..e]`, restricted to what `parse_at` accepts.
    fn reference(f: &[u8]) -> Option<u64> {
        if f.len() > 19 {
            return None;
        }
        h5prov_format::parse_u64(f)
    }

    /// `f` at offset `at` of a buffer, followed by `after` and slack.
    fn check_in(f: &[u8], at: usize, after: &[u8]) {
        let mut t = vec![b'5'; at];
        t.extend_from_slice(f);
        t.extend_from_slice(after);
        t.extend_from_slice(b"7777777777");
        let want = reference(f);
        assert_eq!(
            parse_at(&t, at, at + f.len()),
            want,
            "{:?}",
            String::from_utf8_lossy(&t)
        );
    }

    fn check(f: &[u8]) {
        for at in [0, 1, 3, 8, 13] {
            for after in [&b","[..], b"\n", b"1", b"x", b"\xff", b"/", b":", b"\0"] {
                check_in(f, at, after);
            }
        }
    }

    #[test]
    fn every_length_and_value_shape() {
        check(b"");
        for n in 1..=24 {
            check(&b"123456789012345678901234"[..n]);
            check(&b"999999999999999999999999"[..n]);
            check(&b"000000000000000000000000"[..n]);
            let mut z = vec![b'0'; n];
            z[n - 1] = b'7';
            check(&z);
            // One non-digit anywhere: refused.
            for i in 0..n {
                for bad in [
                    b'/', b':', b'a', b',', b' ', b'-', b'+', 0, 0x80, 0xb9, 0xff,
                ] {
                    let mut x = b"123456789012345678901234"[..n].to_vec();
                    x[i] = bad;
                    check(&x);
                }
            }
        }
        check(b"9999999999999999999"); // largest 19-digit value
        check(b"18446744073709551615"); // u64::MAX: 20 digits, left to the exact parser
        check(b"00000000000000000000042"); // leading zeros: same
    }

    #[test]
    fn needs_eight_readable_bytes() {
        assert_eq!(parse_at(b"1234567", 0, 7), None);
        assert_eq!(parse_at(b"1234567,", 0, 7), Some(1_234_567));
        assert_eq!(parse_at(b"12345678", 0, 8), Some(12_345_678));
        assert_eq!(parse_at(b"12,345678", 3, 9), None);
        assert_eq!(parse_at(b"123456789", 0, 9), Some(123_456_789));
        assert_eq!(parse_at(b"1,2345678", 2, 9), None); // the word would pass the end
        assert_eq!(parse_at(b"123456789,xxxxxx", 0, 9), Some(123_456_789));
        assert_eq!(parse_at(b"1,", 0, 0), Some(0));
        assert_eq!(parse_at(b"1,", 2, 1), None);
        assert_eq!(parse_at(b"x", usize::MAX - 3, usize::MAX), None);
        assert_eq!(word(b"abcdefgh", 1), None);
        assert_eq!(word(b"abcdefgh", 0), Some(u64::from_le_bytes(*b"abcdefgh")));
    }

    #[test]
    fn random_fields_match_parse_u64() {
        let mut next = crate::read::test_rng(0x9e37_79b9_7f4a_7c15);
        for _ in 0..50_000 {
            let n = next(22);
            let mut f: Vec<u8> = (0..n).map(|_| b'0' + next(10) as u8).collect();
            if n > 0 && next(4) == 0 {
                let i = next(n);
                f[i] = next(256) as u8;
            }
            let after = [next(256) as u8];
            check_in(&f, next(9), &after);
        }
    }

    #[test]
    fn masks() {
        for v in 0..=255u8 {
            for b in 0..=255u8 {
                let w = u64::from_le_bytes([v, b, v, 0, b, 0xff, v ^ 1, b]);
                let want: u64 = w
                    .to_le_bytes()
                    .iter()
                    .enumerate()
                    .map(|(i, &x)| u64::from(x == b) << i)
                    .sum();
                assert_eq!(pack(eq_mask(w, b)), want, "{w:#x} {b:#x}");
            }
        }
        for m in 0..=255u64 {
            let spread: u64 = (0..8).map(|i| ((m >> i) & 1) << (8 * i + 7)).sum();
            assert_eq!(pack(spread), m);
        }
    }
}
