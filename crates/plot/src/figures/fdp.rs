//! Flexible Data Placement per reclaim unit handle: the bytes the host wrote under each handle
//! beside the bytes its data cost on flash (programmed by write-back, moved by GC), then each
//! handle's write amplification against the device's. A handle whose data dies together moves
//! little in GC and stays near 1; a handle that shares blocks with longer-lived data does not.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use report::{FdpReport, Report};

use super::timeline::max;
use super::zones::{binary_unit, bytes};
use crate::axis::{Axis, Style};
use crate::draw::{ACCENT, READ, TOTAL, WRITE, bars};
use crate::font;
use crate::panel::{Area, DrawResult, Entry, MARGIN, Panel, panel_aligned, y_label_room};

/// Height of one panel, px.
const PANEL_HEIGHT: u32 = 340;
/// Width of a handle's two bars together, in categories.
const PAIR: f64 = 0.76;
/// Height of the line with the configuration and the device's totals, px.
const NOTE_HEIGHT: u32 = 30;

/// The FDP section.
pub(crate) struct Fdp {
    fdp: FdpReport,
}

/// The handles, or `None` (no figure, not even a skipped one) without FDP.
pub(crate) fn build(r: &Report) -> Option<Result<Fdp, String>> {
    let fdp = r.fdp.as_ref()?;
    Some(if fdp.per_handle.is_empty() {
        Err("the report has no reclaim unit handle".into())
    } else {
        Ok(Fdp { fdp: fdp.clone() })
    })
}

impl Fdp {
    /// Height of the figure below the title, px.
    pub(crate) fn height(&self) -> u32 {
        2 * PANEL_HEIGHT + NOTE_HEIGHT
    }

    pub(crate) fn draw<DB: DrawingBackend>(&self, area: &Area<DB>) -> DrawResult<(), DB> {
        let f = &self.fdp;
        let n = f.per_handle.len();
        let names: Vec<String> = f.per_handle.iter().map(|h| format!("RUH {}", h.handle)).collect();
        let largest = max(f.per_handle.iter().flat_map(|h| [h.host_bytes as f64, h.media_bytes as f64]));
        let (div, unit) = binary_unit(largest);
        let bytes_panel = Panel {
            heading: "bytes per handle: written by the host, and what they cost on flash".into(),
            legend: vec![
                Entry::bar("host", READ),
                Entry::bar("write-back", WRITE),
                Entry::bar("GC moved", ACCENT),
            ],
            x: Axis::categories(0, n - 1, "reclaim unit handle", Some(names.clone())),
            y: Axis::from_zero(largest / div * 1.05, &format!("bytes ({unit})"), Style::Plain),
        };
        let wafs: Vec<(f64, f64)> =
            f.per_handle.iter().enumerate().filter_map(|(i, h)| h.waf.map(|w| (i as f64, w))).collect();
        let device_waf = f.waf.is_finite() && f.waf > 0.0;
        let mut legend = vec![Entry::bar("handle's WAF", WRITE)];
        if device_waf {
            legend.push(Entry::line(&format!("device: {:.3}", f.waf), TOTAL));
        }
        let waf_panel = Panel {
            heading: "write amplification per handle (its media bytes / its host bytes)".into(),
            legend,
            x: Axis::categories(0, n - 1, "reclaim unit handle", Some(names)),
            // Headroom for the values printed above the bars.
            y: Axis::from_zero(
                max(wafs.iter().map(|w| w.1).chain([f.waf, 1.0])) * 1.12,
                "WAF (ratio)",
                Style::Plain,
            ),
        };
        let (head, body) = area.split_vertically(NOTE_HEIGHT);
        let note = format!(
            "{} handles in {} reclaim group(s), {} isolated, reclaim units of {}. Device: host {}, media {}, \
             erased {}.",
            f.handles,
            f.reclaim_groups,
            f.isolation,
            bytes(f.ru_bytes),
            bytes(f.host_bytes),
            bytes(f.media_bytes),
            bytes(f.erased_bytes)
        );
        head.draw(&Text::new(note, (MARGIN, 6), font::text(16.0, font::MUTED)))?;
        let room = y_label_room(&body, &[&bytes_panel, &waf_panel]);
        let areas = body.split_evenly((2, 1));
        let half = PAIR / 4.0;
        panel_aligned(&areas[0], &bytes_panel, room, |chart| {
            let host: Vec<(f64, f64)> = f
                .per_handle
                .iter()
                .enumerate()
                .map(|(i, h)| (i as f64 - half, h.host_bytes as f64 / div))
                .collect();
            bars(chart, &host, PAIR / 2.0, READ)?;
            // The media bar: write-back's bytes, GC's stacked on them.
            let user: Vec<(f64, f64)> = f
                .per_handle
                .iter()
                .enumerate()
                .map(|(i, h)| (i as f64 + half, h.user_bytes as f64 / div))
                .collect();
            bars(chart, &user, PAIR / 2.0, WRITE)?;
            chart.draw_series(f.per_handle.iter().enumerate().filter(|(_, h)| h.gc_bytes > 0).map(
                |(i, h)| {
                    let x = i as f64 + half;
                    let (lo, hi) = (h.user_bytes as f64 / div, (h.user_bytes + h.gc_bytes) as f64 / div);
                    Rectangle::new([(x - PAIR / 4.0, lo), (x + PAIR / 4.0, hi)], ACCENT.filled())
                },
            ))?;
            Ok(())
        })?;
        panel_aligned(&areas[1], &waf_panel, room, |chart| {
            bars(chart, &wafs, PAIR / 2.0, WRITE)?;
            if device_waf {
                chart.draw_series(DashedLineSeries::new(
                    [(-0.5, f.waf), (n as f64 - 0.5, f.waf)],
                    8,
                    6,
                    TOTAL.stroke_width(2),
                ))?;
            }
            let style = font::label().pos(Pos::new(HPos::Center, VPos::Bottom));
            chart.draw_series(wafs.iter().map(|&(x, w)| {
                EmptyElement::at((x, w)) + Text::new(format!("{w:.3}"), (0, -4), style.clone())
            }))?;
            // A handle the host never wrote under has no WAF of its own (its bytes, if any,
            // are GC's moves of data written before FDP, such as a preconditioning's).
            chart.draw_series(f.per_handle.iter().enumerate().filter(|(_, h)| h.waf.is_none()).map(
                |(i, _)| {
                    EmptyElement::at((i as f64, 0.0)) + Text::new("no host writes", (0, -4), style.clone())
                },
            ))?;
            Ok(())
        })
    }
}
