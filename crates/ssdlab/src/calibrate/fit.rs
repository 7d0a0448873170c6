//! The fit: Nelder-Mead (argmin's) over the logarithms of the parameters, each bounded to a
//! factor of its starting value, minimising the mean squared log error of the predicted IOPS,
//! mean and p99 latency against the measured ones over every point.

use std::sync::atomic::{AtomicU64, Ordering};

use argmin::core::{CostFunction, Executor, State};
use argmin::solver::neldermead::NelderMead;
use firmware::config::DeviceConfig;

use super::CalibrateError;
use super::measure::{Measured, Measurement};
use super::params::Params;
use super::simulate::{Predicted, simulate_plan};

/// How to fit.
#[derive(Clone, Debug, PartialEq)]
pub struct FitOptions {
    /// Each parameter stays within its start divided or multiplied by this (above 1).
    pub bound: f64,
    /// The most Nelder-Mead iterations.
    pub max_iters: u64,
    /// Commands each simulated point runs (at least 32 per command in flight).
    pub ios: u64,
    /// Seed of the simulations (point `i` uses `seed + i`).
    pub seed: u64,
    /// Threads simulating points at once.
    pub threads: usize,
    /// Which metrics the objective compares: IOPS, mean latency, p99 latency.
    pub metrics: [bool; 3],
}

/// The metrics' names, in [`FitOptions::metrics`] order.
pub const METRICS: [&str; 3] = ["iops", "mean", "p99"];

/// What a fit found.
#[derive(Clone, Debug, PartialEq)]
pub struct FitOutcome {
    /// The fitted values, in the parameters' order (ns for durations).
    pub values: Vec<f64>,
    /// The fitted configuration.
    pub config: DeviceConfig,
    /// Predictions of the starting configuration.
    pub before: Vec<Predicted>,
    /// Predictions of the fitted configuration.
    pub after: Vec<Predicted>,
    /// Objective (mean squared log error) at the start and at the end.
    pub cost_before: f64,
    /// See `cost_before`.
    pub cost_after: f64,
    /// Nelder-Mead iterations.
    pub iterations: u64,
    /// Plans simulated (objective evaluations) and points simulated.
    pub evaluations: u64,
    /// See `evaluations`.
    pub simulations: u64,
}

/// The squared log errors of one point: IOPS, mean, p99.
pub(crate) fn log_errors(m: &Measured, p: &Predicted) -> [f64; 3] {
    let e = |pred: f64, meas: f64| (pred.max(1e-9) / meas.max(1e-9)).ln();
    [e(p.iops, m.iops), e(p.mean_us, m.mean_us), e(p.p99_us, m.p99_us)]
}

/// The objective: the mean of the squared log errors of the metrics chosen.
fn objective(measured: &[Measured], predicted: &[Predicted], metrics: [bool; 3]) -> f64 {
    let chosen = |e: [f64; 3]| e.into_iter().zip(metrics).filter(|(_, on)| *on).map(|(e, _)| e * e);
    let sum: f64 = measured.iter().zip(predicted).flat_map(|(m, p)| chosen(log_errors(m, p))).sum();
    let n = metrics.iter().filter(|on| **on).count();
    sum / (n * measured.len()).max(1) as f64
}

struct Problem<'a> {
    base: &'a DeviceConfig,
    params: &'a Params,
    m: &'a Measurement,
    opts: &'a FitOptions,
    /// Bounds of each log value.
    lo: Vec<f64>,
    hi: Vec<f64>,
    evaluations: AtomicU64,
}

impl Problem<'_> {
    fn values(&self, x: &[f64]) -> Vec<f64> {
        x.iter().zip(self.lo.iter().zip(&self.hi)).map(|(x, (lo, hi))| x.clamp(*lo, *hi).exp()).collect()
    }

    fn predict(&self, values: &[f64]) -> Result<(DeviceConfig, Vec<Predicted>), CalibrateError> {
        let cfg = self.params.apply(self.base, values)?;
        self.evaluations.fetch_add(1, Ordering::Relaxed);
        let p = simulate_plan(&cfg, &self.m.plan, self.opts.ios, self.opts.seed, self.opts.threads)?;
        Ok((cfg, p))
    }
}

/// The most Nelder-Mead runs of a fit (see [`fit`]).
const RESTARTS: usize = 4;

/// A cost far above any fit's, for settings the device refuses.
const REFUSED: f64 = 1e6;

impl CostFunction for Problem<'_> {
    type Param = Vec<f64>;
    type Output = f64;

    fn cost(&self, x: &Vec<f64>) -> Result<f64, argmin::core::Error> {
        // Outside the bounds: the bound's cost plus the squared distance past it.
        let outside: f64 = x
            .iter()
            .zip(self.lo.iter().zip(&self.hi))
            .map(|(x, (lo, hi))| (lo - x).max(0.0) + (x - hi).max(0.0))
            .map(|d| d * d)
            .sum();
        Ok(match self.predict(&self.values(x)) {
            Ok((_, p)) => objective(&self.m.points, &p, self.opts.metrics) + outside,
            Err(_) => REFUSED + outside,
        })
    }
}

