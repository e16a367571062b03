//! Robust outlier statistics: the modified Z-score of Iglewicz and Hoaglin (median/MAD),
//! as hyperfine uses it, with explicit handling of the degenerate cases.

/// Modified Z-score above which a value is an outlier (Iglewicz & Hoaglin's 3.5).
pub const MODIFIED_Z_THRESHOLD: f64 = 3.5;

/// `0.6745 ≈ Φ⁻¹(0.75)`: makes the MAD a consistent estimator of σ for normal data.
pub const MAD_SCALE: f64 = 0.6745;

/// When the MAD is zero (more than half the values are equal) the score uses the mean
/// absolute deviation instead: `M = (x − median) / (1.253314 · MeanAD)`; `1.253314 ≈ √(π/2)`.
pub const MEAN_AD_SCALE: f64 = 1.253314;

/// How a spread was measured, so reports can say which rule applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Spread {
    /// Median absolute deviation (the normal case).
    Mad,
    /// MAD was 0: the mean absolute deviation was used.
    MeanAd,
    /// Every value is the same (MAD and MeanAD are 0): nothing is an outlier.
    AllEqual,
    /// Fewer than 3 values: the modified Z-score is not defined for outliers (with two
    /// values both scores are ±0.6745), so nothing is an outlier by this rule.
    TooFew,
}

/// The center and scale used to score values.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Robust {
    /// Median of the sample.
    pub median: f64,
    /// Denominator of the score (MAD / 0.6745 or 1.253314 · MeanAD); 0 for no scoring.
    pub scale: f64,
    /// Which rule produced `scale`.
    pub spread: Spread,
}

impl Robust {
    /// Builds the scorer from a median, MAD and mean absolute deviation and the sample size.
    pub fn from_parts(n: u64, median: f64, mad: f64, mean_ad: f64) -> Self {
        let (scale, spread) = if n < 3 {
            (0.0, Spread::TooFew)
        } else if mad > 0.0 {
            (mad / MAD_SCALE, Spread::Mad)
        } else if mean_ad > 0.0 {
            (MEAN_AD_SCALE * mean_ad, Spread::MeanAd)
        } else {
            (0.0, Spread::AllEqual)
        };
        Robust {
            median,
            scale,
            spread,
        }
    }

    /// Exact median/MAD/MeanAD of a small sample (per-rank totals).
    pub fn of(values: &[f64]) -> Self {
        let n = values.len();
        if n == 0 {
            return Robust {
                median: 0.0,
                scale: 0.0,
                spread: Spread::TooFew,
            };
        }
        let median = median(values);
        let devs: Vec<f64> = values.iter().map(|v| (v - median).abs()).collect();
        let mad = median_of(devs.clone());
        let mean_ad = devs.iter().sum::<f64>() / n as f64;
        Self::from_parts(n as u64, median, mad, mean_ad)
    }

    /// The modified Z-score of `x`; 0 when the sample cannot score.
    pub fn score(&self, x: f64) -> f64 {
        if self.scale > 0.0 {
            (x - self.median) / self.scale
        } else {
            0.0
        }
    }

    /// The smallest value whose score exceeds `threshold` (`inf` when nothing can).
    pub fn cutoff(&self, threshold: f64) -> f64 {
        if self.scale > 0.0 {
            self.median + threshold * self.scale
        } else {
            f64::INFINITY
        }
    }
}

/// Median of a sample (mean of the two middle values for even sizes); 0 when empty.
pub fn median(values: &[f64]) -> f64 {
    median_of(values.to_vec())
}

fn median_of(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_value_scores_nothing() {
        let r = Robust::of(&[5.0]);
        assert_eq!(r.spread, Spread::TooFew);
        assert_eq!(r.score(1e9), 0.0);
        assert_eq!(r.cutoff(3.5), f64::INFINITY);
    }

    #[test]
    fn two_values_score_nothing() {
        let r = Robust::of(&[1.0, 100.0]);
        assert_eq!(r.spread, Spread::TooFew);
        assert_eq!(r.median, 50.5);
        assert_eq!(r.score(100.0), 0.0);
    }

    #[test]
    fn all_equal_has_no_outliers() {
        let r = Robust::of(&[7.0; 10]);
        assert_eq!(r.spread, Spread::AllEqual);
        assert_eq!(r.score(7.0), 0.0);
        assert_eq!(r.cutoff(3.5), f64::INFINITY);
    }

    #[test]
    fn mad_zero_falls_back_to_mean_ad() {
        // 7 equal values and one far away: MAD = 0, MeanAD = 90/8.
        let mut v = vec![10.0; 7];
        v.push(100.0);
        let r = Robust::of(&v);
        assert_eq!(r.spread, Spread::MeanAd);
        assert_eq!(r.median, 10.0);
        let z = r.score(100.0);
        assert!((z - 90.0 / (MEAN_AD_SCALE * 11.25)).abs() < 1e-9);
        assert!(z > MODIFIED_Z_THRESHOLD);
        assert_eq!(r.score(10.0), 0.0);
    }

    #[test]
    fn normal_case_uses_mad() {
        let r = Robust::of(&[10.0, 11.0, 10.5, 100.0]);
        assert_eq!(r.spread, Spread::Mad);
        assert_eq!(r.median, 10.75);
        // deviations 0.75 0.25 0.25 89.25 → MAD 0.5
        assert!((r.scale - 0.5 / MAD_SCALE).abs() < 1e-12);
        assert!(r.score(100.0) > MODIFIED_Z_THRESHOLD);
        assert!(r.score(11.0) < MODIFIED_Z_THRESHOLD);
    }
}
