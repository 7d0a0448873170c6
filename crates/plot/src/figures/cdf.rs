//! Latency CDF per operation: the whole distribution on a log latency axis, and beside it the
//! tail (99% to 99.999%) on a "nines" axis where each decade of rarity gets the same room.

use plotters::prelude::*;
use report::Report;

use crate::axis::{Axis, Style};
use crate::draw::{line, op_color};
use crate::panel::{Area, DrawResult, Entry, Panel, note, panel};

/// The smallest latency drawn, us (a log axis has no zero).
const FLOOR_US: f64 = 0.001;
/// The tail panel's range, in nines: 2 is 99%, 5 is 99.999%.
const NINES: (f64, f64) = (2.0, 5.0);

/// Each operation's `(quantile, latency us)` points.
pub(crate) struct LatencyCdf {
    ops: Vec<(String, Vec<(f64, f64)>)>,
}

/// The distributions of the operations that completed.
pub(crate) fn build(r: &Report) -> Result<LatencyCdf, String> {
    let ops: Vec<(String, Vec<(f64, f64)>)> = r
        .ops
        .iter()
        .filter(|(_, o)| o.throughput.count > 0)
        .map(|(name, o)| {
            let points = o
                .latency_cdf_ns
                .iter()
                .filter(|[q, ns]| q.is_finite() && ns.is_finite())
                .map(|&[q, ns]| (q.clamp(0.0, 1.0), (ns / 1e3).max(FLOOR_US)))
                .collect::<Vec<_>>();
            (name.clone(), points)
        })
        .filter(|(_, p)| !p.is_empty())
        .collect();
    if ops.is_empty() {
        return Err("no operation completed".into());
    }
    Ok(LatencyCdf { ops })
}

/// The nines of quantile `q`: 0.99 is 2, 0.999 is 3.
fn nines(q: f64) -> f64 {
    -(1.0 - q).max(1e-12).log10()
}

/// The label of a nines tick: 2 is `99%`, 3 is `99.9%`.
fn nines_label(n: f64) -> String {
    let decimals = (n.round() as usize).saturating_sub(2);
    format!("{:.decimals$}%", 100.0 - 100.0 * 10f64.powf(-n))
}

impl LatencyCdf {
    pub(crate) fn draw<DB: DrawingBackend>(&self, area: &Area<DB>) -> DrawResult<(), DB> {
        let (w, _) = area.dim_in_pixel();
        let (left, right) = area.split_horizontally(w * 58 / 100);
        let legend: Vec<Entry> = self.ops.iter().map(|(n, _)| Entry::line(n, op_color(n))).collect();
        let all = self.ops.iter().flat_map(|(_, p)| p.iter().map(|&(_, us)| us));
        let (lo, hi) = min_max(all);
        let whole = Panel {
            heading: "whole distribution".into(),
            legend: legend.clone(),
            x: Axis::log(lo, hi, "latency (us, log scale)"),
            y: Axis::linear(0.0, 100.0, "percentile: commands at or below (%)", Style::Plain),
        };
        panel(&left, &whole, |chart| {
            for (name, points) in &self.ops {
                line(chart, points.iter().map(|&(q, us)| (us.log10(), Some(q * 100.0))), op_color(name))?;
            }
            Ok(())
        })?;

        let tail = |p: &Vec<(f64, f64)>| -> Vec<(f64, f64)> {
            p.iter().filter(|(q, _)| *q >= 0.99 && *q < 1.0).copied().collect()
        };
        let (lo, hi) = min_max(self.ops.iter().flat_map(|(_, p)| tail(p)).map(|(_, us)| us));
        let ticks = (NINES.0 as i32..=NINES.1 as i32).map(f64::from).collect();
        let tail_panel = Panel {
            heading: "tail".into(),
            legend,
            x: Axis::log(lo, hi, "latency (us, log scale)"),
            y: Axis::fixed(NINES.0, NINES.1, ticks, "percentile (nines scale)", Box::new(nines_label)),
        };
        if self.ops.iter().all(|(_, p)| tail(p).is_empty()) {
            return note(&right, "no tail quantiles in the report");
        }
        panel(&right, &tail_panel, |chart| {
            for (name, points) in &self.ops {
                let pts = tail(points).into_iter().map(|(q, us)| (us.log10(), Some(nines(q).min(NINES.1))));
                line(chart, pts, op_color(name))?;
            }
            Ok(())
        })
    }
}

/// Smallest and largest of `values` (1..1 if none).
fn min_max(values: impl Iterator<Item = f64>) -> (f64, f64) {
    values
        .fold(None, |acc: Option<(f64, f64)>, v| Some(acc.map_or((v, v), |(a, b)| (a.min(v), b.max(v)))))
        .unwrap_or((1.0, 1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nines_map_the_tail_evenly() {
        assert!((nines(0.99) - 2.0).abs() < 1e-9);
        assert!((nines(0.99999) - 5.0).abs() < 1e-6);
        assert!(nines(1.0).is_finite());
        let labels: Vec<String> = (2..=5).map(|n| nines_label(n as f64)).collect();
        assert_eq!(labels, ["99%", "99.9%", "99.99%", "99.999%"]);
    }
}
