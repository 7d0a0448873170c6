//! HDR histograms (three significant digits, any range) and their percentile summaries.

use serde::{Deserialize, Serialize};

use crate::time::SimDuration;

/// A high-dynamic-range histogram of non-negative integers (latencies in ns, sizes, ...).
#[derive(Clone, Debug)]
pub struct Histogram {
    h: hdrhistogram::Histogram<u64>,
}

/// Percentiles of a histogram, in the histogram's unit.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Samples recorded.
    pub count: u64,
    /// Arithmetic mean.
    pub mean: f64,
    /// Smallest sample.
    pub min: u64,
    /// Median.
    pub p50: u64,
    /// 90th percentile.
    pub p90: u64,
    /// 99th percentile.
    pub p99: u64,
    /// 99.9th percentile.
    pub p999: u64,
    /// 99.99th percentile (absent from reports written before it was added: 0 then).
    #[serde(default)]
    pub p9999: u64,
    /// Largest sample.
    pub max: u64,
}

impl Default for Histogram {
    fn default() -> Self {
        Self::new()
    }
}

impl Histogram {
    /// An empty histogram with three significant digits that grows to fit any value.
    pub fn new() -> Self {
        let mut h = hdrhistogram::Histogram::new(3).expect("3 significant digits is valid");
        h.auto(true);
        Histogram { h }
    }

    /// Records one sample.
    pub fn record(&mut self, v: u64) {
        self.record_n(v, 1);
    }

    /// Records `n` samples of value `v`.
    pub fn record_n(&mut self, v: u64, n: u64) {
        // With auto-resize on, recording fails only for values above u64::MAX / 2.
        let v = v.min(u64::MAX / 4);
        self.h.record_n(v, n).expect("auto-resizing histogram accepts the value");
    }

    /// Records a duration in nanoseconds.
    pub fn record_duration(&mut self, d: SimDuration) {
        self.record(d.as_nanos());
    }

    /// Samples recorded.
    pub fn count(&self) -> u64 {
        self.h.len()
    }

    /// Mean of the samples (0 if empty).
    pub fn mean(&self) -> f64 {
        if self.count() == 0 { 0.0 } else { self.h.mean() }
    }

    /// The value at quantile `q` in `[0, 1]` (0 if empty).
    pub fn quantile(&self, q: f64) -> u64 {
        if self.count() == 0 { 0 } else { self.h.value_at_quantile(q) }
    }

    /// Largest sample (0 if empty).
    pub fn max(&self) -> u64 {
        self.h.max()
    }

    /// Smallest sample (0 if empty).
    pub fn min(&self) -> u64 {
        if self.count() == 0 { 0 } else { self.h.min() }
    }

    /// Adds every sample of `other`.
    pub fn merge(&mut self, other: &Histogram) {
        self.h.add(&other.h).expect("auto-resizing histograms merge");
    }

    /// Count, mean and the usual percentiles.
    pub fn summary(&self) -> Summary {
        Summary {
            count: self.count(),
            mean: self.mean(),
            min: self.min(),
            p50: self.quantile(0.50),
            p90: self.quantile(0.90),
            p99: self.quantile(0.99),
            p999: self.quantile(0.999),
            p9999: self.quantile(0.9999),
            max: self.max(),
        }
    }

    /// Distinct recorded values (at histogram resolution) with their counts, ascending.
    pub fn buckets(&self) -> Vec<(u64, u64)> {
        self.h.iter_recorded().map(|v| (v.value_iterated_to(), v.count_at_value())).collect()
    }

    /// The cumulative distribution: `(value, fraction of samples <= value)`, ascending.
    pub fn cdf(&self) -> Vec<(u64, f64)> {
        let n = self.count().max(1) as f64;
        let mut seen = 0;
        self.buckets()
            .into_iter()
            .map(|(v, c)| {
                seen += c;
                (v, seen as f64 / n)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_within_three_digits() {
        let mut h = Histogram::new();
        for v in 1..=10_000u64 {
            h.record(v * 1000);
        }
        let s = h.summary();
        assert_eq!(s.count, 10_000);
        assert!((s.p50 as f64 / 5_000_000.0 - 1.0).abs() < 1e-3, "{s:?}");
        assert!((s.p99 as f64 / 9_900_000.0 - 1.0).abs() < 1e-3, "{s:?}");
        assert!((s.mean / 5_000_500.0 - 1.0).abs() < 1e-3, "{s:?}");
        let cdf = h.cdf();
        assert_eq!(cdf.last().unwrap().1, 1.0);
        assert!(cdf.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 <= w[1].1));
    }

    #[test]
    fn empty_histogram_is_all_zero() {
        assert_eq!(Histogram::new().summary(), Summary::default());
    }
}
