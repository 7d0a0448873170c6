//! Bit errors over the run: the observed raw bit-error rate of each interval, what became of
//! the page reads the ECC checked (host, GC and translation pages) (corrected at the first read, retried, uncorrectable)
//! with the ECC core's busy share, and the device's mean P/E cycles, all against time (a
//! run's wear moves little, so P/E is a panel of its own rather than the x axis).

use plotters::prelude::*;
use report::{Report, TimeSeriesReport};

use super::timeline::{against_time, max, steps};
use crate::axis::{Axis, Style, time_axis};
use crate::draw::{ACCENT, READ, TOTAL, TRIM, WRITE, line};
use crate::panel::{Area, DrawResult, Entry, Panel, panel_aligned, y_label_room};

/// The ECC series.
pub(crate) struct Ecc {
    ts: TimeSeriesReport,
    /// The run's observed RBER and UBER.
    rber: f64,
    uber: f64,
}

/// Height of one panel, px.
const PANEL_HEIGHT: u32 = 330;
/// Panels in the figure.
const PANELS: u32 = 3;

/// The series, if the ECC checked reads in some interval; `None` (no figure, not even a
/// skipped one) for a device without bit errors.
pub(crate) fn build(r: &Report) -> Option<Result<Ecc, String>> {
    if !r.device.ecc.enabled() {
        return None;
    }
    let ts = &r.timeseries;
    Some(if ts.t_ms.is_empty() || ts.ecc_reads.len() != ts.t_ms.len() {
        Err("the report has no ECC time series".into())
    } else if ts.ecc_reads.iter().all(|&n| n == 0) {
        Err("the ECC checked no page reads".into())
    } else {
        Ok(Ecc { ts: ts.clone(), rber: r.ecc.rber, uber: r.ecc.uber })
    })
}

impl Ecc {
    /// Height of the figure below the title, px.
    pub(crate) fn height(&self) -> u32 {
        PANEL_HEIGHT * PANELS
    }

    pub(crate) fn draw<DB: DrawingBackend>(&self, area: &Area<DB>) -> DrawResult<(), DB> {
        let ts = &self.ts;
        let t_max = max(ts.t_ms.iter().copied());
        let (div, _) = time_axis(t_max);

        // RBER on a log axis (it spans decades over a device's life); an interval whose
        // codewords had no error at all has no point there.
        let positive = || ts.rber.iter().flatten().copied().filter(|&v| v > 0.0 && v.is_finite());
        let (lo, hi) = (positive().fold(f64::INFINITY, f64::min), max(positive()));
        let rber_panel = Panel {
            heading: format!(
                "observed RBER: bit errors found / bits of codewords checked (run: {:.2e}; UBER {:.2e})",
                self.rber, self.uber
            ),
            legend: vec![Entry::line("observed RBER", TOTAL)],
            x: time_axis(t_max).1,
            y: Axis {
                fmt: Box::new(|v| format!("{:.0e}", 10f64.powf(v))),
                ..Axis::log(lo, hi, "RBER (log scale)")
            },
        };
        let rber: Vec<Option<f64>> = ts.rber.iter().map(|v| v.filter(|&v| v > 0.0).map(f64::log10)).collect();

        let share = |col: &[u64]| -> Vec<Option<f64>> {
            col.iter()
                .zip(&ts.ecc_reads)
                .map(|(&n, &of)| (of > 0).then(|| 100.0 * n as f64 / of as f64))
                .collect()
        };
        let (corrected, retried, failed) =
            (share(&ts.ecc_corrected), share(&ts.ecc_retried), share(&ts.ecc_uncorrectable));
        let busy: Vec<Option<f64>> = ts.ecc_busy.iter().map(|&b| Some(100.0 * b)).collect();
        let top = max(corrected.iter().chain(&retried).chain(&failed).chain(&busy).flatten().copied());
        let retried_total: u64 = ts.ecc_retried.iter().sum();
        let failed_total: u64 = ts.ecc_uncorrectable.iter().sum();
        let reads_panel = Panel {
            heading: "page reads checked, by outcome (% of them); ECC core busy (% of time)".into(),
            legend: vec![
                Entry::line("corrected", READ),
                Entry::line(&format!("retried ({retried_total})"), WRITE),
                Entry::line(&format!("uncorrectable ({failed_total})"), ACCENT),
                Entry::line("ECC busy", TRIM),
            ],
            x: time_axis(t_max).1,
            y: Axis::from_zero(top, "% of reads / of time", Style::Plain),
        };

        let pe = &ts.pe_mean;
        let (pe_lo, pe_hi) = (pe.iter().copied().fold(f64::INFINITY, f64::min), max(pe.iter().copied()));
        let zoom = pe_lo.is_finite() && pe_hi > pe_lo;
        let pe_panel = Panel {
            heading: if zoom {
                format!("mean P/E cycles of the good blocks ({pe_lo:.1} to {pe_hi:.1}; y axis zoomed)")
            } else {
                format!("mean P/E cycles of the good blocks ({pe_hi:.1} throughout)")
            },
            legend: vec![Entry::line("mean P/E cycles", TOTAL)],
            x: time_axis(t_max).1,
            y: if zoom {
                Axis::linear(pe_lo, pe_hi, "P/E cycles (mean)", Style::Plain)
            } else {
                Axis::from_zero(pe_hi, "P/E cycles (mean)", Style::Plain)
            },
        };

        let panels = [&rber_panel, &reads_panel, &pe_panel];
        let room = y_label_room(area, &panels);
        let areas = area.split_evenly((panels.len(), 1));
        panel_aligned(&areas[0], &rber_panel, room, |chart| {
            line(chart, steps(&ts.t_ms, div, rber.iter().copied()), TOTAL)
        })?;
        panel_aligned(&areas[1], &reads_panel, room, |chart| {
            line(chart, steps(&ts.t_ms, div, busy.iter().copied()), TRIM)?;
            line(chart, steps(&ts.t_ms, div, corrected.iter().copied()), READ)?;
            line(chart, steps(&ts.t_ms, div, retried.iter().copied()), WRITE)?;
            line(chart, steps(&ts.t_ms, div, failed.iter().copied()), ACCENT)
        })?;
        panel_aligned(&areas[2], &pe_panel, room, |chart| {
            line(chart, against_time(&ts.t_ms, div, pe.iter().map(|&v| Some(v))), TOTAL)
        })?;
        Ok(())
    }
}
