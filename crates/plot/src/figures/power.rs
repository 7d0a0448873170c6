//! Power over time: the mean power of each interval by component (NAND, channels, controller,
//! DRAM, link, and for a host-side FTL the host CPU and DRAM it uses), with the device's total;
//! for a host-side FTL, a second panel with the host memory the storage stack holds and the
//! busy share of its host cores.

use plotters::prelude::*;
use report::{Report, TimeSeriesReport};

use super::timeline::{against_time, max, steps};
use crate::axis::{Axis, Style, time_axis};
use crate::draw::{ACCENT, READ, TOTAL, TRIM, WRITE, line};
use crate::panel::{Area, DrawResult, Entry, Panel, panel_aligned, y_label_room};

/// The power series.
pub(crate) struct Power {
    ts: TimeSeriesReport,
    /// Mean power of the device over the run, W.
    mean_w: f64,
}

/// Height of one panel, px.
const PANEL_HEIGHT: u32 = 360;

/// Colours of the components, in [`report::PowerSeries::columns`] order.
const COLOURS: [RGBColor; 7] =
    [WRITE, READ, TRIM, ACCENT, RGBColor(230, 159, 0), RGBColor(86, 180, 233), RGBColor(120, 120, 120)];

/// The series, if the run has intervals with power.
pub(crate) fn build(r: &Report) -> Result<Power, String> {
    let ts = &r.timeseries;
    if ts.t_ms.is_empty() || ts.power_w.total.is_empty() {
        return Err("the report has no power time series".into());
    }
    Ok(Power { ts: ts.clone(), mean_w: r.energy.device_w })
}

impl Power {
    fn has_host(&self) -> bool {
        !self.ts.host_memory_mib.is_empty()
    }

    /// Height of the figure below the title, px.
    pub(crate) fn height(&self) -> u32 {
        PANEL_HEIGHT * (1 + u32::from(self.has_host()))
    }

    pub(crate) fn draw<DB: DrawingBackend>(&self, area: &Area<DB>) -> DrawResult<(), DB> {
        let ts = &self.ts;
        let t_max = max(ts.t_ms.iter().copied());
        let (div, x) = time_axis(t_max);
        let shown: Vec<(usize, &str, &[f64])> = ts
            .power_w
            .columns()
            .into_iter()
            .enumerate()
            .filter(|(_, (_, v))| v.iter().any(|&w| w > 1e-6))
            .map(|(i, (n, v))| (i, n, v))
            .collect();
        let mut legend = vec![Entry::line(&format!("device total (mean {:.2} W)", self.mean_w), TOTAL)];
        legend.extend(shown.iter().map(|(i, n, _)| Entry::line(n, COLOURS[*i])));
        let top = max(ts.power_w.device.iter().chain(shown.iter().flat_map(|(_, _, v)| v.iter())).copied());
        let power = Panel {
            heading: "mean power per interval, by component".into(),
            legend,
            x: time_axis(t_max).1,
            y: Axis::from_zero(top, "power (W)", Style::Plain),
        };
        let host = Panel {
            heading: "host storage stack: memory held (MiB) and CPU busy (% of its cores)".into(),
            legend: vec![Entry::line("memory (MiB)", READ), Entry::line("CPU busy x 100 (%)", WRITE)],
            x,
            y: Axis::from_zero(
                max(ts.host_memory_mib.iter().copied().chain(ts.host_cpu.iter().map(|c| c * 100.0))),
                "MiB / %",
                Style::Si,
            ),
        };
        let panels: Vec<&Panel> = if self.has_host() { vec![&power, &host] } else { vec![&power] };
        let room = y_label_room(area, &panels);
        let areas = area.split_evenly((panels.len(), 1));
        panel_aligned(&areas[0], &power, room, |chart| {
            for (i, _, v) in &shown {
                line(chart, steps(&ts.t_ms, div, v.iter().map(|&w| Some(w))), COLOURS[*i])?;
            }
            line(chart, steps(&ts.t_ms, div, ts.power_w.device.iter().map(|&w| Some(w))), TOTAL)
        })?;
        if self.has_host() {
            panel_aligned(&areas[1], &host, room, |chart| {
                line(chart, against_time(&ts.t_ms, div, ts.host_memory_mib.iter().map(|&m| Some(m))), READ)?;
                line(chart, steps(&ts.t_ms, div, ts.host_cpu.iter().map(|&c| Some(c * 100.0))), WRITE)
            })?;
        }
        Ok(())
    }
}
