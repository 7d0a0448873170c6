//! A zoned namespace (NVMe ZNS): its zones by state at the end of the run, then the flash
//! blocks zone resets erased over time above the commands' latency over the same time, so a
//! latency peak that lines up with resets shows their interference (ConfZNS++'s question).

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use report::{Report, TimeSeriesReport};

use super::timeline::{max, per_second, steps};
use crate::axis::{Axis, Style, thousands, time_axis};
use crate::draw::{ACCENT, READ, WRITE, bars, line};
use crate::font;
use crate::panel::{Area, DrawResult, Entry, MARGIN, Panel, panel_aligned, y_label_room};

/// The zone states in the report's order (`zones.by_state`).
pub(crate) const STATES: [&str; 7] =
    ["empty", "impl. open", "expl. open", "closed", "read-only", "full", "offline"];

/// Height of one panel, px.
const PANEL_HEIGHT: u32 = 320;
/// Height of the line naming what is left out, px.
const NOTE_HEIGHT: u32 = 30;

/// What the figure draws, copied out of the report.
pub(crate) struct Zones {
    zones: u32,
    zone_size: u64,
    zone_capacity: u64,
    by_state: [u64; 7],
    resets: u64,
    reset_erases: u64,
    reset_ns: u64,
    finishes: u64,
    finish_pad_units: u64,
    flush_pad_pages: u64,
    /// The time series, if the run has one.
    ts: Option<TimeSeriesReport>,
}

/// The zones, or `None` (no figure, not even a skipped one) for a conventional namespace.
pub(crate) fn build(r: &Report) -> Option<Result<Zones, String>> {
    let z = r.zones.as_ref()?;
    Some(if z.zones == 0 {
        Err("the namespace has no zones".into())
    } else {
        let ts = &r.timeseries;
        Ok(Zones {
            zones: z.zones,
            zone_size: z.zone_size,
            zone_capacity: z.zone_capacity,
            by_state: z.by_state,
            resets: z.stats.resets,
            reset_erases: z.stats.reset_erases,
            reset_ns: z.stats.reset_ns,
            finishes: z.stats.finishes,
            finish_pad_units: z.stats.finish_pad_units,
            flush_pad_pages: z.stats.flush_pad_pages,
            ts: (!ts.t_ms.is_empty() && ts.erases.len() == ts.t_ms.len()).then(|| ts.clone()),
        })
    })
}

/// `b` bytes in KiB, MiB or GiB, whichever keeps the number short.
pub(crate) fn bytes(b: u64) -> String {
    let (div, unit) = binary_unit(b as f64);
    let v = b as f64 / div;
    if v.fract() == 0.0 { format!("{v:.0} {unit}") } else { format!("{v:.1} {unit}") }
}

/// The binary unit (divisor and name) that keeps `largest` bytes between 1 and 1024.
pub(crate) fn binary_unit(largest: f64) -> (f64, &'static str) {
    [(1u64 << 40, "TiB"), (1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")]
        .into_iter()
        .find(|&(d, _)| largest >= d as f64)
        .map_or((1.0, "B"), |(d, u)| (d as f64, u))
}

/// `ns` as ms or s.
fn duration(ns: f64) -> String {
    if ns >= 1e9 { format!("{:.2} s", ns / 1e9) } else { format!("{:.2} ms", ns / 1e6) }
}

impl Zones {
    /// Panels below the state panel: resets and latency over time, when there is a series.
    fn time_panels(&self) -> u32 {
        if self.ts.is_some() { 2 } else { 0 }
    }

    /// Height of the figure below the title, px.
    pub(crate) fn height(&self) -> u32 {
        PANEL_HEIGHT * (1 + self.time_panels()) + NOTE_HEIGHT
    }

    pub(crate) fn draw<DB: DrawingBackend>(&self, area: &Area<DB>) -> DrawResult<(), DB> {
        let (head, body) = area.split_vertically(NOTE_HEIGHT);
        let mean =
            if self.resets > 0 { duration(self.reset_ns as f64 / self.resets as f64) } else { "-".into() };
        let mut note = format!(
            "Resets {} (erased {} blocks, {mean} each, waiting for programs then erasing); finishes {} \
             (padded {} units); flushes padded {} pages.",
            thousands(self.resets as f64),
            thousands(self.reset_erases as f64),
            thousands(self.finishes as f64),
            thousands(self.finish_pad_units as f64),
            thousands(self.flush_pad_pages as f64),
        );
        if self.ts.is_none() {
            note.push_str(" No time series: resets and latency over time left out.");
        }
        head.draw(&Text::new(note, (MARGIN, 6), font::text(16.0, font::MUTED)))?;

        let counts: Vec<(f64, f64)> =
            self.by_state.iter().enumerate().map(|(i, &n)| (i as f64, n as f64)).collect();
        let states = Panel {
            heading: format!(
                "{} zones of {} (capacity {}) by state at the end of the run",
                thousands(self.zones as f64),
                bytes(self.zone_size),
                bytes(self.zone_capacity)
            ),
            legend: vec![Entry::bar("zones", READ)],
            x: Axis::categories(0, STATES.len() - 1, "zone state", Some(STATES.map(String::from).to_vec())),
            // Headroom for the counts printed above the bars.
            y: Axis::from_zero(max(counts.iter().map(|c| c.1)) * 1.1, "zones (count)", Style::Si),
        };
        let mut panels = vec![states];
        if let Some(ts) = &self.ts {
            let t_max = max(ts.t_ms.iter().copied());
            let erased: Vec<Option<f64>> = per_second(&ts.t_ms, &ts.erases).collect();
            panels.push(Panel {
                heading: "blocks erased per second (a zoned namespace erases only to reset zones)".into(),
                legend: vec![Entry::line("blocks erased", WRITE)],
                x: time_axis(t_max).1,
                y: Axis::from_zero(max(erased.iter().flatten().copied()), "erases (blocks/s)", Style::Si),
            });
            let top = max(ts.latency_p99_us.iter().chain(&ts.latency_mean_us).flatten().copied());
            panels.push(Panel {
                heading: "latency of the commands completed in each interval".into(),
                legend: vec![Entry::line("mean", READ), Entry::line("p99", ACCENT)],
                x: time_axis(t_max).1,
                y: Axis::from_zero(top, "latency (us)", Style::Si),
            });
        }
        let refs: Vec<&Panel> = panels.iter().collect();
        let room = y_label_room(&body, &refs);
        let areas = body.split_evenly((panels.len(), 1));
        panel_aligned(&areas[0], &panels[0], room, |chart| {
            bars(chart, &counts, 0.7, READ)?;
            let style = font::label().pos(Pos::new(HPos::Center, VPos::Bottom));
            chart.draw_series(
                counts.iter().map(|&(x, n)| {
                    EmptyElement::at((x, n)) + Text::new(thousands(n), (0, -4), style.clone())
                }),
            )?;
            Ok(())
        })?;
        if let Some(ts) = &self.ts {
            let (div, _) = time_axis(max(ts.t_ms.iter().copied()));
            let erased: Vec<Option<f64>> = per_second(&ts.t_ms, &ts.erases).collect();
            panel_aligned(&areas[1], &panels[1], room, |chart| {
                line(chart, steps(&ts.t_ms, div, erased.iter().copied()), WRITE)
            })?;
            panel_aligned(&areas[2], &panels[2], room, |chart| {
                line(chart, steps(&ts.t_ms, div, ts.latency_mean_us.iter().copied()), READ)?;
                line(chart, steps(&ts.t_ms, div, ts.latency_p99_us.iter().copied()), ACCENT)
            })?;
        }
        Ok(())
    }
}
