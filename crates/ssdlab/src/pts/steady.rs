//! The PTS steady-state test: is a tracking variable (the IOPS test's 4 KiB random-write IOPS)
//! flat over the last rounds?
//!
//! SNIA SSS PTS Enterprise v1.1 (and PTS v2.0.2, which keeps it) defines steady state over a
//! measurement window of five consecutive rounds, `y` the tracking variable in each:
//!
//! ```text
//!   range:  max(y) - min(y)                        <= 20% of avg(y)   (data excursion)
//!   slope:  fit(last round) - fit(first round)     <= 10% of avg(y)   (slope excursion)
//!           fit = the least-squares line through (round, y) over the window
//! ```
//!
//! Both must hold; the slope excursion is `|slope| x (rounds - 1)`, the rise of the fitted line
//! across the window.

use serde::Serialize;

/// Rounds in the measurement window (PTS: 5).
pub const WINDOW: usize = 5;
/// Largest allowed data excursion, as a fraction of the window's average (PTS: 20%).
pub const MAX_RANGE: f64 = 0.20;
/// Largest allowed excursion of the fitted line, as a fraction of the average (PTS: 10%).
pub const MAX_SLOPE_EXCURSION: f64 = 0.10;

/// The steady-state criteria evaluated over one window of rounds.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Window {
    /// First round of the window (1-based).
    pub first_round: usize,
    /// Last round of the window (1-based).
    pub last_round: usize,
    /// The tracking variable's mean over the window.
    pub average: f64,
    /// Its smallest value in the window.
    pub min: f64,
    /// Its largest value in the window.
    pub max: f64,
    /// `max - min`.
    pub range: f64,
    /// The most `range` may be: 20% of the average.
    pub range_limit: f64,
    /// Slope of the least-squares line, per round.
    pub slope: f64,
    /// Intercept of that line at the window's first round.
    pub intercept: f64,
    /// The fitted line's excursion across the window: `|slope| x (rounds - 1)`.
    pub slope_excursion: f64,
    /// The most it may be: 10% of the average.
    pub slope_limit: f64,
    /// Whether the range criterion holds.
    pub range_ok: bool,
    /// Whether the slope criterion holds.
    pub slope_ok: bool,
}

impl Window {
    /// Whether both criteria hold: the device is in steady state over this window.
    pub fn steady(&self) -> bool {
        self.range_ok && self.slope_ok
    }
}

/// Evaluates the criteria over `values`, the tracking variable of consecutive rounds the first
/// of which is round `first_round` (1-based). `None` for fewer than two values.
pub fn evaluate(values: &[f64], first_round: usize) -> Option<Window> {
    let n = values.len();
    if n < 2 {
        return None;
    }
    let nf = n as f64;
    let average = values.iter().sum::<f64>() / nf;
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    // Least squares over x = 0..n-1.
    let x_mean = (nf - 1.0) / 2.0;
    let (mut sxy, mut sxx) = (0.0, 0.0);
    for (i, y) in values.iter().enumerate() {
        let dx = i as f64 - x_mean;
        sxy += dx * (y - average);
        sxx += dx * dx;
    }
    let slope = sxy / sxx;
    let intercept = average - slope * x_mean;
    let slope_excursion = slope.abs() * (nf - 1.0);
    let range = max - min;
    let range_limit = MAX_RANGE * average;
    let slope_limit = MAX_SLOPE_EXCURSION * average;
    Some(Window {
        first_round,
        last_round: first_round + n - 1,
        average,
        min,
        max,
        range,
        range_limit,
        slope,
        intercept,
        slope_excursion,
        slope_limit,
        range_ok: average > 0.0 && range <= range_limit,
        slope_ok: average > 0.0 && slope_excursion <= slope_limit,
    })
}

/// The measurement window ending at the last of `series` (rounds 1, 2, ...), once there are
/// [`WINDOW`] rounds.
pub fn last_window(series: &[f64]) -> Option<Window> {
    let n = series.len();
    if n < WINDOW {
        return None;
    }
    evaluate(&series[n - WINDOW..], n - WINDOW + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flat_series_is_steady() {
        let w = last_window(&[900.0, 500.0, 100.0, 101.0, 99.0, 100.0, 100.5]).unwrap();
        assert_eq!((w.first_round, w.last_round), (3, 7));
        assert!(w.steady(), "{w:?}");
        assert!((w.average - 100.1).abs() < 1e-9);
    }

    #[test]
    fn too_few_rounds_have_no_window() {
        assert!(last_window(&[1.0, 1.0, 1.0, 1.0]).is_none());
    }

    #[test]
    fn a_wide_range_fails_the_range_criterion() {
        // 75..105 around 91: range 30 > 18.2; the line is flat (slope criterion holds).
        let w = evaluate(&[105.0, 75.0, 105.0, 75.0, 95.0], 1).unwrap();
        assert!(!w.range_ok, "{w:?}");
        assert!(w.slope_ok, "{w:?}");
        assert!(!w.steady());
    }

    #[test]
    fn a_steady_drift_fails_the_slope_criterion_while_the_range_holds() {
        // +4 per round around 108: range 16 <= 21.6, but the fitted line rises 16 > 10.8.
        let w = evaluate(&[100.0, 104.0, 108.0, 112.0, 116.0], 1).unwrap();
        assert!(w.range_ok, "{w:?}");
        assert!(!w.slope_ok, "{w:?}");
        assert!((w.slope - 4.0).abs() < 1e-9 && (w.slope_excursion - 16.0).abs() < 1e-9);
        assert!(!w.steady());
    }

    #[test]
    fn a_falling_drift_fails_too_and_the_fit_is_exact() {
        let w = evaluate(&[120.0, 110.0, 100.0, 90.0, 80.0], 4).unwrap();
        assert!((w.slope + 10.0).abs() < 1e-9 && (w.intercept - 120.0).abs() < 1e-9);
        assert!(!w.slope_ok && !w.range_ok);
        assert_eq!(w.last_round, 8);
    }

    #[test]
    fn zero_iops_is_never_steady() {
        assert!(!evaluate(&[0.0; 5], 1).unwrap().steady());
    }
}
