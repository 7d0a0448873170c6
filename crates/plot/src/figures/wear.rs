//! Wear: how many blocks were erased how many times (the erase-count histogram over good
//! blocks). A narrow histogram means wear levelling keeps blocks even.

use plotters::prelude::*;
use report::{Report, WearReport};

use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::axis::{Axis, Style, thousands};
use crate::draw::{READ, bars};
use crate::font;
use crate::panel::{Area, DrawResult, Entry, Panel, panel};

/// Bars labelled with their block count when there are at most this many.
const LABELLED: usize = 24;

/// The histogram and its statistics.
pub(crate) struct Wear {
    wear: WearReport,
    /// First and last erase counts with blocks.
    span: (usize, usize),
}

/// The histogram, if it counts any block.
pub(crate) fn build(r: &Report) -> Result<Wear, String> {
    let h = &r.wear.histogram;
    let first = h.iter().position(|&n| n > 0);
    let last = h.iter().rposition(|&n| n > 0);
    match (first, last) {
        (Some(first), Some(last)) => Ok(Wear { wear: r.wear.clone(), span: (first, last) }),
        _ => Err("the erase-count histogram is empty".into()),
    }
}

impl Wear {
    pub(crate) fn draw<DB: DrawingBackend>(&self, area: &Area<DB>) -> DrawResult<(), DB> {
        let w = &self.wear;
        let (first, last) = self.span;
        let counts: Vec<(f64, f64)> = (first..=last).map(|e| (e as f64, w.histogram[e] as f64)).collect();
        let blocks: u64 = w.histogram.iter().sum();
        let labelled = counts.len() <= LABELLED;
        let p = Panel {
            heading: format!(
                "{} good blocks; erases per block min {}, mean {:.1}, max {}, stddev {:.2}",
                thousands(blocks as f64),
                w.min,
                w.mean,
                w.max,
                w.stddev
            ),
            legend: vec![Entry::bar("blocks", READ)],
            x: Axis::categories(first, last, "erase count (erases per block)", None),
            // Headroom for the counts printed above the bars.
            y: Axis::from_zero(
                counts.iter().map(|c| c.1).fold(0.0, f64::max) * if labelled { 1.08 } else { 1.0 },
                "blocks (count)",
                Style::Si,
            ),
        };
        let width = if last > first + 200 { 1.0 } else { 0.8 };
        panel(area, &p, |chart| {
            bars(chart, &counts, width, READ)?;
            // A bar of one block is a hairline: print the counts while there is room.
            if labelled {
                let style = font::label().pos(Pos::new(HPos::Center, VPos::Bottom));
                chart.draw_series(counts.iter().filter(|c| c.1 > 0.0).map(|&(x, n)| {
                    EmptyElement::at((x, n)) + Text::new(thousands(n), (0, -4), style.clone())
                }))?;
            }
            Ok(())
        })
    }
}
