//! Where the time went inside the device: the busy fraction of each flash channel, each die
//! and each controller core over the simulated run. Idle channels next to busy dies point at
//! the array; a core near 100% points at the firmware.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use report::Report;

use crate::axis::Axis;
use crate::draw::bars;
use crate::font;
use crate::panel::{Area, DrawResult, Entry, Panel, panel};

/// Height of one panel, px.
const PANEL_HEIGHT: u32 = 300;
/// Bars labelled with their value when there are at most this many.
const LABELLED: usize = 16;

/// One group of bars (channels, dies or cores), busy in percent.
struct Group {
    what: &'static str,
    axis: &'static str,
    color: RGBColor,
    busy: Vec<f64>,
    names: Option<Vec<String>>,
}

/// The non-empty groups.
pub(crate) struct Utilisation {
    groups: Vec<Group>,
}

/// The busy fractions, if the report has any.
pub(crate) fn build(r: &Report) -> Result<Utilisation, String> {
    let pct = |v: &[f64]| v.iter().map(|b| if b.is_finite() { b * 100.0 } else { 0.0 }).collect::<Vec<_>>();
    let u = &r.utilisation;
    let cores: Vec<f64> = u.cores.iter().map(|c| c.busy).collect();
    let groups: Vec<Group> = [
        Group {
            what: "channels",
            axis: "channel (index)",
            color: RGBColor(0, 114, 178),
            busy: pct(&u.channels),
            names: None,
        },
        Group {
            what: "dies",
            axis: "die (index)",
            color: RGBColor(230, 159, 0),
            busy: pct(&u.dies),
            names: None,
        },
        Group {
            what: "controller cores",
            axis: "core",
            color: RGBColor(0, 158, 115),
            busy: pct(&cores),
            names: Some(u.cores.iter().map(|c| c.name.clone()).collect()),
        },
    ]
    .into_iter()
    .filter(|g| !g.busy.is_empty())
    .collect();
    if groups.is_empty() {
        return Err("the report has no channel, die or core utilisation".into());
    }
    Ok(Utilisation { groups })
}

impl Utilisation {
    /// Height of the panels, px.
    pub(crate) fn height(&self) -> u32 {
        PANEL_HEIGHT * self.groups.len() as u32
    }

    pub(crate) fn draw<DB: DrawingBackend>(&self, area: &Area<DB>) -> DrawResult<(), DB> {
        let areas = area.split_evenly((self.groups.len(), 1));
        for (g, a) in self.groups.iter().zip(&areas) {
            let n = g.busy.len();
            let mean = g.busy.iter().sum::<f64>() / n as f64;
            // Long names are cut to the room a bar has (about 9 px per character).
            let room = (1000 / n / 9).max(4);
            let names = g.names.as_ref().map(|names| {
                names
                    .iter()
                    .map(|s| if s.chars().count() > room { cut(s, room) } else { s.clone() })
                    .collect()
            });
            let p = Panel {
                heading: format!("{} ({n}), mean {mean:.1}% busy", g.what),
                legend: vec![Entry::bar("busy", g.color)],
                x: Axis::categories(0, n - 1, g.axis, names),
                // Headroom above 100% for the value labels.
                y: Axis::fixed(
                    0.0,
                    114.0,
                    (0..=5).map(|k| k as f64 * 20.0).collect(),
                    "busy (% of simulated time)",
                    Box::new(|v| format!("{v:.0}")),
                ),
            };
            panel(a, &p, |chart| {
                let points: Vec<(f64, f64)> =
                    g.busy.iter().enumerate().map(|(i, &b)| (i as f64, b)).collect();
                bars(chart, &points, 0.7, g.color)?;
                if n <= LABELLED {
                    let style = font::label().pos(Pos::new(HPos::Center, VPos::Bottom));
                    chart.draw_series(points.iter().map(|&(x, b)| {
                        EmptyElement::at((x, b)) + Text::new(format!("{b:.1}%"), (0, -4), style.clone())
                    }))?;
                }
                Ok(())
            })?;
        }
        Ok(())
    }
}

/// The first `n - 1` characters of `s` and an ellipsis.
fn cut(s: &str, n: usize) -> String {
    s.chars().take(n.saturating_sub(1)).chain(['…']).collect()
}
