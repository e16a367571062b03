//! A mergeable quantile sketch for durations (DDSketch-style log buckets).
//!
//! Every value `x >= 1` goes into bucket `k = ceil(log_γ x)` with `γ = (1 + α) / (1 − α)`;
//! the bucket is represented by `2 γ^k / (γ + 1)`, which is within a relative error `α` of
//! every value in the bucket. With [`RELATIVE_ACCURACY`] = 1 %, any quantile returned is
//! within ±1 % of a value of the true sample at that rank (the usual DDSketch guarantee).
//! Zero goes to its own counter. Merging adds bucket counts, so it is exact, commutative
//! and associative: per-file sketches reduce in any order to the same state.
//!
//! Memory is one `u64` per bucket between the smallest and largest bucket seen: about
//! 115 buckets per factor of 10 in range, so at most ~1,400 buckets for 1 ns … 10^12 ns.

use serde::{Deserialize, Serialize};

/// Relative accuracy of every quantile the sketch returns (1 %).
pub const RELATIVE_ACCURACY: f64 = 0.01;

fn gamma() -> f64 {
    (1.0 + RELATIVE_ACCURACY) / (1.0 - RELATIVE_ACCURACY)
}

/// `gamma().ln()`, exactly (`ln` is not a `const fn`).
const LN_GAMMA: f64 = 0.020000666706669435;

/// A log-bucket histogram of non-negative integer values (nanoseconds).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogSketch {
    zeros: u64,
    /// Bucket index of `counts[0]`.
    offset: i32,
    counts: Vec<u64>,
    count: u64,
    min: u64,
    max: u64,
}

impl LogSketch {
    /// An empty sketch.
    pub fn new() -> Self {
        Self::default()
    }

    fn index(x: u64) -> i32 {
        // One `ln` per value (it runs once per record): ln(γ) is a constant, the very
        // value `gamma().ln()` gives (a test checks it bit for bit), so every value falls
        // in the same bucket as when it was computed per call.
        ((x as f64).ln() / LN_GAMMA).ceil() as i32
    }

    /// The representative value of bucket `k`.
    fn value(k: i32) -> f64 {
        let g = gamma();
        2.0 * g.powi(k) / (g + 1.0)
    }

    /// Adds one value.
    pub fn add(&mut self, x: u64) {
        self.add_n(x, 1);
    }

    /// Adds `n` copies of a value.
    pub fn add_n(&mut self, x: u64, n: u64) {
        if n == 0 {
            return;
        }
        if self.count == 0 {
            self.min = x;
            self.max = x;
        } else {
            self.min = self.min.min(x);
            self.max = self.max.max(x);
        }
        self.count += n;
        if x == 0 {
            self.zeros += n;
            return;
        }
        let k = Self::index(x);
        self.bump(k, n);
    }

    fn bump(&mut self, k: i32, n: u64) {
        if self.counts.is_empty() {
            self.offset = k;
            self.counts.push(n);
            return;
        }
        if k < self.offset {
            let grow = (self.offset - k) as usize;
            let mut v = vec![0u64; grow];
            v.extend_from_slice(&self.counts);
            self.counts = v;
            self.offset = k;
        }
        let i = (k - self.offset) as usize;
        if i >= self.counts.len() {
            self.counts.resize(i + 1, 0);
        }
        self.counts[i] += n;
    }

    /// Adds all values of `other` into `self`.
    pub fn merge(&mut self, other: &LogSketch) {
        if other.count == 0 {
            return;
        }
        if self.count == 0 {
            *self = other.clone();
            return;
        }
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
        self.count += other.count;
        self.zeros += other.zeros;
        for (i, &c) in other.counts.iter().enumerate() {
            if c > 0 {
                self.bump(other.offset + i as i32, c);
            }
        }
    }

    /// Number of values added.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Smallest value added (exact), 0 when empty.
    pub fn min(&self) -> u64 {
        self.min
    }

    /// Largest value added (exact), 0 when empty.
    pub fn max(&self) -> u64 {
        self.max
    }

