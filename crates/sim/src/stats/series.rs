//! Time series binned at a fixed interval of virtual time.

use serde::Serialize;

use crate::time::{SimDuration, SimTime};

/// Values binned by the interval of virtual time they fall in; keeps per bin the sum, the number
/// of values and the last value, so one series serves rates (sum / interval), means and gauges.
#[derive(Clone, Debug, Serialize)]
pub struct TimeSeries {
    interval: SimDuration,
    sums: Vec<f64>,
    counts: Vec<u64>,
    last: Vec<f64>,
}

impl TimeSeries {
    /// An empty series with bins of `interval`.
    ///
    /// # Panics
    /// If `interval` is zero.
    pub fn new(interval: SimDuration) -> Self {
        assert!(!interval.is_zero(), "a time series needs a non-zero interval");
        TimeSeries { interval, sums: Vec::new(), counts: Vec::new(), last: Vec::new() }
    }

    /// The bin width.
    pub fn interval(&self) -> SimDuration {
        self.interval
    }

    fn bin(&mut self, t: SimTime) -> usize {
        let i = (t.as_nanos() / self.interval.as_nanos()) as usize;
        if i >= self.sums.len() {
            let fill = self.last.last().copied().unwrap_or(0.0);
            self.sums.resize(i + 1, 0.0);
            self.counts.resize(i + 1, 0);
            self.last.resize(i + 1, fill);
        }
        i
    }

    /// Adds `v` to the bin containing `t` (events, bytes, pages moved, ...).
    pub fn add(&mut self, t: SimTime, v: f64) {
        let i = self.bin(t);
        self.sums[i] += v;
        self.counts[i] += 1;
        self.last[i] = v;
    }

    /// Records a gauge reading (free blocks, queue length): the bin keeps the last one, and
    /// empty bins after it carry it forward.
    pub fn set(&mut self, t: SimTime, v: f64) {
        let i = self.bin(t);
        self.counts[i] += 1;
        self.sums[i] += v;
        self.last[i] = v;
    }

    /// Number of bins.
    pub fn len(&self) -> usize {
        self.sums.len()
    }

    /// Whether no value was recorded.
    pub fn is_empty(&self) -> bool {
        self.sums.is_empty()
    }

    /// Start time of bin `i`.
    pub fn bin_start(&self, i: usize) -> SimTime {
        SimTime::from_nanos(self.interval.as_nanos() * i as u64)
    }

    /// Per-bin sums divided by the interval in seconds (a rate per second).
    pub fn rates(&self) -> Vec<f64> {
        let secs = self.interval.as_secs_f64();
        self.sums.iter().map(|s| s / secs).collect()
    }

    /// Per-bin sums.
    pub fn sums(&self) -> &[f64] {
        &self.sums
    }

    /// Per-bin means (0 for empty bins).
    pub fn means(&self) -> Vec<f64> {
        self.sums.iter().zip(&self.counts).map(|(s, &c)| if c == 0 { 0.0 } else { s / c as f64 }).collect()
    }

    /// Per-bin last values (gauges).
    pub fn last_values(&self) -> &[f64] {
        &self.last
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bins_rates_and_gauges() {
        let mut s = TimeSeries::new(SimDuration::from_millis(1));
        s.add(SimTime::from_nanos(10), 1.0);
        s.add(SimTime::from_nanos(999_999), 1.0);
        s.add(SimTime::from_nanos(2_500_000), 4.0);
        assert_eq!(s.len(), 3);
        assert_eq!(s.rates(), vec![2000.0, 0.0, 4000.0]);
        let mut g = TimeSeries::new(SimDuration::from_millis(1));
        g.set(SimTime::from_nanos(0), 10.0);
        g.set(SimTime::from_nanos(2_000_000), 7.0);
        assert_eq!(g.last_values(), &[10.0, 10.0, 7.0]);
    }
}
