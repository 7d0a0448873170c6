//! Host-side metrics over simulated time: throughput (IOPS per direction and in total, MB/s)
//! and the latency of the commands completed in each interval (mean and p99).
//!
//! A column of the time series holds one value per interval, stamped with the interval's end.
//! Rates and latencies are drawn as steps, flat over the interval they describe (the first
//! interval starts at 0), so a short run's two intervals do not pass for a ramp between them.

use plotters::prelude::*;
use report::{Report, TimeSeriesReport};

use crate::axis::{Axis, Style, time_axis};
use crate::draw::{ACCENT, READ, TOTAL, WRITE, line};
use crate::panel::{Area, DrawResult, Entry, Panel, panel, panel_aligned, y_label_room};

/// IOPS and MB/s per interval.
pub(crate) struct Throughput {
    ts: TimeSeriesReport,
}

/// Mean and p99 latency per interval.
pub(crate) struct LatencyTime {
    ts: TimeSeriesReport,
}

/// The throughput series, if the run has intervals.
pub(crate) fn throughput(r: &Report) -> Result<Throughput, String> {
    if r.timeseries.t_ms.is_empty() {
        return Err("the report has no time series".into());
    }
    Ok(Throughput { ts: r.timeseries.clone() })
}

/// The latency series, if any interval completed a command.
pub(crate) fn latency(r: &Report) -> Result<LatencyTime, String> {
    let ts = &r.timeseries;
    if ts.t_ms.is_empty() {
        return Err("the report has no time series".into());
    }
    if ts.latency_mean_us.iter().chain(&ts.latency_p99_us).all(Option::is_none) {
        return Err("no interval completed a command".into());
    }
    Ok(LatencyTime { ts: ts.clone() })
}

/// The largest finite value of `v` (0 if none).
pub(crate) fn max(v: impl IntoIterator<Item = f64>) -> f64 {
    v.into_iter().filter(|x| x.is_finite()).fold(0.0, f64::max)
}

/// `(t, y)` points of a column of values sampled at the interval ends, against the time axis
/// scaled by `div` (a state, like free blocks: drawn point to point).
pub(crate) fn against_time<'a>(
    t_ms: &'a [f64],
    div: f64,
    ys: impl IntoIterator<Item = Option<f64>> + 'a,
) -> impl Iterator<Item = (f64, Option<f64>)> + 'a {
    t_ms.iter().map(move |t| t / div).zip(ys)
}

/// `(t, y)` points of a column of per-interval values (a rate, a latency): each value held
/// flat from its interval's start to its end; a missing value breaks the line.
pub(crate) fn steps(
    t_ms: &[f64],
    div: f64,
    ys: impl IntoIterator<Item = Option<f64>>,
) -> Vec<(f64, Option<f64>)> {
    let mut out = Vec::new();
    let mut start = 0.0;
    for (&end, y) in t_ms.iter().zip(ys) {
        match y {
            Some(y) => out.extend([(start / div, Some(y)), (end / div, Some(y))]),
            None => out.push((end / div, None)),
        }
        start = end;
    }
    out
}

/// Per-interval counts as rates per second of simulated time.
pub(crate) fn per_second<'a>(t_ms: &'a [f64], counts: &'a [u64]) -> impl Iterator<Item = Option<f64>> + 'a {
    let starts = std::iter::once(0.0).chain(t_ms.iter().copied());
    t_ms.iter().zip(starts).zip(counts).map(|((&end, start), &n)| {
        let seconds = (end - start) / 1e3;
        (seconds > 0.0).then(|| n as f64 / seconds)
    })
}

