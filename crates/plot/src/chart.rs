//! A chart of a sweep (`ssdlab sweep plot`): one metric against one axis, a series per value
//! of another axis, each point the mean over the seeds with an error bar.
//!
//! ```text
//!   y ┤      ┬                 numeric x: lines through the means, error bars at each point
//!     │  ┬───●───┬             text x:    a group of bars per value, a bar per series
//!     │  ●   ┴   ●
//!     └──┴───┴───┴── x
//! ```
//!
//! The caller computes the means and the bars' ends (the figure does not know what they mean;
//! its subtitle says). The style is the report figures': same fonts, frame, grid and palette.

use std::path::{Path, PathBuf};

use plotters::prelude::*;

use crate::PlotError;
use crate::axis::{Axis, Style};
use crate::draw::{ACCENT, READ, TOTAL, TRIM, WRITE, line};
use crate::output::Drawable;
use crate::panel::{self, Area, DrawResult, Entry, Panel};

/// One point: the mean and the ends of its error bar.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Point {
    /// Position along x (a category's index for text axes).
    pub x: f64,
    /// The mean.
    pub mean: f64,
    /// Lower end of the error bar.
    pub lo: f64,
    /// Upper end of the error bar.
    pub hi: f64,
}

/// One line (or set of bars).
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    /// Its legend entry (empty: no legend).
    pub name: String,
    /// Its points, by x.
    pub points: Vec<Point>,
}

/// A whole chart.
#[derive(Clone, Debug, PartialEq)]
pub struct Chart {
    /// The title.
    pub title: String,
    /// The line under it (what was averaged, what the bars show).
    pub subtitle: String,
    /// The x axis's description.
    pub x_desc: String,
    /// The y axis's description.
    pub y_desc: String,
    /// The names of x's categories, if x is text (points' x are then 0, 1, ...): bars.
    pub categories: Option<Vec<String>>,
    /// The series.
    pub series: Vec<Series>,
    /// A logarithmic y axis (for values over decades, such as IOPS by block size); values at
    /// or below zero are drawn at the axis's foot.
    pub log_y: bool,
}

/// Series colours: the report figures' Okabe-Ito palette, then its remaining colours.
const PALETTE: [RGBColor; 8] =
    [READ, WRITE, TRIM, ACCENT, RGBColor(230, 159, 0), RGBColor(86, 180, 233), RGBColor(240, 228, 66), TOTAL];

/// Width and height of a chart, px.
const SIZE: (u32, u32) = (1000, 680);

/// Writes `chart` to `path`: PNG or SVG by its extension.
pub fn write_chart(chart: &Chart, path: &Path) -> Result<PathBuf, PlotError> {
    match path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).as_deref() {
        Some("svg") => crate::output::svg(chart, path)?,
        _ => crate::output::png(chart, path)?,
    }
    Ok(path.to_path_buf())
}

impl Chart {
    fn ranges(&self) -> (f64, f64, f64, f64) {
        let pts = || self.series.iter().flat_map(|s| &s.points);
        let fold = |f: fn(&Point) -> f64, init: f64, g: fn(f64, f64) -> f64| pts().map(f).fold(init, g);
        let (x0, x1) = (fold(|p| p.x, f64::INFINITY, f64::min), fold(|p| p.x, f64::NEG_INFINITY, f64::max));
        let (y0, y1) = (
            fold(|p| p.lo.min(p.mean), f64::INFINITY, f64::min),
            fold(|p| p.hi.max(p.mean), f64::NEG_INFINITY, f64::max),
        );
        (x0, x1, y0, y1)
    }

    /// The smallest positive value drawn (the foot of a log axis), 1 if there is none.
    fn smallest_positive(&self) -> f64 {
        let pts = self.series.iter().flat_map(|s| &s.points);
        let min = pts.flat_map(|p| [p.lo, p.mean]).filter(|&v| v > 0.0).fold(f64::INFINITY, f64::min);
        if min.is_finite() { min } else { 1.0 }
    }

    fn color(i: usize) -> RGBColor {
        PALETTE[i % PALETTE.len()]
    }
}

impl Drawable for Chart {
    fn name(&self) -> &str {
        "sweep chart"
    }

    fn size(&self) -> (u32, u32) {
        SIZE
    }

