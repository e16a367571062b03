//! Median, its confidence interval, and range of a sample.

use serde::Serialize;

/// Median, minimum and maximum of a non-empty sample.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Summary {
    /// Median (mean of the two middle values for an even count).
    pub median: f64,
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
    /// A 95 % confidence interval of the median, `(low, high)`: the order statistics
    /// that hold the true median with at least 95 % probability whatever the
    /// distribution (the count of values below it is binomial, n and ½). The sample's
    /// range when it has fewer than 6 values.
    pub ci95: (f64, f64),
    /// Sample size.
    pub n: usize,
}

/// The 1-based rank `j` of the lower end of the median's distribution-free 95 % interval
/// `[x_(j), x_(n+1-j)]`: the largest `j` with P(Binomial(n, ½) < j) ≤ 2.5 %; 0 when none
/// (fewer than 6 values).
fn ci_rank(n: usize) -> usize {
    // In logs: ½ⁿ underflows past n ≈ 1000.
    let mut ln_pmf = n as f64 * 0.5f64.ln();
    let (mut cdf, mut j) = (0.0, 0);
    for k in 0..n {
        cdf += ln_pmf.exp();
        if cdf > 0.025 {
            break;
        }
        j = k + 1;
        ln_pmf += ((n - k) as f64).ln() - ((k + 1) as f64).ln();
    }
    j
}

impl Summary {
    /// Summarises `values`; `None` when empty. NaNs are ignored.
    pub fn of(values: &[f64]) -> Option<Summary> {
        let mut v: Vec<f64> = values.iter().copied().filter(|x| !x.is_nan()).collect();
        if v.is_empty() {
            return None;
        }
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let median = if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        };
        let j = ci_rank(n);
        let ci95 = if j == 0 {
            (v[0], v[n - 1])
        } else {
            (v[j - 1], v[n - j])
        };
        Some(Summary {
            median,
            min: v[0],
            max: v[n - 1],
            ci95,
            n,
        })
    }

    /// `median [95 % interval] (min–max)` with `prec` decimals: for ratios, where whether
    /// a line such as 1.10 is crossed is the question.
    pub fn fmt_ci(&self, prec: usize) -> String {
        format!(
            "{:.p$} [{:.p$}–{:.p$}] ({:.p$}–{:.p$})",
            self.median,
            self.ci95.0,
            self.ci95.1,
            self.min,
            self.max,
            p = prec
        )
    }

    /// `median (min–max)` with `prec` decimals.
    pub fn fmt(&self, prec: usize) -> String {
        format!(
            "{:.p$} ({:.p$}–{:.p$})",
            self.median,
            self.min,
            self.max,
            p = prec
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn odd_even_and_empty() {
        let s = Summary::of(&[3.0, 1.0, 2.0]).unwrap();
        assert_eq!((s.median, s.min, s.max, s.n), (2.0, 1.0, 3.0, 3));
        let s = Summary::of(&[4.0, 1.0, 2.0, 3.0]).unwrap();
        assert_eq!(s.median, 2.5);
        assert!(Summary::of(&[]).is_none());
        assert!(Summary::of(&[f64::NAN]).is_none());
        assert_eq!(Summary::of(&[5.0]).unwrap().fmt(1), "5.0 (5.0–5.0)");
    }

    #[test]
    fn the_medians_interval_is_the_binomial_order_statistics() {
        // The ranks from the exact binomial tail (checked with Python's math.comb).
        assert_eq!(
            [5, 6, 10, 61, 101].map(ci_rank),
            [0, 1, 2, 23, 41],
            "lower ranks"
        );
        assert!(ci_rank(5000) > 2400 && ci_rank(5000) < 2440, "no underflow");
        let v: Vec<f64> = (1..=61).map(f64::from).collect();
        let s = Summary::of(&v).unwrap();
        assert_eq!((s.median, s.ci95), (31.0, (23.0, 39.0)));
        assert_eq!(s.fmt_ci(0), "31 [23–39] (1–61)");
        let s = Summary::of(&[3.0, 1.0, 2.0]).unwrap();
        assert_eq!(s.ci95, (1.0, 3.0), "too few values: the range");
    }
}