impl Throughput {
    pub(crate) fn draw<DB: DrawingBackend>(&self, area: &Area<DB>) -> DrawResult<(), DB> {
        let ts = &self.ts;
        let (div, _) = time_axis(max(ts.t_ms.iter().copied()));
        let (top, bottom) = area.split_vertically(area.dim_in_pixel().1 / 2);
        // A direction that never ran would be a flat line hiding the x axis: leave it out.
        let mut series: Vec<(String, &[f64], RGBColor)> = Vec::new();
        for (name, col, color) in [("read", &ts.read_iops, READ), ("write", &ts.write_iops, WRITE)] {
            if col.iter().any(|&v| v > 0.0) {
                series.push((name.to_string(), col, color));
            }
        }
        // One direction that makes up the total would be drawn under it: say so instead.
        let sole = series.len() == 1 && same(series[0].1, &ts.iops);
        if sole {
            series[0].0.push_str(" (all commands)");
        } else {
            series.push(("total".into(), &ts.iops, TOTAL));
        }
        let iops = Panel {
            heading: "commands completed per second".into(),
            legend: series.iter().map(|(n, _, c)| Entry::line(n, *c)).collect(),
            x: time_axis(max(ts.t_ms.iter().copied())).1,
            y: Axis::from_zero(max(ts.iops.iter().copied()), "IOPS (commands/s)", Style::Si),
        };
        let mb = Panel {
            heading: "bandwidth, reads and writes together".into(),
            legend: vec![Entry::line("MB/s", TOTAL)],
            x: time_axis(max(ts.t_ms.iter().copied())).1,
            y: Axis::from_zero(max(ts.mb_per_s.iter().copied()), "throughput (MB/s, 10^6 B/s)", Style::Plain),
        };
        let room = y_label_room(area, &[&iops, &mb]);
        panel_aligned(&top, &iops, room, |chart| {
            for (_, col, color) in &series {
                line(chart, steps(&ts.t_ms, div, col.iter().map(|&v| Some(v))), *color)?;
            }
            Ok(())
        })?;
        panel_aligned(&bottom, &mb, room, |chart| {
            line(chart, steps(&ts.t_ms, div, ts.mb_per_s.iter().map(|&v| Some(v))), TOTAL)
        })
    }
}

/// Whether two columns hold the same values (within rounding).
fn same(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() <= 1e-9 * x.abs().max(y.abs()).max(1.0))
}

/// Latency over time goes on a log axis when its largest value is this many times its
/// smallest (GC stalls next to cache hits), where a linear one would flatten the typical value.
const LOG_ABOVE: f64 = 50.0;

impl LatencyTime {
    pub(crate) fn draw<DB: DrawingBackend>(&self, area: &Area<DB>) -> DrawResult<(), DB> {
        let ts = &self.ts;
        let (div, x) = time_axis(max(ts.t_ms.iter().copied()));
        let all = || ts.latency_p99_us.iter().chain(&ts.latency_mean_us).flatten().copied();
        let top = max(all());
        let bottom = all().filter(|&v| v > 0.0).fold(f64::INFINITY, f64::min);
        let log = bottom.is_finite() && top / bottom > LOG_ABOVE;
        let (y, to_y): (Axis, fn(Option<f64>) -> Option<f64>) = if log {
            (Axis::log(bottom, top, "latency (us, log scale)"), |v| v.filter(|&v| v > 0.0).map(f64::log10))
        } else {
            (Axis::from_zero(top, "latency (us)", Style::Plain), |v| v)
        };
        let p = Panel {
            heading: "commands completed in each interval (no line: none completed)".into(),
            legend: vec![Entry::line("mean", TOTAL), Entry::line("p99", ACCENT)],
            x,
            y,
        };
        panel(area, &p, |chart| {
            line(chart, steps(&ts.t_ms, div, ts.latency_p99_us.iter().map(|&v| to_y(v))), ACCENT)?;
            line(chart, steps(&ts.t_ms, div, ts.latency_mean_us.iter().map(|&v| to_y(v))), TOTAL)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_hold_each_value_over_its_interval() {
        let t = [1.0, 2.0, 4.0];
        let pts = steps(&t, 1.0, [Some(5.0), None, Some(7.0)]);
        assert_eq!(
            pts,
            vec![(0.0, Some(5.0)), (1.0, Some(5.0)), (2.0, None), (2.0, Some(7.0)), (4.0, Some(7.0))]
        );
        // Scaled to seconds.
        assert_eq!(steps(&[1000.0], 1000.0, [Some(1.0)]), vec![(0.0, Some(1.0)), (1.0, Some(1.0))]);
    }

    #[test]
    fn counts_become_rates_over_uneven_intervals() {
        let rates: Vec<Option<f64>> = per_second(&[0.5, 1.0, 3.0], &[10, 10, 10]).collect();
        assert_eq!(rates, vec![Some(20_000.0), Some(20_000.0), Some(5_000.0)]);
        let zero: Vec<Option<f64>> = per_second(&[0.0], &[3]).collect();
        assert_eq!(zero, vec![None]);
    }

    #[test]
    fn a_sole_direction_is_recognised() {
        assert!(same(&[1.0, 2.0], &[1.0, 2.0 + 1e-12]));
        assert!(!same(&[1.0, 2.0], &[1.0, 3.0]));
        assert!(!same(&[1.0], &[1.0, 3.0]));
    }
}