    fn draw<DB: DrawingBackend>(&self, root: &Area<DB>) -> DrawResult<(), DB> {
        let body = panel::frame(root, &self.title, &self.subtitle)?;
        let (x0, x1, y0, y1) = self.ranges();
        if !(x0.is_finite() && y0.is_finite()) {
            return panel::note(&body, "no data");
        }
        // On a log axis every y is drawn as log10(y) (the axis holds logs), floored at the
        // smallest positive value shown.
        let floor = if self.log_y { self.smallest_positive() } else { 0.0 };
        let ty = |v: f64| if self.log_y { v.max(floor).log10() } else { v };
        let y = if self.log_y {
            Axis::log(floor, y1, &self.y_desc)
        } else if y0 >= 0.0 {
            Axis::from_zero(y1, &self.y_desc, Style::Si)
        } else {
            Axis::linear(y0, y1, &self.y_desc, Style::Si)
        };
        let bars = self.categories.is_some();
        let x = match &self.categories {
            Some(names) => {
                Axis::categories(0, names.len().saturating_sub(1), &self.x_desc, Some(names.clone()))
            }
            None => Axis::linear(x0, x1, &self.x_desc, Style::Plain),
        };
        let named = self.series.iter().any(|s| !s.name.is_empty());
        let legend = if named {
            let entry = if bars { Entry::bar } else { Entry::line };
            self.series.iter().enumerate().map(|(i, s)| entry(&s.name, Self::color(i))).collect()
        } else {
            Vec::new()
        };
        let span = (x.hi - x.lo).abs().max(1e-12);
        let p = Panel { heading: String::new(), legend, x, y };
        let n = self.series.len().max(1) as f64;
        let base = if self.log_y { p.y.lo } else { 0.0 };
        panel::panel(&body, &p, |chart| {
            for (i, s) in self.series.iter().enumerate() {
                let color = Self::color(i);
                // Bars share a category's slot; lines sit on the value.
                let (shift, half) = if bars {
                    ((i as f64 + 0.5) / n * 0.8 - 0.4, 0.4 / n * 0.9)
                } else {
                    (0.0, span * 0.008)
                };
                if bars {
                    chart.draw_series(s.points.iter().map(|pt| {
                        let x = pt.x + shift;
                        Rectangle::new([(x - half, base), (x + half, ty(pt.mean))], color.filled())
                    }))?;
                } else {
                    line(chart, s.points.iter().map(|pt| (pt.x, Some(ty(pt.mean)))), color)?;
                    chart.draw_series(
                        s.points.iter().map(|pt| Circle::new((pt.x, ty(pt.mean)), 4, color.filled())),
                    )?;
                }
                let ink = if bars { TOTAL } else { color };
                let cap = if bars { half * 0.4 } else { half };
                for pt in s.points.iter().filter(|pt| pt.hi > pt.lo) {
                    let x = pt.x + shift;
                    let (lo, hi) = (ty(pt.lo), ty(pt.hi));
                    let style = ink.stroke_width(2);
                    chart.draw_series([
                        PathElement::new(vec![(x, lo), (x, hi)], style),
                        PathElement::new(vec![(x - cap, lo), (x + cap, lo)], style),
                        PathElement::new(vec![(x - cap, hi), (x + cap, hi)], style),
                    ])?;
                }
            }
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chart(categories: Option<Vec<String>>) -> Chart {
        let pt = |x: f64, m: f64| Point { x, mean: m, lo: m - 0.5, hi: m + 0.5 };
        Chart {
            title: "t".into(),
            subtitle: "s".into(),
            x_desc: "ftl.op".into(),
            y_desc: "waf".into(),
            categories,
            series: vec![
                Series { name: "greedy".into(), points: vec![pt(0.0, 3.0), pt(1.0, 2.0)] },
                Series { name: "fifo".into(), points: vec![pt(0.0, 4.0), pt(1.0, 2.5)] },
            ],
            log_y: false,
        }
    }

    #[test]
    fn lines_and_bars_render_to_png_and_svg() {
        let dir = tempfile::tempdir().unwrap();
        let svg = write_chart(&chart(None), &dir.path().join("a.svg")).unwrap();
        let text = std::fs::read_to_string(&svg).unwrap();
        assert!(text.contains("greedy") && text.contains("fifo") && text.contains("ftl.op"));
        let png = write_chart(&chart(Some(vec!["a".into(), "b".into()])), &dir.path().join("b.png")).unwrap();
        let bytes = std::fs::read(png).unwrap();
        assert_eq!(&bytes[1..4], b"PNG");
    }

    #[test]
    fn a_log_axis_spans_decades() {
        let dir = tempfile::tempdir().unwrap();
        let pt = |x: f64, m: f64| Point { x, mean: m, lo: m, hi: m };
        let c = Chart {
            series: vec![Series { name: "iops".into(), points: vec![pt(0.0, 150.0), pt(1.0, 2.0e5)] }],
            log_y: true,
            ..chart(None)
        };
        let text = std::fs::read_to_string(write_chart(&c, &dir.path().join("log.svg")).unwrap()).unwrap();
        // Ticks at the powers of ten between, labelled as values.
        assert!(text.contains("1,000") && text.contains("10,000") && text.contains("100,000"), "{text}");
        let bars = Chart { categories: Some(vec!["a".into(), "b".into()]), ..c };
        write_chart(&bars, &dir.path().join("bars.png")).unwrap();
    }
}
