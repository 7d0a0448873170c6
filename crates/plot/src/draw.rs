//! Data marks on a panel's chart: lines (broken where a value is missing; a lone point is a
//! dot) and bars.

use plotters::prelude::*;

use crate::panel::{Chart, DrawResult};

/// Line width of data, px.
const STROKE: u32 = 2;

/// Read, write, trim and total: colour-blind safe (Okabe-Ito), total in near-black.
pub(crate) const READ: RGBColor = RGBColor(0, 114, 178);
/// Writes.
pub(crate) const WRITE: RGBColor = RGBColor(213, 94, 0);
/// Trims.
pub(crate) const TRIM: RGBColor = RGBColor(0, 158, 115);
/// Totals and single series.
pub(crate) const TOTAL: RGBColor = RGBColor(40, 40, 40);
/// A second series beside [`TOTAL`].
pub(crate) const ACCENT: RGBColor = RGBColor(204, 121, 167);

/// The colour of an operation by name.
pub(crate) fn op_color(op: &str) -> RGBColor {
    match op {
        "read" => READ,
        "write" => WRITE,
        "trim" => TRIM,
        _ => TOTAL,
    }
}

/// Splits `(x, y)` pairs into runs of present, finite values.
pub(crate) fn runs(points: impl IntoIterator<Item = (f64, Option<f64>)>) -> Vec<Vec<(f64, f64)>> {
    let mut out = vec![Vec::new()];
    for (x, y) in points {
        match y {
            Some(y) if y.is_finite() && x.is_finite() => out.last_mut().expect("never empty").push((x, y)),
            _ if out.last().is_some_and(|r| !r.is_empty()) => out.push(Vec::new()),
            _ => {}
        }
    }
    out.retain(|r| !r.is_empty());
    out
}

/// Draws `points` as a line, broken at missing values; lone points as dots.
pub(crate) fn line<DB: DrawingBackend>(
    chart: &mut Chart<'_, DB>,
    points: impl IntoIterator<Item = (f64, Option<f64>)>,
    color: RGBColor,
) -> DrawResult<(), DB> {
    for run in runs(points) {
        if run.len() == 1 {
            chart.draw_series(std::iter::once(Circle::new(run[0], 3, color.filled())))?;
        } else {
            chart.draw_series(LineSeries::new(run, color.stroke_width(STROKE)))?;
        }
    }
    Ok(())
}

/// Draws one bar per `(x, height)`, `width` wide in x units, from 0.
pub(crate) fn bars<DB: DrawingBackend>(
    chart: &mut Chart<'_, DB>,
    bars: &[(f64, f64)],
    width: f64,
    color: RGBColor,
) -> DrawResult<(), DB> {
    let half = width / 2.0;
    chart.draw_series(
        bars.iter()
            .filter(|(_, h)| h.is_finite() && *h > 0.0)
            .map(|&(x, h)| Rectangle::new([(x - half, 0.0), (x + half, h)], color.filled())),
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::runs;

    #[test]
    fn runs_break_at_missing_values() {
        let pts = [(0.0, Some(1.0)), (1.0, None), (2.0, Some(2.0)), (3.0, Some(f64::NAN)), (4.0, Some(3.0))];
        assert_eq!(runs(pts), vec![vec![(0.0, 1.0)], vec![(2.0, 2.0)], vec![(4.0, 3.0)]]);
        assert!(runs([(0.0, None), (1.0, None)]).is_empty());
        assert_eq!(runs([(0.0, Some(1.0)), (1.0, Some(2.0))]).len(), 1);
    }
}
