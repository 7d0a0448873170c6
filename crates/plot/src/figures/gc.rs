//! Inside the FTL over time: write amplification per interval (flash units programmed over
//! host units written) against the run's overall WAF, the free blocks GC keeps in reserve,
//! and how fast GC moved valid units (the cause of the WAF above 1).

use plotters::prelude::*;
use report::{Report, TimeSeriesReport};

use super::timeline::{against_time, max, per_second, steps};
use crate::axis::{Axis, Style, thousands, time_axis};
use crate::draw::{ACCENT, READ, TOTAL, WRITE, line};
use crate::font;
use crate::panel::{Area, DrawResult, Entry, MARGIN, Panel, panel_aligned, y_label_room};

/// The GC-related series.
pub(crate) struct Gc {
    ts: TimeSeriesReport,
    /// WAF over the whole run.
    waf: f64,
}

/// A free-block axis zooms on the data when it varies, but by less than this fraction of its
/// top (a constant count is drawn from 0).
const ZOOM_BELOW: f64 = 0.25;

/// The series, if the run has intervals.
pub(crate) fn build(r: &Report) -> Result<Gc, String> {
    if r.timeseries.t_ms.is_empty() {
        return Err("the report has no time series".into());
    }
    Ok(Gc { ts: r.timeseries.clone(), waf: r.waf.waf })
}

/// A panel of the figure, by what it shows.
enum Shown {
    Waf(Panel),
    Free(Panel),
    Moved(Panel),
}

impl Shown {
    fn panel(&self) -> &Panel {
        match self {
            Shown::Waf(p) | Shown::Free(p) | Shown::Moved(p) => p,
        }
    }
}

/// Height of one panel, px.
const PANEL_HEIGHT: u32 = 330;
/// Height of the line naming the panels left out, px.
const NOTE_HEIGHT: u32 = 30;

impl Gc {
    /// Height of the figure below the title, px.
    pub(crate) fn height(&self) -> u32 {
        let ts = &self.ts;
        let has_waf = ts.waf.iter().any(Option::is_some);
        let moved = ts.gc_units_moved.iter().any(|&n| n > 0);
        let panels = 1 + u32::from(has_waf) + u32::from(moved);
        PANEL_HEIGHT * panels + if panels < 3 { NOTE_HEIGHT } else { 0 }
    }

    pub(crate) fn draw<DB: DrawingBackend>(&self, area: &Area<DB>) -> DrawResult<(), DB> {
        let ts = &self.ts;
        let t_max = max(ts.t_ms.iter().copied());
        let (div, _) = time_axis(t_max);

        let has_waf = ts.waf.iter().any(Option::is_some);
        let run_waf = self.waf.is_finite() && self.waf > 0.0;
        let mut legend = vec![Entry::line("per interval", READ)];
        if run_waf {
            legend.push(Entry::line(&format!("whole run: {:.2}", self.waf), TOTAL));
        }
        let waf = Panel {
            heading: "write amplification (flash units programmed / host units written)".into(),
            legend,
            x: time_axis(t_max).1,
            y: Axis::from_zero(
                max(ts.waf.iter().flatten().copied().chain([self.waf, 1.0])),
                "WAF (ratio)",
                Style::Plain,
            ),
        };

        let free: Vec<f64> = ts.free_blocks.iter().map(|&b| b as f64).collect();
        let (lo, hi) = (free.iter().copied().fold(f64::INFINITY, f64::min), max(free.iter().copied()));
        let zoom = lo.is_finite() && hi > lo && hi - lo < ZOOM_BELOW * hi;
        let free_panel = Panel {
            heading: if zoom {
                "free blocks at each interval's end (y axis zoomed, not from 0)".into()
            } else {
                "free blocks at each interval's end".into()
            },
            legend: vec![Entry::line("free blocks", ACCENT)],
            x: time_axis(t_max).1,
            y: if zoom {
                Axis::linear(lo, hi, "free blocks (count)", Style::Si)
            } else {
                Axis::from_zero(hi, "free blocks (count)", Style::Si)
            },
        };

        let moved: Vec<Option<f64>> = per_second(&ts.t_ms, &ts.gc_units_moved).collect();
        let total_moved: u64 = ts.gc_units_moved.iter().sum();
        let total_erased: u64 = ts.erases.iter().sum();
        let gc = Panel {
            heading: format!(
                "GC: valid units moved ({} in all; {} blocks erased)",
                thousands(total_moved as f64),
                thousands(total_erased as f64)
            ),
            legend: vec![Entry::line("units moved", WRITE)],
            x: time_axis(t_max).1,
            y: Axis::from_zero(max(moved.iter().flatten().copied()), "GC moves (units/s)", Style::Si),
        };

        // Panels without data give way to a line saying so.
        let mut notes = Vec::new();
        if !has_waf {
            notes.push("the host wrote nothing: no write amplification".to_string());
        }
        if total_moved == 0 {
            notes.push(if total_erased > 0 {
                format!("GC moved no valid units ({} blocks erased empty)", thousands(total_erased as f64))
            } else {
                "GC moved no valid units".to_string()
            });
        }
        let mut shown = Vec::new();
        if has_waf {
            shown.push(Shown::Waf(waf));
        }
        shown.push(Shown::Free(free_panel));
        if total_moved > 0 {
            shown.push(Shown::Moved(gc));
        }
        let body = if notes.is_empty() {
            area.clone()
        } else {
            let (head, body) = area.split_vertically(NOTE_HEIGHT);
            let style = font::text(16.0, font::MUTED);
            head.draw(&Text::new(format!("{}.", notes.join("; ")), (MARGIN, 6), style))?;
            body
        };
        let panels: Vec<&Panel> = shown.iter().map(Shown::panel).collect();
        let room = y_label_room(&body, &panels);
        for (s, a) in shown.iter().zip(body.split_evenly((shown.len(), 1)).iter()) {
            match s {
                Shown::Waf(p) => panel_aligned(a, p, room, |chart| {
                    if run_waf {
                        chart.draw_series(DashedLineSeries::new(
                            [(0.0, self.waf), (t_max / div, self.waf)],
                            8,
                            6,
                            TOTAL.stroke_width(2),
                        ))?;
                    }
                    line(chart, steps(&ts.t_ms, div, ts.waf.iter().copied()), READ)
                })?,
                Shown::Free(p) => panel_aligned(a, p, room, |chart| {
                    line(chart, against_time(&ts.t_ms, div, free.iter().map(|&b| Some(b))), ACCENT)
                })?,
                Shown::Moved(p) => panel_aligned(a, p, room, |chart| {
                    line(chart, steps(&ts.t_ms, div, moved.iter().copied()), WRITE)
                })?,
            }
        }
        Ok(())
    }
}
