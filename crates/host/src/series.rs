//! Time series of a run: completions, bytes and latency per interval from the host's side, and
//! the system's counters (host and flash units written, free blocks, GC moves, erases, energy,
//! host memory and CPU, the ECC's read outcomes, bits checked and errors observed, its core's
//! decoding time, and the blocks' summed erase counts) sampled at the end of each interval.
//!
//! The interval starts at the configured width and doubles (neighbouring points merge, exactly:
//! counts add, latency histograms merge) whenever the series would pass its point budget, so a
//! run of any length gives a bounded, readable series.

use sim::stats::LogHistogram;
use sim::{SimDuration, SimTime};

use crate::workload::IoOp;

/// Cumulative device counters at one instant (see [`firmware::system::Sample`]).
pub use firmware::system::Sample as DeviceSample;

/// One interval.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Point {
    /// End of the interval.
    pub end: SimTime,
    /// Commands completed per direction (read, write, trim).
    pub done: [u64; 3],
    /// Bytes they moved.
    pub bytes: u64,
    /// Their latencies, ns.
    pub latency: LogHistogram,
    /// Device counters at `end`.
    pub device: DeviceSample,
}

impl Point {
    fn absorb(&mut self, later: Point) {
        for (a, b) in self.done.iter_mut().zip(later.done) {
            *a += b;
        }
        self.bytes += later.bytes;
        self.latency.merge(&later.latency);
        self.end = later.end;
        self.device = later.device;
    }
}

/// A run's series.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    /// Start of the run (the first interval starts here).
    pub start: SimTime,
    /// Device counters at the start.
    pub start_device: DeviceSample,
    /// Current interval width (the last points' width; earlier points may be narrower if the
    /// interval doubled after an odd number of points).
    pub interval: SimDuration,
    /// Closed intervals, in time order.
    pub points: Vec<Point>,
    max_points: usize,
    open: Point,
}

impl Series {
    /// An empty series starting at `start` with intervals of `interval`, coarsened to keep at
    /// most `max_points` (at least 2).
    pub fn new(start: SimTime, start_device: DeviceSample, interval: SimDuration, max_points: usize) -> Self {
        assert!(!interval.is_zero(), "a time series needs a non-zero interval");
        Series {
            start,
            start_device,
            interval,
            points: Vec::new(),
            max_points: max_points.max(2),
            open: Point::default(),
        }
    }

    /// When the open interval ends.
    pub fn next_boundary(&self) -> SimTime {
        self.points.last().map_or(self.start, |p| p.end) + self.interval
    }

    /// A command completed (in the open interval).
    pub fn record(&mut self, op: IoOp, bytes: u64, latency: SimDuration) {
        self.open.done[op as usize] += 1;
        self.open.bytes += bytes;
        self.open.latency.record(latency.as_nanos());
    }

    /// Closes the open interval at `at` with the device's counters then.
    pub fn close(&mut self, at: SimTime, device: DeviceSample) {
        let mut p = std::mem::take(&mut self.open);
        p.end = at;
        p.device = device;
        self.points.push(p);
        if self.points.len() >= self.max_points {
            let old = std::mem::take(&mut self.points);
            let mut it = old.into_iter();
            while let Some(mut a) = it.next() {
                if let Some(b) = it.next() {
                    a.absorb(b);
                }
                self.points.push(a);
            }
            self.interval = SimDuration::from_nanos(self.interval.as_nanos() * 2);
        }
    }

    /// Whether the open interval has recorded anything.
    pub fn open_is_empty(&self) -> bool {
        self.open.done.iter().all(|&d| d == 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dev(n: u64) -> DeviceSample {
        DeviceSample { host_units: n, ..DeviceSample::default() }
    }

    #[test]
    fn coarsening_keeps_every_count_and_the_latest_device_sample() {
        let mut s = Series::new(SimTime::ZERO, dev(0), SimDuration::from_micros(10), 8);
        let mut total = 0;
        for i in 0..100u64 {
            for _ in 0..i % 7 {
                s.record(IoOp::Write, 4096, SimDuration::from_micros(i + 1));
                total += 1;
            }
            let at = s.next_boundary();
            s.close(at, dev(i));
        }
        assert!(s.points.len() < 8, "{} points", s.points.len());
        assert_eq!(s.points.iter().map(|p| p.done[1]).sum::<u64>(), total);
        assert_eq!(s.points.iter().map(|p| p.latency.count()).sum::<u64>(), total);
        assert_eq!(s.points.last().unwrap().device, dev(99));
        assert!(s.points.windows(2).all(|w| w[0].end < w[1].end));
        assert!(s.interval > SimDuration::from_micros(10), "the interval doubled");
    }
}