/// Fits `params` of `base` to `m`.
pub fn fit(
    base: &DeviceConfig,
    params: &Params,
    m: &Measurement,
    opts: &FitOptions,
) -> Result<FitOutcome, CalibrateError> {
    if params.list.is_empty() {
        return Err(CalibrateError::new("nothing to fit: --fit names no parameter"));
    }
    if !opts.metrics.iter().any(|on| *on) {
        return Err(CalibrateError::new("--metrics names no metric (iops, mean, p99)"));
    }
    if opts.bound.is_nan() || opts.bound <= 1.0 {
        return Err(CalibrateError::new(format!("--bound must be above 1 (got {})", opts.bound)));
    }
    let x0: Vec<f64> = params.starts().iter().map(|v| v.ln()).collect();
    let b = opts.bound.ln();
    let problem = Problem {
        base,
        params,
        m,
        opts,
        lo: x0.iter().map(|x| x - b).collect(),
        hi: x0.iter().map(|x| x + b).collect(),
        evaluations: AtomicU64::new(0),
    };
    let (_, before) = problem.predict(&params.starts())?;
    let cost_before = objective(&m.points, &before, opts.metrics);
    // Nelder-Mead, restarted from its best point with a fresh simplex (a simplex that has
    // collapsed along a valley stops early): until a restart no longer improves the cost by
    // 1%, at most RESTARTS times.
    let mut problem = problem;
    let mut best = x0.clone();
    let mut best_cost = f64::INFINITY;
    let mut iterations = 0;
    for _ in 0..RESTARTS {
        let mut simplex = vec![best.clone()];
        for i in 0..best.len() {
            let mut v = best.clone();
            v[i] += 1.3f64.ln();
            simplex.push(v);
        }
        let solver = NelderMead::new(simplex)
            .with_sd_tolerance(1e-6)
            .map_err(|e| CalibrateError::new(format!("optimiser: {e}")))?;
        let mut res = Executor::new(problem, solver)
            .configure(|s| s.max_iters(opts.max_iters))
            .run()
            .map_err(|e| CalibrateError::new(format!("optimiser: {e}")))?;
        let state = res.state();
        iterations += state.get_iter();
        let cost = state.get_best_cost();
        let found = state.get_best_param().cloned();
        problem = res.problem.take_problem().expect("the executor gives the problem back");
        let improved = cost < best_cost * 0.99;
        if let Some(found) = found
            && cost < best_cost
        {
            best = found;
            best_cost = cost;
        }
        if !improved {
            break;
        }
    }
    let values = problem.values(&best);
    let (config, after) = problem.predict(&values)?;
    let evaluations = problem.evaluations.load(Ordering::Relaxed);
    Ok(FitOutcome {
        cost_after: objective(&m.points, &after, opts.metrics),
        values,
        config,
        before,
        after,
        cost_before,
        iterations,
        evaluations,
        simulations: evaluations * m.points.len() as u64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calibrate::plan::Plan;

    #[test]
    fn a_perfect_prediction_costs_nothing_and_errors_are_symmetric() {
        let m = Measured { iops: 100.0, mean_us: 10.0, p99_us: 20.0, ios: 1 };
        let p = Predicted { iops: 100.0, mean_us: 10.0, p99_us: 20.0 };
        let all = [true; 3];
        assert_eq!(objective(&[m], &[p], all), 0.0);
        let twice = Predicted { iops: 200.0, mean_us: 20.0, p99_us: 40.0 };
        let half = Predicted { iops: 50.0, mean_us: 5.0, p99_us: 10.0 };
        assert!((objective(&[m], &[twice], all) - objective(&[m], &[half], all)).abs() < 1e-12);
        // Only the metrics chosen count.
        let p99_off = Predicted { p99_us: 400.0, ..p };
        assert_eq!(objective(&[m], &[p99_off], [true, true, false]), 0.0);
        assert!(objective(&[m], &[p99_off], all) > 1.0);
    }

    /// The fit recovers a read time from simulated "measurements" of a device whose read time
    /// is 40% longer (the closed loop without fio: the integration test does it over NBD).
    #[test]
    fn a_hidden_read_time_is_recovered_from_simulated_points() {
        let base = crate::calibrate::simulate::tests::small();
        let mut plan = Plan::quick();
        plan.point.retain(|p| !p.writes() && p.iodepth == 1);
        plan.region = sim::ByteSize::mib(4);
        let hidden =
            crate::setup::apply_settings(&base, &["timing.t_read=145.6us".parse().unwrap()]).unwrap();
        let opts =
            FitOptions { bound: 4.0, max_iters: 40, ios: 200, seed: 3, threads: 2, metrics: [true; 3] };
        let truth = simulate_plan(&hidden, &plan, opts.ios, opts.seed, 2).unwrap();
        let points = truth
            .iter()
            .map(|p| Measured { iops: p.iops, mean_us: p.mean_us, p99_us: p.p99_us, ios: 200 })
            .collect();
        let m = Measurement { target: "sim".into(), capacity: 0, dilation: 1.0, plan, points, seconds: 0.0 };
        let params = Params::read(&base, &["timing.t_read".to_string()]).unwrap();
        let out = fit(&base, &params, &m, &opts).unwrap();
        let err = out.values[0] / 145_600.0 - 1.0;
        assert!(err.abs() < 0.02, "fitted {} ns", out.values[0]);
        assert!(out.cost_after < out.cost_before / 100.0, "{} -> {}", out.cost_before, out.cost_after);
        assert_eq!(out.simulations, out.evaluations * 2);
    }
}
