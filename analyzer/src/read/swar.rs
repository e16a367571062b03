//! Word-at-a-time (SWAR: SIMD within a register) helpers for the CSV reader: finding
//! bytes 8 at a time, with no branch per byte.

const LOW: u64 = 0x0101_0101_0101_0101;

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

#[cfg(test)]
mod tests {
    use super::*;

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