    /// `(representative value, count)` of every non-empty bucket, ascending. Values are
    /// clamped to the exact min and max, so a sample of equal values reads back exactly.
    pub fn buckets(&self) -> impl Iterator<Item = (f64, u64)> + '_ {
        let zeros = (self.zeros > 0).then_some((0.0, self.zeros));
        zeros
            .into_iter()
            .chain(
                self.counts
                    .iter()
                    .enumerate()
                    .filter(|(_, &c)| c > 0)
                    .map(move |(i, &c)| {
                        let v = Self::value(self.offset + i as i32);
                        (v.clamp(self.min as f64, self.max as f64), c)
                    }),
            )
    }

    /// The `q`-quantile (0 ≤ q ≤ 1): the value of rank `⌊q (n − 1)⌋`, within ±1 %,
    /// clamped to the exact min and max. 0 when empty.
    pub fn quantile(&self, q: f64) -> f64 {
        if self.count == 0 {
            return 0.0;
        }
        if q <= 0.0 {
            return self.min as f64;
        }
        if q >= 1.0 {
            return self.max as f64;
        }
        let rank = (q * (self.count - 1) as f64).floor() as u64;
        let mut seen = 0u64;
        for (v, c) in self.buckets() {
            seen += c;
            if seen > rank {
                return v.clamp(self.min as f64, self.max as f64);
            }
        }
        self.max as f64
    }

    /// Approximate number of values strictly above `x` (counted by bucket representative).
    pub fn count_above(&self, x: f64) -> u64 {
        self.buckets().filter(|(v, _)| *v > x).map(|(_, c)| c).sum()
    }

    /// Median absolute deviation from `center` and mean absolute deviation from `center`,
    /// computed on the bucket representatives (so within ~1 % of the values).
    pub fn deviations(&self, center: f64) -> (f64, f64) {
        if self.count == 0 {
            return (0.0, 0.0);
        }
        let mut devs: Vec<(f64, u64)> = self
            .buckets()
            .map(|(v, c)| ((v - center).abs(), c))
            .collect();
        let mean = devs.iter().map(|(d, c)| d * *c as f64).sum::<f64>() / self.count as f64;
        devs.sort_by(|a, b| a.0.total_cmp(&b.0));
        let rank = (0.5 * (self.count - 1) as f64).floor() as u64;
        let mut seen = 0;
        let mut mad = 0.0;
        for (d, c) in devs {
            seen += c;
            if seen > rank {
                mad = d;
                break;
            }
        }
        (mad, mean)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ln_gamma_is_gamma_ln_bit_for_bit() {
        assert_eq!(LN_GAMMA.to_bits(), gamma().ln().to_bits());
    }

    #[test]
    fn quantiles_within_one_percent() {
        let mut s = LogSketch::new();
        for x in 1..=100_000u64 {
            s.add(x * 10);
        }
        for q in [0.01, 0.25, 0.5, 0.9, 0.95, 0.99] {
            let exact = ((q * 99_999.0f64).floor() + 1.0) * 10.0;
            let got = s.quantile(q);
            assert!(
                (got - exact).abs() <= exact * RELATIVE_ACCURACY + 1e-9,
                "q={q} exact={exact} got={got}"
            );
        }
        assert_eq!(s.quantile(1.0), 1_000_000.0);
        assert_eq!(s.quantile(0.0), 10.0);
    }

    #[test]
    fn merge_is_order_independent_and_exact() {
        let mut a = LogSketch::new();
        let mut b = LogSketch::new();
        let mut all = LogSketch::new();
        for x in 0..1000u64 {
            let v = x * x + 3;
            if x % 3 == 0 { &mut a } else { &mut b }.add(v);
            all.add(v);
        }
        a.add(0);
        all.add(0);
        let mut ab = a.clone();
        ab.merge(&b);
        let mut ba = b.clone();
        ba.merge(&a);
        assert_eq!(ab, ba);
        assert_eq!(ab.count(), all.count());
        assert_eq!(ab.quantile(0.5), all.quantile(0.5));
        let ab_b: Vec<_> = ab.buckets().collect();
        let all_b: Vec<_> = all.buckets().collect();
        assert_eq!(ab_b, all_b);
    }

    #[test]
    fn empty_and_single() {
        let s = LogSketch::new();
        assert_eq!(s.quantile(0.5), 0.0);
        assert_eq!(s.deviations(0.0), (0.0, 0.0));
        let mut s = LogSketch::new();
        s.add(1234);
        assert_eq!(s.quantile(0.5), 1234.0);
        assert_eq!(s.quantile(0.99), 1234.0);
        let (mad, mean) = s.deviations(s.quantile(0.5));
        assert!(mad.abs() < 1234.0 * 0.01 && mean.abs() < 1234.0 * 0.01);
    }

    #[test]
    fn mad_of_spread_sample() {
        let mut s = LogSketch::new();
        for x in [10u64, 20, 30, 40, 1000] {
            s.add(x * 1000);
        }
        let m = s.quantile(0.5);
        assert!((m - 30_000.0).abs() <= 300.0);
        let (mad, _) = s.deviations(m);
        assert!((mad - 10_000.0).abs() <= 600.0, "{mad}");
    }
}
