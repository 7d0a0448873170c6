//! Layout shared by every figure: a title block, then panels, each with a heading line that
//! carries its legend (above the data, so a legend never hides a line), labelled axes and a
//! light grid on the ticks.

use std::ops::Range;

use plotters::coord::Shift;
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::axis::Axis;
use crate::font;

/// A drawing area in pixels.
pub(crate) type Area<DB> = DrawingArea<DB, Shift>;

/// What drawing on a backend returns.
pub(crate) type DrawResult<T, DB> = Result<T, DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;

/// A panel's chart: both axes linear with our own ticks.
pub(crate) type Chart<'a, DB> = ChartContext<'a, DB, Cartesian2d<Scale, Scale>>;

/// A linear coordinate whose ticks (and grid lines) are exactly those of an [`Axis`].
pub(crate) struct Scale {
    range: Range<f64>,
    ticks: Vec<f64>,
}

impl Scale {
    fn of(axis: &Axis) -> Scale {
        Scale { range: axis.lo..axis.hi, ticks: axis.ticks.clone() }
    }
}

impl Ranged for Scale {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, v: &f64, (from, to): (i32, i32)) -> i32 {
        let span = self.range.end - self.range.start;
        let at = if span > 0.0 { (v - self.range.start) / span } else { 0.5 };
        from + (f64::from(to - from) * at).round() as i32
    }

    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        // Bold points only: the light mesh is left empty.
        if hint.weight().allow_light_points() { Vec::new() } else { self.ticks.clone() }
    }

    fn range(&self) -> Range<f64> {
        self.range.clone()
    }
}

/// Grid lines.
const GRID: RGBColor = RGBColor(225, 225, 225);
/// Left and right margins of the figure, px.
pub(crate) const MARGIN: i32 = 24;

/// How a legend entry is drawn.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Swatch {
    /// A short line (line series).
    Line,
    /// A filled square (bars).
    Box,
}

/// One legend entry.
#[derive(Clone, Debug)]
pub(crate) struct Entry {
    /// Its text.
    pub label: String,
    /// Its colour.
    pub color: RGBColor,
    /// Its mark.
    pub swatch: Swatch,
}

impl Entry {
    /// A line entry.
    pub fn line(label: &str, color: RGBColor) -> Entry {
        Entry { label: label.to_string(), color, swatch: Swatch::Line }
    }

    /// A bar entry.
    pub fn bar(label: &str, color: RGBColor) -> Entry {
        Entry { label: label.to_string(), color, swatch: Swatch::Box }
    }
}

/// A panel: heading, legend and axes.
pub(crate) struct Panel {
    /// Heading, at the top left.
    pub heading: String,
    /// Legend entries, at the top right.
    pub legend: Vec<Entry>,
    /// The x axis.
    pub x: Axis,
    /// The y axis.
    pub y: Axis,
}

/// Height of the title block, px.
pub(crate) const TITLE_HEIGHT: u32 = 76;
/// Height of a panel's heading line, px.
const HEADING_HEIGHT: u32 = 34;

/// Clears the figure, draws the title and the run line below it, and returns the area left.
pub(crate) fn frame<DB: DrawingBackend>(
    root: &Area<DB>,
    title: &str,
    subtitle: &str,
) -> DrawResult<Area<DB>, DB> {
    root.fill(&WHITE)?;
    let (head, body) = root.split_vertically(TITLE_HEIGHT);
    head.draw(&Text::new(title.to_string(), (MARGIN, 14), font::title()))?;
    head.draw(&Text::new(subtitle.to_string(), (MARGIN, 48), font::subtitle()))?;
    Ok(body)
}

/// Draws a panel in `area`: heading and legend, axes and grid, then the data with `series`.
pub(crate) fn panel<DB, F>(area: &Area<DB>, p: &Panel, series: F) -> DrawResult<(), DB>
where
    DB: DrawingBackend,
    F: FnOnce(&mut Chart<'_, DB>) -> DrawResult<(), DB>,
{
    panel_aligned(area, p, y_label_room(area, &[p]), series)
}

/// Room left of the plot for the y tick labels and description of every panel in `panels`:
/// panels stacked in one figure share it, so their plots line up.
pub(crate) fn y_label_room<DB: DrawingBackend>(area: &Area<DB>, panels: &[&Panel]) -> u32 {
    let style = font::label();
    let widest = panels
        .iter()
        .flat_map(|p| p.y.ticks.iter().map(|&t| p.y.label(t)))
        .map(|label| area.estimate_text_size(&label, &style).map_or(0, |(w, _)| w))
        .max()
        .unwrap_or(0);
    widest + 44
}

/// [`panel`] with `y_area` pixels for the y labels (from [`y_label_room`]).
pub(crate) fn panel_aligned<DB, F>(area: &Area<DB>, p: &Panel, y_area: u32, series: F) -> DrawResult<(), DB>
where
    DB: DrawingBackend,
    F: FnOnce(&mut Chart<'_, DB>) -> DrawResult<(), DB>,
{
    let (head, body) = area.split_vertically(HEADING_HEIGHT);
    let label_style = font::label();
    let left = MARGIN + y_area as i32;
    head.draw(&Text::new(p.heading.clone(), (left, 8), font::heading()))?;
    legend(&head, &p.legend, head.dim_in_pixel().0 as i32 - MARGIN)?;

    let mut chart = ChartBuilder::on(&body)
        .margin_left(MARGIN as u32)
        .margin_right(MARGIN as u32 + 8)
        .margin_top(4)
        .margin_bottom(6)
        .x_label_area_size(54)
        .y_label_area_size(y_area)
        .build_cartesian_2d(Scale::of(&p.x), Scale::of(&p.y))?;
    let x_label = |v: &f64| p.x.label(*v);
    let y_label = |v: &f64| p.y.label(*v);
    chart
        .configure_mesh()
        .bold_line_style(GRID)
        .axis_style(font::INK)
        .x_desc(p.x.desc.clone())
        .y_desc(p.y.desc.clone())
        .axis_desc_style(font::axis_desc())
        .label_style(label_style)
        .x_label_formatter(&x_label)
        .y_label_formatter(&y_label)
        .draw()?;
    series(&mut chart)
}

/// Draws `entries` in a row ending at pixel `right` of `area`.
fn legend<DB: DrawingBackend>(area: &Area<DB>, entries: &[Entry], right: i32) -> DrawResult<(), DB> {
    let style = font::label();
    let mut x = right;
    let y = 17;
    for e in entries.iter().rev() {
        let w = area.estimate_text_size(&e.label, &style).map_or(0, |(w, _)| w as i32);
        x -= w;
        area.draw(&Text::new(e.label.clone(), (x, y), style.pos(Pos::new(HPos::Left, VPos::Center))))?;
        x -= 30;
        match e.swatch {
            Swatch::Line => {
                area.draw(&PathElement::new(vec![(x, y), (x + 24, y)], e.color.stroke_width(3)))?
            }
            Swatch::Box => area.draw(&Rectangle::new([(x + 6, y - 7), (x + 20, y + 7)], e.color.filled()))?,
        }
        x -= 18;
    }
    Ok(())
}

/// Writes `text` in the middle of `area` (a panel without data).
pub(crate) fn note<DB: DrawingBackend>(area: &Area<DB>, text: &str) -> DrawResult<(), DB> {
    let (w, h) = area.dim_in_pixel();
    let style = font::text(18.0, font::MUTED).pos(Pos::new(HPos::Center, VPos::Center));
    area.draw(&Text::new(text.to_string(), (w as i32 / 2, h as i32 / 2), style))
}
