//! The calibration's outputs: the fitted preset as TOML, and the report (JSON and a text
//! table) of every point measured and predicted, before and after the fit.

use firmware::config::DeviceConfig;
use serde::Serialize;

use super::fit::{FitOutcome, log_errors};
use super::measure::{Measured, Measurement};
use super::params::Params;
use super::simulate::Predicted;

/// One point of the report.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PointRow {
    /// `randread 4KiB qd1`.
    pub point: String,
    /// What the target did (times divided by the dilation).
    pub measured: Measured,
    /// What the starting configuration predicts.
    pub before: Predicted,
    /// What the fitted configuration predicts.
    pub after: Predicted,
    /// Relative error of the fitted prediction (predicted / measured - 1): IOPS, mean, p99.
    pub error: [f64; 3],
}

/// One parameter, before and after.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ParamRow {
    /// Its configuration path.
    pub path: String,
    /// Its unit (`ns` for durations; a list's first element).
    pub unit: String,
    /// Starting value.
    pub before: f64,
    /// Fitted value.
    pub after: f64,
}

/// The whole report (`--report FILE.json`; the text table is [`CalibrationReport::table`]).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CalibrationReport {
    /// The target measured.
    pub target: String,
    /// The starting preset (or file).
    pub from: String,
    /// The time dilation the measured times were divided by.
    pub dilation: f64,
    /// The parameters.
    pub parameters: Vec<ParamRow>,
    /// Every point.
    pub points: Vec<PointRow>,
    /// Root mean square of the relative errors over every point and metric, before and after.
    pub rms_error_before: f64,
    /// See `rms_error_before`.
    pub rms_error_after: f64,
    /// The objective the fit minimised (the mean squared log error over the fitted metrics),
    /// before and after: it falls even where the RMS relative error above rises.
    #[serde(default)]
    pub cost_before: f64,
    /// See `cost_before`.
    #[serde(default)]
    pub cost_after: f64,
    /// The largest relative error after the fit (absolute value).
    pub max_error_after: f64,
    /// Nelder-Mead iterations, plans simulated, points simulated.
    pub iterations: u64,
    /// See `iterations`.
    pub evaluations: u64,
    /// See `iterations`.
    pub simulations: u64,
    /// Wall time of the measurement, seconds.
    pub measure_seconds: f64,
    /// Wall time of the fit, seconds.
    pub fit_seconds: f64,
    /// The measurement, as `--measured` reads it back.
    pub measurement: Measurement,
}

fn relative(m: &Measured, p: &Predicted) -> [f64; 3] {
    log_errors(m, p).map(f64::exp_m1)
}

fn rms(rows: impl Iterator<Item = [f64; 3]>) -> f64 {
    let (sum, n) = rows.flatten().fold((0.0, 0usize), |(s, n), e| (s + e * e, n + 1));
    (sum / n.max(1) as f64).sqrt()
}

impl CalibrationReport {
    /// The report of `fit` on `m`.
    pub fn new(from: &str, params: &Params, m: &Measurement, fit: &FitOutcome, fit_seconds: f64) -> Self {
        let points: Vec<PointRow> = m
            .plan
            .point
            .iter()
            .zip(&m.points)
            .zip(fit.before.iter().zip(&fit.after))
            .map(|((p, meas), (b, a))| PointRow {
                point: p.label(),
                measured: *meas,
                before: *b,
                after: *a,
                error: relative(meas, a),
            })
            .collect();
        CalibrationReport {
            target: m.target.clone(),
            from: from.to_string(),
            dilation: m.dilation,
            parameters: params
                .list
                .iter()
                .zip(&fit.values)
                .map(|(p, v)| ParamRow {
                    path: p.path.clone(),
                    unit: p.unit().into(),
                    before: p.start,
                    after: *v,
                })
                .collect(),
            rms_error_before: rms(points.iter().map(|r| relative(&r.measured, &r.before))),
            rms_error_after: rms(points.iter().map(|r| r.error)),
            cost_before: fit.cost_before,
            cost_after: fit.cost_after,
            max_error_after: points.iter().flat_map(|r| r.error).fold(0.0, |a, e| a.max(e.abs())),
            points,
            iterations: fit.iterations,
            evaluations: fit.evaluations,
            simulations: fit.simulations,
            measure_seconds: m.seconds,
            fit_seconds,
            measurement: m.clone(),
        }
    }

    /// The report as a text table.
    pub fn table(&self) -> String {
        let mut s = format!("calibration of {} against {}", self.from, self.target);
        if self.dilation != 1.0 {
            s += &format!(" (measured times divided by {})", self.dilation);
        }
        s += "\n\nparameter                      before          after   change\n";
        for p in &self.parameters {
            s += &format!(
                "{:<26} {:>12.1}{:<2} {:>12.1}{:<2} {:>+7.1}%\n",
                p.path,
                p.before,
                p.unit,
                p.after,
                p.unit,
                (p.after / p.before - 1.0) * 100.0
            );
        }
        s += "\npoint                   | IOPS measured  fitted   err | mean us meas  fitted   err | p99 us meas  fitted   err\n";
        for r in &self.points {
            let (m, a, e) = (&r.measured, &r.after, r.error.map(|e| e * 100.0));
            s += &format!(
                "{:<23} | {:>12.0} {:>7.0} {:>+5.1}% | {:>12.1} {:>7.1} {:>+5.1}% | {:>11.1} {:>7.1} {:>+5.1}%\n",
                r.point, m.iops, a.iops, e[0], m.mean_us, a.mean_us, e[1], m.p99_us, a.p99_us, e[2]
            );
        }
        s += &format!(
            "\nerror (rms over points and metrics): {:.1}% before, {:.1}% after; largest after {:.1}%\n",
            self.rms_error_before * 100.0,
            self.rms_error_after * 100.0,
            self.max_error_after * 100.0
        );
        s += &format!(
            "fit: {} iterations, {} plans simulated ({} points), {:.1} s; measurement {:.1} s; objective {:.4} -> {:.4}\n",
            self.iterations,
            self.evaluations,
            self.simulations,
            self.fit_seconds,
            self.measure_seconds,
            self.cost_before,
            self.cost_after
        );
        s
    }
}

/// The fitted configuration as a TOML file `ssdlab run` reads, with a header saying where it
/// came from.
pub fn fitted_toml(cfg: &DeviceConfig, report: &CalibrationReport) -> String {
    let mut s = format!(
        "# ssdlab device configuration fitted by `ssdlab calibrate` from `{}` against {}.\n",
        report.from, report.target
    );
    s += &format!(
        "# {} points; error (rms of IOPS, mean and p99 latency) {:.1}% before, {:.1}% after.\n# Fitted:",
        report.points.len(),
        report.rms_error_before * 100.0,
        report.rms_error_after * 100.0
    );
    for p in &report.parameters {
        s += &format!(" {}", p.path);
    }
    s += "\n\n";
    s + &cfg.resolved().to_toml()
}
